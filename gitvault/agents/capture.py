"""Capture without loops: when to ask the agent for a save (Stop), and the mechanical session
record written at PreCompact / SessionEnd when the agent did not save.

Per-session state is the ledger (gitvault.memory.ledger). "Unsaved work" is the commits this
session made since its last save (gitvault.memory.attribution: its own worktree's HEAD moved to
them by creating them while it ran — never a hash it merely printed), or, when
capture.stop_after_turns > 0, that many turns since the last save.

Two sessions live in the SAME worktree at once cannot be told apart by the reflog. Then a commit
is claimed only by a session whose own transcript shows its hash (the old evidence); a quiet
commit made while both ran is claimed by neither session's record, and stays in the vault as
its commit note.

Stop checks the cheap conditions first: no transcript is read, the reflog is read from its end
(no process), and git runs for the settings and, only when there is a commit to name, once more.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gitvault.agents import texts
from gitvault.memory import attribution
from gitvault.memory.ledger import (
    STATE_DIR,
    SessionState,
    load,
    others,
    session_git_dir,
    store,
    valid_session_id,
)
from gitvault.resolve import Location

Settings = Callable[[], dict[str, Any]]


def _runs(state: SessionState, payload: dict[str, Any]) -> list[attribution.Run]:
    runs = state.attribution_runs()
    if runs:
        return runs
    # No SessionStart was seen (a session from before gitvault was installed, or its hook did
    # not run): the session began when its transcript did.
    from gitvault.agents.transcript import first_timestamp

    start = first_timestamp(str(payload.get("transcript_path") or "/nonexistent"))
    return [] if start is None else [attribution.Run(start, None)]


def session_commits(loc: Location, state: SessionState, payload: dict[str, Any]) -> list[str]:
    """The commits this session made that no save covers yet (shas, oldest first)."""
    git_dir = session_git_dir(loc, state)
    runs = _runs(state, payload)
    saved = set(state.saved)
    shas = [s for s in attribution.made_in(git_dir, runs) if s not in saved]
    if not shas:
        return []
    since = min(r.start for r in runs)
    rivals = [
        o
        for o in others(loc, state.session_id, since)
        if (o.git_dir or str(loc.git_dir)) == str(git_dir)
        and _overlap(o.attribution_runs(), runs, o.last_active)
    ]
    if rivals:  # two sessions in one worktree: only what this session's transcript shows
        from gitvault.agents.transcript import commits_in, read_transcript

        summary = read_transcript(Path(str(payload.get("transcript_path") or "/nonexistent")))
        shas = commits_in(summary, shas)
    return shas


def _overlap(theirs: list[attribution.Run], mine: list[attribution.Run], seen: float) -> bool:
    now = time.time()
    return any(
        a.start <= (b.end or now) and b.start <= (a.end or seen or now)
        for a in theirs
        for b in mine
    )


def save_request(
    session_id: str,
    commits: list[attribution.Made],
    turns: int,
    cli: str | None = None,
    agent: str = "claude-code",
    heredoc: bool = True,
) -> str:
    what = (
        f"this session made {len(commits)} commit(s) not yet in the project memory: "
        + "; ".join(f"{c.sha[:7]} {c.subject[:60]}" for c in commits[:5])
        if commits
        else f"{turns} turns of work are not yet in the project memory"
    )
    command = texts.save_command(
        cmd=cli or texts.gitvault_cli(),
        agent=agent,
        title="<what this session did>",
        session_id=session_id if valid_session_id(session_id) else None,
        heredoc=heredoc,
    )
    return texts.stop_reason(what, command)


def decide_stop(
    loc: Location,
    cwd: Path,
    payload: dict[str, Any],
    read_settings: Settings,
    *,
    agent: str = "claude-code",
    heredoc: bool = True,
) -> dict[str, str] | None:
    """The Stop hook's answer: a block asking for a save, or None (let the agent stop)."""
    if payload.get("stop_hook_active") or payload.get("agent_id"):
        return None  # our own block's follow-up, or a subagent: never ask twice / for junk
    session_id = str(payload["session_id"])
    state = load(loc, session_id)
    state.turns_since_save += 1
    now = time.time()
    settings = read_settings()
    interval = float(settings.get("stop_min_interval_seconds", 600))
    after_turns = int(settings.get("stop_after_turns", 0))
    if state.last_ask and now - state.last_ask < interval:
        store(loc, state)
        return None
    asked = set(state.asked)
    shas = [s for s in session_commits(loc, state, payload) if s not in asked]
    due_turns = after_turns > 0 and state.turns_since_save >= after_turns
    commits = attribution.describe(cwd, shas) if shas else []
    if not commits and not due_turns:
        store(loc, state)
        return None
    state.last_ask = now
    state.asked = (state.asked + [c.sha for c in commits])[-500:]
    if due_turns:
        state.turns_since_save = 0
    store(loc, state)
    reason = save_request(session_id, commits, after_turns, state.cli or None, agent, heredoc)
    return {"decision": "block", "reason": reason}


def auto_record(
    loc: Location,
    cwd: Path,
    payload: dict[str, Any],
    trigger: str,
    read_settings: Settings,
    *,
    agent: str = "claude-code",
) -> str | None:
    """Write a mechanical session record when this session has unsaved work; its slug or None.
    The transcript is read incrementally (from where the last call stopped) for prompt facts."""
    from gitvault.agents.transcript import scan_prompts

    session_id = str(payload["session_id"])
    state = load(loc, session_id)
    settings = read_settings()
    shas = session_commits(loc, state, payload)
    commits = attribution.describe(cwd, shas) if shas else []
    after_turns = int(settings.get("stop_after_turns", 0))
    due_turns = after_turns > 0 and state.turns_since_save >= after_turns
    transcript = str(payload.get("transcript_path") or "")
    if transcript:
        state.transcript = scan_prompts(transcript, state.transcript)
    if trigger == "session-end":
        state.close_run(time.time(), attribution.reflog_size(session_git_dir(loc, state)))
    store(loc, state)
    if not commits and not due_turns:
        return None
    from gitvault.memory import sessions  # heavier imports only on this path

    facts = state.transcript
    prompts = int(facts.get("prompts") or 0)
    first, last = facts.get("first"), facts.get("last")
    title = texts.auto_record_title([c.subject for c in commits], last, session_id)
    text = texts.auto_record_text(
        title=title,
        trigger=trigger,
        commits=[(c.sha, c.subject) for c in commits],
        prompts=prompts,
        first_prompt=first if isinstance(first, str) else None,
        last_prompt=last if isinstance(last, str) else None,
    )
    from gitvault.vault import gitcmd

    saved = sessions.save_session(
        loc,
        text,
        title=title,
        session_id=session_id,
        agent=agent,
        mode="auto",
        extra={
            "commits": [c.sha for c in commits] or None,
            "prompt_count": prompts,
            "head": gitcmd.ref_exists(cwd, "HEAD"),
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
