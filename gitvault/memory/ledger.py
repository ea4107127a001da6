"""Per agent session: what it has saved and what it was asked to save (the ledger), kept in
<common git dir>/gitvault/claude-sessions/<id>.json. A save clears "unsaved work"; the Stop
hook reads it to ask only when a save is due and never twice for the same work.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gitvault.errors import GitvaultError
from gitvault.resolve import Location
from gitvault.vault import gitcmd
from gitvault.vault.locking import atomic_write

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
        existing = gitcmd.recent_commits(loc.workdir or loc.common_dir, since - 1)
    except GitvaultError:
        existing = {}
    known = set(state.saved)
    state.saved = (state.saved + [s for s in existing if s not in known])[-2000:]
    state.last_save = now
    state.turns_since_save = 0
    store(loc, state)
