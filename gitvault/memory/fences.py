"""The recall fences, the one home of their text and of stripping them.

What SessionStart injects is wrapped in RECALL_BEGIN / RECALL_END, and every reader of agent text
(`save`, the transcript reader) strips fenced blocks, so old memory is never saved back as new
work. The same block machinery strips ``<private>`` blocks.

- Recall fences nest (depth is counted); an opening fence that is never closed removes
  everything to the end of the text; a closing fence without an opening one takes the text
  back to the previous block or the start (the block's start was cut off). The fence text
  is matched anywhere in a line, so a literal mention of the opening fence in prose also cuts the
  rest of the text: failing closed is the point.
- ``<private>`` … ``</private>`` blocks: tags case-insensitive, content may span lines, nested
  blocks counted, an unclosed ``<private>`` removes to the end of the text, a stray
  ``</private>`` is dropped.
- When a fence or tag is alone on its line (only whitespace around it) the whole line goes with
  the block, so removing a block leaves no stray blank line.
"""

from __future__ import annotations

import re

from gitvault import lazyre
from gitvault.vault.controls import neutralise_controls

RECALL_BEGIN = "=== VAULT RECALL ==="
RECALL_END = "=== END VAULT RECALL ==="


# Horizontal whitespace inside the fences is tolerated ("===  VAULT RECALL ==="), case is not.
_RECALL_FENCE = lazyre.compile(
    r"(?P<open>===[ \t]*VAULT[ \t]+RECALL[ \t]*===)"
    r"|(?P<close>===[ \t]*END[ \t]+VAULT[ \t]+RECALL[ \t]*===)"
)
# <private>, <PRIVATE>, <private reason="…">, </private>, </ Private >.
# Not <privateKey>, not <private/>.
_PRIVATE_TAG = lazyre.compile(
    r"(?P<open><[ \t]*private(?:[ \t][^<>\n]*)?>)|(?P<close><[ \t]*/[ \t]*private[ \t]*>)",
    re.IGNORECASE,
)


def _open_line_start(text: str, index: int) -> tuple[int, bool]:
    """Start of the line holding ``index`` if only whitespace precedes it there, else ``index``."""
    line_start = text.rfind("\n", 0, index) + 1
    if text[line_start:index].strip():
        return index, False
    return line_start, True


def _close_line_end(text: str, index: int) -> int:
    """Just past the newline ending the line at ``index`` if only whitespace follows, else index."""
    newline = text.find("\n", index)
    line_end = len(text) if newline == -1 else newline
    if text[index:line_end].strip():
        return index
    return len(text) if newline == -1 else newline + 1


def _strip_blocks(text: str, fence: re.Pattern[str], *, stray_cuts_before: bool) -> str:
    """Remove open…close blocks (nesting counted); unclosed → to the end. A stray close is
    dropped, and with stray_cuts_before so is the text between it and the end of the previous
    block (or the start of the text): its opening was cut off somewhere in there."""
    out: list[str] = []
    pos = 0  # everything before pos has been copied or dropped
    depth = 0
    whole_line = False
    for match in fence.finditer(text):
        if match.lastgroup == "open":
            if depth == 0:
                start, whole_line = _open_line_start(text, match.start())
                out.append(text[pos : max(pos, start)])
            depth += 1
        elif depth == 0:  # a closing fence with no opening one
            start, alone = _open_line_start(text, match.start())
            if not stray_cuts_before:
                out.append(text[pos : max(pos, start)])
            pos = _close_line_end(text, match.end()) if alone else match.end()
        else:
            depth -= 1
            if depth == 0:
                pos = _close_line_end(text, match.end()) if whole_line else match.end()
    if depth == 0:
        out.append(text[pos:])
    return "".join(out)


def strip_recall(text: str) -> str:
    """Remove every fenced recall block, fences included. An unterminated block runs to the end
    of the text; a closing fence without an opening one (a block whose start was cut off, as in
    the tail of a long tool output) takes the text back to the previous block, or to the start."""
    if "RECALL" not in text:
        return text
    return _strip_blocks(text, _RECALL_FENCE, stray_cuts_before=True)


def strip_private(text: str) -> str:
    """Remove ``<private>…</private>`` blocks (any case, multi-line; unclosed: to the end)."""
    if "<" not in text:
        return text
    return _strip_blocks(text, _PRIVATE_TAG, stray_cuts_before=False)


# -- on the way out: text from the vault can open or close no fence of gitvault's -----------------

# The prompt's data fences (<vault-items>, <vault-item …>, <current-digest>, <digest>), any case
# and spacing, opening or closing.
_PROMPT_TAG = lazyre.compile(r"<(?=\s*/?\s*(?:vault-items?|current-digest|digest)\b)", re.I)
# The agent files' sentinels (<!-- gitvault:begin --> / <!-- gitvault:end -->), any spacing.
_SENTINEL = lazyre.compile(r"<!--(?=\s*gitvault\s*:)", re.I)
_HEADING = lazyre.compile(r"^([ \t]*)(#{1,6})(?=[ \t]|$)", re.M)
_RECALL_WORDS = lazyre.compile(r"(VAULT)[ \t]+(RECALL)", re.IGNORECASE)


def neutralise(text: str, *, headings: bool = True) -> str:
    """Text that cannot open or close the recall fence, the fold prompt's data fences or an
    agent file's sentinel, nor start a heading (a forged digest category): the one place where
    stored text is made inert before it is shown to a model or written to an agent file. What
    it changes stays readable: `VAULT RECALL` becomes `VAULT-RECALL` (no fence can match it,
    however many `=` surround it), a tag's `<` becomes `&lt;`, a heading's `#` is escaped as
    `\\#`."""
    if "RECALL" in text.upper():
        text = _RECALL_WORDS.sub(r"\1-\2", text)
    if "<" in text:
        text = _SENTINEL.sub("&lt;!--", _PROMPT_TAG.sub("&lt;", text))
    if headings and "#" in text:
        text = _HEADING.sub(lambda m: m.group(1) + "\\" + m.group(2), text)
    return text


def outbound(text: str, *, own_headings: frozenset[str] = frozenset()) -> str:
    """Everything that leaves the vault (recall, fold prompt, digest, agent files) passes here:
    secrets are redacted again (older and synced vaults may hold unredacted text), control
    sequences and disguising format characters are neutralised (vault/controls), then fences
    and headings. Lines in own_headings (the digest's own `## Category` lines) are gitvault's
    structure and stay as they are."""
    from gitvault.scrub.engine import scrub_secrets

    text = neutralise_controls(scrub_secrets(text)[0])
    if not own_headings:
        return neutralise(text)
    return "\n".join(neutralise(ln, headings=ln not in own_headings) for ln in text.split("\n"))
