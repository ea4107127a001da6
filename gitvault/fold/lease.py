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
from gitvault.vault import statedir
from gitvault.vault.files import load_json_object, rewrite_in_place
from gitvault.vault.locking import file_lock


@contextmanager
def fold_lease(loc: Location) -> Iterator[None]:
    path = statedir.ensure(loc) / statedir.FOLD_LEASE
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
        rewrite_in_place(path, json.dumps(info).encode())
        yield


def read_holder(loc: Location) -> dict[str, object]:
    return load_json_object(statedir.path(loc, statedir.FOLD_LEASE)) or {}
