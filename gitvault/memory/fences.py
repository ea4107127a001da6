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

RECALL_BEGIN = "=== VAULT RECALL ==="
RECALL_END = "=== END VAULT RECALL ==="


# Horizontal whitespace inside the fences is tolerated ("===  VAULT RECALL ==="), case is not.
_RECALL_FENCE = re.compile(
    r"(?P<open>===[ \t]*VAULT[ \t]+RECALL[ \t]*===)"
    r"|(?P<close>===[ \t]*END[ \t]+VAULT[ \t]+RECALL[ \t]*===)"
)
# <private>, <PRIVATE>, <private reason="…">, </private>, </ Private >.
# Not <privateKey>, not <private/>.
_PRIVATE_TAG = re.compile(
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
