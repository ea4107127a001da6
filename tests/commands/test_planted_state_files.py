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

# Every state file (not folder) statedir names, and the ones it names by a pattern. The
# launcher is left out: a hook that cannot run it logs that `gitvault install` must run again
# (tests/notes/test_shims.py), and no note is written until then.
STATE_FILES = [name for name in statedir.FILES if name != statedir.LAUNCHER]
STATE_FILES += [statedir.sync_lock("origin"), statedir.agent_file("claude", "stamp")]
# SQLite opens the files beside each database by name too.
STATE_FILES += [
    f"{db}{suffix}"
    for db in (statedir.SEARCH_INDEX, statedir.PATH_INDEX)
    for suffix in files.SQLITE_COMPANIONS[1:]
]
# Names statedir spells that are neither a file nor a folder of the state folder.
NOT_PATHS = {
    statedir.STATE_DIRNAME,  # the state folder itself
    statedir.CRASH_LOG_PREFIX,
    statedir.QUIET_BEAT_SUFFIX,
    statedir.QUIET_START_SUFFIX,
    statedir.RECORD_SUFFIX,
    statedir.FORMAT_KEY,
    # Names inside a folder: FILES holds them with their folder.
    statedir.READY_MAIN,
    statedir.READY_GEN,
    statedir.READY_LOCK,
    statedir.READY_STATUS,
    statedir.READY_FILES,  # a prefix: FILES holds the main worktree's blocks file
    statedir.CONFIG_CACHE,  # a prefix: FILES holds the main worktree's cache
    statedir.RECORDS_LOCK,
}


def test_every_name_statedir_spells_is_planted_here() -> None:
    spelled = {
        value
        for key, value in vars(statedir).items()
        if key.isupper() and isinstance(value, str) and value not in NOT_PATHS
    }
    listed = set(statedir.FILES) | set(statedir.FOLDERS)
    inside = {n for n in listed if "/" in n and n.split("/", 1)[0] in statedir.FOLDERS}
    assert spelled == listed - inside  # a name inside a listed folder is listed with it


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
        elif kind == "folder":
            path.mkdir()
            (path / "inside").write_bytes(b"precious\n")
        else:
            target = outside / name.replace("/", "_")
            target.write_bytes(b"precious: " + name.encode() + b"\n")
            path.symlink_to(target)


@pytest.mark.parametrize("kind", ["fifo", "link", "folder"])
def test_planted_state_files_hang_nothing_and_are_never_written_through(
    repo_factory, tmp_path: Path, kind: str
) -> None:
    repo: Repo = repo_factory(sync=False)  # background drainers, as in real use
    repo.commit("before", sync=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    # A folder at the drainer's lock stops every note (no drain without the lock; a folder is
    # never removed): the next test says how the user learns it.
    names = [n for n in STATE_FILES if not (kind == "folder" and n == statedir.DRAIN_LOCK)]
    _plant(repo, kind, outside, names)
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
    if kind == "folder":
        kept = [n for n in names if (repo.state_dir / n / "inside").is_file()]
        assert kept == names, "a folder is never removed or emptied"


def test_a_folder_at_the_drainers_lock_is_named_with_the_fix(repo_factory) -> None:
    repo: Repo = repo_factory(sync=False)
    (repo.state_dir / statedir.DRAIN_LOCK).mkdir()
    repo.commit("no drain can take the lock")
    status = cli_sub(repo, "status", timeout=60)
    said = " ".join((status.out + status.err).split())
    assert "drain.lock is a folder" in said and "move it away" in said, status


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


@pytest.mark.parametrize("kind", ["fifo", "link", "folder"])
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
