"""A drainer started in the background: it writes what the git hooks and the agents' hooks
spooled (notes, session records), brings the per-path index forward, rebuilding it when it is
missing or behind a rewritten history, and materializes the next session start's recall. A
command the user waits for starts one instead of doing that long work itself (the first
path index of a 100,000-note vault takes ~20 s of CPU). Never raises."""

from __future__ import annotations

import os
import sys

from gitvault.resolve import Location

# Set (the tests, the demo; the git shims read it too): what a background drainer would do is
# done before the command or hook returns.
SYNC_ENV = "GITVAULT_SYNC"


def in_foreground() -> bool:
    value = os.environ.get(SYNC_ENV)
    return bool(value) and value not in ("0", "false")


def start_drainer(loc: Location, why: str) -> None:
    """Start a detached `gitvault-hook git drain` for this repository; `why` is logged if it
    cannot be started (the next drainer does the work then)."""
    from gitvault.vault import processes
    from gitvault.vault.locking import log_failure

    try:
        out = os.open(os.devnull, os.O_WRONLY)
        try:
            # -P: the folder it runs in (the common git dir, which holds a folder named
            # gitvault) is not put on sys.path.
            processes.spawn_detached(
                [sys.executable, "-P", "-m", "gitvault.hook", "git", "drain", str(loc.common_dir)],
                cwd=loc.common_dir,
                env=dict(os.environ),
                output=out,
            )
        finally:
            os.close(out)
    except OSError as exc:
        log_failure(loc.state_dir, f"{why}: left for the next drainer ({exc})")
