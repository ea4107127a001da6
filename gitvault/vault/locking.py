"""Advisory file locks and the failure log, both in the common git dir."""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOG_NAME = "log"
LOG_MAX_BYTES = 256 * 1024


@contextmanager
def file_lock(path: Path, *, block: bool, timeout: float = 30.0) -> Iterator[bool]:
    """Hold an exclusive flock on path; yields False (without the lock) when it is busy."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if not block or time.monotonic() > deadline:
                    yield False
                    return
                time.sleep(0.02)
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def log_failure(state_dir: Path, message: str) -> None:
    """Append one line to the failure log that `gitvault status` shows. Never raises."""
    try:
        path = state_dir / LOG_NAME
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            os.replace(path, state_dir / (LOG_NAME + ".1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        line = message.replace("\n", " ").strip()
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp} [{os.getpid()}] {line}\n")
    except OSError:
        pass


def read_log(state_dir: Path, lines: int = 5) -> list[str]:
    try:
        text = (state_dir / LOG_NAME).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return text.splitlines()[-lines:]


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write via a temp file in the same folder and rename: never a half-written file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
