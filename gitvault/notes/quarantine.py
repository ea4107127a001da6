"""Spool entries set aside: a commit whose note could not be rendered or validated is recorded
here (one JSON line each) instead of blocking every entry after it. `gitvault status` counts
them; `gitvault quarantine --retry` puts them back in the spool (after a fix or an upgrade),
`--drop` forgets them."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from gitvault.vault.files import append, atomic_write, read_regular
from gitvault.vault.locking import file_lock, log_failure
from gitvault.vault.statedir import SET_ASIDE, SET_ASIDE_LOCK

MAX_ENTRIES = 10_000
READ_LIMIT = 64 * 1024 * 1024


def set_aside(state: Path, line: str, reason: str) -> None:
    """Record one spool line with why it was set aside, and log it. Never raises."""
    record = {"line": line, "reason": reason[:500], "at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    try:
        with file_lock(state / SET_ASIDE_LOCK, block=True, timeout=5.0):
            append(state / SET_ASIDE, (json.dumps(record, ensure_ascii=True) + "\n").encode())
    except OSError:
        pass
    log_failure(
        state,
        f"drain: set aside {line.split(chr(9))[1][:12] if chr(9) in line else '?'}: {reason[:200]}",
    )


def entries(state: Path) -> list[dict[str, Any]]:
    try:
        text = read_regular(state / SET_ASIDE, READ_LIMIT).decode("utf-8", "replace")
    except OSError:
        return []
    out = []
    for raw in text.split("\n")[-MAX_ENTRIES:]:
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("line"), str):
            out.append(record)
    return out


def take_all(state: Path) -> list[str]:
    """Remove every set-aside entry and return their spool lines (to retry them)."""
    with file_lock(state / SET_ASIDE_LOCK, block=True, timeout=5.0):
        lines = [str(r["line"]) for r in entries(state)]
        try:
            os.unlink(state / SET_ASIDE)
        except FileNotFoundError:
            pass
    return lines


def drop_all(state: Path) -> int:
    with file_lock(state / SET_ASIDE_LOCK, block=True, timeout=5.0):
        count = len(entries(state))
        atomic_write(state / SET_ASIDE, b"")
    return count
