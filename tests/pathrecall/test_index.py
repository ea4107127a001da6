"""The per-path index on real repositories: commits touching a path with renames followed,
co-change, reverts with their reasons, fixes, the digest lines and session bullets citing a
path's commits, the newest session; kept current by drain, save, fold, forget and sync, and
rebuilt when it is missing, broken, of another format or behind a rewritten vault."""

from __future__ import annotations

import sqlite3

import pytest

from gitvault.pathrecall import known
from gitvault.pathrecall.index import (
    FORMAT,
    PathIndex,
    classify,
    iter_known,
    knows,
    parse_session,
)
from gitvault.resolve import resolve
from gitvault.vault import frontmatter, layout, statedir
from gitvault.vault.store import Vault
from tests.support.memory import cli_in
from tests.support.repos import Repo

SESSION = """\
# Parser work

## Summary
Reworked the parser.

## Key Decisions
- Keep the tokenizer separate from the parser (c:{sha})
- `src/lexer.py` stays pure: no I/O there

## Next Steps
- Split src/parser.py into two modules
"""


def _index(repo: Repo) -> PathIndex:
    return PathIndex(resolve(repo.path))


def _history(repo: Repo) -> dict[str, str]:
    """A small project: parser and its tests change together, a rename, a fix, a revert."""
    shas = {}
    shas["start"] = repo.commit(
        "Add the parser", {"src/parser.py": "v1\n", "tests/test_parser.py": "t1\n"}
    )
    shas["two"] = repo.commit(
        "Parse numbers", {"src/parser.py": "v2\n", "tests/test_parser.py": "t2\n"}
    )
    shas["lexer"] = repo.commit("Add a lexer", {"src/lexer.py": "l1\n", "src/parser.py": "v3\n"})
    shas["fix"] = repo.commit("Fix a crash on empty input", {"src/parser.py": "v4\n"})
    shas["bad"] = repo.commit("Cache parse trees", {"src/parser.py": "v5\n", "src/cache.py": "c\n"})
    repo.git("revert", "--no-edit", shas["bad"])
    repo.run(
        "commit",
        "--amend",
        "-q",
        "-m",
        f'Revert "Cache parse trees"\n\nThis reverts commit {shas["bad"]}.\n\n'
        "The cache kept stale trees after an edit.",
    )
    shas["revert"] = repo.head()
    repo.git("mv", "src/lexer.py", "src/tokens.py")
    repo.run("commit", "-q", "-m", "Rename the lexer")
    shas["rename"] = repo.head()
    return shas


def test_a_path_its_renames_co_change_reverts_and_fixes(repo: Repo) -> None:
    shas = _history(repo)
    index = _index(repo)
    index.update()
    found = index.facts("src/parser.py")
    assert found is not None
    assert found.commits == 6  # start, two, lexer, fix, bad, revert
    assert [c.sha for c in found.recent[:2]] == [shas["revert"], shas["bad"]]
    assert dict(found.partners)["tests/test_parser.py"] == 2
    # The lexer was renamed: its co-change shows under its current name.
    assert dict(found.partners)["src/tokens.py"] == 1
    assert "src/lexer.py" not in dict(found.partners)
    ((revert, target),) = found.reverts
    assert revert.sha == shas["revert"] and target is not None and target.sha == shas["bad"]
    assert revert.reason == "The cache kept stale trees after an edit."
    assert [c.sha for c in found.fixes] == [shas["fix"]]
    tokens = index.facts("src/tokens.py")
    assert tokens is not None and tokens.names == ("src/lexer.py",)
    assert tokens.commits == 2  # its commit under the old name, and the rename
    assert index.facts("src/nothing.py") is None
    assert index.hot_spots(1)[0][:2] == ("src/parser.py", 6)
    assert ("src/parser.py", "tests/test_parser.py", 2) in index.pairs(10)


def test_every_commit_updates_it_through_the_drainer(repo: Repo) -> None:
    loc = resolve(repo.path)
    assert knows(loc, "docs/guide.md") is not True
    repo.commit("Write the guide", {"docs/guide.md": "g\n"})
    assert knows(loc, "docs/guide.md") is True
    assert _index(repo).current()
    assert "docs/guide.md" in set(iter_known(loc))


def test_sessions_and_the_digest_that_cite_its_commits(repo: Repo) -> None:
    shas = _history(repo)
    saved = cli_in(repo, "save", "--json", stdin=SESSION.format(sha=shas["two"][:7]))
    assert saved.code == 0, saved
    slug = saved.json("save")["slug"]
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    index = _index(repo)
    assert index.current()  # save and fold brought it up to date
    found = index.facts("src/parser.py")
    assert found is not None
    texts = {f.text for f in found.facts}
    assert f"Keep the tokenizer separate from the parser (c:{shas['two'][:7]})" in texts
    assert found.session is not None and found.session.slug == slug
    assert found.next_steps == ("Split src/parser.py into two modules",)
    digest = [f for f in found.facts if f.source == "digest"]
    assert digest, "the builtin digest cites the parser's commits"
    # A bullet naming a path is about that path, though no commit of it is cited.
    assert index.facts("src/tokens.py") is not None
    assert "`src/lexer.py` stays pure: no I/O there" not in texts


def test_forget_takes_an_item_out_of_the_index(repo: Repo) -> None:
    shas = _history(repo)
    saved = cli_in(repo, "save", "--json", stdin=SESSION.format(sha=shas["two"][:7]))
    slug = saved.json("save")["slug"]
    assert cli_in(repo, "forget", f"s:{slug}").code == 0
    assert cli_in(repo, "forget", f"c:{shas['fix']}").code == 0
    found = _index(repo).facts("src/parser.py")
    assert found is not None
    assert found.session is None and not [f for f in found.facts if f.source == f"s:{slug}"]
    assert shas["fix"] not in {c.sha for c in found.recent} and not found.fixes


def test_rebuilt_when_missing_broken_of_another_format_or_rewritten(repo: Repo) -> None:
    _history(repo)
    index = _index(repo)
    index.update()
    before = index.facts("src/parser.py")
    index.path.unlink()
    assert index.update().rebuilt
    assert index.facts("src/parser.py") == before
    index.path.write_bytes(b"not a database at all" * 100)
    done = index.update()
    assert done.rebuilt and "could not be read" in done.reason
    with sqlite3.connect(index.path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'format'")
    assert index.update().rebuilt
    with sqlite3.connect(index.path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key='format'").fetchone() == (FORMAT,)
    # A rewritten vault (redact) leaves the index's mark outside the new history.
    cli_in(repo, "redact", "HEAD", "--pattern", "lexer", "--yes")
    assert not index.current() or "lexer" not in repr(index.facts("src/tokens.py"))
    index.update()
    tokens = index.facts("src/tokens.py")
    assert tokens is not None and all("lexer" not in c.subject for c in tokens.recent)


def test_a_command_the_user_waits_for_leaves_a_whole_build_to_the_background(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sync, fold and save bring an index forward but never build one whole on the user's
    time: with no index (a teammate's first sync after adopting a large vault), the update
    is deferred and a background drainer builds it; an existing one is brought forward here."""
    import time

    from gitvault.pathrecall.index import update_quietly
    from gitvault.vault.locking import file_lock

    _history(repo)
    monkeypatch.delenv("GITVAULT_SYNC", raising=False)
    index = _index(repo)
    index.path.unlink(missing_ok=True)
    loc = resolve(repo.path)
    done = update_quietly(loc, rebuild_here=False)
    assert done is not None and done.deferred and not done.rebuilt, done
    deadline = time.monotonic() + 120
    while not index.current() and time.monotonic() < deadline:
        time.sleep(0.2)  # the background drainer's build
    assert index.current() and index.facts("src/parser.py") is not None
    # the vault moves on
    Vault(loc).commit({"sessions/2026-12-01-1000-x.md": b"# x\n"}, "a vault commit")
    with file_lock(loc.state_dir / statedir.PATH_INDEX_LOCK, block=False) as held:
        assert held  # another process updating the index: never waited for
        busy = update_quietly(loc, rebuild_here=False)
        assert busy is not None and busy.deferred and "another process" in busy.reason, busy
    ahead = update_quietly(loc, rebuild_here=False)
    assert ahead is not None and not ahead.deferred and index.current(), ahead


def test_text_from_the_vault_is_redacted_again_before_it_is_stored(repo: Repo) -> None:
    """A note another clone wrote without redaction (an older gitvault, a hand edit)."""
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    sha = repo.commit("Plain commit", {"app.py": "x\n"})
    vault = Vault(resolve(repo.path))
    path = next(p for s, p in repo.note_paths().items() if s == sha)
    meta, body = frontmatter.parse(vault.read_text(path) or "")
    vault.commit(
        {
            path: frontmatter.render(
                meta, body.replace("Plain commit", f"Use token {secret}")
            ).encode()
        },
        "a note with a secret",
    )
    index = _index(repo)
    index.update()
    found = index.facts("app.py")
    assert found is not None and secret not in found.recent[0].subject
    assert "[REDACTED" in found.recent[0].subject
    assert secret.encode() not in index.path.read_bytes()


def test_a_session_is_redacted_whole_before_it_is_cut_into_bullets() -> None:
    """A value split over two lines of a bullet (Java's "ab" + "cd") is one secret only while
    the lines are together: the path index's bullets hold neither piece."""
    head, tail = "AIza" + "hfiR260g1WSm1btz", "sEvdXScYTE7Jf7M-LVZ"
    text = (
        '---\nkind: "session"\nslug: "2026-12-01-1000-x"\ntitle: "x"\n'
        'saved_at: "2026-12-01T10:00:00+00:00"\nmode: "manual"\n---\n# x\n\n'
        f'## Gotchas\n- String k = "{head}"\n    + "{tail}";\n- another bullet\n'
    )
    session = parse_session(text, "2026-12-01-1000-x", 0)
    stored = repr(session.bullets)
    assert head not in stored and tail not in stored, stored


def test_the_path_list_a_shell_can_read(repo: Repo) -> None:
    repo.commit("odd names", {"plain.txt": "p\n", "#hash.txt": "h\n", "line\nbreak.txt": "l\n"})
    loc = resolve(repo.path)
    data = (loc.state_dir / statedir.KNOWN_PATHS).read_bytes()
    head, _, rest = data.partition(b"\n")
    assert head.decode() == f"{known.HEADER}{repo.vault_tip()}{known.KNOWS_MORE}"
    lines = rest.split(b"\n")[:-1]
    assert lines == sorted(lines) and b"plain.txt" in lines and b"#hash.txt" not in lines
    assert knows(loc, "plain.txt") is True
    assert knows(loc, "absent.txt") is False
    assert knows(loc, "line\nbreak.txt") is None  # the list cannot hold it: ask the index


@pytest.mark.parametrize(
    ("subject", "message", "kind", "target", "reason"),
    [
        (
            'Revert "Add x"',
            "This reverts commit abcdef1234.\n\nBroke y.",
            "revert",
            "abcdef1234",
            "Broke y.",
        ),
        ('Revert "Add x"', "", "revert", '"Add x"', ""),
        ("Revert 60ef759", "", "revert", "60ef759", ""),
        ("fix: handle empty input", "", "fix", "", ""),
        ("Fixes a crash in the parser", "", "fix", "", ""),
        ("Add prefix handling", "", "plain", "", ""),
    ],
)
def test_classify(subject: str, message: str, kind: str, target: str, reason: str) -> None:
    assert classify(subject, message, 1) == (kind, target, reason)


def test_a_merge_touches_nothing_of_its_own(repo: Repo) -> None:
    base = repo.head()
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit("Topic work", {"topic.py": "t\n", "other.py": "o\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("Main work", {"main.py": "m\n"})
    repo.git("merge", "-q", "--no-edit", "topic")
    assert repo.head() != base
    found = _index(repo).facts("topic.py")
    assert found is not None and found.commits == 1
    assert layout.branch_ref("vault")  # the vault branch kept its name


def test_a_mined_line_belongs_to_a_path_only_by_naming_it(repo: Repo) -> None:
    # Enough history for the builtin merger to mine project-wide patterns (where tests live,
    # commit style) that cite some of these commits as examples.
    for i in range(12):
        repo.commit(f"Add feature {i}", {f"src/f{i}.py": "x\n", f"tests/test_f{i}.py": "x\n"})
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    digest = repo.show("_master.md").decode()
    mined = [line for line in digest.splitlines() if layout.MINED_MARK in line]
    assert mined, digest
    index = _index(repo)
    for i in range(12):
        found = index.facts(f"src/f{i}.py")
        assert found is not None
        for fact in found.facts:
            assert layout.MINED_MARK not in fact.text or f"src/f{i}.py" in fact.text, fact.text


def test_a_bare_file_name_names_the_one_path_that_bears_it(repo: Repo) -> None:
    repo.commit("Add helpers", {"src/a/util.py": "a\n", "src/b/util.py": "b\n"})
    repo.commit("Add the generated table", {"src/table.py": "t\n"})
    session = (
        "# Notes\n\n## Summary\nHelpers and the table.\n\n## Key Decisions\n"
        "- util.py stays free of I/O\n- table.py is generated: edit the generator instead\n\n"
        "## Next Steps\n- None\n"
    )
    assert cli_in(repo, "save", "--json", stdin=session).code == 0
    index = _index(repo)
    table = index.facts("src/table.py")
    assert table is not None
    assert "table.py is generated: edit the generator instead" in {f.text for f in table.facts}
    # Two paths bear util.py: the bullet names neither of them.
    for path in ("src/a/util.py", "src/b/util.py"):
        found = index.facts(path)
        assert found is not None
        assert "util.py stays free of I/O" not in {f.text for f in found.facts}
    # The same holds in an index built before and one brought forward by an update.
    repo.commit("Add a third helper", {"src/c/table.py": "c\n"})
    index.update()
    again = index.facts("src/table.py")
    assert again is not None
    assert "table.py is generated: edit the generator instead" not in {f.text for f in again.facts}
