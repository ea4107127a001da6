"""Capture without loops: when to ask the agent for a save (Stop), and the mechanical session
record written at PreCompact / SessionEnd when the agent did not save.

Per-session state is the ledger (gitvault.memory.ledger). "Unsaved work"
is the commits this session made since its last save — a commit counts only if its hash appears
in this session's own tool output, so parallel sessions never claim each other's work — or, when
capture.stop_after_turns > 0, that many turns since the last save.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from gitvault.agents import texts
from gitvault.agents.transcript import TranscriptSummary, commits_in, read_transcript
from gitvault.memory.ledger import LOOKBACK_SECONDS, STATE_DIR, SessionState, load, store
from gitvault.resolve import Location
from gitvault.vault import gitcmd
from gitvault.vault.gitcmd import CommitLine


def unsaved_commits(cwd: Path, state: SessionState, summary: TranscriptSummary) -> list[CommitLine]:
    since = max(state.last_save, time.time() - LOOKBACK_SECONDS)
    recent = gitcmd.recent_commits(cwd, since - 1)
    saved = set(state.saved)
    mine = commits_in(summary, [s for s in recent if s not in saved])
    return sorted(
        (recent[s] for s in mine if recent[s].time >= int(state.last_save)), key=lambda c: c.time
    )


def save_request(session_id: str, commits: list[CommitLine], turns: int) -> str:
    what = (
        f"this session made {len(commits)} commit(s) not yet in the project memory: "
        + "; ".join(f"{c.sha[:7]} {c.subject[:60]}" for c in commits[:5])
        if commits
        else f"{turns} turns of work are not yet in the project memory"
    )
    command = texts.save_command(
        cmd=texts.gitvault_cli(),
        agent="claude-code",
        title="<what this session did>",
        session_id=session_id,
    )
    return (
        f"gitvault: {what}. Save a short session summary now, then finish. Run exactly:\n"
        f"{command}\n{texts.NO_RECALL_COPY}"
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
    from gitvault.memory import sessions  # heavier imports only on this path

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
    head = gitcmd.ref_exists(cwd, "HEAD")
    saved = sessions.save_session(
        loc,
        text,
        session_id=session_id,
        agent="claude-code",
        mode="auto",
        extra={
            "commits": [c.sha for c in commits] or None,
            "prompt_count": summary.prompt_count,
            "head": head,
        },
    )
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
