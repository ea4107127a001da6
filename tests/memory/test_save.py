"""`gitvault save` (APPEND): one session file per save, one vault commit, cleaned before writing,
refused (nothing written) when the sections are missing or nothing is left."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import jsonschema
import pytest

from gitvault.memory import sessions
from gitvault.resolve import resolve
from gitvault.vault import frontmatter
from gitvault.vault.store import PathTaken, Vault
from tests.support.memory import cli_in, cli_sub, session_text, vault_log, vault_text
from tests.support.paths import ROOT
from tests.support.repos import Repo

SCHEMA = json.loads((ROOT / "schemas" / "session.schema.json").read_text())
FIXED = datetime(2026, 3, 4, 5, 6, 7, tzinfo=timezone(timedelta(hours=2)))
AWS_KEY = "AKIA" + "Q3EXAMPLE7KEY5ZZ"  # 16 characters after AKIA: a token-shaped secret
GH_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def session_files(repo: Repo) -> list[str]:
    names = repo.git("ls-tree", "-r", "--name-only", "vault", "sessions").splitlines()
    return [n for n in names if n.endswith(".md")]


def saved_meta(repo: Repo, path: str) -> tuple[dict[str, object], str]:
    text = vault_text(repo, path)
    assert text is not None
    meta, body = frontmatter.parse(text)
    jsonschema.validate(meta, SCHEMA)  # against the shipped schema, not through gitvault
    return meta, body


# --------------------------------------------------------------------------- writing


def test_save_from_stdin_writes_one_session_as_one_vault_commit(repo: Repo) -> None:
    before = repo.vault_tip()
    text = session_text("Wire the cache", "Added an LRU cache in front of the store.")
    result = cli_in(repo, "save", "--session-id", "abc-123", "--agent", "claude-code", stdin=text)
    assert result.code == 0, result
    files = session_files(repo)
    assert len(files) == 1
    path = files[0]
    assert path.startswith("sessions/") and path.endswith("-wire-the-cache.md")
    stamp = path[len("sessions/") :][:15]
    datetime.strptime(stamp, "%Y-%m-%d-%H%M")  # sessions/YYYY-MM-DD-HHMM-<slug>.md
    assert f"saved {path}" in result.out
    # exactly one new vault commit, whose parent is the old tip, saying what it did
    log = repo.git("log", "--format=%H %P %s", f"{before}..vault").splitlines()
    assert len(log) == 1
    sha, parent, subject = log[0].split(" ", 2)
    assert parent == before
    assert subject == f"session {path[len('sessions/') : -3]}"
    assert repo.git("diff-tree", "--no-commit-id", "--name-only", "-r", sha) == path
    meta, body = saved_meta(repo, path)
    assert meta["kind"] == "session" and meta["mode"] == "manual"
    assert meta["slug"] == path[len("sessions/") : -3]
    assert meta["title"] == "Wire the cache"
    assert meta["session_id"] == "abc-123" and meta["agent"] == "claude-code"
    assert "redactions" not in meta
    assert body.startswith("# Wire the cache\n")
    assert body.count("# Wire the cache") == 1  # the title heading is not repeated
    for heading in ("## Summary", "## Key Decisions", "## Next Steps"):
        assert heading in body
    assert "Added an LRU cache in front of the store." in body


def test_save_from_a_file_with_title_and_other_sections(repo: Repo, tmp_path: Path) -> None:
    src = tmp_path / "session.md"
    src.write_text(session_text("ignored heading") + "\n## Gotchas\n- pygit2 needs Oid(hex=)\n")
    result = cli_in(repo, "save", str(src), "--title", "Refactor the store", "--json")
    assert result.code == 0, result
    data = json.loads(result.out)
    assert data["gitvault"] == 1 and data["kind"] == "save"
    saved = data["data"]
    assert saved["path"] == f"sessions/{saved['slug']}.md"
    assert saved["slug"].endswith("-refactor-the-store")
    assert saved["redactions"] == 0
    assert repo.git("rev-parse", "vault") == saved["commit"]
    meta, body = saved_meta(repo, saved["path"])
    assert meta["title"] == "Refactor the store"
    assert "## Gotchas\n- pygit2 needs Oid(hex=)" in body


def test_save_through_the_real_entry_point(repo: Repo) -> None:
    result = cli_sub(repo, "save", "-", stdin=session_text("From a subprocess"))
    assert result.code == 0, result
    assert any(p.endswith("-from-a-subprocess.md") for p in session_files(repo))


def test_missing_file_is_a_clear_error_and_nothing_is_written(repo: Repo) -> None:
    before = repo.vault_tip()
    result = cli_in(repo, "save", str(repo.path / "no-such-file.md"))
    assert result.code == 1
    assert "cannot read" in result.err and "no-such-file.md" in result.err
    assert repo.vault_tip() == before


# --------------------------------------------------------------------------- cleaning


def test_recall_fences_private_blocks_and_secrets_never_reach_the_vault(repo: Repo) -> None:
    text = (
        "=== VAULT RECALL ===\n## Decisions\n- OLD MEMORY: use tabs (c:1234567)\n"
        "=== END VAULT RECALL ===\n"
        "# Deploy fix\n\n## Summary\nFixed the deploy script.\n"
        "<private>the staging password is hunter2</private>\n"
        f"The key was {AWS_KEY} and the token {GH_TOKEN}.\n"
        "DATABASE_URL=postgres://app:s3cr3tpw@db.internal/app\n\n"
        "## Key Decisions\n- Keep blue/green\n\n## Next Steps\n- Rotate the key\n"
    )
    result = cli_in(repo, "save", stdin=text)
    assert result.code == 0, result
    assert "redacted 3 secret(s)" in result.out
    (path,) = session_files(repo)
    meta, body = saved_meta(repo, path)
    assert meta["redactions"] == 3
    stored = vault_text(repo, path) or ""
    for leaked in (
        "OLD MEMORY",
        "VAULT RECALL",
        "hunter2",
        "<private>",
        AWS_KEY,
        GH_TOKEN,
        "s3cr3tpw",
    ):
        assert leaked not in stored, leaked
    assert "[REDACTED:aws_access_key_id]" in body and "[REDACTED:github_token]" in body
    assert "postgres://app:[REDACTED:url_password]@db.internal/app" in body
    assert "Fixed the deploy script." in body and "Keep blue/green" in body


def test_sections_inside_a_recall_block_do_not_count(repo: Repo) -> None:
    before = repo.vault_tip()
    text = (
        "## Summary\nReal work.\n"
        "=== VAULT RECALL ===\n## Key Decisions\n- recalled\n## Next Steps\n- recalled\n"
        "=== END VAULT RECALL ===\n"
    )
    result = cli_in(repo, "save", stdin=text)
    assert result.code == 1
    assert "## Key Decisions" in result.err and "## Next Steps" in result.err
    assert repo.vault_tip() == before


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("## Summary\nDid a thing.\n## Next Steps\n- more\n", ["## Key Decisions"]),
        ("just some prose, no sections\n", ["## Summary", "## Key Decisions", "## Next Steps"]),
        ("## Summary\n\n## Key Decisions\n- a\n## Next Steps\n- b\n", ["Summary is empty"]),
        (
            "=== VAULT RECALL ===\n" + session_text() + "=== END VAULT RECALL ===\n",
            ["nothing is left"],
        ),
        ("<private>\n" + session_text() + "</private>\n", ["nothing is left"]),
        ("   \n\n", ["nothing is left"]),
    ],
    ids=["one-missing", "all-missing", "empty-summary", "only-recall", "only-private", "blank"],
)
def test_refused_saves_say_what_to_fix_and_write_nothing(
    repo: Repo, text: str, expect: list[str]
) -> None:
    before = repo.vault_tip()
    result = cli_in(repo, "save", stdin=text)
    assert result.code == 1, result
    assert result.out == ""
    for fragment in expect:
        assert fragment in result.err, result.err
    assert "hint:" in result.err  # what to do about it
    assert repo.vault_tip() == before
    assert session_files(repo) == []


def test_refused_save_through_the_real_entry_point(repo: Repo) -> None:
    before = repo.vault_tip()
    result = cli_sub(repo, "save", stdin="## Summary\nonly a summary\n")
    assert result.code == 1
    assert "lacks ## Key Decisions, ## Next Steps" in result.err
    assert repo.vault_tip() == before


# --------------------------------------------------------------------------- slugs


@pytest.mark.parametrize(
    "title",
    [
        "../../etc/passwd",
        "..\\..\\windows\\system32",
        "evil\x00name\x1b[31m\nsecond line\ttab",
        "x" * 500,
        "Wörk ön Ünïcödé – “quotes” / slashes",
        "....",
        "\x01\x02\x03",
    ],
    ids=["traversal", "backslashes", "control", "long", "unicode", "dots", "only-control"],
)
def test_slug_is_sanitised(repo: Repo, title: str) -> None:
    result = cli_in(repo, "save", "--title", title, stdin=session_text())
    assert result.code == 0, result
    (path,) = session_files(repo)
    name = path[len("sessions/") : -3]
    assert "/" not in name and ".." not in name and "\\" not in name
    assert all(c.isascii() and (c.isalnum() or c == "-") for c in name), name
    assert name == name.lower()
    assert len(name) <= 16 + 48
    meta, _ = saved_meta(repo, path)  # the schema's slug pattern and title length hold
    assert meta["slug"] == name
    assert not any(ord(c) < 32 for c in str(meta["title"]))


def test_same_title_in_the_same_minute_gets_distinct_slugs(repo: Repo) -> None:
    loc = resolve(repo.path)
    first = sessions.save_session(loc, session_text("Same title", "first"), now=FIXED)
    second = sessions.save_session(loc, session_text("Same title", "second"), now=FIXED)
    third = sessions.save_session(
        loc, session_text("Same title", "third"), now=FIXED + timedelta(seconds=30)
    )
    assert first.slug == "2026-03-04-0506-same-title"
    assert second.slug == "2026-03-04-0506-same-title-2"
    assert third.slug == "2026-03-04-0506-same-title-3"
    for saved, word in ((first, "first"), (second, "second"), (third, "third")):
        _, body = saved_meta(repo, saved.path)
        assert word in body  # nothing was overwritten
    # a title whose own slug ends in -2 does not clash either
    other = sessions.save_session(loc, session_text("Same title 2", "fourth"), now=FIXED)
    assert other.slug == "2026-03-04-0506-same-title-2-2"
    assert len(session_files(repo)) == 4


def test_quick_saves_through_the_cli_never_overwrite(repo: Repo) -> None:
    for word in ("alpha", "beta", "gamma"):
        assert cli_in(repo, "save", "--title", "Twice", stdin=session_text(summary=word)).code == 0
    files = session_files(repo)
    assert len(files) == 3
    bodies = {vault_text(repo, f) for f in files}
    assert all(any(w in (b or "") for b in bodies) for w in ("alpha", "beta", "gamma"))


def test_a_session_is_never_overwritten_or_edited(repo: Repo) -> None:
    loc = resolve(repo.path)
    saved = sessions.save_session(loc, session_text("Keep me", "original"), now=FIXED)
    original = vault_text(repo, saved.path)
    vault = Vault(loc)
    with pytest.raises(PathTaken):
        vault.commit({saved.path: b"tampered"}, "session tamper", create_only=True)
    # the internal writer refuses an existing slug too (a racing save takes the next slug)
    with pytest.raises(PathTaken):
        sessions._write(
            vault, saved.slug, "x", "## Summary\nx\n", FIXED, 0, None, None, "manual", None
        )
    assert vault_text(repo, saved.path) == original
    # later saves and a fold leave it alone: exactly one commit ever touched the file
    sessions.save_session(loc, session_text("Another"), now=FIXED)
    assert cli_in(repo, "fold", "--merger", "builtin").code == 0
    touching = repo.git("log", "--format=%H", "vault", "--", saved.path).splitlines()
    assert touching == [saved.commit]
    assert vault_text(repo, saved.path) == original


def test_save_is_refused_for_a_vault_of_a_newer_format(repo: Repo) -> None:
    vault = Vault(resolve(repo.path))
    text = (vault.read_text("vault.toml") or "").replace(
        "format_version = 1", "format_version = 99"
    )
    vault.commit({"vault.toml": text.encode()}, "config format 99")
    before = repo.vault_tip()
    result = cli_in(repo, "save", stdin=session_text())
    assert result.code == 3
    assert "format 99" in result.err
    assert repo.vault_tip() == before
    assert vault_log(repo)[0] == "config format 99"


_DEPLOYED = "## Summary\nDeployed.\n\n## Key Decisions\n- Blue/green\n\n## Next Steps\n- None\n"


def test_a_secret_in_a_title_reaches_neither_file_name_nor_commit(repo: Repo) -> None:
    title = "deploy with DB_PASS=qwertyuiop"
    done = cli_in(repo, "save", "--title", title, "--json", stdin=_DEPLOYED)
    slug = done.json("save")["slug"]
    assert "qwertyuiop" not in slug
    assert "qwertyuiop" not in repo.git("log", "-p", "vault")
