"""Mechanical cleaning of session text before anything is written to the vault.

Every session text passes through :func:`clean_session_text` first, which runs, in order:

1. :func:`strip_recall` — removes every ``=== VAULT RECALL ===`` … ``=== END VAULT RECALL ===``
   block, fences included, so old memory is never saved back as new work. Fences nest (depth is
   counted); an opening fence that is never closed removes everything to the end of the text; a
   stray closing fence is removed on its own. The fence text is matched anywhere in a line, so a
   literal mention of the opening fence in prose also cuts the rest of the text: failing closed is
   the point.
2. :func:`strip_private` — removes ``<private>`` … ``</private>`` blocks (tags case-insensitive,
   content may span lines; multiple blocks each removed separately, nested blocks counted, an
   unclosed ``<private>`` removes to the end of the text, a stray ``</private>`` is dropped).
   What was private is gone before redaction runs, so it is never counted as a redaction.
3. :func:`scrub_secrets` — replaces each secret with ``[REDACTED:<kind>]``.
4. Whitespace: line endings become ``\\n``, trailing whitespace is stripped from every line and
   runs of three or more blank lines collapse to two.

When a fence or tag is alone on its line (only whitespace around it) the whole line goes with the
block, so removing a block leaves no stray blank line.
"""

from __future__ import annotations

import re
import unicodedata

from gitvault.memory.fences import strip_private, strip_recall
from gitvault.scrub.engine import Scrubbed, scrub_secrets

_NOT_SLUG = re.compile(r"[^a-z0-9]+")
# Latin letters NFKD does not decompose into ASCII (ø is not o + a mark): spelled out, so a title
# keeps its letters ("Ünïcødé" → "unicode", "Straße" → "strasse").
_TRANSLITERATE = str.maketrans(
    {
        "ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ß": "ss", "ẞ": "SS",
        "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "TH", "ł": "l", "Ł": "L",
        "ħ": "h", "Ħ": "H", "ı": "i", "ŀ": "l", "Ŀ": "L", "ŋ": "ng", "Ŋ": "NG", "ĸ": "k",
        "ſ": "s", "ŧ": "t", "Ŧ": "T", "ƒ": "f",
    }
)  # fmt: skip
_SLUG_FALLBACK = "session"


def slugify(title: str, max_len: int = 48) -> str:
    """A file-name-safe slug: ``[a-z0-9-]``, single dashes, no edge dashes, ≤ ``max_len``.

    Accents are folded to ASCII (``Café`` → ``cafe``, ``Ünïcødé`` → ``unicode``), everything
    else that is not a letter or digit becomes a dash, so no path separator, ``..`` or control
    character survives. A long slug is cut at the last dash that keeps at least half of
    ``max_len``, else hard. An empty result falls back to ``session`` (cut to ``max_len``).
    """
    if max_len < 1:
        raise ValueError(f"max_len must be at least 1, got {max_len}")
    folded = unicodedata.normalize("NFKD", title.translate(_TRANSLITERATE))
    ascii_title = folded.encode("ascii", "ignore").decode("ascii")
    slug = _NOT_SLUG.sub("-", ascii_title.lower()).strip("-")
    if len(slug) > max_len:
        dash = slug.rfind("-", 0, max_len + 1)
        # Dashes are single, so either cut ends on a letter or digit.
        slug = slug[:dash] if dash >= max_len // 2 else slug[:max_len]
    return slug or _SLUG_FALLBACK[:max_len]


# --------------------------------------------------------------------------- all together


def _tidy_whitespace(text: str) -> str:
    """Strip trailing whitespace per line; keep at most two consecutive blank lines."""
    final_newline = text.endswith("\n")
    lines: list[str] = []
    blank_run = 0
    for line in text.removesuffix("\n").split("\n") if text else []:
        line = line.rstrip()
        blank_run = blank_run + 1 if not line else 0
        if blank_run <= 2:
            lines.append(line)
    return "\n".join(lines) + ("\n" if final_newline else "")


def clean_session_text(text: str) -> tuple[str, list[Scrubbed]]:
    """strip_recall → strip_private → scrub_secrets → tidy whitespace. See the module docstring."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = strip_private(strip_recall(text))
    text, redactions = scrub_secrets(text)
    return _tidy_whitespace(text), redactions
