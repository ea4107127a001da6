"""`gitvault review`: what came from other clones, and the user's decision on it (vault/origin
holds the record; this clone's alone, never shared)."""

from __future__ import annotations

from typing import Any

from gitvault.errors import GitvaultError
from gitvault.resolve import Location
from gitvault.vault import origin


def listing(loc: Location) -> list[dict[str, Any]]:
    """Every file on record as another clone's, held ones first."""
    record = origin.load(loc)
    rows = []
    for path in sorted(record.files):
        found = record.of(path)
        if found is None:
            continue
        rows.append(
            {
                "path": path,
                "review": found.review,
                "remote": found.remote,
                "author": found.author,
                "clone": found.clone,
                "label": origin.label(found),
            }
        )
    rows.sort(key=lambda r: (r["review"] != origin.HELD, r["path"]))
    return rows


def decide(loc: Location, paths: list[str], action: str) -> list[str]:
    """Accept or reject files (`all`: every held one). The search index is dropped when
    something was accepted: it is rebuilt with it at the next search."""
    record = origin.load(loc)
    if paths == ["all"]:  # every file not decided on yet (held, or shown marked)
        paths = [
            p for p in sorted(record.files) if (o := record.of(p)) and o.review in ("", origin.HELD)
        ]
    unknown = [p for p in paths if p not in record.files]
    if unknown:
        raise GitvaultError(
            f"{unknown[0]} did not come from another clone", hint="see `gitvault review`"
        )
    decision = origin.ACCEPTED if action == "accept" else origin.REJECTED
    changed = origin.decide(loc, paths, decision)
    if changed and decision == origin.ACCEPTED:
        from gitvault.memory import search

        search.drop(loc)
    return changed
