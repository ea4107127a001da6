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
# invisible tag character, a lone surrogate's stand-in is not text (see the property tests).
HOSTILE = (
    "clip\x1b]52;c;aGVsbG8=\x07 title\x1b]0;pwned\x07 "
    "\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\ "
    "\x1b[2J\x1b[31mred\x1b[0m \x9b31m c1 \rcr \u202eevil\u202c \U000e0041tag"
)


def unsafe(text: str) -> list[str]:
    """The characters of text that a terminal or a model would not take as text."""
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if (
            (cat in ("Cc", "Cs") and ch not in "\n\t")
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
