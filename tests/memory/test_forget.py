"""`gitvault forget` (a tombstone commit: not recalled, searched or folded) and `gitvault redact`
(the text gone from every version of the vault's history, with a backup ref and a record)."""

from __future__ import annotations

from gitvault.vault import layout
from tests.support.memory import (
    cli_in,
    digest_meta_body,
    session_text,
    vault_log,
    vault_text,
)
from tests.support.repos import Repo


def _save(repo: Repo, title: str, summary: str) -> str:
    saved = cli_in(repo, "save", "--json", stdin=session_text(title, summary=summary))
    assert saved.code == 0, saved
    return str(saved.json("save")["slug"])


def _fold(repo: Repo) -> None:
    result = cli_in(repo, "fold", "--merger", "builtin")
    assert result.code == 0, result


def test_forget_a_session_hides_it_from_recall_search_and_fold(repo: Repo) -> None:
    slug = _save(repo, "Wrong turn", "Decided to vendor leftpad forever.")
    keep = _save(repo, "Right turn", "Use the standard library.")
    assert f"s:{slug}" in cli_in(repo, "recall").out
    assert cli_in(repo, "search", "leftpad", "--json").json("search")["results"]
    done = cli_in(repo, "forget", f"s:{slug}", "--reason", "it was wrong", "--json")
    assert done.code == 0, done
    data = done.json("forget")
    assert data["id"] == f"s:{slug}" and data["commit"]
    assert vault_log(repo)[0] == f"forget s:{slug}"
    tomb = vault_text(repo, layout.tombstone_path(f"s:{slug}"))
    assert tomb is not None and "it was wrong" in tomb
    # The session itself stays in the history (append-only).
    assert vault_text(repo, layout.session_path(slug)) is not None
    recall = cli_in(repo, "recall").out
    assert f"s:{slug}" not in recall and f"s:{keep}" in recall
    assert cli_in(repo, "search", "leftpad", "--json").json("search")["results"] == []
    _fold(repo)
    _, body = digest_meta_body(repo)
    assert slug not in body and "leftpad" not in body
    assert keep in body


def test_forget_a_note_by_revision_and_again(repo: Repo) -> None:
    sha = repo.commit("feat: experimental teleporter")
    done = cli_in(repo, "forget", "HEAD")
    assert done.code == 0, done
    assert f"forgot c:{sha}" in done.out
    before = repo.vault_tip()
    again = cli_in(repo, "forget", f"c:{sha[:7]}")
    assert again.code == 0 and "already forgotten" in again.out
    assert repo.vault_tip() == before
    assert cli_in(repo, "search", "teleporter", "--json").json("search")["results"] == []


def test_digest_lines_resting_only_on_forgotten_items_leave(repo: Repo) -> None:
    sha = repo.commit("feat: the frobnicator speaks YAML")
    other = repo.commit("feat: the widget speaks JSON")
    _fold(repo)
    _, body = digest_meta_body(repo)
    assert sha[:7] in body
    lines_on_it = [ln for ln in body.splitlines() if sha[:7] in ln]
    only = [ln for ln in lines_on_it if other[:7] not in ln]
    done = cli_in(repo, "forget", sha, "--json").json("forget")
    assert done["digest_lines"] == len(only)
    recall = cli_in(repo, "recall").out
    for line in only:
        assert line not in recall
    repo.commit("feat: something new to fold")
    _fold(repo)
    _, after = digest_meta_body(repo)
    for line in only:
        assert line not in after
    assert other[:7] in after


def test_forget_a_citation_without_a_note(repo: Repo) -> None:
    result = cli_in(repo, "forget", "c:abcdef1234")
    assert result.code == 0, result
    assert "tombstones/c-abcdef1234.md" in repo.vault_files()


def test_forget_refuses_what_is_not_an_item(repo: Repo) -> None:
    result = cli_in(repo, "forget", "digest")
    assert result.code == 1 and "not a note or a session" in result.err
    assert cli_in(repo, "forget", "no-such-thing").code == 1


SECRET = "hunter2-zebra-77"


def _leak(repo: Repo) -> tuple[str, str]:
    sha = repo.commit(f"chore: rename the project to {SECRET}")
    slug = _save(repo, "Leaky", f"The new project name is {SECRET}, noted here.")
    _fold(repo)
    return sha, slug


def test_redact_rewrites_every_version_and_records_it(repo: Repo) -> None:
    sha, slug = _leak(repo)
    assert SECRET in repo.git("log", "-p", "vault")
    old_tip = repo.vault_tip()
    result = cli_in(repo, "redact", f"c:{sha[:7]}", "--pattern", SECRET, "--yes", "--json")
    assert result.code == 0, result
    data = result.json("redact")
    assert data["versions"] >= 2 and data["messages"] >= 1
    history = repo.git("log", "-p", "--all-match", "vault")
    assert SECRET not in history
    assert SECRET not in repo.git("log", "--format=%B", "vault")
    assert "[REDACTED]" in (vault_text(repo, layout.session_path(slug)) or "")
    # The rewrite is itself recorded, without the text; the old history is kept until gc.
    assert vault_log(repo)[0].startswith(f"redact c:{sha[:7]}")
    backup = data["backup_ref"]
    assert repo.git("rev-parse", backup) == old_tip
    assert SECRET in repo.git("log", "-p", backup)
    records = [p for p in repo.vault_files() if p.startswith("redactions/")]
    assert len(records) == 1 and SECRET not in (vault_text(repo, records[0]) or "")
    # The digest's watermark follows the rewrite: the next fold has nothing to redo.
    meta, _ = digest_meta_body(repo)
    assert repo.git("merge-base", "--is-ancestor", meta["watermark"], "vault") == ""
    again = cli_in(repo, "fold", "--merger", "builtin", "--json").json("fold")
    assert again["new_items"] == 0
    # Search forgot the old text with the old history.
    assert cli_in(repo, "search", "hunter2", "--json").json("search")["results"] == []
    # gc drops the backup and prunes what only it held.
    gone = cli_in(repo, "gc", "--yes")
    assert gone.code == 0, gone
    assert repo.run("rev-parse", "--verify", "-q", backup, check=False).returncode != 0
    objects = repo.run("cat-file", "--batch-all-objects", "--batch").stdout
    vault_side = [
        blob for blob in objects.split(b"\n") if SECRET.encode() in blob and b"kind" in blob
    ]
    assert vault_side == []


def test_redact_asks_and_refuses_without_an_answer(repo: Repo) -> None:
    sha, _ = _leak(repo)
    before = repo.vault_tip()
    result = cli_in(repo, "redact", f"c:{sha[:7]}", "--pattern", SECRET, stdin="")
    assert result.code == 3, result
    assert "confirmation" in result.err
    assert repo.vault_tip() == before


def test_redact_refuses_text_the_item_does_not_hold_and_structure(repo: Repo) -> None:
    sha, _ = _leak(repo)
    before = repo.vault_tip()
    absent = cli_in(repo, "redact", f"c:{sha[:7]}", "--pattern", "not-in-there", "--yes")
    assert absent.code == 1 and "no such text" in absent.err
    short = cli_in(repo, "redact", f"c:{sha[:7]}", "--pattern", "abc", "--yes")
    assert short.code == 1
    structure = cli_in(repo, "redact", f"c:{sha[:7]}", "--pattern", '"note"', "--yes")
    assert structure.code == 3 and "structure" in structure.err
    assert repo.vault_tip() == before
    assert repo.git("for-each-ref", "refs/gitvault/backup/") == ""
