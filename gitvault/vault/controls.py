"""The one neutraliser for text bound for a terminal or a model: whatever the vault holds (a
teammate's session, a commit subject, a remote's file name, a state file), what gitvault prints
or hands to an agent carries no control sequence. Standard library only (every hook uses it).

`neutralise_controls(text)` replaces, one for one, each character that a terminal or a model
would take as something other than text:
- C0 controls but newline and tab, and DEL: the Control Pictures symbol of each (ESC → ␛,
  BEL → ␇, CR → ␍, …), so an escape sequence (CSI `ESC [`, OSC `ESC ]` 0/8/52 — a window
  title, a hyperlink, the clipboard) arrives as visible, inert text;
- C1 controls (U+0080–U+009F: 8-bit CSI, OSC, NEL …), lone surrogates, and the format
  characters that can disguise text: bidirectional embeddings, overrides and isolates
  (U+202A–U+202E, U+2066–U+2069) and marks (U+200E, U+200F, U+061C), zero-width space, word
  joiner and the invisible operators (U+200B, U+2060–U+2064), the deprecated format controls
  (U+206A–U+206F), the byte-order mark (U+FEFF), interlinear annotation (U+FFF9–U+FFFB),
  the Mongolian vowel separator (U+180E), the invisible hieroglyph, shorthand and musical
  format controls, tag characters (U+E0000–U+E007F: text a model reads and a person cannot
  see), and the line and paragraph separators (U+2028, U+2029: a line break to some readers,
  none to others) — each becomes U+FFFD; so does a variation selector that selects nothing (a
  second in a row, or one of the supplement U+E0100–U+E01EF after anything but an ideograph:
  bytes hidden behind an emoji).
Kept: newline and tab, and the format characters text needs and cannot hide behind: zero-width
joiner and non-joiner (emoji, Indic and Persian script), the soft hyphen, and the visible
prepended signs of Arabic, Syriac and Kaithi (U+0600–U+0605, U+06DD, U+070F, U+0890–U+0891,
U+08E2, U+110BD, U+110CD). Every other format character (Unicode category Cf) is replaced.

Applied at the boundaries, so no caller has to remember it: the CLI's streams and consoles
(commands/common), every agent hook's output (agents/runtime), `status --line` (status/line),
and everything that leaves the vault for a model or an agent file (memory/fences.outbound:
recall, the fold prompt, the agent files' section). An MCP server or an HTML view uses the same
function. `--json` output stays lossless: JSON escapes every one of these characters.
"""

from __future__ import annotations

import io
import re

from gitvault.named import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

REPLACEMENT = "\ufffd"
_PICTURES = {code: chr(0x2400 + code) for code in range(0x20)} | {0x7F: "\u2421"}

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b\u200e\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f]"
)


# Variation selectors carry no glyph of their own: one after a character picks its form (an
# emoji's U+FE0F, an ideograph's variant in the supplement); a second in a row, or one of the
# supplement after anything but an ideograph, selects nothing and is a byte of hidden text (a
# run of them after one emoji reads as an instruction to a model and as nothing to a person).
_SELECTOR = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
_IDEOGRAPH = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U000323af"
_ANY_SELECTOR = re.compile(f"[{_SELECTOR}]")
# Compiled at its first use: the ideograph classes in a look-behind cost ~15 M instructions to
# compile, more than the rest of `status --line`'s own work, and most text has no selector.
_HIDING_PATTERN = f"(?<=[{_SELECTOR}])[{_SELECTOR}]|(?<![{_IDEOGRAPH}])[\U000e0100-\U000e01ef]"
_hiding: list[re.Pattern[str]] = []


def _replace(match: re.Match[str]) -> str:
    return _PICTURES.get(ord(match.group()), REPLACEMENT)


def neutralise_controls(text: str) -> str:
    """text with every control and disguising format character replaced (see the module)."""
    if _UNSAFE.search(text) is not None:
        text = _UNSAFE.sub(_replace, text)
    if _ANY_SELECTOR.search(text) is not None:
        if not _hiding:
            _hiding.append(re.compile(_HIDING_PATTERN))
        text = _hiding[0].sub(REPLACEMENT, text)
    return text


def neutralise_controls_in(data: Any) -> Any:
    """neutralise_controls over every string (keys too) of JSON-shaped data: what an agent hook
    answers is decoded by the agent and read by its model."""
    if isinstance(data, str):
        return neutralise_controls(data)
    if isinstance(data, dict):
        return {neutralise_controls_in(k): neutralise_controls_in(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [neutralise_controls_in(v) for v in data]
    return data


class ControlSafeStream(io.TextIOBase):
    """A text stream (stdout, stderr) whose every write is neutralised. It has no `buffer`, so
    nothing (click included) can write bytes past it. `rich_proxied_file` hands rich the raw
    stream: gitvault's rich consoles neutralise content themselves and keep their own styling
    codes (commands/common.SafeConsole)."""

    def __init__(self, raw: Any) -> None:
        super().__init__()
        self.raw = raw

    @property
    def rich_proxied_file(self) -> Any:
        return self.raw

    def write(self, text: str) -> int:
        self.raw.write(neutralise_controls(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return bool(self.raw.isatty())

    def fileno(self) -> int:
        return int(self.raw.fileno())

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.raw, "encoding", None) or "utf-8")

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.raw, "errors", None)
