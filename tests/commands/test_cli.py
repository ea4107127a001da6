"""The CLI surface: help for every command, `log` and `show`, the JSON envelope, exit codes."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import typer

from gitvault.cli import app
from gitvault.memory import history
from tests.support.repos import Repo, cli, cli_proc


def _commands(group: Any, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every (sub)command of the click group typer builds, hidden ones included."""
    out = []
    for name, cmd in sorted(group.commands.items()):
        out.append(((*prefix, name), cmd))
        if getattr(cmd, "commands", None):
            out += _commands(cmd, (*prefix, name))
    return out


ALL_COMMANDS = _commands(typer.main.get_command(app))


def test_the_foundation_commands_exist() -> None:
    names = {path[0] for path, _ in ALL_COMMANDS}
    assert {"install", "uninstall", "status", "backfill", "log", "show", "demo"} <= names


@pytest.mark.parametrize("path", [p for p, _ in ALL_COMMANDS], ids=lambda p: " ".join(p))
def test_every_command_has_help(path: tuple[str, ...]) -> None:
    cmd = dict(ALL_COMMANDS)[path]
    doc = (cmd.help or "").strip()
    assert doc, f"`gitvault {' '.join(path)}` has no docstring"
    result = cli(*path, "--help")
    assert result.code == 0, result
    assert "Usage:" in result.out
    assert doc.split("\n")[0][:30] in " ".join(result.out.split())


def test_top_level_help_and_version_from_the_real_entry_point(tmp_path: Path) -> None:
    result = cli_proc("--help", cwd=tmp_path)
    assert result.code == 0, result
    assert "install" in result.out and "backfill" in result.out
    version = cli_proc("--version", cwd=tmp_path)
    assert version.code == 0
    assert version.out.startswith("gitvault ")


def test_usage_errors_exit_2(repo: Repo) -> None:
    assert repo.gv("log", "-n", "0").code == 2
    assert repo.gv("no-such-command").code == 2
    assert repo.gv("show").code == 2, "ID is required"


def test_log_json_envelope_kinds_and_limits(repo: Repo) -> None:
    shas = [repo.commit(f"Logged change {i}") for i in range(3)]
    result = repo.gv("log", "--json")
    assert result.code == 0
    data = result.json("log")
    assert [e["kind"] for e in data] == ["note", "note", "note", "init"]
    assert [e["title"] for e in data[:3]] == [
        "Logged change 2",
        "Logged change 1",
        "Logged change 0",
    ]
    for entry, sha in zip(data[:3], reversed(shas), strict=True):
        assert set(entry) == {
            *("commit", "kind", "time", "title", "paths"),
            *("id", "date", "project_commit"),  # the project commit a note describes
        }
        assert entry["project_commit"] == sha and entry["id"] == f"c:{sha[:7]}"
        assert entry["paths"] == [repo.note_paths()[sha]]
        assert len(entry["commit"]) == 40
    assert data[0]["commit"] == repo.vault_tip()
    limited = repo.gv("log", "-n", "2", "--json").json("log")
    assert [e["commit"] for e in limited] == [e["commit"] for e in data[:2]]
    notes_only = repo.gv("log", "--kind", "note", "--json").json("log")
    assert len(notes_only) == 3 and all(e["kind"] == "note" for e in notes_only)
    assert repo.gv("log", "--kind", "session", "--json").json("log") == []
    bad = repo.gv("log", "--kind", "nonsense")
    assert bad.code == 1 and "unknown kind" in bad.err


def test_log_since_takes_dates_and_relative_dates_and_refuses_nonsense(
    repo: Repo, tmp_path: Path
) -> None:
    repo.commit("Recent")
    assert repo.gv("log", "--since", "2999-01-01", "--json").json("log") == []
    assert len(repo.gv("log", "--since", "2000-01-01", "--json").json("log")) == 2
    assert len(repo.gv("log", "--since", "1 week ago", "--json").json("log")) == 2
    # git's relative dates work with --repo from outside any repository, too
    outside = cli("--repo", str(repo.path), "log", "--since", "1 week ago", "--json", cwd=tmp_path)
    assert outside.code == 0, outside
    assert len(outside.json("log")) == 2
    bad = repo.gv("log", "--since", "not a date at all !!")
    assert bad.code == 1 and "cannot read the date" in bad.err


def test_log_reads_only_what_it_prints(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(5):
        repo.commit(f"c{i}")
    from gitvault.vault.store import Vault

    seen = 0
    original = Vault.history

    def counting(self, stop=None):  # type: ignore[no-untyped-def]
        nonlocal seen
        for commit in original(self, stop):
            seen += 1
            yield commit

    monkeypatch.setattr(Vault, "history", counting)
    assert len(repo.gv("log", "-n", "2", "--json").json("log")) == 2
    assert seen == 2


def test_log_prints_each_note_with_its_subject(repo: Repo) -> None:
    repo.commit("A table row")
    result = repo.gv("log")
    assert result.code == 0
    assert "A table row" in result.out and "note" in result.out


def test_show_by_full_sha_short_sha_and_path(repo: Repo) -> None:
    sha = repo.commit("Show me\n\nwith a body")
    path = repo.note_paths()[sha]
    expected = repo.note(sha)
    for ident in (sha, sha[:7], sha[:12], path):
        result = repo.gv("show", ident)
        assert result.code == 0, (ident, result)
        assert path in result.out
        assert "# Show me" in result.out and "with a body" in result.out
    data = repo.gv("show", sha[:7], "--json").json("show")
    assert data["path"] == path
    assert data["text"] == expected
    assert data["meta"]["sha"] == sha
    readme = repo.gv("show", "README.md")
    assert readme.code == 0 and "gitvault" in readme.out


def test_show_a_note_of_a_rebased_away_commit(repo: Repo) -> None:
    sha = repo.commit("Will be amended")
    repo.run("commit", "-q", "--amend", "-m", "Amended")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    assert repo.run("cat-file", "-e", sha, check=False).returncode != 0, "the commit is gone"
    result = repo.gv("show", sha[:10])
    assert result.code == 0, result
    assert "# Will be amended" in result.out


def test_show_unknown_is_a_clear_error(repo: Repo) -> None:
    result = repo.gv("show", "deadbeefdeadbeef")
    assert result.code == 1
    assert "nothing in the vault matches" in result.err
    assert "Traceback" not in result.err


def test_internal_errors_become_exit_70_with_a_log(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(history, "entries", boom)
    result = repo.gv("log")
    assert result.code == 70
    assert "internal error: RuntimeError: simulated bug" in result.err
    logs = list(repo.state_dir.glob("crash-*.log"))
    assert len(logs) == 1, "the crash log lives in the common git dir's gitvault folder"
    assert str(logs[0]) in result.err, "the message names the log"
    text = logs[0].read_text()
    lines = text.splitlines()
    assert lines[0].startswith("gitvault ") and lines[1].startswith("git version ")
    assert lines[2].startswith("pygit2 ") and lines[3].startswith("Python ")
    assert "Traceback" in text and "simulated bug" in text
    assert not list(tmp_path.glob("gitvault-crash-*.log"))
    assert "Traceback" not in result.err

    # The gitvault folder cannot be written: the temp dir takes the log.
    for log in logs:
        log.unlink()
    shutil.rmtree(repo.state_dir)
    repo.state_dir.write_text("not a folder")
    result = repo.gv("log")
    assert result.code == 70
    (fallback,) = tmp_path.glob("gitvault-crash-*.log")
    assert "simulated bug" in fallback.read_text() and str(fallback) in result.err
