"""Files on disk: the one atomic writer and the one bounded reader every gitvault file goes
through. Standard library only (the hooks import it).

Writing: a temp file beside the target, created with O_EXCL (never an existing file or a planted
link), written in full, fsynced, given its mode, renamed over the target, and the folder fsynced
so the rename survives a crash. Readers never see half a file. A session's own bookkeeping (its
ledger, its quiet stamp), which a crash may lose at no cost but a question asked again, is
written `durable=False`: atomic the same, without the two fsyncs, which cost a hook a few
milliseconds on an idle disk and tens while another process writes.

Reading: only a regular file, never through a symbolic link (O_NOFOLLOW), never blocking on a
FIFO or a device (O_NONBLOCK, then fstat), and never more than a cap: a local state file that a
hostile or broken process replaced can neither hang a hook nor fill its memory.

Appending and locking (the spool, the logs, the lock files): the same opening rules. A link, a
FIFO, a socket or a device standing where gitvault keeps one of its own files was planted or
left by accident: it is removed (the link, never what it points at) and a regular file takes
its place, so nothing is written through it and nothing blocks on it; a folder there raises
NotRegular.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from gitvault.named import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

FILE_MODE = 0o644  # what gitvault creates is never group- or world-writable, whatever the umask
DIR_MODE = 0o755
DEFAULT_READ_LIMIT = 8 * 1024 * 1024


class NotRegular(OSError):
    """A path that is a link, a FIFO, a device or a folder where a regular file was expected."""


class TooLarge(OSError):
    """A file over the reader's cap."""


class Unsafe(Exception):
    """A write target that is not a regular file inside the allowed folders."""


def new_mode(base: int = FILE_MODE) -> int:
    """base, narrowed further by a stricter umask (077 gives 0600), never widened by a looser
    one (002 still gives 0644)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return base & ~umask


def make_dirs(path: Path) -> Path:
    """mkdir -p with DIR_MODE for every folder created (a umask of 002 would make them
    group-writable)."""
    missing = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        folder.mkdir(exist_ok=True)
        os.chmod(folder, new_mode(DIR_MODE))
    return path


def atomic_write(
    path: Path,
    data: bytes,
    mode: int | None = None,
    *,
    mtime_ns: int | None = None,
    durable: bool = True,
) -> None:
    """Replace `path` with `data` atomically and, unless `durable` is False, durably. The mode
    is `mode`, else the replaced file's without group/world write, else FILE_MODE narrowed by
    the umask; `mtime_ns` sets its modification time before it appears (a reader comparing
    times never sees another). No temp file survives an error."""
    if mode is None:
        try:
            mode = stat.S_IMODE(os.lstat(path).st_mode) & ~0o022
        except OSError:
            mode = new_mode()
    directory = path.parent
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        # os.urandom, not the secrets module: its import (random, hashlib, hmac) would cost the
        # hooks that only read.
        tmp = directory / f".{path.name}.{os.urandom(6).hex()}.tmp"
        try:
            fd = os.open(tmp, flags, 0o600)
        except FileExistsError:
            continue
        break
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, mode)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        if mtime_ns is not None:
            os.utime(tmp, ns=(mtime_ns, mtime_ns))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        fsync_dir(directory)


def create_new(path: Path, data: bytes) -> bool:
    """Create path with data unless something stands there already (never through a link); not
    durable (a marker a crash may lose). Whether it was created."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, new_mode())
    except FileExistsError:
        return False
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    return True


def fsync_dir(directory: Path) -> None:
    """Make a rename in `directory` durable; best effort (not every filesystem allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_regular(path: Path | str, limit: int = DEFAULT_READ_LIMIT) -> bytes:
    """The bytes of a regular file, opened without following a link and without blocking.
    Raises FileNotFoundError when it is missing, NotRegular for anything but a regular file
    (a symlink included), TooLarge past `limit` bytes, OSError otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the last component is a symbolic link
            raise NotRegular(exc.errno, f"{path} is a symbolic link") from exc
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(f"{path} is not a regular file")
        if info.st_size > limit:
            raise TooLarge(f"{path} is larger than {limit} bytes")
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:  # it grew while being read
            raise TooLarge(f"{path} is larger than {limit} bytes")
        return data
    finally:
        os.close(fd)


def open_regular(path: Path | str, flags: int) -> int:
    """A descriptor on the regular file at path (created, FILE_MODE narrowed by the umask, when
    flags holds O_CREAT), opened without following a link and without blocking. Whatever else
    stands there (a link, a FIFO, a socket, a device) is removed first; a folder raises
    NotRegular."""
    flags |= os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    for attempt in (1, 2):
        try:
            fd = os.open(path, flags, new_mode())
        except OSError as exc:
            # ELOOP: a link; ENXIO: a FIFO nobody reads (write-only, non-blocking open).
            if exc.errno in (errno.ELOOP, errno.ENXIO) and attempt == 1:
                _remove_planted(path)
                continue
            if exc.errno == errno.EISDIR:
                raise NotRegular(exc.errno, _FOLDER.format(path)) from exc
            if exc.errno in (errno.ELOOP, errno.ENXIO):
                raise NotRegular(exc.errno, f"{path} is not a regular file") from exc
            raise
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            return fd
        os.close(fd)
        if stat.S_ISDIR(info.st_mode):
            raise NotRegular(errno.EISDIR, _FOLDER.format(path))
        if attempt == 2:
            break
        _remove_planted(path)
    raise NotRegular(f"{path} is not a regular file")


# A folder where gitvault keeps a file is never removed (it may hold someone's files): said.
_FOLDER = "{} is a folder where gitvault keeps a file of its own: move it away"


def _remove_planted(path: Path | str) -> None:
    try:
        os.unlink(path)  # a link itself, never its target
    except FileNotFoundError:
        pass


# What SQLite keeps beside a database: it opens each by name, following a link and blocking on
# a FIFO, so each must be a regular file or absent before a connection opens.
SQLITE_COMPANIONS = ("", "-journal", "-wal", "-shm")


def clear_for_sqlite(path: Path | str) -> None:
    """Make the database at path safe for SQLite to open: a link, a FIFO, a socket or a device
    standing at it or at one of its companion files is removed (gitvault's databases are
    caches rebuilt from the vault); a folder raises NotRegular. A regular file stays, a hot
    journal included."""
    for suffix in SQLITE_COMPANIONS:
        name = f"{path}{suffix}"
        try:
            info = os.lstat(name)
        except FileNotFoundError:
            continue
        if stat.S_ISREG(info.st_mode):
            continue
        if stat.S_ISDIR(info.st_mode):
            raise NotRegular(f"{name} is not a regular file")
        _remove_planted(name)


def ready_for_sqlite(path: Path | str) -> None:
    """clear_for_sqlite, with a folder in the way reported as SQLite reports an unreadable
    database (sqlite3.OperationalError: the index callers rebuild, or say why they cannot)."""
    try:
        clear_for_sqlite(path)
    except NotRegular as exc:
        import sqlite3

        raise sqlite3.OperationalError(str(exc)) from exc


APPEND_CHUNK = 4096  # one write() per chunk, cut at line ends: lines of two writers never mix


def append(path: Path | str, data: bytes, *, confirm: bool = False, tries: int = 4) -> None:
    """Append data to the regular file at path (created if missing; see open_regular).

    confirm: the file written must still be the one at path after the write, else the data
    is written again (up to `tries` times; OSError after that). That is how a writer and a
    reader that claims the file by renaming it (the spool and its drainer) never lose a line:
    a write confirmed this way happened before any rename of that file, and the claimer reads
    the renamed file whole; an unconfirmed write may sit in a file already read, so it is
    repeated, and the reader treats a line read twice as one."""
    for _ in range(tries):
        fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            for chunk in _line_chunks(data):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
            if not confirm:
                return
            mine = os.fstat(fd)
            try:
                there = os.lstat(path)
            except FileNotFoundError:
                continue
            if (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino):
                return
        finally:
            os.close(fd)
    raise OSError(errno.EAGAIN, f"{path} was replaced during every append")


def _line_chunks(data: bytes) -> list[bytes]:
    if len(data) <= APPEND_CHUNK:
        return [data]
    chunks: list[bytes] = []
    start = 0
    while start < len(data):
        end = data.rfind(b"\n", start, start + APPEND_CHUNK) + 1
        if end <= start:  # one line longer than a chunk: its own write
            end = data.find(b"\n", start) + 1 or len(data)
        chunks.append(data[start:end])
        start = end
    return chunks


def rewrite_in_place(path: Path | str, data: bytes) -> None:
    """Replace the content of the regular file at path without replacing the file (its inode
    is what another process holds an flock on); see open_regular."""
    fd = open_regular(path, os.O_WRONLY | os.O_CREAT)
    try:
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def read_range(path: Path | str, offset: int, limit: int) -> tuple[bytes, os.stat_result]:
    """At most `limit` bytes of the regular file at path from `offset`, and the file's stat
    (its size and inode say whether it was replaced since): a file of git's (a HEAD log) read
    under the same rules as read_regular, whatever its size."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegular(exc.errno, f"{path} is a symbolic link") from exc
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(f"{path} is not a regular file")
        return os.pread(fd, max(0, limit), max(0, offset)), info
    finally:
        os.close(fd)


def read_text(path: Path | str, limit: int = DEFAULT_READ_LIMIT) -> str:
    """read_regular decoded as UTF-8 (bad bytes replaced)."""
    return read_regular(path, limit).decode("utf-8", "replace")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(text: str | bytes) -> Any:
    """Strict JSON: NaN and Infinity refused, too-deep nesting a ValueError (not a crash)."""
    import json  # here: the status line and the sh's fallbacks read no JSON

    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


def read_json(path: Path | str, limit: int = DEFAULT_READ_LIMIT) -> Any:
    """A strict JSON file through read_regular. Raises OSError (missing, not regular, too
    large) or ValueError (not UTF-8, not strict JSON)."""
    data = read_regular(path, limit)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8") from exc
    return parse_json(text)


def load_json_object(path: Path | str, limit: int = DEFAULT_READ_LIMIT) -> dict[str, Any] | None:
    """A JSON object from a state file, or None when it is missing, unreadable, not a regular
    file, too large or not an object: a state file gitvault cannot trust is one it ignores."""
    try:
        data = read_json(path, limit)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_json(path: Path, data: Any, *, indent: int | None = None, durable: bool = True) -> None:
    """atomic_write of a JSON document (UTF-8, newline-terminated when indented)."""
    import json

    text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
    atomic_write(path, (text + ("\n" if indent else "")).encode("utf-8"), durable=durable)


def confined(path: Path, roots: list[Path]) -> Path:
    """The real path gitvault may write for `path`: refuses (Unsafe) a target whose real path
    (symlinks in it or its folders resolved) is outside every root, a dangling symlink, or
    anything that exists and is not a regular file. gitvault writes only regular files inside
    the worktree or the common git dir."""
    if path.is_symlink() and not path.exists():
        raise Unsafe(f"{path} is a symlink to {os.readlink(path)}, which does not exist")
    real = Path(os.path.realpath(path))
    bases = [Path(os.path.realpath(r)) for r in roots]
    if not any(real == b or b in real.parents for b in bases):
        raise Unsafe(f"{path} resolves to {real}, outside the repository")
    if real.exists() and not real.is_file():
        raise Unsafe(f"{path} is not a regular file")
    return real
