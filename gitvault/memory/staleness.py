"""Verification results, computed ahead (by `gitvault verify`, after each fold and at session
end) and read by recall without computing anything: <common git dir>/gitvault/verify.json,
keyed by the digest blob it checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS = "verify.json"


def save(state: Path, data: dict[str, Any]) -> None:
    from gitvault.vault.files import atomic_write

    try:
        atomic_write(state / RESULTS, json.dumps(data).encode())
    except OSError:
        pass


def stale_lines(state: Path, digest_blob: str) -> dict[str, list[str]]:
    """line → reasons for the digest with this blob id; empty when it was not checked."""
    try:
        data = json.loads((state / RESULTS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("digest_blob") != digest_blob:
        return {}
    out: dict[str, list[str]] = {}
    for entry in data.get("lines", []):
        if isinstance(entry, dict) and entry.get("status") in ("stale", "dangling"):
            out[str(entry.get("line"))] = [str(r) for r in entry.get("reasons", [])]
    return out
