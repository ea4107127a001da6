"""The versioned envelope of every --json output (plain `json`: the fast paths use it before
typer and rich load)."""

from __future__ import annotations

import json

JSON_VERSION = 1


def envelope(kind: str, data: object) -> str:
    return json.dumps({"gitvault": JSON_VERSION, "kind": kind, "data": data}, indent=2)
