"""Per agent session: when it ran, where, what it saved, what it was asked to save and what
recall it already carries (the ledger), kept in <common git dir>/gitvault/FOLDER/<id>.json.

A hook loads its session's ledger once and stores it at most once (gitvault.agents.behaviours);
`gitvault save` marks the session saved through it (gitvault.agents.capture.save).

- `runs`: the [start, end] intervals the session was live (SessionStart opens one, SessionEnd
  closes it; an open one ends "now"). A commit belongs to the session when its worktree's HEAD
  moved to it by creating it inside one of them (gitvault.memory.attribution).
- `saved`: commits covered by a save; `asked`: commits the Stop hook already asked about.
- `recall`: a hash per recall part (digest, each session, patterns) this conversation has in its
  context, so a resume injects only what changed.
- `transcript`: how far the transcript was read, and the prompt facts gathered so far.

Which files' edit-time blocks the session got is its own small file (gitvault.agents.shown):
the tool hooks of parallel calls must not rewrite this one.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from gitvault import lazyre
from gitvault.memory.attribution import Run
from gitvault.named import TYPE_CHECKING
from gitvault.resolve import Location
from gitvault.vault import files, launcher, statedir

if TYPE_CHECKING:
    from typing import Any

FOLDER = statedir.LEDGER  # below the state folder
LOOKBACK_SECONDS = 3 * 24 * 3600
MAX_RUNS = 50
# What a session id may look like (every agent's are UUIDs); the hook input schemas say the
# same. Anything else is refused before it can reach a file name or a command line.
SESSION_ID = lazyre.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_SAFE = lazyre.compile(r"[^A-Za-z0-9._-]")


def valid_session_id(value: object) -> bool:
    return isinstance(value, str) and SESSION_ID.fullmatch(value) is not None


class SessionState:
    """One agent session's ledger. A plain class, not a dataclass: `dataclasses` pulls in
    `inspect` (~15 ms) on every Stop hook."""

    FIELDS = (
        "session_id",
        "first_seen",
        "turns_since_save",
        "last_save",
        "last_ask",
        "last_active",
        "asked",
        "saved",
        "runs",
        "git_dir",
        "worktree",
        "branch",
        "cli",
        "recall",
        "transcript",
    )

    def __init__(
        self,
        session_id: str,
        first_seen: float = 0.0,
        turns_since_save: int = 0,
        last_save: float = 0.0,
        last_ask: float = 0.0,
        last_active: float = 0.0,
        asked: list[str] | None = None,
        saved: list[str] | None = None,
        runs: list[list[float | None]] | None = None,
        git_dir: str = "",
        worktree: str = "",
        branch: str = "",
        cli: str = "",
        recall: dict[str, str] | None = None,
        transcript: dict[str, Any] | None = None,
        known: bool = False,
    ) -> None:
        self.session_id = session_id
        self.first_seen = first_seen
        self.turns_since_save = turns_since_save
        self.last_save = last_save
        self.last_ask = last_ask
        self.last_active = last_active
        self.asked: list[str] = asked if asked is not None else []  # commits already asked about
        self.saved: list[str] = saved if saved is not None else []  # commits a save covered
        # [start, end, reflog size at start, at end]; end None while the run is open.
        self.runs: list[list[float | None]] = runs if runs is not None else []
        self.git_dir = git_dir  # the session's worktree git dir (its HEAD reflog is the evidence)
        self.worktree = worktree
        self.branch = branch
        self.cli = cli  # how this session's Bash tool runs gitvault (set at SessionStart)
        self.recall: dict[str, str] = recall if recall is not None else {}
        self.transcript: dict[str, Any] = transcript if transcript is not None else {}
        self.known = known  # False: no ledger file existed (set by load)
        self.beats = 0  # turns the launcher answered, folded in by load (removed by store)
        # A session start the launcher answered was folded in by load (its record is removed
        # by store).
        self.sh_started = False

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.FIELDS}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SessionState) and self.as_dict() == other.as_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SessionState({self.as_dict()!r})"

    def attribution_runs(self) -> list[Run]:
        """The intervals the session was live (an open one is still running)."""
        out = []
        for run in self.runs:
            if not isinstance(run, list) or not run or not isinstance(run[0], int | float):
                continue
            values = [*run, None, None, None][:4]
            end, begin_at, end_at = values[1], values[2], values[3]
            out.append(
                Run(
                    float(run[0]),
                    float(end) if isinstance(end, int | float) else None,
                    int(begin_at) if isinstance(begin_at, int | float) else None,
                    int(end_at) if isinstance(end_at, int | float) else None,
                )
            )
        return out

    def open_run(self, now: float, reflog_at: int | None) -> None:
        """A SessionStart: open an interval unless one is open. One left open by a session that
        died without SessionEnd is closed at its last sign of life first (its end offset is
        then unknown, so that run is matched by time)."""
        if self.runs and len(self.runs[-1]) > 1 and self.runs[-1][1] is None:
            last = self.runs[-1]
            if self.last_active and now - self.last_active > 600:
                last[1] = max(float(last[0] or 0), self.last_active)
                del last[2:]
            else:
                return
        self.runs = (self.runs + [[now, None, reflog_at, None]])[-MAX_RUNS:]
        if not self.first_seen:
            self.first_seen = now

    def close_run(self, now: float, reflog_at: int | None) -> None:
        if self.runs and len(self.runs[-1]) > 1 and self.runs[-1][1] is None:
            run = [*self.runs[-1], None, None][:4]
            run[1], run[3] = now, reflog_at
            self.runs[-1] = run


def path_for(loc: Location, session_id: str) -> Path:
    name = _SAFE.sub("_", session_id)[:100] or "unknown"
    return loc.state_dir / FOLDER / f"{name}.json"


def _from_data(data: dict[str, Any]) -> SessionState | None:
    fields = {k: data[k] for k in SessionState.FIELDS if k in data}
    try:
        state = SessionState(**fields)
    except TypeError:
        return None
    state.known = True
    return state


def _beats(loc: Location, session_id: str) -> tuple[int, float]:
    """The turn ends the launcher answered without Python since the ledger was last stored
    (one byte each in the quiet beat file, gitvault.agents.quiet), and when the last was."""
    if not valid_session_id(session_id):
        return 0, 0.0
    try:
        info = os.lstat(statedir.quiet_beat(loc, session_id))
    except OSError:
        return 0, 0.0
    if not stat.S_ISREG(info.st_mode):
        return 0, 0.0
    return min(info.st_size, 1_000_000), info.st_mtime


def _with_beats(loc: Location, state: SessionState) -> SessionState:
    beats, when = _beats(loc, state.session_id)
    if beats:
        state.turns_since_save += beats
        state.last_active = max(state.last_active, when)
        state.beats = beats
    return _with_start(loc, state)


def _start(loc: Location, session_id: str) -> tuple[float, int, dict[str, Any]] | None:
    """A session start the launcher answered (its record, gitvault/vault/launcher): when, the
    worktree's reflog size then, and what the ledger takes from it."""
    if not valid_session_id(session_id):
        return None
    path = statedir.start_record(loc, session_id)
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            return None
        found = launcher.start_record(files.read_regular(path, 65_536))
    except OSError:
        return None
    return None if found is None else (info.st_mtime, found[0], found[1])


def _with_start(loc: Location, state: SessionState) -> SessionState:
    """Fold a start the launcher answered into the ledger, as the Python session start would
    have recorded it: its run (from when, at which reflog offset), its worktree and branch, and
    the recall parts the conversation now holds."""
    found = _start(loc, state.session_id)
    if found is None:
        state.sh_started = os.path.lexists(statedir.start_record(loc, state.session_id))
        return state  # none, or one that cannot be read: removed at the next store
    when, reflog_at, fields = found
    state.open_run(when, reflog_at)
    for name in ("git_dir", "worktree", "branch"):
        value = fields.get(name)
        if isinstance(value, str):
            setattr(state, name, value)
    parts = fields.get("recall")
    if isinstance(parts, dict) and all(isinstance(v, str) for v in parts.values()):
        state.recall = {str(k): v for k, v in parts.items()}
    if not state.known:
        state.first_seen = min(state.first_seen or when, when)
        state.known = True
    state.last_active = max(state.last_active, when)
    state.sh_started = True
    return state


def load(loc: Location, session_id: str) -> SessionState:
    """The session's ledger, with the turns the launcher answered since it was stored; a new
    one (known False) when there is none or it is unreadable."""
    data = files.load_json_object(path_for(loc, session_id))
    state = _from_data(data) if data is not None else None
    if state is None or state.session_id != session_id:
        return _with_start(loc, SessionState(session_id=session_id, first_seen=time.time()))
    return _with_beats(loc, state)


def store(loc: Location, state: SessionState) -> None:
    state.last_active = time.time()
    path = path_for(loc, state.session_id)
    files.make_dirs(path.parent)
    files.write_json(path, state.as_dict(), durable=False)  # a crash loses only bookkeeping
    if state.beats:  # counted in the ledger now (a turn answered meanwhile is not lost twice)
        try:
            statedir.quiet_beat(loc, state.session_id).unlink()
        except OSError:
            pass
        state.beats = 0
    if state.sh_started:  # in the ledger now (the launcher answers no start while it exists)
        try:
            statedir.start_record(loc, state.session_id).unlink()
        except OSError:
            pass
        state.sh_started = False


def others(loc: Location, session_id: str, since: float) -> list[SessionState]:
    """Other sessions active since `since` (their ledger written since then)."""
    folder = loc.state_dir / FOLDER
    out = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    mine = path_for(loc, session_id).name
    for entry in entries:
        try:
            if entry.name == mine:
                continue
            written = entry.stat().st_mtime
        except OSError:
            continue
        beat = _beats(loc, entry.name.removesuffix(".json"))[1]
        if max(written, beat) < since:
            continue
        data = files.load_json_object(entry.path)
        if data is None or not isinstance(data.get("session_id"), str):
            continue
        state = _from_data(data)
        if state is not None:
            out.append(_with_beats(loc, state))
    return out + _started_only(loc, session_id, since)


def _started_only(loc: Location, session_id: str, since: float) -> list[SessionState]:
    """Sessions whose start the launcher answered since `since` and which have no ledger yet."""
    suffix = statedir.QUIET_START_SUFFIX
    try:
        entries = [e for e in os.scandir(loc.state_dir / statedir.QUIET) if e.name.endswith(suffix)]
    except OSError:
        return []
    out = []
    for entry in entries:
        sid = entry.name.removesuffix(suffix)
        if sid == session_id or not valid_session_id(sid) or path_for(loc, sid).exists():
            continue
        state = _with_start(loc, SessionState(session_id=sid, first_seen=time.time()))
        if state.runs and state.last_active >= since:
            out.append(state)
    return out


def session_git_dir(loc: Location, state: SessionState) -> Path:
    return Path(state.git_dir) if state.git_dir else loc.git_dir


def recorded_git_dir(loc: Location, session_id: str) -> Path:
    """session_git_dir from the stored ledger, without loading it for the call (a look that
    must not make the call store it)."""
    data = files.load_json_object(path_for(loc, session_id))
    value = data.get("git_dir") if data is not None else None
    if not (isinstance(value, str) and value):
        started = _start(loc, session_id)
        value = started[2].get("git_dir") if started is not None else None
    return Path(value) if isinstance(value, str) and value else loc.git_dir


def commits_made(loc: Location, state: SessionState) -> list[str]:
    """The commits the session made so far (its worktree's HEAD reflog while it ran); [] when
    the session is unknown or its reflog unreadable."""
    from gitvault.errors import GitvaultError
    from gitvault.memory import attribution

    if not state.known:
        return []
    try:
        return attribution.made_in(session_git_dir(loc, state), state.attribution_runs())
    except (OSError, GitvaultError):
        return []


def mark_saved(state: SessionState, made: list[str], now: float) -> None:
    """A save clears the condition: the commits the session made so far, and its turns, no
    longer count as unsaved."""
    known = set(state.saved)
    state.saved = (state.saved + [s for s in made if s not in known])[-2000:]
    state.last_save = now
    state.turns_since_save = 0


def prune(loc: Location, max_age_days: int = 30) -> None:
    """Forget sessions not seen for a month (a turn the launcher answered counts as seen), and
    the quiet stamps of sessions forgotten."""
    from gitvault.agents import shown

    folder = loc.state_dir / FOLDER
    cutoff = time.time() - max_age_days * 86400
    try:
        for path in folder.iterdir():
            if max(path.stat().st_mtime, _beats(loc, path.stem)[1]) < cutoff:
                path.unlink(missing_ok=True)
    except OSError:
        pass
    quiet = loc.state_dir / statedir.QUIET
    try:
        for path in quiet.iterdir():
            if path.name.endswith(statedir.QUIET_START_SUFFIX):
                # A start no Python hook of its session followed yet: kept while it may.
                if os.lstat(path).st_mtime < cutoff:
                    path.unlink(missing_ok=True)
                continue
            session = path.name.removesuffix(statedir.QUIET_BEAT_SUFFIX)
            if not path_for(loc, session).exists():
                path.unlink(missing_ok=True)
    except OSError:
        pass
    shown.prune(loc, cutoff)
