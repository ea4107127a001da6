"""Advisory file locks and the failure log, both in the common git dir."""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gitvault.vault import statedir
from gitvault.vault.files import append, open_regular, read_regular

LOG_NAME = statedir.LOG
LOG_MAX_BYTES = 256 * 1024


@contextmanager
def file_lock(path: Path, *, block: bool, timeout: float = 30.0) -> Iterator[bool]:
    """Hold an exclusive flock on path; yields False (without the lock) when it is busy. The
    lock file is opened as a regular file only (files.open_regular: never through a link,
    never a FIFO)."""
    fd = open_regular(path, os.O_RDWR | os.O_CREAT)
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
        try:
            if os.lstat(path).st_size > LOG_MAX_BYTES:
                os.replace(path, state_dir / statedir.LOG_ROTATED)
        except FileNotFoundError:
            pass
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        line = " ".join(message.split())[:LOG_LINE_CHARS]
        append(path, f"{stamp} [{os.getpid()}] {line}\n".encode("utf-8", "replace"))
    except OSError:
        pass


LOG_LINE_CHARS = 2000  # a message quoting user text (a 100,000-character search word) stays a line


def read_log(state_dir: Path, lines: int = 5) -> list[str]:
    try:
        data = read_regular(state_dir / LOG_NAME, LOG_MAX_BYTES * 4)
    except OSError:
        return []
    return data.decode("utf-8", "replace").splitlines()[-lines:]


SCRATCH_GRACE_SECONDS = 60.0


@contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """A private temporary folder that a killed process never leaves behind for long: it holds
    an flock on a file inside while in use, and every new one first removes the folders of its
    kind whose lock is free (their owner died, even by SIGKILL) and that are older than a
    minute (a folder just made has not taken its lock yet)."""
    import shutil
    import tempfile

    base = Path(tempfile.gettempdir())
    for old in base.glob(f"{prefix}*"):
        try:
            if time.time() - old.stat().st_mtime < SCRATCH_GRACE_SECONDS:
                continue
            with file_lock(old / ".lock", block=False) as got:
                if got:
                    shutil.rmtree(old, ignore_errors=True)
        except OSError:
            continue  # gone already, or not ours to read
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        with file_lock(path / ".lock", block=False):
            yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
