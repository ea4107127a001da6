"""notes/burst: a detached drainer lets a burst of commits end before it loads its writers."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from gitvault.notes import burst
from gitvault.vault import statedir


def test_a_background_drainer_waits_for_a_burst_to_end_before_it_writes(tmp_path: Path) -> None:
    """A burst of commits (a cherry-pick of a range) is noted after it, not commit by commit
    beside git: settle returns only once the spool has been still for the quiet time (or the
    cap has passed), whatever the timing of the writes."""
    spool = tmp_path / statedir.SPOOL
    spool.write_bytes(b"")
    last = [time.monotonic()]
    stop = threading.Event()

    def commits() -> None:
        for _ in range(15):  # a line every 40 ms for about 0.6 s
            with spool.open("ab") as out:
                out.write(b"commit\tx\n")
            last[0] = time.monotonic()
            if stop.wait(0.04):
                return

    writer = threading.Thread(target=commits)
    start = time.monotonic()
    writer.start()
    try:
        burst.settle(str(spool), quiet=0.3, cap=10.0)
        returned = time.monotonic()
    finally:
        stop.set()
        writer.join()
    assert returned - last[0] >= 0.3 or returned - start >= 10.0
    assert returned - start < 10.0 + 5.0  # the cap holds (with room for a loaded machine)
    still = time.monotonic()
    burst.settle(str(spool), quiet=0.2, cap=10.0)  # nothing arrives: the quiet time, no more
    assert 0.2 <= time.monotonic() - still < 10.0
    capped = time.monotonic()
    burst.settle(str(spool), quiet=5.0, cap=0.3)  # a burst that never ends: the cap
    assert 0.3 <= time.monotonic() - capped < 5.0
