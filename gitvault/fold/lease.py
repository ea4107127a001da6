"""One fold at a time per repository: a lease file in the common git dir.

The lease is an flock, so a holder that dies (even by SIGKILL) releases it at once: that is the
stale-lease recovery. The file also records who holds it, for `gitvault status`.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager

from gitvault.errors import Busy
from gitvault.resolve import Location
from gitvault.vault.locking import file_lock
from gitvault.vault.store import state_dir

LEASE = "fold.lease"


@contextmanager
def fold_lease(loc: Location) -> Iterator[None]:
    path = state_dir(loc) / LEASE
    with file_lock(path, block=False) as got:
        if not got:
            holder = read_holder(loc)
            who = f" (pid {holder.get('pid')} since {holder.get('since')})" if holder else ""
            raise Busy(f"another fold is running{who}", hint="wait for it, or try again later")
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(info))
        yield


def read_holder(loc: Location) -> dict[str, object]:
    try:
        data = json.loads((loc.state_dir / LEASE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
