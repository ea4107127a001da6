"""Which files' edit-time blocks a session already got: its part of the ledger, in a file of its
own (<common git dir>/gitvault/recall-shown/<session id>, statedir.SHOWN_PATHS), one
repository-relative path a line. Standard library only: the tool hooks read it on every call.

Not in the session's JSON ledger: an agent runs the hooks of parallel tool calls at once, and
a ledger rewritten by each of them would lose what the others wrote (its runs and saves among
it). Here a path is appended under an flock after a check made under the same lock, so two
calls reading one file at once show its block once, and nothing written is lost. A shell
answers "already shown" with `grep -Fxq -- "$path" recall-shown/<id>`. Pruned with the
ledger (gitvault.agents.ledger.prune).
"""

from __future__ import annotations

import os
from pathlib import Path

from gitvault import lazyre
from gitvault.resolve import Location
from gitvault.vault import launcher, statedir

MAX_BYTES = launcher.SHOWN_MAX_BYTES  # a session that read this many paths has seen enough
_SAFE = lazyre.compile(r"[^A-Za-z0-9._-]")


def path_for(loc: Location, session_id: str) -> Path:
    name = _SAFE.sub("_", session_id)[:100] or "unknown"
    return loc.state_dir / statedir.SHOWN_PATHS / name


def _line(rel: str) -> bytes:
    return rel.encode("utf-8", "surrogateescape") + b"\n"


def _holds(data: bytes, rel: str) -> bool:
    return data.startswith(_line(rel)) or (b"\n" + _line(rel)) in data


def shown(loc: Location, session_id: str, rel: str) -> bool:
    """Whether the session got the block of `rel` already (a read without the lock: a False
    is confirmed by claim, under it)."""
    try:
        fd = os.open(path_for(loc, session_id), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        import stat

        return stat.S_ISREG(os.fstat(fd).st_mode) and _holds(os.read(fd, MAX_BYTES), rel)
    except OSError:
        return False
    finally:
        os.close(fd)


def claim(loc: Location, session_id: str, rel: str) -> bool:
    """Record that the session gets the block of `rel` now; False when it got it already (or
    the record cannot be written: then nothing is shown, rather than shown on every call)."""
    import fcntl

    path = path_for(loc, session_id)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK
        fd = os.open(path, flags, 0o600)
    except OSError:
        return False
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.lseek(fd, 0, os.SEEK_SET)
        data = os.read(fd, MAX_BYTES)
        if _holds(data, rel) or len(data) >= MAX_BYTES:
            return False
        if data and not data.endswith(b"\n"):
            os.write(fd, b"\n")  # a torn last line stays its own line
        os.write(fd, _line(rel))
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # releases the lock


def prune(loc: Location, cutoff: float) -> None:
    """Forget the records of sessions not seen since `cutoff`."""
    folder = loc.state_dir / statedir.SHOWN_PATHS
    try:
        for entry in os.scandir(folder):
            try:
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                continue
    except OSError:
        pass
