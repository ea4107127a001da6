"""Verification results, computed ahead (by `gitvault verify`, after each fold and at session
end) and read by recall without computing anything: verify.json in the state folder
(vault/statedir), keyed by the digest blob it checked."""

from __future__ import annotations

from gitvault.resolve import Location
from gitvault.vault import statedir


def stale_lines(loc: Location, digest_blob: str) -> dict[str, list[str]]:
    """line → reasons for the digest with this blob id; empty when it was not checked."""
    data = statedir.verify_results(loc)
    if data is None or data.get("digest_blob") != digest_blob:
        return {}
    lines = data.get("lines")
    out: dict[str, list[str]] = {}
    for entry in lines if isinstance(lines, list) else []:
        if isinstance(entry, dict) and entry.get("status") in ("stale", "dangling"):
            reasons = entry.get("reasons")
            out[str(entry.get("line"))] = (
                [str(r) for r in reasons] if isinstance(reasons, list) else []
            )
    return out
