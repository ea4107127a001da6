"""`gitvault checkpoint` (the /checkpoint skill): save a handover before the agent's context
runs out — what was asked, what the session committed, its open threads and its next step —
as a session marked `handover: true`, so that the next session in this worktree starts from it
(gitvault.memory.handovers; recall puts it first, once).

What was committed is read from the session's worktree HEAD reflog while it ran (its ledger's
runs, gitvault.memory.attribution), never taken from the agent's words. The rest is the agent's
text, saved like any session (gitvault.agents.capture.save: recall blocks and <private> text
removed, secrets redacted, the session marked saved in its ledger).
"""

from __future__ import annotations

from collections.abc import Mapping

from gitvault.agents import capture, ledger
from gitvault.memory import attribution, handovers
from gitvault.named import TYPE_CHECKING

if TYPE_CHECKING:
    from gitvault.memory.sessions import Saved
    from gitvault.resolve import Location


def session_commits(loc: Location, session_id: str | None) -> list[attribution.Made] | None:
    """The commits the agent session made while it ran (all of them, saved or not), oldest
    first; None without a session id (not known)."""
    if not session_id or not ledger.valid_session_id(session_id):
        return None
    state = ledger.load(loc, session_id)
    shas = ledger.commits_made(loc, state)
    cwd = loc.workdir or loc.common_dir
    return attribution.describe(cwd, shas) if shas else []


def checkpoint(
    loc: Location,
    raw: str,
    *,
    overrides: Mapping[str, str | None] | None = None,
    title: str | None = None,
    session_id: str | None = None,
    agent: str | None = None,
    private: bool = False,
) -> tuple[Saved, list[attribution.Made]]:
    """Save the handover; returns what was saved and the commits it lists."""
    given = handovers.given_sections(raw, overrides or {})
    made = session_commits(loc, session_id)
    name = handovers.title_for(given, title)
    listed = None if made is None else [(c.sha, c.subject) for c in made]
    text = handovers.compose(given, listed, name)
    saved = capture.save(
        loc,
        text,
        title=name,
        session_id=session_id,
        agent=agent,
        extra={handovers.FIELD: True, "commits": [c.sha for c in made or []] or None},
        private=private,
    )
    return saved, made or []
