"""The turn end's quiet stamp: what lets the launcher's sh answer an agent's turn end without
starting Python (gitvault/vault/launcher holds the stamp's format and its reader).

Only a turn end that ran its whole check and found nothing due writes one: every commit this
session made is saved or was asked about, no turn count is kept (capture.stop_after_turns 0),
the session's runs are known, no commit waits on a transcript that may still show it, and the
adapter's follow-up had nothing left to do. Every other turn end removes it, and so does a
session start (a new run, a resumed conversation).

What could make work due later without Python noticing, and what the stamp holds against:
- a commit, amend, reset, checkout … in the session's worktree: its HEAD reflog is newer;
- vault.toml's settings, a save or fold from anywhere: the vault tip differs (read from its
  loose ref file; none, or packed: packed-refs is watched);
- gitvault's git config (agents served, vault branch): a config file is newer;
- another repository for the same session: the input's cwd member differs.

observe() runs before anything is read (its file times and tip are the baseline), settle() after
the check and the ledger's store. The stamp's mtime is the newest watched file's, and a stamp is
written only when that is SETTLE_NS old: then a write after observe() is newer than the stamp
even to a shell comparing whole seconds. A git config given in the environment
(GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT), reftable refs or a session id that cannot name a
file: no stamp.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from gitvault import lazyre
from gitvault.named import TYPE_CHECKING, NamedTuple
from gitvault.vault import files, launcher, statedir

if TYPE_CHECKING:
    from gitvault.agents.behaviours import HookCall
    from gitvault.resolve import Location

SETTLE_NS = launcher.SETTLE_NS
_TIP = lazyre.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_CWD_MEMBER = lazyre.compile(r'"cwd"[ \t]*:[ \t]*"(?:[^"\\\r\n]|\\.)*"')
_ENV_CONFIG = ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")


class Observed(NamedTuple):
    ref: Path  # the vault branch's loose ref file
    tip: str | None  # what it held (None: no loose file)
    watched: tuple[Path, ...]
    newest: int  # the newest mtime (ns) of the watched files that exist
    at: int  # when they were looked at (ns)


def watched_files(loc: Location, git_dir: Path) -> list[Path] | None:
    """The files whose change may make a turn end's work due: the session's HEAD reflog, every
    git config file gitvault's settings come from (those an include names too), and
    packed-refs; None when they cannot all be told."""
    from gitvault.vault import gitcmd

    reflog = Path(os.path.abspath(git_dir / "logs" / "HEAD"))
    packed = Path(os.path.abspath(loc.common_dir / "packed-refs"))
    config = gitcmd.config_files(loc.common_dir, git_dir)
    included = gitcmd.config_includes(loc.workdir or loc.common_dir, config)
    if included is None:
        return None
    return [reflog, *config, *included, packed]


def observe(call: HookCall) -> Observed | None:
    """The baseline of a turn end, taken before the check reads the reflog or any setting;
    None when no stamp could be trusted here."""
    from gitvault.agents import ledger

    loc = call.loc
    if not ledger.valid_session_id(call.payload.get("session_id")):
        return None
    if any(os.environ.get(name) for name in _ENV_CONFIG):
        return None
    if (loc.common_dir / "reftable").exists():
        return None
    git_dir = Path(os.path.abspath(ledger.recorded_git_dir(loc, call.session_id)))
    watched = watched_files(loc, git_dir)
    if watched is None:
        return None
    newest = 0
    for path in watched:
        try:
            newest = max(newest, os.stat(path).st_mtime_ns)
        except FileNotFoundError:
            if path == watched[0]:
                return None  # no reflog: nothing to watch commits by
        except OSError:
            return None
    at = time.time_ns()
    from gitvault.vault import layout

    ref = Path(os.path.abspath(loc.common_dir / layout.branch_ref(call.branch())))
    try:
        text = files.read_regular(ref, 200).decode("ascii").strip()
    except FileNotFoundError:
        return Observed(ref, None, tuple(watched), newest, at)
    except (OSError, UnicodeDecodeError):
        return None
    if not _TIP.fullmatch(text):
        return None
    return Observed(ref, text, tuple(watched), newest, at)


def cwd_member(raw: str) -> str | None:
    """The input's cwd member, verbatim ("" when it has none; None when it cannot be told)."""
    if raw.count('"cwd"') == 0:
        return ""
    found = _CWD_MEMBER.findall(raw)
    return found[0] if raw.count('"cwd"') == 1 and len(found) == 1 else None


def settle(call: HookCall) -> None:
    """After a turn end: the stamp when it found nothing due (and nothing changed while it
    looked), else no stamp. Never raises: a stamp is only a shortcut."""
    try:
        _settle(call)
    except OSError:
        clear(call.loc, call.session_id)


def _settle(call: HookCall) -> None:
    seen = call.observed
    member = cwd_member(call.raw) if seen is not None else None
    if seen is None or member is None or not call.quiet or not _unchanged(seen):
        clear(call.loc, call.session_id)
        return
    if seen.at - seen.newest < SETTLE_NS:
        clear(call.loc, call.session_id)  # a write this second may not look newer to a shell
        return
    text = launcher.quiet_stamp(call.adapter.name, member, seen.ref, seen.tip, seen.watched)
    if text is None:
        clear(call.loc, call.session_id)
        return
    path = statedir.quiet_stamp(call.loc, call.session_id)
    files.make_dirs(path.parent)
    files.atomic_write(path, text, mtime_ns=seen.newest, durable=False)


def _unchanged(seen: Observed) -> bool:
    """Nothing watched moved while the turn end looked."""
    for path in seen.watched:
        try:
            if os.stat(path).st_mtime_ns > seen.newest:
                return False
        except FileNotFoundError:
            continue
    try:
        tip: str | None = files.read_regular(seen.ref, 200).decode("ascii").strip()
    except FileNotFoundError:
        tip = None
    except (OSError, UnicodeDecodeError):
        return False
    return tip == seen.tip


def clear(loc: Location, session_id: str) -> None:
    from gitvault.agents import ledger

    if ledger.valid_session_id(session_id):
        try:
            statedir.quiet_stamp(loc, session_id).unlink()
        except OSError:
            pass  # none (or a folder that cannot be written: then none was written either)
