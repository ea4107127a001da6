"""What every command shares: the resolved location, output consoles, the JSON envelope."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from gitvault import drain
from gitvault.errors import GitvaultError
from gitvault.locking import log_failure
from gitvault.resolve import Location, resolve

JSON_VERSION = 1

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


@dataclass
class Ctx:
    repo: str | None = None
    loc: Location | None = None


def location(ctx: Any, *, drain_spool: bool = True) -> Location:
    """Resolve the vault once per invocation and drain any spooled commits first, so what a
    command reads is current (nothing is lost if a drainer died)."""
    state: Ctx = ctx.obj if isinstance(ctx.obj, Ctx) else Ctx()
    if state.loc is None:
        state.loc = resolve(state.repo)
    loc = state.loc
    if drain_spool and (
        (loc.state_dir / drain.SPOOL).exists() or (loc.state_dir / drain.WORK_DIR).is_dir()
    ):
        try:
            drain.drain(loc, block=True, timeout=10.0)
        except OSError:
            pass  # a read-only repository still answers read-only commands
        except GitvaultError as exc:
            # The spool stays on disk for later; the command itself still runs (status shows
            # the logged failure, and commands that write refuse with their own message).
            log_failure(loc.state_dir, f"drain failed: {type(exc).__name__}: {exc.message}")
    return loc


def emit_json(kind: str, data: Any) -> None:
    """The versioned envelope every --json output uses."""
    sys.stdout.write(json.dumps({"gitvault": JSON_VERSION, "kind": kind, "data": data}, indent=2))
    sys.stdout.write("\n")


def print_error(message: str, hint: str | None) -> None:
    sys.stderr.write(f"gitvault: error: {message}\n")
    if hint:
        sys.stderr.write(f"  hint: {hint}\n")


def log_internal_error(text: str) -> Path | None:
    try:
        folder = Path(tempfile.gettempdir())
        path = folder / f"gitvault-crash-{os.getpid()}-{int(time.time())}.log"
        path.write_text(text, encoding="utf-8")
        return path
    except OSError:
        return None
