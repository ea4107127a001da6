"""gitvault's own folder in the common git dir (<common git dir>/gitvault/, never on the
branch, never shared): the one module that names every local state file in it, and the typed
readers and writers of the JSON ones. Standard library only (the hooks import it).

Nothing else in gitvault spells one of these names, the shell shims included: their parts say
`@SPOOL@`, `@LOG@`, … and notes/shims fills them in from SHIM_NAMES when it installs them.

JSON state files carry a format version (`"format": N`; a file without one is format 1, what
releases before versioning wrote). A reader treats a file it cannot read — missing, not a
regular file, over its cap, not strict JSON, not an object, or of a newer format than this
gitvault knows — as absent; a writer leaves a newer format's file alone rather than overwrite
what a later gitvault (sharing this clone) keeps there.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from gitvault.errors import GitvaultError
from gitvault.named import TYPE_CHECKING, NamedTuple
from gitvault.resolve import STATE_DIRNAME, Location
from gitvault.vault.files import (
    atomic_write,
    load_json_object,
    make_dirs,
    open_regular,
    parse_json,
    read_regular,
    write_json,
)

if TYPE_CHECKING:
    from typing import Any

# -- the notes' pipeline (the git shims append, notes/drain writes the notes) -------------------
SPOOL = "spool"  # one tab-separated line per commit, appended by the shims
SPOOL_WORK = "spool.work"  # spool files a drainer claimed (a crash leaves them for the next one)
PENDING = "pending"  # commits made during a rebase, kept until it ends
DRAIN_PID = "drain.pid"  # which drainer runs (a hint for the shims: they check /proc)
DRAIN_LOCK = "drain.lock"  # one drainer at a time
WALK = "walk.json"  # how far the drainer has read every worktree's HEAD log (notes/walk)
# Mechanical session records PreCompact and SessionEnd asked for, one JSON file each
# (RECORD_SUFFIX) until the drainer wrote the record into the vault (gitvault.agents.records).
RECORDS = "records"
RECORD_SUFFIX = ".record"
RECORDS_LOCK = "writer.lock"
SET_ASIDE = "quarantine.jsonl"  # spool lines whose note could not be written (notes/quarantine)
SET_ASIDE_LOCK = "quarantine.lock"
LAUNCHER = "bin/gitvault-hook"  # which gitvault the hooks run (vault/launcher)
# Where the shims go when core.hooksPath names a folder inside the working tree (tracked hooks
# gitvault must not touch): core.hooksPath points here, and each hook forwards to that folder's.
CHAINED_HOOKS = "hooks"
LOG = "log"  # the failure log `gitvault status` shows (vault/locking)
LOG_ROTATED = "log.1"
CRASH_LOG_PREFIX = "crash-"  # an internal error's report (commands/common)

# -- the fold ---------------------------------------------------------------------------------
FOLD_STATE = "fold-state.json"  # what the last fold attempt left (FoldState)
FOLD_BUDGET = "fold-budget.json"  # characters sent to a model today and in total (Budget)
# One fold at a time: an flock on this file, which also names the holder. Written in place,
# never renamed over: a new inode would not be the one the holder locked.
FOLD_LEASE = "fold.lease"
FOLD_LOG = "fold.log"  # a background fold's output
VERIFY = "verify.json"  # `gitvault verify`'s results, keyed by the digest blob they checked
# The mined history (gitvault.fold.history): every note as the miner and the truth model read
# it, with the miner's counts; an SQLite cache brought forward as notes arrive, rebuilt from the
# vault whenever it is missing, corrupt, of another format or behind a rewritten history.
MINED = "mined.sqlite"
MINED_LOCK = "mined.lock"

# -- memory -----------------------------------------------------------------------------------
SEARCH_INDEX = "search.sqlite"  # `gitvault search`'s FTS5 index: a cache, rebuilt from the vault
SEARCH_LOCK = "search.lock"
# One JSON file per agent session (memory/ledger). The folder keeps the name gitvault 0.1 gave
# it, when Claude Code was the only agent: renaming it would lose running sessions' ledgers.
LEDGER = "claude-sessions"
# What the vault knows per project path (gitvault.pathrecall): an SQLite cache rebuilt from the
# vault whenever it is missing, corrupt, of another format or behind a rewritten history.
PATH_INDEX = "paths.sqlite"
PATH_INDEX_LOCK = "paths.lock"
# The paths the index knows, one a line, sorted bytewise, after a header line naming the format
# and the vault tip the index was built from: "nothing known" is one small file read (and one
# `grep -Fx` for a shell).
KNOWN_PATHS = "recall-paths"
# Per agent session, the project paths whose edit-time block it already got: one file per
# session id, one path a line, appended under an flock (tool hooks of one session run in
# parallel; a line is never lost and a path never shown twice).
SHOWN_PATHS = "recall-shown"
# Per agent session, what its last turn end found nothing due against (the launcher's sh reads
# it and answers a turn end without Python while it holds: gitvault/vault/launcher), and beside
# it the session's turns answered that way (QUIET_BEAT_SUFFIX: one byte a turn).
QUIET = "quiet"
QUIET_BEAT_SUFFIX = ".seen"
# Beside them, a session start the launcher answered from a materialized recall (below): one
# record per start, which the session's ledger folds in (gitvault.agents.ledger).
QUIET_START_SUFFIX = ".start"
# The recall block SessionStart injects, materialized per worktree when the vault changes
# (gitvault.materialize.ready) with everything it was built from, so the launcher's sh can serve a
# session start without Python while all of it still holds (gitvault/vault/launcher). One file
# per worktree (READY_MAIN: the main one; a linked worktree's name), and READY_GEN: a token
# every write of a state file the block reads (FEEDS_RECALL) replaces.
# Beside them (named "@…", never a worktree's name; a name with a leading dot is an atomic write's
# temporary file): the token, the refresh's lock, the vault's fold state for `status --line`.
READY = "recall-ready"
READY_MAIN = "@"
READY_GEN = "@gen"
READY_LOCK = "@refresh.lock"
READY_STATUS = "@status"  # memory/vaultstate
# A worktree's edit-time blocks, materialized beside its ready file (gitvault.materialize.blocks):
# READY_FILES + the worktree's ready key.
READY_FILES = "@files."


def is_ready_key(name: str) -> bool:
    """Whether a name in the READY folder is a worktree's ready file."""
    return name == READY_MAIN or (name[:1].isascii() and name[:1].isalnum())


# The package's own regular expressions, compiled once per Python and kept (gitvault.lazyre):
# the secret filter's cost 20-40 ms to compile in every process that redacts. Pattern source
# and the engine's program for it, never anything a vault or a session holds.
PATTERN_STORE = "regex.cache"
_patterns_kept = False


def keep_patterns(state_dir: Path) -> None:
    """Compile through the store in `state_dir` for the rest of the process; what this process
    adds to it is written back when it exits (best effort, never a failure)."""
    global _patterns_kept
    if _patterns_kept:
        return
    _patterns_kept = True
    from gitvault import lazyre

    target = state_dir / PATTERN_STORE
    try:
        data: bytes | None = read_regular(target, lazyre.MAX_STORE_BYTES)
    except OSError:  # missing, a link, a FIFO, too large: start empty (the write replaces it)
        data = None
    lazyre.adopt(data)
    import atexit

    atexit.register(_write_patterns, target)


def _write_patterns(target: Path) -> None:
    from gitvault import lazyre

    try:
        data = lazyre.export()
        if data is not None and target.parent.is_dir():
            atomic_write(target, data, durable=False)
    except (OSError, ValueError):
        pass  # a cache: the next process compiles again


# The handovers (`gitvault checkpoint`) this clone's recall already offered, by slug: local, as
# the offer is (gitvault.memory.handovers says why it is never a vault commit).
HANDOVERS = "handovers.json"
# The pages `gitvault view` wrote (absolute paths, outside the repository): each holds vault
# text, so forget and redact write them again from the vault as it is now.
VIEW_PAGES = "view-pages.json"

# Digests of the vault.toml texts this clone found valid against this gitvault's schema (the
# schema's bytes are in each digest): a command that only reads the settings does not import
# jsonschema (~60-90 ms) to check a text it already checked (vault/schemas.validate_text).
VALIDATED = "validated.json"
# gitvault's git config keys of a worktree and the files they were read from (vault/configcache)
CONFIG_CACHE = "config-cache."
CONFIG_CACHE_MAIN = CONFIG_CACHE + READY_MAIN  # the main worktree's
TOML_CACHE = "toml-cache.json"  # vault.toml's text at the last few vault tips (vault/configcache)

# -- sharing ----------------------------------------------------------------------------------
SYNC_STATE = "sync.json"  # per remote: when, what, result (sync/state)
SYNC_LOCK = "sync.lock"  # held briefly around the read-modify-write of sync's state files
# Where a fetch lands first (sync/remote): a throwaway repository per fetch, whose objects enter
# the repository only once git fsck passed them; removed whatever happens.
SYNC_INCOMING = "incoming"


def sync_lock(remote_key: str) -> str:
    """One sync of a remote at a time; syncs of different remotes never wait for each other."""
    return f"sync-{remote_key}.lock"


SYNC_QUARANTINE = "quarantine"  # what sync refused: one JSON record per sync (sync/state)
# Which vault files came from another clone, through which remote, and their review state
# (vault/origin): written by sync only, so a remote cannot make its files look local. A snapshot
# (ORIGINS) and what sync appended since (ORIGINS_LOG, one JSON object a line): a sync records
# what it took in time that follows what came, not the size of the record.
ORIGINS = "origins.json"
ORIGINS_LOG = "origins.log"

# Every name above by what stands there, a file or a folder: what the tests plant FIFOs, links
# and folders at (tests/commands/test_planted_state_files.py fails for a name in neither).
FILES = (
    SPOOL,
    PENDING,
    DRAIN_PID,
    DRAIN_LOCK,
    WALK,
    SET_ASIDE,
    SET_ASIDE_LOCK,
    LAUNCHER,
    LOG,
    LOG_ROTATED,
    FOLD_STATE,
    FOLD_BUDGET,
    FOLD_LEASE,
    FOLD_LOG,
    VERIFY,
    VALIDATED,
    CONFIG_CACHE_MAIN,
    TOML_CACHE,
    MINED,
    MINED_LOCK,
    SEARCH_INDEX,
    SEARCH_LOCK,
    PATH_INDEX,
    PATH_INDEX_LOCK,
    KNOWN_PATHS,
    HANDOVERS,
    VIEW_PAGES,
    SYNC_STATE,
    SYNC_LOCK,
    ORIGINS,
    ORIGINS_LOG,
    PATTERN_STORE,
    f"{READY}/{READY_MAIN}",
    f"{READY}/{READY_GEN}",
    f"{READY}/{READY_LOCK}",
    f"{READY}/{READY_STATUS}",
    f"{READY}/{READY_FILES}{READY_MAIN}",
    f"{RECORDS}/{RECORDS_LOCK}",
)
FOLDERS = (
    SPOOL_WORK,
    CHAINED_HOOKS,
    LEDGER,
    SHOWN_PATHS,
    QUIET,
    SYNC_INCOMING,
    SYNC_QUARANTINE,
    READY,
    RECORDS,
)

# What the shims' templates say instead of a name (`@SPOOL@` …), filled in at install.
SHIM_NAMES = {
    "STATE_DIR": STATE_DIRNAME,
    "SPOOL": SPOOL,
    "LOG": LOG,
    "DRAIN_PID": DRAIN_PID,
    "LAUNCHER": LAUNCHER,
}

JSON_LIMIT = 4 * 1024 * 1024  # no state file gitvault writes comes near this
FORMAT_KEY = "format"


def ensure(loc: Location) -> Path:
    """Create (if needed) and return the state folder."""
    try:
        make_dirs(loc.state_dir)
    except OSError as exc:
        raise GitvaultError(
            f"cannot write to {loc.common_dir}: {exc.strerror}",
            hint="check the permissions of the repository's .git directory",
        ) from exc
    return loc.state_dir


def path(loc: Location, name: str) -> Path:
    return loc.state_dir / name


def quiet_stamp(loc: Location, session_id: str) -> Path:
    """The quiet stamp of a session whose id is a valid one (agents/ledger.valid_session_id)."""
    return loc.state_dir / QUIET / session_id


def quiet_beat(loc: Location, session_id: str) -> Path:
    return loc.state_dir / QUIET / (session_id + QUIET_BEAT_SUFFIX)


def start_record(loc: Location, session_id: str) -> Path:
    """A session start the launcher answered, not yet in the session's ledger."""
    return loc.state_dir / QUIET / (session_id + QUIET_START_SUFFIX)


def ready_key(loc: Location) -> str:
    """The name of a worktree's materialized recall in the READY folder."""
    return READY_MAIN if loc.git_dir == loc.common_dir else loc.git_dir.name


def ready_file(loc: Location, key: str | None = None) -> Path:
    return loc.state_dir / READY / (key or ready_key(loc))


def ready_gen(loc: Location) -> str:
    """The READY_GEN token (a new one when there is none). Raises OSError."""
    path = loc.state_dir / READY / READY_GEN
    try:
        text = read_regular(path, 200).decode("ascii", "replace").strip()
    except FileNotFoundError:
        text = ""
    if not text:
        text = os.urandom(12).hex()
        make_dirs(path.parent)
        atomic_write(path, text.encode() + b"\n")
    return text


def recall_inputs_changed(loc: Location) -> None:
    """A state file the recall block reads was written: no materialized block built before
    now is served (a new token in READY_GEN, which each one names). Nothing to do when nothing
    was ever materialized. Raises OSError when the folder cannot be written."""
    folder = loc.state_dir / READY
    if folder.is_dir():
        atomic_write(folder / READY_GEN, os.urandom(12).hex().encode() + b"\n")


def agent_file(agent: str, what: str) -> str:
    """The state file an agent adapter keeps about its own wiring (`claude-stamp.json`):
    the adapter names the agent, this module the shape of the name."""
    return f"{agent}-{what}.json"


# Not rewritten by replace_text: caches dropped and rebuilt whole instead (bytes replaced in an
# SQLite file would corrupt it), the launcher, the scratch repositories of fetches, and the
# files an flock is held on (they name a holder, never vault text).
# SQLite caches are dropped and rebuilt by a redaction, never edited as bytes (MINED: fold/history)
_NOT_TEXT = (SEARCH_INDEX, PATH_INDEX, MINED, "bin", CHAINED_HOOKS, SYNC_INCOMING, READY)
_HELD_SUFFIXES = (".lock", ".lease", ".pid")
REPLACE_LIMIT = 64 * 1024 * 1024


def replace_text(loc: Location, needle: bytes, replacement: bytes) -> list[str]:
    """Replace needle in every state file that holds it (`gitvault redact`: logs, a session's
    ledger, quarantine records, the fold's state …), as bytes and as JSON writes it; each file
    replaced atomically, never through a link. The names (relative to the folder) rewritten."""
    import json

    forms = {needle}
    try:
        forms.add(json.dumps(needle.decode("utf-8"))[1:-1].encode())
        forms.add(json.dumps(needle.decode("utf-8"), ensure_ascii=False)[1:-1].encode())
    except UnicodeDecodeError:
        pass
    root = loc.state_dir
    done: list[str] = []
    if not root.is_dir():
        return done
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        if here == root:
            dirs[:] = [d for d in dirs if d not in _NOT_TEXT]
        for name in names:
            if name.startswith(_NOT_TEXT) or name.endswith(_HELD_SUFFIXES):
                continue
            path = here / name
            try:
                data = read_regular(path, REPLACE_LIMIT)
            except OSError:
                continue  # a link, a FIFO, too large or gone: never followed or blocked on
            new = data
            for form in forms:
                new = new.replace(form, replacement)
            if new != data:
                atomic_write(path, new)
                done.append(str(path.relative_to(root)))
    done += _drop_ready(root / READY, forms)
    return sorted(done)


def _drop_ready(folder: Path, forms: set[bytes]) -> list[str]:
    """The materialized recall blocks holding the text: dropped (a cache, built again from
    the vault), never rewritten in place."""
    dropped: list[str] = []
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return dropped
    for path in entries:
        try:
            data = read_regular(path, REPLACE_LIMIT)
        except OSError:
            continue
        if any(form in data for form in forms):
            path.unlink(missing_ok=True)
            dropped.append(f"{READY}/{path.name}")
    return dropped


class _StateJson:
    """A versioned JSON state file by name. FEEDS_RECALL: the recall block reads it (a write
    makes every materialized block stale); LIMIT: the most bytes read."""

    def __init__(
        self, name: str, version: int = 1, *, feeds_recall: bool = False, limit: int | None = None
    ) -> None:
        self.name = name
        self.version = version
        self.feeds_recall = feeds_recall
        self.limit = JSON_LIMIT if limit is None else limit

    def path(self, loc: Location) -> Path:
        return loc.state_dir / self.name


class JsonFile(_StateJson):
    """One versioned JSON object in the state folder."""

    def _format(self, data: dict[str, Any]) -> int | None:
        value = data.get(FORMAT_KEY, 1)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def read(self, loc: Location) -> dict[str, Any] | None:
        """The object, or None when it is missing, unreadable or of an unknown format."""
        data = load_json_object(self.path(loc), self.limit)
        if data is None:
            return None
        found = self._format(data)
        if found is None or found > self.version:
            return None
        data.pop(FORMAT_KEY, None)
        return data

    def newer(self, loc: Location) -> bool:
        """Whether the file on disk is of a format this gitvault does not know."""
        data = load_json_object(self.path(loc), self.limit)
        if data is None:
            return False
        found = self._format(data)
        return found is None or found > self.version

    def write(self, loc: Location, data: dict[str, Any], *, indent: int | None = None) -> bool:
        """Replace the file atomically; False (nothing written) when the file on disk is of a
        newer format. Raises OSError when the folder cannot be written."""
        if self.newer(loc):
            return False
        make_dirs(loc.state_dir)
        write_json(self.path(loc), {FORMAT_KEY: self.version, **data}, indent=indent)
        if self.feeds_recall:
            recall_inputs_changed(loc)
        return True


# The recall block reads the fold's state (its "behind" line), verify's results (stale marks),
# the origins (labels, what is held for review) and the handovers offered.
FOLD_STATE_FILE = JsonFile(FOLD_STATE, feeds_recall=True)
FOLD_BUDGET_FILE = JsonFile(FOLD_BUDGET)
VERIFY_FILE = JsonFile(VERIFY, feeds_recall=True)
SYNC_STATE_FILE = JsonFile(SYNC_STATE)
WALK_FILE = JsonFile(WALK)
# One entry per file taken from a remote (~300 bytes): a team vault of 100k items is ~30 MB.
ORIGINS_FILE = JsonFile(ORIGINS, feeds_recall=True, limit=256 * 1024 * 1024)
HANDOVERS_FILE = JsonFile(HANDOVERS, feeds_recall=True)
VALIDATED_FILE = JsonFile(VALIDATED, limit=64 * 1024)


class JsonLog(_StateJson):
    """An append-only log of JSON objects, one a line, after a header line
    (`{"format": N, "id": HEX}`; the id names this log, so a snapshot can say it took it in).
    A reader skips a line it cannot parse (a torn last append); an appender never follows a
    link or blocks on a FIFO (files.open_regular replaces what stands there)."""

    def read(self, loc: Location) -> tuple[str, list[dict[str, Any]]] | None:
        """(the log's id, its entries): ("", []) when there is none; None when it cannot be
        read (not a regular file, over the cap, no valid header, a newer format)."""
        try:
            data = read_regular(self.path(loc), self.limit)
        except FileNotFoundError:
            return "", []
        except OSError:
            return None
        head, _, body = data.partition(b"\n")
        header = _json_object(head)
        if header is None or not _known_format(header, self.version):
            return None
        ident = header.get("id")
        if not isinstance(ident, str) or not ident:
            return None
        lines = [ln for ln in body.split(b"\n")[:-1] if ln.strip()]  # the last: torn or empty
        try:  # one parse for the whole log; line by line only when a line is bad
            parsed = parse_json(b"[" + b",".join(lines) + b"]")
        except ValueError:
            parsed = [_json_object(ln) for ln in lines]
        return ident, [e for e in parsed if isinstance(e, dict)]

    def append(self, loc: Location, entries: list[dict[str, Any]]) -> bool:
        """Append entries in one write (the log started, with a new id, when there is none).
        False (nothing written) when the log on disk is of a newer format. Raises OSError when
        the folder or the file cannot be written, or the log has no valid header (a torn first
        write): the caller rewrites what the log holds instead."""
        import json

        if not entries:
            return True
        make_dirs(loc.state_dir)
        payload = b"".join(
            json.dumps(e, ensure_ascii=False, allow_nan=False).encode("utf-8") + b"\n"
            for e in entries
        )
        fd = open_regular(self.path(loc), os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            size = os.fstat(fd).st_size
            if size == 0:
                head = {FORMAT_KEY: self.version, "id": os.urandom(8).hex()}
                payload = json.dumps(head).encode() + b"\n" + payload
            else:
                header = _json_object(os.pread(fd, 4096, 0).partition(b"\n")[0])
                newer = header is not None and isinstance(header.get(FORMAT_KEY), int)
                if newer and not _known_format(header or {}, self.version):
                    return False  # a newer gitvault's log: left alone
                if header is None or not isinstance(header.get("id"), str):
                    raise OSError(f"{self.path(loc)} has no valid header")
                if os.pread(fd, 1, size - 1) != b"\n":  # a torn append: end its line
                    payload = b"\n" + payload
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if self.feeds_recall:
            recall_inputs_changed(loc)
        return True

    def newer(self, loc: Location) -> bool:
        """Whether the log on disk is of a format this gitvault does not know."""
        try:
            head = read_regular(self.path(loc), self.limit).partition(b"\n")[0]
        except OSError:
            return False
        header = _json_object(head)
        return header is not None and not _known_format(header, self.version)

    def drop(self, loc: Location) -> None:
        """Remove the log (a snapshot took it in), unless a newer gitvault keeps it. Raises
        OSError."""
        if not self.newer(loc):
            self.path(loc).unlink(missing_ok=True)


def _json_object(line: bytes) -> dict[str, Any] | None:
    try:
        value = parse_json(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _known_format(header: dict[str, Any], version: int) -> bool:
    found = header.get(FORMAT_KEY)
    return isinstance(found, int) and not isinstance(found, bool) and found <= version


ORIGINS_LOG_FILE = JsonLog(ORIGINS_LOG, feeds_recall=True, limit=256 * 1024 * 1024)
VIEW_PAGES_FILE = JsonFile(VIEW_PAGES)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


# -- fold-state.json ---------------------------------------------------------------------------


class FoldFailure(NamedTuple):
    merger: str
    message: str
    fix: str
    # The merger could not start here (no CLI, not logged in), as opposed to one that ran and
    # failed: with the builtin fallback standing in, that is a fact about this machine, not a
    # failed fold.
    unavailable: bool = False

    def as_json(self) -> dict[str, object]:
        return {
            "merger": self.merger,
            "message": self.message,
            "fix": self.fix,
            "unavailable": self.unavailable,
        }


class FoldState(NamedTuple):  # not a dataclass: recall reads it on the SessionStart hook's path
    """What the last fold attempt left: items waiting and why, the last failure and its fix,
    and whether the builtin merger stood in for the failed one."""

    pending: int = 0
    reason: str | None = None
    failure: FoldFailure | None = None
    fallback: str | None = None
    merger: str | None = None
    at: str | None = None

    def failure_of(self, configured: str) -> FoldFailure | None:
        """The failure worth reporting: only one of the merger vault.toml configures now. A
        merger tried once with --merger, or one the settings no longer name, is not a
        failure of this vault's folds (and a later successful fold clears it anyway)."""
        failure = self.failure
        return failure if failure is not None and failure.merger == configured else None


def _failure(value: object) -> FoldFailure | None:
    if not isinstance(value, dict):
        return None
    return FoldFailure(
        str(value.get("merger") or ""),
        str(value.get("message") or ""),
        str(value.get("fix") or ""),
        value.get("unavailable") is True,
    )


def fold_state(loc: Location) -> FoldState:
    data = FOLD_STATE_FILE.read(loc) or {}
    return FoldState(
        pending=_int(data.get("pending")),
        reason=_text(data.get("reason")),
        failure=_failure(data.get("failure")),
        fallback=_text(data.get("fallback")),
        merger=_text(data.get("merger")),
        at=_text(data.get("at")),
    )


def write_fold_state(loc: Location, state: FoldState) -> bool:
    """Record a fold attempt; never raises (a read-only state folder must not turn a fold into
    a failure)."""
    data = {
        "pending": state.pending,
        "reason": state.reason,
        "failure": state.failure.as_json() if state.failure else None,
        "fallback": state.fallback,
        "merger": state.merger,
        "at": state.at,
    }
    try:
        return FOLD_STATE_FILE.write(loc, data)
    except OSError:
        return False


# -- fold-budget.json --------------------------------------------------------------------------


class Budget(NamedTuple):
    today: int  # characters sent to a model today (local date)
    total: int  # … by every fold so far


def _today() -> str:
    return time.strftime("%Y-%m-%d")


def fold_budget(loc: Location) -> Budget:
    data = FOLD_BUDGET_FILE.read(loc) or {}
    today = _int(data.get("chars")) if data.get("date") == _today() else 0
    total = _int(data.get("total", data.get("chars", 0)))
    return Budget(today, total)


def add_fold_spend(loc: Location, chars: int) -> None:
    """Count characters a fold sent to a model (today's and the running total)."""
    spent = fold_budget(loc)
    FOLD_BUDGET_FILE.write(
        loc, {"date": _today(), "chars": spent.today + chars, "total": spent.total + chars}
    )


# -- walk.json --------------------------------------------------------------------------------


class WalkState(NamedTuple):
    """Where the walk of every worktree's HEAD log stands: since when it notes commits (the
    moment it began, so history from before gitvault is never noted behind the user's back)
    and, per worktree (its git dir relative to the common one), the log's inode and the
    offset read up to."""

    since: int
    logs: dict[str, tuple[int, int]]


def walk_state(loc: Location) -> WalkState | None:
    data = WALK_FILE.read(loc)
    if data is None or not isinstance(data.get("since"), int):
        return None
    logs: dict[str, tuple[int, int]] = {}
    table = data.get("logs")
    for key, value in table.items() if isinstance(table, dict) else ():
        if isinstance(value, list) and len(value) == 2 and all(_int(v) == v for v in value):
            logs[str(key)] = (int(value[0]), int(value[1]))
    return WalkState(int(data["since"]), logs)


def write_walk_state(loc: Location, state: WalkState) -> bool:
    """Record the walk; never raises (a read-only state folder only means the walk repeats)."""
    try:
        return WALK_FILE.write(
            loc, {"since": state.since, "logs": {k: list(v) for k, v in state.logs.items()}}
        )
    except OSError:
        return False


# -- verify.json -------------------------------------------------------------------------------


def save_verify(loc: Location, data: dict[str, Any]) -> None:
    try:
        VERIFY_FILE.write(loc, data)
    except OSError:
        pass


def verify_results(loc: Location) -> dict[str, Any] | None:
    return VERIFY_FILE.read(loc)
