"""The note body format has one writer (notes/render) and one reader (vault/notebody): what
`render` writes, `parse_body` reads back — subject, message and files — for any commit, cut or
not; the fold's items and miner read notes through it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitvault.fold import history
from gitvault.fold.items import _compact_note
from gitvault.notes import commits, render
from gitvault.scrub.engine import Scrubbed
from gitvault.vault import frontmatter, notebody

_WORDS = st.text(alphabet="abcdefghij klmnop#-_.:()[]0123456789", min_size=1, max_size=40)


def _info(subject: str, body: str, files: list[tuple[str, int | None]]) -> commits.CommitInfo:
    return commits.CommitInfo(
        sha="c" * 40,
        parents=("a" * 40,),
        author_name="Dev",
        author_email="dev@example.com",
        authored="2024-01-01T00:00:00+00:00",
        committed="2024-01-01T00:00:00+00:00",
        commit_time=1_700_000_000,
        message=subject + ("\n\n" + body if body else ""),
        files=tuple(commits.FileStat(p, n, n) for p, n in files),
    )


def _parsed(info: commits.CommitInfo) -> notebody.NoteBody:
    _, body = frontmatter.parse(render.render(info, render.NoteContext("main", "main")))
    return notebody.parse_body(body)


@settings(max_examples=150, deadline=None)
@given(
    subject=_WORDS.map(str.strip).filter(bool),
    body=st.lists(_WORDS, max_size=6).map("\n".join),
    paths=st.lists(_WORDS.map(str.strip).filter(bool), max_size=6, unique=True),
)
def test_what_render_writes_parse_body_reads_back(
    subject: str, body: str, paths: list[str]
) -> None:
    files = [(p, None if i % 3 == 2 else i) for i, p in enumerate(paths)]
    note = _parsed(_info(subject, body, files))
    assert note.subject == subject
    assert note.message == body.strip()
    assert note.files == tuple(paths)


def test_a_message_line_that_looks_like_the_files_heading_stays_in_the_message() -> None:
    body = "## Files (1 changed, +1 -1)\nwas pasted from another note"
    note = _parsed(_info("docs: quote a note", body, [("README.md", 2)]))
    assert note.message == body
    assert note.files == ("README.md",)


def test_a_cut_note_reads_back_its_parts_and_its_markers() -> None:
    files = [(f"src/module_{i:03d}/" + "deep/" * 20 + "file.py", i) for i in range(60)]
    note = _parsed(_info("refactor: everything", "why:\n" + "because " * 400, files))
    assert note.subject == "refactor: everything"
    assert note.message.startswith("why:\nbecause") and "[… message cut:" in note.message
    assert note.file_lines[-1].startswith("- [… and ") and note.file_lines[-1].endswith(
        " more files]"
    )
    assert 0 < len(note.files) < 60
    # a path cut at its front is read without the "…"
    assert all(path.endswith("file.py") and not path.startswith("…") for path in note.files)


def test_a_subject_starting_with_a_hash_keeps_it_in_the_fold_items() -> None:
    text = render.render(_info("#123 fix the parser", "", [("a.py", 1)]), render.NoteContext())
    meta, body = frontmatter.parse(text)
    assert _compact_note(meta, body).split("] ", 1)[1].startswith("#123 fix the parser\n")


def test_the_miner_reads_notes_through_parse_body() -> None:
    text = render.render(
        _info("feat: add x", "because y\n\nThis reverts commit " + "d" * 40 + ".", [("x.py", 3)]),
        render.NoteContext(),
    )
    note = history.parse_note(render.note_path(_info("feat: add x", "", [])), text)
    assert note is not None
    assert (note.subject, note.first_line, note.files) == ("feat: add x", "because y", ("x.py",))
    assert note.reverts == ("d" * 40,) and note.sha == "c" * 40


def test_a_secret_in_a_committed_file_name_is_redacted_in_the_note_and_its_commit() -> None:
    """The file-name channel: a provider's key (one no rule names) and a known one glued to a
    word by ``-`` (``token-ghs_….json``) are redacted from the note's file list and from the
    vault commit's message; the rest of the path is kept."""
    unknown = "zqx-" + "Q7m2Lp9XkT4bW8vN3cR6yH1dF5gJ0sAe"  # made-up provider, random-looking
    github = "gh" + "s_" + "yg7A3EXRxrgr8WNvGN7IF507ShLjFQ3YQk6b"
    info = _info(
        "chore: add files", "", [(f"leak/{unknown}.txt", 1), (f"backup/token-{github}.json", 1)]
    )
    note = render.render(info, render.NoteContext("main", "main"))
    write = render.note_write(info, render.NoteContext("main", "main"))
    for secret in (unknown, github):
        assert secret not in note
        assert secret not in write.message
        assert all(secret not in bytes(data or b"").decode() for data in write.changes.values())
    assert "leak/[REDACTED:random_token].txt" in note
    assert "backup/[REDACTED:github_token]" in note


def test_a_secret_across_the_subjects_line_break_is_redacted_in_the_note_and_its_commit() -> None:
    """The message is redacted whole, then split: the subject names the key file and the body's
    first line holds the key (redacted apart, neither held a secret on its own)."""
    key = "6a50431f9b020d8fa0e88d9ed3658c32"
    table = "| host | password |\n|---|---|\n| db1 | Marble4417? |"  # a table pasted whole
    for message, secret in (("cat config/master.key\n\n" + key, key), (table, "Marble4417?")):
        info = replace(_info("x", "", [("a.py", 1)]), message=message)
        note = render.render(info, render.NoteContext("main", "main"))
        write = render.note_write(info, render.NoteContext("main", "main"))
        assert secret not in note and secret not in write.message, note
        assert "[REDACTED:" in note


def test_each_field_of_a_note_passes_the_secret_filter_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A note is scrubbed exactly once on its way into the vault: the vault commit's message
    takes the subject the note's own pass redacted. A message too long for the remembered
    answers was scrubbed a second time for the commit message (on git/git, most of them)."""
    seen: list[str] = []
    real = render.scrub_secrets

    def counting(text: str) -> tuple[str, list[Scrubbed]]:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(render, "scrub_secrets", counting)
    render._scrubbed.cache_clear()  # a remembered answer would hide a second pass
    key = "6a50431f9b020d8fa0e88d9ed3658c32"
    paragraphs = "\n\n".join(f"Paragraph {i} says why, at some length." for i in range(40))
    message = f"cat config/master.key\n\n{key}\n\n{paragraphs}"
    assert len(message) > render._REPEATED, "long enough not to be remembered"
    info = replace(_info("x", "", [("src/a.py", 1), ("src/b.py", 2)]), message=message)
    write = render.note_write(info, render.NoteContext("main", "main"))
    assert seen.count(message) == 1, "the message went through the filter once"
    assert len(seen) == len(set(seen)), f"a field scrubbed twice: {seen}"
    text = b"".join(bytes(d or b"") for d in write.changes.values()).decode()
    assert key not in text and key not in write.message
    assert "[REDACTED:" in text
    assert write.message == "note ccccccc cat config/master.key"
