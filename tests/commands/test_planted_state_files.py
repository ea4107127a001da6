"""A FIFO, or a link to a file elsewhere, standing at every state file gitvault keeps in
<common git dir>/gitvault/ (what a hostile process or an accident could leave there): every
command, a commit through the installed hooks and every agent hook through the launcher
finish in bounded time, the commit gets its note, and nothing is written through a link."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from gitvault.vault import files, statedir
from tests.support.claude_hooks import hook_env, sample
from tests.support.memory import cli_sub
from tests.support.repos import Repo

# Every state file (not folder) statedir names.
STATE_FILES = [
    statedir.SPOOL,
    statedir.PENDING,
    statedir.DRAIN_PID,
    statedir.DRAIN_LOCK,
    statedir.WALK,
    statedir.SET_ASIDE,
    statedir.SET_ASIDE_LOCK,
    statedir.LOG,
    statedir.LOG_ROTATED,
    statedir.FOLD_STATE,
    statedir.FOLD_BUDGET,
    statedir.FOLD_LEASE,
    statedir.FOLD_LOG,
    statedir.VERIFY,
    statedir.SEARCH_INDEX,
    statedir.SEARCH_LOCK,
    statedir.PATH_INDEX,
    statedir.PATH_INDEX_LOCK,
    statedir.KNOWN_PATHS,
    statedir.SYNC_STATE,
    statedir.SYNC_LOCK,
    statedir.HANDOVERS,
    # The materialized recall blocks and fold state (memory/ready, memory/vaultstate) and the
    # spooled records' writer lock (agents/records): read by the launcher's sh and the drainer.
    f"{statedir.READY}/{statedir.READY_MAIN}",
    f"{statedir.READY}/{statedir.READY_GEN}",
    f"{statedir.READY}/{statedir.READY_STATUS}",
    f"{statedir.READY}/{statedir.READY_LOCK}",
    f"{statedir.RECORDS}/{statedir.RECORDS_LOCK}",
]
# SQLite opens the files beside each database by name too.
STATE_FILES += [
    f"{db}{suffix}"
    for db in (statedir.SEARCH_INDEX, statedir.PATH_INDEX)
    for suffix in files.SQLITE_COMPANIONS[1:]
]

# Commands a user, a shell prompt or a hook runs, each bounded (a hang fails the test).
COMMANDS = [
    ("status", "--line"),
    ("status",),
    ("log",),
    ("recall",),
    ("search", "anything"),
    ("fold", "--merger", "builtin"),
    ("verify",),
]


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


def _plant(repo: Repo, kind: str, outside: Path, names: list[str]) -> None:
    for name in names:
        path = repo.state_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        if kind == "fifo":
            os.mkfifo(path)
        else:
            target = outside / name.replace("/", "_")
            target.write_bytes(b"precious: " + name.encode() + b"\n")
            path.symlink_to(target)


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_planted_state_files_hang_nothing_and_are_never_written_through(
    repo_factory, tmp_path: Path, kind: str
) -> None:
    repo: Repo = repo_factory(sync=False)  # background drainers, as in real use
    repo.commit("before", sync=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    _plant(repo, kind, outside, STATE_FILES)
    before = _digest(outside)
    sha = repo.commit("a commit with planted state files")
    repo.wait_for_notes([sha])
    for args in COMMANDS:
        done = cli_sub(repo, *args, timeout=60)
        assert done.code in (0, 1), (args, done)
        assert "Traceback" not in done.err, (args, done.err)
    repo.wait_no_drainer()
    assert _digest(outside) == before, "nothing was written through a link"
    assert sha in repo.note_paths()


SESSION = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
# The state files of one agent session, beside the repository's own.
SESSION_FILES = [
    f"{statedir.LEDGER}/{SESSION}.json",
    f"{statedir.SHOWN_PATHS}/{SESSION}",
    f"{statedir.QUIET}/{SESSION}",
    f"{statedir.QUIET}/{SESSION}{statedir.QUIET_BEAT_SUFFIX}",
    f"{statedir.QUIET}/{SESSION}{statedir.QUIET_START_SUFFIX}",
]


def _tool_call(repo: Repo, event: str, tool: str) -> dict[str, object]:
    return {
        "session_id": SESSION,
        "cwd": str(repo.path),
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": {"file_path": str(repo.path / "app.py")},
    }


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_planted_state_files_never_hang_an_agent_hook(
    repo_factory, tmp_path: Path, kind: str
) -> None:
    repo: Repo = repo_factory("proj", install=False)
    assert repo.gv("install", "--agent", "claude").code == 0
    repo.commit("feat: the app", {"app.py": "print('hi')\n"}, sync=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    _plant(repo, kind, outside, STATE_FILES + SESSION_FILES)
    before = _digest(outside)
    calls = [
        ("session-start", sample("SessionStart:startup", repo=repo, session_id=SESSION)),
        ("file-read", _tool_call(repo, "PostToolUse", "Read")),
        ("file-edit", _tool_call(repo, "PreToolUse", "Edit")),
        ("stop", sample("Stop:False", repo=repo, session_id=SESSION)),
        ("stop", sample("Stop:False", repo=repo, session_id=SESSION)),  # the quiet path's turn
        ("session-end", sample("SessionEnd:", repo=repo, session_id=SESSION)),
    ]
    for word, payload in calls:
        # Through the launcher, as the agent runs it: its sh reads state files too.
        done = subprocess.run(
            [str(repo.state_dir / statedir.LAUNCHER), "claude", word],
            input=json.dumps(payload),
            cwd=repo.path,
            env=hook_env(repo),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0 and "Traceback" not in done.stderr, (word, done.stderr)
    repo.wait_no_drainer()
    assert _digest(outside) == before, "nothing was written through a link"
