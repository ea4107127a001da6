"""Capture without loops, beside the ledger it reads: when to ask the agent for a save (turn
end), the mechanical session record written at pre-compact / session end when the agent did
not save, and the save itself, which marks the session saved in its ledger.

"Unsaved work" is the commits this session made since its last save (gitvault.memory.attribution:
its own worktree's HEAD moved to them by creating them while it ran — never a hash it merely
printed), or, when capture.stop_after_turns > 0, that many turns since the last save.

Two sessions live in the SAME worktree at once cannot be told apart by the reflog. Then a commit
is claimed only by a session whose own transcript shows its hash (where the adapter reads the
agent's transcript); a quiet commit made while both ran is claimed by neither session's record,
and stays in the vault as its commit note.

The turn end checks the cheap conditions first: no transcript is read, the reflog is read from
its end (no process), and git runs for the settings and, only when there is a commit to name,
once more. Every function here takes the hook call's ledger as loaded (HookCall.state) and
leaves storing it to the call.
"""

from __future__ import annotations

import time

from gitvault.agents import ledger, texts
from gitvault.memory import attribution
from gitvault.named import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from gitvault.agents.behaviours import HookCall
    from gitvault.memory.sessions import Saved
    from gitvault.resolve import Location


def _runs(call: HookCall) -> list[attribution.Run]:
    runs = call.state.attribution_runs()
    if runs:
        return runs
    # No session start was seen (a session from before gitvault was installed, or its hook did
    # not run): the session began when its transcript did.
    start = call.adapter.transcript_start(call.payload)
    return [] if start is None else [attribution.Run(start, None)]


def session_commits(call: HookCall) -> list[str]:
    """The commits this session made that no save covers yet (shas, oldest first)."""
    loc, state = call.loc, call.state
    git_dir = ledger.session_git_dir(loc, state)
    runs = _runs(call)
    saved = set(state.saved)
    shas = [s for s in attribution.made_in(git_dir, runs) if s not in saved]
    if not shas:
        return []
    since = min(r.start for r in runs)
    rivals = [
        o
        for o in ledger.others(loc, state.session_id, since)
        if (o.git_dir or str(loc.git_dir)) == str(git_dir)
        and _overlap(o.attribution_runs(), runs, o.last_active)
    ]
    if rivals:  # two sessions in one worktree: only what this session's transcript shows
        shown = call.adapter.commits_shown(call.payload, shas)
        # The rest may still show up there (an agent writes its transcript when it likes).
        call.undecided = call.undecided or len(shown) < len(shas)
        shas = shown
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
    cli: str | None,
    agent: str,
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
        session_id=session_id if ledger.valid_session_id(session_id) else None,
        heredoc=heredoc,
    )
    return texts.stop_reason(what, command)


def decide_stop(call: HookCall) -> dict[str, str] | None:
    """The turn end's answer: a block asking for a save, or None (let the agent stop)."""
    payload = call.payload
    if payload.get("stop_hook_active") or payload.get("agent_id"):
        return None  # our own block's follow-up, or a subagent: never ask twice / for junk
    state = call.state
    state.turns_since_save += 1
    now = time.time()
    settings = call.settings()
    interval = float(settings.get("stop_min_interval_seconds", 600))
    after_turns = int(settings.get("stop_after_turns", 0))
    if state.last_ask and now - state.last_ask < interval:
        return None
    asked = set(state.asked)
    shas = [s for s in session_commits(call) if s not in asked]
    due_turns = after_turns > 0 and state.turns_since_save >= after_turns
    commits = attribution.describe(call.cwd, shas) if shas else []
    if not commits and not due_turns:
        # Nothing due, and nothing can become due without a new commit, setting or vault tip
        # (the launcher answers the next turn ends without Python while none comes).
        call.quiet = not shas and after_turns == 0 and bool(_runs(call)) and not call.undecided
        return None
    state.last_ask = now
    state.asked = (state.asked + [c.sha for c in commits])[-500:]
    if due_turns:
        state.turns_since_save = 0
    reason = save_request(
        state.session_id,
        commits,
        after_turns,
        state.cli or None,
        call.adapter.agent,
        not call.adapter.escapes_angles,
    )
    return {"decision": "block", "reason": reason}


def auto_record(call: HookCall, trigger: str) -> str | None:
    """Ask for a mechanical session record when this session has unsaved work: the request is
    spooled durably and written by the drainer (gitvault.agents.records), off the agent's wait;
    the ledger counts the work saved now, as a save does. The request's name, or None."""
    from gitvault.agents import records
    from gitvault.vault import gitcmd

    loc, state = call.loc, call.state
    shas = session_commits(call)  # described (subjects; vault commits dropped) by the writer
    after_turns = int(call.settings().get("stop_after_turns", 0))
    due_turns = after_turns > 0 and state.turns_since_save >= after_turns
    if trigger == "session-end":
        state.close_run(time.time(), attribution.reflog_size(ledger.session_git_dir(loc, state)))
    if not shas and not due_turns:
        return None
    now = time.time()
    name = records.spool(
        loc,
        {
            "session_id": state.session_id,
            "agent": call.adapter.name,
            "trigger": trigger,
            "at": now,
            "commits": shas,
            "turns": due_turns,  # a record of turns, when no commit remains to name
            "cwd": str(call.cwd),  # the worktree whose HEAD the record names (when written)
            "transcript": str(call.payload.get("transcript_path") or ""),
            "seen": state.transcript,
            # Where it was saved from (memory.sessions.where_saved, read now: the drainer runs
            # later, maybe after a checkout).
            "branch": (gitcmd.head_branch(loc.git_dir) or "")[:200] or None,
            "worktree": loc.worktree_name[:200],
        },
    )
    ledger.mark_saved(state, ledger.commits_made(loc, state), now)
    records.write_soon(loc)
    return name


def save(
    loc: Location,
    raw: str,
    *,
    title: str | None = None,
    session_id: str | None = None,
    agent: str | None = None,
    mode: str = "manual",
    extra: dict[str, Any] | None = None,
    private: bool = False,
    state: ledger.SessionState | None = None,
) -> Saved:
    """Append a session to the vault (gitvault.memory.sessions), then mark its agent session
    saved, so its turn-end hook no longer asks for this work. `state`: the ledger a hook call
    already loaded (it stores it); without, the ledger is loaded and stored here, once."""
    from gitvault.memory import sessions

    own = state is None and session_id is not None
    if own:
        assert session_id is not None
        state = ledger.load(loc, session_id)
    made = ledger.commits_made(loc, state) if state is not None else []
    extra = dict(extra or {})
    if mode == "manual" and "commits" not in extra:
        # What this session made (its worktree's HEAD reflog while it ran): a later recall
        # knows this save covers the same work as a mechanical record of it.
        extra["commits"] = made or None
    saved = sessions.save_session(
        loc,
        raw,
        title=title,
        session_id=session_id,
        agent=agent,
        mode=mode,
        extra=extra,
        private=private,
    )
    if state is not None:
        ledger.mark_saved(state, made, time.time())
        if own:
            ledger.store(loc, state)
    from gitvault.pathrecall.index import update_quietly

    update_quietly(loc, rebuild_here=False)  # the session's decisions, steps: edit time
    from gitvault.materialize import ready

    ready.after_change(loc)  # and for the next session start's block
    return saved
