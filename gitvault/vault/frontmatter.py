"""Front matter for vault files: a YAML block whose values are written as JSON.

JSON is a subset of YAML, so every file reads as ordinary YAML front matter in any tool,
while gitvault parses it with the standard library and renders it deterministically.

What is written is what is read, whatever the values hold: every character that any reader
could take for a line break or that is not printable (C0/C1 controls, U+2028/U+2029, format
characters) is written as a JSON `\\uXXXX` escape, so a value is always one line; keys are plain
identifiers; parsing splits on `\\n` only. A surrogate code point (which no UTF-8 file can hold)
becomes U+FFFD first: `normalise` says what a value reads back as.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from gitvault import lazyre
from gitvault.named import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

FENCE = "---"
_KEY = lazyre.compile(r"[a-z][a-z0-9_]{0,63}")
# Characters a value may never carry raw: controls (C0, DEL, C1), line/paragraph separators,
# surrogates, BOM/format characters and the other Unicode line breaks.
_UNSAFE = lazyre.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\ud800-\udfff]"
)


class FrontMatterError(ValueError):
    pass


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


_SURROGATE = lazyre.compile("[\ud800-\udfff]")


def normalise(value: Any) -> Any:
    """The value as it reads back: surrogate code points replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, dict):
        return {normalise(k): normalise(v) for k, v in value.items()}
    return value


def dump_value(value: Any) -> str:
    """One line of JSON for a value; raises FrontMatterError for what JSON cannot hold."""
    try:
        text = json.dumps(normalise(value), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise FrontMatterError(f"front matter value cannot be written: {exc}") from exc
    return _UNSAFE.sub(_escape, text)


def render(meta: Mapping[str, Any], body: str) -> str:
    lines = [FENCE]
    for key, value in meta.items():
        if value is None:
            continue
        if not _KEY.fullmatch(key):
            raise FrontMatterError(f"invalid front matter key {key!r}")
        lines.append(f"{key}: {dump_value(value)}")
    lines.append(FENCE)
    return "\n".join(lines) + "\n" + body


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a front matter value")


# One decoder for every value: json.loads with a keyword argument builds a new decoder per
# call, which was a third of the time of reading a note (82k notes: 4 s of 15 s).
_DECODER = json.JSONDecoder(parse_constant=_no_constant)
# A string with nothing to unescape (most values): what the decoder would return, without it.
_PLAIN_STRING = lazyre.compile(r'"[^"\\\x00-\x1f]*"')


def parse(text: str, keys: frozenset[str] | None = None) -> tuple[dict[str, Any], str]:
    """(meta, body). Text without front matter gives ({}, text). Only `\\n` ends a line; a key
    that appears twice is ignored after its first occurrence (a forged repeat cannot win).
    With `keys`, only those keys are decoded (an index reading 100,000 notes needs four)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith(FENCE + "\n") and not text.startswith(FENCE + "\r\n"):
        return {}, text
    meta: dict[str, Any] = {}
    start = text.index("\n") + 1
    while True:  # line by line, never splitting the body
        end = text.find("\n", start)
        line = (text[start:] if end < 0 else text[start:end]).rstrip("\r")
        if line == FENCE:
            return meta, "" if end < 0 else text[end + 1 :]
        if end < 0:
            break
        start = end + 1
        key, sep, raw = line.partition(":")
        key = key.strip()
        if not sep or not key or key in meta or (keys is not None and key not in keys):
            continue
        raw = raw.strip()
        if _PLAIN_STRING.fullmatch(raw):
            meta[key] = raw[1:-1]
            continue
        try:
            meta[key] = _DECODER.decode(raw)
        except ValueError:
            meta[key] = raw.strip("'\"")
    return {}, text  # unterminated: treat as body
