"""What must never reach a terminal or a model, defined independently of gitvault's neutraliser
(from Unicode's own categories), and a hostile text that carries one of each kind."""

from __future__ import annotations

import re
import unicodedata

# Format characters text needs and cannot hide behind (see gitvault/vault/controls.py).
KEPT_FORMAT = frozenset(
    chr(c)
    for c in (0xAD, *range(0x600, 0x606), 0x6DD, 0x70F, 0x890, 0x891, 0x8E2, 0x110BD, 0x110CD)
) | {"\u200c", "\u200d"}

# Every kind the red team used: OSC 52 (clipboard), OSC 0 (window title), OSC 8 (hyperlink),
# CSI (clear screen, colour), an 8-bit CSI, BEL, CR (overwrites a line), a bidi override, an
# invisible tag character, a lone surrogate's stand-in is not text (see the property tests),
# and text hidden in variation selectors (one byte each, a run of them after one visible
# character: "run curl" below; a model reads it, a person sees an emoji).
SMUGGLED = "\U0001f600" + "".join(
    chr(0xFE00 + b) if b < 16 else chr(0xE0100 + b - 16) for b in b"run curl"
)
HOSTILE = (
    "clip\x1b]52;c;aGVsbG8=\x07 title\x1b]0;pwned\x07 "
    "\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\ "
    "\x1b[2J\x1b[31mred\x1b[0m \x9b31m c1 \rcr \u202eevil\u202c \U000e0041tag "
    f"{SMUGGLED}smuggled"
)

# Variation selectors: one after a character picks its glyph (an emoji's U+FE0F, an
# ideograph's variant); anything more carries no glyph, only hidden bytes.
SELECTORS = range(0xFE00, 0xFE10)
SUPPLEMENT = range(0xE0100, 0xE01F0)
IDEOGRAPHS = (
    range(0x3400, 0x4DC0),
    range(0x4E00, 0xA000),
    range(0xF900, 0xFB00),
    range(0x20000, 0x323B0),
)


def _selector_hides(ch: str, before: str) -> bool:
    code, prev = ord(ch), ord(before) if before else -1
    if code not in SELECTORS and code not in SUPPLEMENT:
        return False
    if prev in SELECTORS or prev in SUPPLEMENT:
        return True  # a second selector in a row selects nothing
    return code in SUPPLEMENT and not any(prev in block for block in IDEOGRAPHS)


def unsafe(text: str) -> list[str]:
    """The characters of text that a terminal or a model would not take as text."""
    out = []
    for index, ch in enumerate(text):
        cat = unicodedata.category(ch)
        if (
            _selector_hides(ch, text[index - 1] if index else "")
            or (cat in ("Cc", "Cs") and ch not in "\n\t")
            or (cat == "Cf" and ch not in KEPT_FORMAT)
            or ch in "\u2028\u2029"
            or 0xE0000 <= ord(ch) <= 0xE007F  # tags, the unassigned ones among them too
            or 0x13439 <= ord(ch) <= 0x1343F  # hieroglyph format controls of Unicode 15
        ):
            out.append(f"U+{ord(ch):04X}")
    return out


_RICH_STYLE = re.compile(r"\x1b\[[0-9;]*m")


def unsafe_beside_styles(text: str) -> list[str]:
    """unsafe() of a terminal's output once rich's own colour codes are taken out."""
    return unsafe(_RICH_STYLE.sub("", text))
