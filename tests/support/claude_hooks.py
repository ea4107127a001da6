"""Helpers for the Claude Code integration tests: the hook inputs Claude Code really sends
(tests/data/claude-hook-inputs.json, recorded from the real CLI), hooks run as subprocesses with
that JSON on stdin, transcripts written like the stored fixtures, and readings of gitvault's
per-session state."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.support.paths import DATA
from tests.support.repos import Repo, wait_until

SAMPLES: dict[str, Any] = json.loads((DATA / "claude-hook-inputs.json").read_text("utf-8"))
FIXTURES = DATA / "transcripts"
EVENTS = {
    "session-start": "SessionStart:startup",
    "stop": "Stop:False",
    "pre-compact": "PreCompact:manual",
    "session-end": "SessionEnd",
}
RECALL_SECRET = "RECALL-SECRET-FACT"  # inside the recall block stored in every fixture
FIXTURE_SHA = "bed9245"  # the commit the commit_compact fixture's tool output shows


def sample(
    key: str,
    *,
    repo: Repo | None = None,
    transcript: Path | None = None,
    session_id: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A recorded hook input (e.g. "Stop:False"), pointed at this repository and transcript."""
    payload: dict[str, Any] = copy.deepcopy(SAMPLES[key]["input"])
    if repo is not None:
        payload["cwd"] = str(repo.path)
    if transcript is not None:
        payload["transcript_path"] = str(transcript)
    if session_id is not None:
        payload["session_id"] = session_id
    payload.update(fields)
    return payload


def hook_env(repo: Repo | None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment Claude Code gives a command hook (observed), over the test's own."""
    env = dict(os.environ)
    env.update(
        {"CLAUDECODE": "1", "CLAUDE_CODE_CHILD_SESSION": "1", "CLAUDE_CODE_ENTRYPOINT": "sdk-cli"}
    )
    if repo is not None:
        env["CLAUDE_PROJECT_DIR"] = str(repo.path)
    env.update(extra or {})
    return env


def run_hook(
    event: str,
    payload: Any,
    *,
    repo: Repo | None,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """`python -m gitvault.hook claude EVENT` with the payload on stdin (a str is sent as is),
    run in the project directory as Claude Code does."""
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [sys.executable, "-m", "gitvault.hook", "claude", event],
        input=raw,
        cwd=cwd or (repo.path if repo is not None else None),
        env=hook_env(repo, env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def records_written(repo: Repo, timeout: float = 60) -> None:
    """Wait until the drainer wrote the session records PreCompact / SessionEnd spooled
    (gitvault.agents.records: off the hook's wait)."""
    from gitvault.agents import records
    from gitvault.resolve import resolve

    loc = resolve(repo.path)
    wait_until(lambda: not records.pending(loc), timeout=timeout, what="the spooled records")


def fixture_lines(name: str) -> list[str]:
    return (FIXTURES / f"{name}.jsonl").read_text("utf-8").splitlines()


def write_transcript(
    path: Path,
    *,
    commit: tuple[str, str] | None = None,
    session_id: str | None = None,
    extra_entries: Sequence[dict[str, Any]] = (),
    fixture: str | None = None,
) -> Path:
    """A transcript made from a stored fixture. With `commit` (sha, subject), the
    commit_compact fixture with its `git commit` tool output rewritten to show that commit;
    without, the plain fixture. extra_entries are appended as further JSONL lines."""
    name = fixture or ("commit_compact" if commit else "plain")
    text = "\n".join(fixture_lines(name))
    if commit is not None:
        sha, subject = commit
        assert FIXTURE_SHA in text
        text = text.replace(f"[main {FIXTURE_SHA}] fix greeting", f"[main {sha[:7]}] {subject}")
    if session_id is not None:
        entries = [json.loads(line) for line in fixture_lines(name)]
        old = next(e["sessionId"] for e in entries if e.get("sessionId"))
        text = text.replace(old, session_id)
    lines = text.splitlines() + [json.dumps(e) for e in extra_entries]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def unknown_entry(session_id: str = "s") -> dict[str, Any]:
    """An entry type no version of Claude Code wrote so far (the format changes)."""
    return {
        "type": "holo-deck-state",
        "uuid": str(uuid.uuid4()),
        "sessionId": session_id,
        "payload": {"deep": [1, 2, {"x": None}]},
        "timestamp": "2026-11-30T00:00:00Z",
    }


def state_files(repo: Repo) -> dict[str, bytes]:
    """gitvault's per-session Claude state files (name → bytes)."""
    folder = repo.state_dir / "claude-sessions"
    if not folder.is_dir():
        return {}
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def session_state(repo: Repo, session_id: str) -> dict[str, Any] | None:
    path = repo.state_dir / "claude-sessions" / f"{session_id}.json"
    return json.loads(path.read_text()) if path.exists() else None


def state_dir_listing(repo: Repo) -> dict[str, tuple[int, int]]:
    """Every file under the state dir with its (size, mtime_ns): a write anywhere shows, but to
    the store of compiled patterns (gitvault.lazyre), which any process that compiles one the
    store lacks adds to (a cache of the package's own patterns: no state)."""
    from gitvault.vault.statedir import PATTERN_STORE

    out = {}
    root = repo.state_dir
    if root.is_dir():
        for p in sorted(root.rglob("*")):
            if p.is_file() and p.relative_to(root) != Path(PATTERN_STORE):
                st = p.stat()
                out[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


def log_text(repo: Repo) -> str:
    path = repo.state_dir / "log"
    return path.read_text("utf-8") if path.exists() else ""


def sessions_in_vault(repo: Repo) -> list[str]:
    return [p for p in repo.vault_files() if p.startswith("sessions/")]


def fold_processes(repo: Repo) -> list[int]:
    """Live (not zombie) `gitvault … fold` processes for this repository."""
    needle = str(repo.path).encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parts = cmdline.split(b"\0")
        ours = b"gitvault" in cmdline and b"fold" in parts and needle in cmdline
        if ours and stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
            pids.append(int(entry.name))
    return pids
