"""A deadline for a block of a test: it fails with a traceback instead of hanging the run."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def deadline(seconds: int, what: str = "the block") -> Iterator[None]:
    """Fail (not hang) when the block runs longer than `seconds`: SIGALRM raises in it (in the
    main thread only; elsewhere no deadline). An outer deadline (the suite's per-test limit)
    is armed again on the way out with what is left of it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"{what} ran longer than {seconds}s")

    start = time.monotonic()
    previous = signal.signal(signal.SIGALRM, expired)
    outer = signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        if outer:
            signal.alarm(max(1, outer - int(time.monotonic() - start)))
