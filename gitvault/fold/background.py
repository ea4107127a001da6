"""Start a detached fold (SessionEnd, `gitvault fold --background`). No orphan waits: the child
is its own session leader, exits when the fold ends, and the lease keeps it single."""

from __future__ import annotations

import os
import sys

from gitvault.resolve import Location
from gitvault.vault import processes, statedir
from gitvault.vault.files import open_regular
from gitvault.vault.locking import file_lock


def fold_running(loc: Location) -> bool:
    with file_lock(statedir.ensure(loc) / statedir.FOLD_LEASE, block=False) as got:
        return not got


def spawn_fold(loc: Location, *, merger: str | None = None, model: str | None = None) -> int | None:
    """Start a fold (then patch) detached; None when a fold already holds the lease."""
    if fold_running(loc):
        return None
    args = [sys.executable, "-m", "gitvault.hook", "fold", str(loc.workdir or loc.common_dir)]
    if merger:
        args += ["--merger", merger]
    if model:
        args += ["--model", model]
    # Never through a link, never blocked on a FIFO (files.open_regular).
    log = open_regular(
        statedir.ensure(loc) / statedir.FOLD_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT
    )
    try:
        return processes.spawn_detached(
            args,
            cwd=loc.workdir or loc.common_dir,
            env={**os.environ, "GITVAULT_BACKGROUND": "1"},
            output=log,
        )
    finally:
        os.close(log)
