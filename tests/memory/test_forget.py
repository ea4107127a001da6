"""`gitvault forget` (a tombstone commit: not recalled, searched or folded) and `gitvault redact`
(the text gone from every version of the vault's history, with a backup ref and a record)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from gitvault.memory import cites
from gitvault.vault import frontmatter, layout
from tests.support.memory import (
    CATEGORIES,
    cli_in,
    digest_meta_body,
    session_text,
    vault_log,
    vault_of,
    vault_text,
)
from tests.support.paths import DATA
from tests.support.remotes import bare_remote, clone, seed
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


def _plant_digest(repo: Repo, lines: dict[str, list[str]]) -> None:
    """A digest as a model merger would have written it (lines citing several items)."""
    body = ["# Project memory", ""]
    for name in CATEGORIES:
        body += [f"## {name}", *(lines.get(name) or ["- (none yet)"]), ""]
    meta = {
        "kind": "digest",
        "watermark": repo.vault_tip(),
        "folded_at": "2026-12-01T10:00:00+00:00",
        "merger": "claude",
        "model": "haiku",
        "items": {name: len(lines.get(name, [])) for name in CATEGORIES},
    }
    vault_of(repo).commit(
        {layout.DIGEST: frontmatter.render(meta, "\n".join(body)).encode()}, "fold: planted"
    )


def _codex_context(repo: Repo) -> str:
    """Codex's SessionStart answer, from the one hook runtime in this process (no time bound:
    a loaded machine must not turn a slow answer into an empty one)."""
    from gitvault.agents import adapters, runtime

    payload = json.loads((DATA / "agent_hooks" / "codex-SessionStart.json").read_text())
    payload["cwd"] = str(repo.path)
    out = runtime.run(adapters.get("codex"), "session-start", "SessionStart", json.dumps(payload))
    assert out, "the SessionStart hook said nothing"
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


def test_a_line_citing_a_forgotten_item_leaves_every_reader_and_its_other_items_refold(
    repo_factory: Callable[..., Repo],
) -> None:
    repo = repo_factory("proj", install=False)
    assert repo.gv("install", "--agent", "codex").code == 0
    gone = repo.commit("feat: the frobnicator speaks YAML", {"src/frob.py": "yaml\n"})
    kept = repo.commit("feat: the widget speaks JSON", {"src/widget.py": "json\n"})
    mixed = f"- The frobnicator and the widget share one parser (c:{gone[:7]}, c:{kept[:7]})"
    _plant_digest(repo, {"Gotchas": [mixed, f"- The widget speaks JSON (c:{kept[:7]})"]})
    assert cli_in(repo, "patch", "AGENTS.md").code == 0
    agents_md = repo.path / "AGENTS.md"
    assert "frobnicator" in agents_md.read_text() and "frobnicator" in _codex_context(repo)
    assert len(cli_in(repo, "search", "frobnicator", "--json").json("search")["results"]) == 2
    assert "frobnicator" in cli_in(repo, "recall", "--for", "src/widget.py").out

    done = cli_in(repo, "forget", gone, "--json").json("forget")
    assert done["digest_lines"] == 1
    meta, body = digest_meta_body(repo)  # one commit: the tombstone and the digest without it
    assert vault_log(repo)[0] == f"forget c:{gone}" and "frobnicator" not in body
    assert "The widget speaks JSON" in body and meta["refold"] == [f"c:{kept[:7]}"]
    assert "frobnicator" not in cli_in(repo, "recall").out
    assert "frobnicator" not in _codex_context(repo)
    assert "frobnicator" not in agents_md.read_text()
    assert cli_in(repo, "search", "frobnicator", "--json").json("search")["results"] == []
    assert "frobnicator" not in (repo.state_dir / "verify.json").read_text()
    widget = cli_in(repo, "recall", "--for", "src/widget.py").out  # the per-path index
    assert "The widget speaks JSON" in widget and "frobnicator" not in widget

    # The next fold re-reads the line's other item, never the forgotten one.
    folded = cli_in(repo, "fold", "--merger", "builtin", "--json").json("fold")
    assert folded["new_items"] == 1
    meta, body = digest_meta_body(repo)
    assert "refold" not in meta and "frobnicator" not in body and kept[:7] in body
    assert cli_in(repo, "search", "frobnicator", "--json").json("search")["results"] == []
    # A rebuilt index (missing, corrupt, after a redaction) honours the tombstone as well.
    (repo.state_dir / "search.sqlite").unlink()
    assert cli_in(repo, "search", "frobnicator", "--json").json("search")["results"] == []


def test_forgotten_is_one_check_for_citations_paths_and_lines() -> None:
    tombs = cites.tombstones_from(["tombstones/c-" + "a" * 40 + ".md", "tombstones/s-old-work.md"])
    assert cites.is_forgotten("c:aaaaaaa", tombs) and cites.is_forgotten("s:old-work", tombs)
    assert cites.is_forgotten(f"notes/2026/12/01/{'a' * 40}.md", tombs)
    assert cites.is_forgotten("sessions/old-work.md", tombs)
    assert cites.is_forgotten("- two things (c:bbbbbbb, c:aaaaaaa)", tombs)
    assert not cites.is_forgotten("- one thing (c:bbbbbbb, s:new-work)", tombs)
    assert not cites.is_forgotten("- c:aaaaaaa", frozenset())


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
    mined = repo.state_dir / "mined.sqlite"
    assert SECRET.encode() in mined.read_bytes()  # the fold's mined history holds the subject
    result = cli_in(repo, "redact", f"c:{sha[:7]}", "--pattern", SECRET, "--yes", "--json")
    assert result.code == 0, result
    data = result.json("redact")
    assert data["versions"] >= 2 and data["messages"] >= 1
    # No local file holds it: caches (the mined history, the indexes) dropped and rebuilt.
    held = [
        p for p in repo.state_dir.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()
    ]
    assert held == []
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


def test_redact_reaches_the_agent_files_and_verify_results(repo: Repo) -> None:
    text = session_text("Naming", decision=f"Name the project {SECRET} from now on")
    saved = cli_in(repo, "save", "--json", stdin=text)
    assert saved.code == 0, saved
    slug = str(saved.json("save")["slug"])
    # A model merger's Gotcha quoting it: the agent files carry Conventions and Gotchas.
    _plant_digest(repo, {"Gotchas": [f"- The project is called {SECRET} now (s:{slug})"]})
    assert cli_in(repo, "patch").code == 0
    agents_md = repo.path / "CLAUDE.md"
    assert SECRET in agents_md.read_text()  # the session's decision reached the agent file
    assert cli_in(repo, "verify").code in (0, 1)
    result = cli_in(repo, "redact", f"s:{slug}", "--pattern", SECRET, "--yes")
    assert result.code == 0, result
    assert SECRET not in agents_md.read_text()
    state = repo.git_dir / "gitvault"
    for path in state.rglob("*.json"):
        assert SECRET not in path.read_text(errors="replace"), path


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


def test_a_forget_reaches_a_teammates_recall_search_digest_and_agent_file(
    tmp_path: Path,
) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    seed(remote, tmp_path / "seed")
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    gone = a.commit("feat: the frobnicator speaks YAML")
    kept = a.commit("feat: the widget speaks JSON")
    assert a.gv("sync").code == 0 and b.gv("sync").code == 0
    # The teammate folded on their own: their digest stays theirs when the clones merge.
    line = f"- Frobnicator and widget share a parser (c:{gone[:7]}, c:{kept[:7]})"
    _plant_digest(b, {"Gotchas": [line]})
    # The line rests only on a's notes of commits b does not hold: accepted, it reaches b's
    # agent file (what comes only from another clone stays out of it until then).
    assert b.gv("review", "accept", "all").code == 0
    assert b.gv("patch").code == 0 and "Frobnicator" in (b.path / "CLAUDE.md").read_text()
    assert b.gv("search", "frobnicator", "--json").json("search")["results"]
    assert a.gv("forget", gone).code == 0 and a.gv("sync").code == 0

    assert b.gv("sync").code == 0
    _, body = digest_meta_body(b)
    assert "Frobnicator" not in body and b.git("log", "-1", "--format=%s", "vault").startswith(
        "forget:"
    )
    assert "Frobnicator" not in b.gv("recall").out
    assert b.gv("search", "frobnicator", "--json").json("search")["results"] == []
    assert "Frobnicator" not in (b.path / "CLAUDE.md").read_text()


def test_redact_reaches_private_sessions_state_files_and_names_what_it_leaves(
    repo: Repo, tmp_path: Path
) -> None:
    """Text only a --private session holds: that local-only ref is rewritten (recall stops
    showing it, redact says so); a state file quoting it is rewritten; the user's own branch
    holding the old history and a worktree with the vault checked out are named, not touched;
    gc deletes the HEAD reflog entries that name old commits."""
    secret = "hunter2-zebra-80"
    saved = cli_in(
        repo, "save", "--private", "--json", stdin=session_text("Mine", summary=f"Use {secret}.")
    )
    assert saved.code == 0 and saved.json("save")["private"], saved
    slug = saved.json("save")["slug"]
    assert secret in cli_in(repo, "recall").out
    planted = repo.state_dir / "log"
    planted.write_text(f"2026-12-01 a failure quoting {secret}\n")
    repo.git("branch", "mine", layout.PRIVATE_REF)  # the user's own copy of the old history
    audit = tmp_path / "audit"
    repo.git("worktree", "add", "-q", str(audit), "vault")
    repo.git("-C", str(audit), "checkout", "-q", "--detach", layout.PRIVATE_REF)

    done = cli_in(repo, "redact", f"s:{slug}", "--pattern", secret, "--yes")
    assert done.code == 0, done
    assert "only private sessions held the text" in done.out
    assert f"private sessions ({layout.PRIVATE_REF}" in done.out
    assert "refs/heads/mine still holds the old history" in done.out
    assert secret not in cli_in(repo, "recall").out
    assert secret not in planted.read_text() and "[REDACTED]" in planted.read_text()
    assert repo.git("rev-parse", "vault") and not [
        p for p in repo.vault_files() if p.startswith("redactions/")
    ]  # nothing shared held it: no record on the vault branch

    collected = cli_in(repo, "gc", "--yes")
    assert collected.code == 0, collected
    assert "refs/heads/mine still holds the old history" in collected.out
    assert f"the worktree {audit} has the vault checked out" in collected.out
    assert "reflog entries" in collected.out
    head_log = repo.git("-C", str(audit), "reflog", "show", "--format=%H", "HEAD").split()
    old_private = repo.git("rev-parse", "mine")
    assert old_private not in head_log
