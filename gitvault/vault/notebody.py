"""A note's body, as `notes/render` lays it out and every reader reads it back (the fold's
items and miner, and the search index, which sits beside notes/ and cannot import it):

    # <subject>
    [… N parents; the first 8 are listed]          (when cut)
    <message>
    ## Files (<n> changed, +<insertions> -<deletions>)
    - <path> (+<added> -<deleted>)  |  - <path> (binary)
    - [… and <k> more files]                        (when cut)
"""

from __future__ import annotations

import re

from gitvault.named import NamedTuple

FILES_HEADING = "## Files"
_FILES_HEADER = re.compile(r"## Files \(\d+ changed, \+\d+ -\d+\)")
_FILE_LINE = re.compile(r"- (.+?) \((?:\+\d+ -\d+|binary)\)")


class NoteBody(NamedTuple):
    """A note's body as `render` laid it out."""

    subject: str  # the title line without its "# " ("" when the body has no title)
    message: str  # what stands between the title and the file list (cut markers included)
    file_lines: tuple[str, ...]  # the file list as written, its "[… and N more files]" too

    @property
    def files(self) -> tuple[str, ...]:
        """The paths the file list names (a path cut at its front keeps no "…")."""
        out = []
        for line in self.file_lines:
            match = _FILE_LINE.fullmatch(line.strip())
            if match:
                out.append(match.group(1).lstrip("…"))
        return tuple(out)

    @property
    def whole_files(self) -> tuple[str, ...]:
        """The paths of the file list written whole (a path cut at its front, too long for a
        note, is left out: its tail names no real file). A rename reads `old => new`."""
        out = []
        for line in self.file_lines:
            match = _FILE_LINE.fullmatch(line.strip())
            if match and not match.group(1).startswith("…"):
                out.append(match.group(1))
        return tuple(out)


def parse_body(body: str) -> NoteBody:
    """The parts of a note's body (the text after its front matter). The file list starts at
    the last files heading: a message may hold a line that looks like one, the list cannot."""
    lines = body.strip().splitlines()
    subject = ""
    if lines and lines[0].startswith("# "):
        subject = lines.pop(0)[2:].strip()
    cut = len(lines)
    for index in range(len(lines) - 1, -1, -1):
        if _FILES_HEADER.fullmatch(lines[index]):
            cut = index
            break
    message = "\n".join(lines[:cut]).strip()
    return NoteBody(subject, message, tuple(ln for ln in lines[cut + 1 :] if ln.strip()))
