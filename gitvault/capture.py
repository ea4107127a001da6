"""Capture without loops: when to ask the agent for a save (Stop), and the mechanical session
record written at PreCompact / SessionEnd when the agent did not save.

Per-session state lives in <common git dir>/gitvault/claude-sessions/<id>.json. "Unsaved work"
is the commits this session made since its last save — a commit counts only if its hash appears
in this session's own tool output, so parallel sessions never claim each other's work — or, when
capture.stop_after_turns > 0, that many turns since the last save.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gitvault import git
from gitvault.errors import GitvaultError
from gitvault.locking import atomic_write
from gitvault.resolve import Location
from gitvault.transcript import TranscriptSummary, commits_in, read_transcript

STATE_DIR = "claude-sessions"
LOOKBACK_SECONDS = 3 * 24 * 3600
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass
class SessionState:
    session_id: str
    first_seen: float = 0.0
    turns_since_save: int = 0
    last_save: float = 0.0
    last_ask: float = 0.0
    asked: list[str] = field(default_factory=list)  # commits already asked about
    # Commits that existed when the session last saved: covered by that save. (A commit's
    # time has one-second resolution, so "made before last_save" alone misses a commit made
    # in the same second as the save.)
    saved: list[str] = field(default_factory=list)


def _path(loc: Location, session_id: str) -> Path:
    name = _SAFE.sub("_", session_id)[:100] or "unknown"
    return loc.state_dir / STATE_DIR / f"{name}.json"


def load(loc: Location, session_id: str) -> SessionState:
    try:
        data = json.loads(_path(loc, session_id).read_text(encoding="utf-8"))
        fields = {k: data[k] for k in SessionState.__dataclass_fields__ if k in data}
        return SessionState(**fields)
    except (OSError, ValueError, TypeError):
        return SessionState(session_id=session_id, first_seen=time.time())


def store(loc: Location, state: SessionState) -> None:
    path = _path(loc, state.session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(asdict(state)).encode())


def mark_saved(loc: Location, session_id: str | None) -> None:
    """A save clears the condition: older commits and turns no longer count as unsaved."""
    if not session_id:
        return
    state = load(loc, session_id)
    now = time.time()
    since = max(state.last_save, now - LOOKBACK_SECONDS)
    try:
        existing = _recent_commits(loc.workdir or loc.common_dir, since - 1)
    except GitvaultError:
        existing = {}
    known = set(state.saved)
    state.saved = (state.saved + [s for s in existing if s not in known])[-2000:]
    state.last_save = now
    state.turns_since_save = 0
    store(loc, state)


@dataclass(frozen=True)
class SessionCommit:
    sha: str
    time: int
    subject: str


def _recent_commits(cwd: Path, since: float) -> dict[str, SessionCommit]:
    """Commits on any branch (not the vault) or HEAD made after `since`."""
    branch = git.config_get(cwd, "gitvault.branch") or "vault"
    proc = git.run_git(
        [
            "log",
            f"--since={int(since)}",
            "--format=%H%x00%ct%x00%s",
            f"--exclude=refs/heads/{branch}",
            "--branches",
            "HEAD",
            "--",
        ],
        cwd,
        check=False,
    )
    out: dict[str, SessionCommit] = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        parts = line.split("\0")
        if len(parts) == 3 and parts[1].isdigit():
            out[parts[0]] = SessionCommit(parts[0], int(parts[1]), parts[2])
    return out


def unsaved_commits(
    cwd: Path, state: SessionState, summary: TranscriptSummary
) -> list[SessionCommit]:
    since = max(state.last_save, time.time() - LOOKBACK_SECONDS)
    recent = _recent_commits(cwd, since - 1)
    saved = set(state.saved)
    mine = commits_in(summary, [s for s in recent if s not in saved])
    return sorted(
        (recent[s] for s in mine if recent[s].time >= int(state.last_save)), key=lambda c: c.time
    )


def gitvault_command() -> str:
    """How the agent's shell can run gitvault (PATH first, else this interpreter)."""
    if shutil.which("gitvault"):
        return "gitvault"
    return f"{sys.executable} -m gitvault"


def save_request(session_id: str, commits: list[SessionCommit], turns: int) -> str:
    what = (
        f"this session made {len(commits)} commit(s) not yet in the project memory: "
        + "; ".join(f"{c.sha[:7]} {c.subject[:60]}" for c in commits[:5])
        if commits
        else f"{turns} turns of work are not yet in the project memory"
    )
    return (
        f"gitvault: {what}. Save a short session summary now, then finish. Run exactly:\n"
        f"{gitvault_command()} save --session-id {session_id} --agent claude-code "
        "--title \"<what this session did>\" <<'GITVAULT_EOF'\n"
        "## Summary\n<what was done and why, 2-5 lines>\n"
        "## Key Decisions\n- <decision — reason>\n"
        "## Next Steps\n- <what remains>\n"
        "GITVAULT_EOF\n"
        "Write only about this session's own work; never copy text from the VAULT RECALL block."
    )


def decide_stop(
    loc: Location, cwd: Path, payload: dict[str, Any], settings: dict[str, Any]
) -> dict[str, str] | None:
    """The Stop hook's answer: a block asking for a save, or None (let the agent stop)."""
    if payload.get("stop_hook_active") or payload.get("agent_id"):
        return None  # our own block's follow-up, or a subagent: never ask twice / for junk
    session_id = str(payload["session_id"])
    state = load(loc, session_id)
    state.turns_since_save += 1
    now = time.time()
    interval = float(settings.get("stop_min_interval_seconds", 600))
    after_turns = int(settings.get("stop_after_turns", 0))
    if state.last_ask and now - state.last_ask < interval:
        store(loc, state)
        return None
    summary = read_transcript(Path(str(payload.get("transcript_path") or "/nonexistent")))
    commits = [c for c in unsaved_commits(cwd, state, summary) if c.sha not in state.asked]
    due_turns = after_turns > 0 and state.turns_since_save >= after_turns
    if not commits and not due_turns:
        store(loc, state)
        return None
    state.last_ask = now
    state.asked = (state.asked + [c.sha for c in commits])[-500:]
    if due_turns:
        state.turns_since_save = 0
    store(loc, state)
    return {"decision": "block", "reason": save_request(session_id, commits, after_turns)}


def auto_record(
    loc: Location, cwd: Path, payload: dict[str, Any], trigger: str, settings: dict[str, Any]
) -> str | None:
    """Write a mechanical session record when this session has unsaved work; its slug or None."""
    from gitvault import sessions  # heavier imports only on this path

    session_id = str(payload["session_id"])
    state = load(loc, session_id)
    summary = read_transcript(Path(str(payload.get("transcript_path") or "/nonexistent")))
    commits = unsaved_commits(cwd, state, summary)
    after_turns = int(settings.get("stop_after_turns", 0))
    if not commits and not (after_turns > 0 and state.turns_since_save >= after_turns):
        return None
    first = (summary.first_prompt or "").strip().replace("\n", " ")
    last = (summary.last_prompt or "").strip().replace("\n", " ")
    commit_lines = "\n".join(f"- {c.sha[:7]} {c.subject}" for c in commits) or "- (none)"
    text = (
        f"# Automatic record: {first[:60] or 'session ' + session_id[:8]}\n\n"
        "## Summary\n"
        f"Mechanical record written by gitvault at {trigger}: the agent did not save this "
        f'session. {summary.prompt_count} prompt(s). First prompt: "{first[:300]}"\n\n'
        f"Commits made by this session:\n{commit_lines}\n\n"
        "## Key Decisions\n- Not recorded (mechanical record); see the commits above.\n\n"
        "## Next Steps\n"
        f'- Pick up from the last prompt: "{last[:300]}"\n'
    )
    head = git.run_git(["rev-parse", "-q", "--verify", "HEAD"], cwd, check=False)
    saved = sessions.save(
        loc,
        text,
        session_id=session_id,
        agent="claude-code",
        mode="auto",
        extra={
            "commits": [c.sha for c in commits] or None,
            "prompt_count": summary.prompt_count,
            "head": head.stdout.decode().strip() or None,
        },
    )
    mark_saved(loc, session_id)
    return saved.slug


def prune(loc: Location, max_age_days: int = 30) -> None:
    folder = loc.state_dir / STATE_DIR
    cutoff = time.time() - max_age_days * 86400
    try:
        for path in folder.iterdir():
            if path.stat().st_mtime < cutoff:
                path.unlink(missing_ok=True)
    except OSError:
        pass
