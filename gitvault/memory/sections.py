"""Markdown `## Section` parsing shared by sessions, recall and the builtin merger."""

from __future__ import annotations

import re

from gitvault import lazyre

REQUIRED = ("Summary", "Key Decisions", "Next Steps")
_HEADING = lazyre.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def split_sections(text: str) -> dict[str, str]:
    """Level-2 sections by lower-cased title → their text (first occurrence wins)."""
    out: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    in_code = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        match = None if in_code else _HEADING.match(line)
        if match and len(match.group(1)) <= 2:
            if current is not None and current not in out:
                out[current] = "\n".join(lines).strip()
            current = match.group(2).strip().lower() if len(match.group(1)) == 2 else None
            lines = []
        elif current is not None:
            lines.append(line)
    if current is not None and current not in out:
        out[current] = "\n".join(lines).strip()
    return out


def missing_required(text: str) -> list[str]:
    found = split_sections(text)
    return [name for name in REQUIRED if name.lower() not in found]


def bullets(section_text: str) -> list[str]:
    """The items of a section: bullet lines, or its non-empty paragraphs' first lines."""
    items = []
    for line in section_text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("- ", "* ", "+ ")):
            items.append(stripped[2:].strip())
        elif re.match(r"^\d+[.)]\s", stripped):
            items.append(re.sub(r"^\d+[.)]\s+", "", stripped))
    if not items:
        items = [p.strip().replace("\n", " ") for p in section_text.split("\n\n") if p.strip()]
    return [i for i in items if i]


def first_heading(text: str) -> str | None:
    for line in text.splitlines():
        match = _HEADING.match(line)
        if match and len(match.group(1)) == 1:
            return match.group(2).strip()
    return None
