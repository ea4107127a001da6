"""Front matter for vault files: a YAML block whose values are written as JSON.

JSON is a subset of YAML, so every file reads as ordinary YAML front matter in any tool,
while gitvault parses it with the standard library and renders it deterministically.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

FENCE = "---"


def render(meta: Mapping[str, Any], body: str) -> str:
    lines = [FENCE]
    for key, value in meta.items():
        if value is None:
            continue
        lines.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")
    lines.append(FENCE)
    return "\n".join(lines) + "\n" + body


def parse(text: str) -> tuple[dict[str, Any], str]:
    """(meta, body). Text without front matter gives ({}, text)."""
    if not text.startswith(FENCE + "\n") and not text.startswith(FENCE + "\r\n"):
        return {}, text
    lines = text.splitlines(keepends=True)
    meta: dict[str, Any] = {}
    for index in range(1, len(lines)):
        line = lines[index].rstrip("\r\n")
        if line == FENCE:
            return meta, "".join(lines[index + 1 :])
        key, sep, raw = line.partition(":")
        if not sep or not key.strip():
            continue
        raw = raw.strip()
        try:
            meta[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            meta[key.strip()] = raw.strip("'\"")
    return {}, text  # unterminated: treat as body
