"""PATCH mode: rewrite only the gitvault-managed section of an agent file (CLAUDE.md, ...).

The managed section is the region from a line holding only ``<!-- gitvault:begin -->`` to a line
holding only ``<!-- gitvault:end -->`` (surrounding whitespace allowed). Only that region changes;
every other byte of the file is kept exactly: a UTF-8 BOM, CRLF line endings, a missing final
newline, bytes that are not valid UTF-8. So everything here works on bytes, never on decoded text.

An unmatched, reversed or repeated sentinel makes gitvault refuse (``Refused``, exit code 3) and
write nothing: guessing where a hand-edited section ends could destroy the user's text.
"""

from __future__ import annotations

import os
import pathlib
import stat
from collections.abc import Iterator, Sequence

from gitvault.errors import Refused
from gitvault.named import NamedTuple
from gitvault.vault.files import Unsafe, atomic_write, confined

BEGIN = "<!-- gitvault:begin -->"
END = "<!-- gitvault:end -->"

_BEGIN_B = BEGIN.encode("ascii")
_END_B = END.encode("ascii")
_SENTINELS = (_BEGIN_B, _END_B)
_BOM = b"\xef\xbb\xbf"
_LF = b"\n"
_CRLF = b"\r\n"

_FIX_HINT = (
    f"Make the file hold exactly one '{BEGIN}' line followed later by one '{END}' line "
    "(or delete every sentinel line to have gitvault append a fresh section), "
    "then run `gitvault patch` again."
)


class _Line(NamedTuple):
    number: int  # 1-based line number
    start: int  # first byte of the line's content (after the BOM on line 1)
    end: int  # one past the last content byte, i.e. before its "\r\n" / "\n" terminator
    next: int  # first byte of the next line; equals `end` when the line has no terminator


def _lines(data: bytes) -> Iterator[_Line]:
    pos = len(_BOM) if data.startswith(_BOM) else 0
    number = 1
    size = len(data)
    while True:
        nl = data.find(_LF, pos)
        if nl < 0:
            yield _Line(number, pos, size, size)
            return
        end = nl - 1 if nl > pos and data[nl - 1] == 0x0D else nl
        yield _Line(number, pos, end, nl + 1)
        pos = nl + 1
        number += 1


def _where(name: str | None, number: int) -> str:
    return f"{name}:{number}" if name else f"line {number}"


def _numbers(lines: list[_Line]) -> str:
    return ", ".join(str(line.number) for line in lines)


def _locate(data: bytes, name: str | None) -> tuple[_Line, _Line] | None:
    """The BEGIN and END sentinel lines, None when there are none; Refused when malformed."""
    if _BEGIN_B not in data and _END_B not in data:
        return None
    begins: list[_Line] = []
    ends: list[_Line] = []
    for line in _lines(data):
        content = data[line.start : line.end].strip()
        if content == _BEGIN_B:
            begins.append(line)
        elif content == _END_B:
            ends.append(line)
    if not begins and not ends:
        return None
    if len(begins) == 1 and len(ends) == 1:
        begin, end = begins[0], ends[0]
        if begin.number < end.number:
            return begin, end
        raise Refused(
            f"{_where(name, end.number)}: gitvault:end comes before gitvault:begin "
            f"(line {begin.number}); refusing to write",
            hint=_FIX_HINT,
        )
    if len(begins) > 1 or len(ends) > 1:
        first_extra = min(line.number for line in begins[1:] + ends[1:])
        raise Refused(
            f"{_where(name, first_extra)}: more than one gitvault managed section "
            f"(gitvault:begin at line(s) {_numbers(begins) or 'none'}; "
            f"gitvault:end at line(s) {_numbers(ends) or 'none'}); refusing to write",
            hint=_FIX_HINT,
        )
    if begins:
        raise Refused(
            f"{_where(name, begins[0].number)}: gitvault:begin has no matching gitvault:end; "
            "refusing to write",
            hint=_FIX_HINT,
        )
    raise Refused(
        f"{_where(name, ends[0].number)}: gitvault:end has no matching gitvault:begin; "
        "refusing to write",
        hint=_FIX_HINT,
    )


def _newline(outside: bytes) -> bytes:
    """The dominant line ending of the bytes outside the managed region.

    Counted outside the region only, so rewriting the region can never flip the choice (this is
    what makes patching idempotent). A tie goes to LF, except when the bytes end in a lone "\\r":
    then the "\\n" appended after them would turn it into one more CRLF, so CRLF is chosen up front.
    """
    crlf = outside.count(_CRLF)
    lf = outside.count(_LF) - crlf
    if crlf > lf or (crlf == lf and outside.endswith(b"\r")):
        return _CRLF
    return _LF


def _region(block: str, nl: bytes, name: str | None) -> bytes:
    """BEGIN line, the block's lines, END line, joined by `nl` (no terminator after END)."""
    text = block.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # a final newline ends the last line; it does not start another one
    encoded = [line.encode("utf-8") for line in lines]
    for number, line in enumerate(encoded, start=1):
        if line.strip() in _SENTINELS:
            target = f" of {name}" if name else ""
            raise Refused(
                f"line {number} of the block text is a gitvault sentinel; writing it would break "
                f"the managed section{target}; refusing to write",
                hint="Remove the sentinel line from the text to be written (quote it inline "
                "instead), then run `gitvault patch` again.",
            )
    return nl.join([_BEGIN_B, *encoded, _END_B])


def find_block(original: bytes, *, name: str | None = None) -> tuple[int, int] | None:
    """Byte span ``(start, stop)`` of the managed region, sentinel lines included.

    `start` is the first byte of the BEGIN line (after a BOM); `stop` is the end of the END line,
    before its line terminator. None when the file has no sentinel line at all. Raises Refused for
    a lone, reversed or repeated sentinel; `name` (the file path) prefixes the message.
    """
    found = _locate(original, name)
    if found is None:
        return None
    begin, end = found
    return begin.start, end.end


def patch_bytes(original: bytes | None, block: str, *, name: str | None = None) -> bytes:
    """The new file content: `original` with its managed region set to `block`.

    `original` None means the file does not exist. Without any sentinel the region is appended;
    the original bytes stay an exact prefix. The region's lines use the file's dominant newline.
    Raises Refused (nothing to write) for malformed sentinels; `name` prefixes the message.
    """
    if original is None:
        return _region(block, _LF, name) + _LF
    found = _locate(original, name)
    if found is None:
        nl = _newline(original)
        region = _region(block, nl, name)
        body = original[len(_BOM) :] if original.startswith(_BOM) else original
        if not body or original.endswith(_LF):
            return original + region + nl
        # The file has no final newline: separate the region with one and keep the file's
        # convention (no newline after the END line). This also lets remove_block undo it exactly.
        return original + nl + region
    begin, end = found
    start, stop = begin.start, end.end
    nl = _newline(original[:start] + original[stop:])
    return original[:start] + _region(block, nl, name) + original[stop:]


def remove_block(original: bytes, *, name: str | None = None) -> bytes:
    """`original` without its managed region (for uninstall); every other byte is kept.

    Drops the region together with the newline it added: the END line's terminator, or, when the
    region ends the file without one, the newline separating it from the text before. Returns
    `original` unchanged when there is no region; raises Refused for malformed sentinels.
    """
    found = _locate(original, name)
    if found is None:
        return original
    begin, end = found
    start, stop = begin.start, end.end
    if end.next > end.end:
        return original[:start] + original[end.next :]
    head = original[:start]
    nl = _newline(head + original[stop:])
    for sep in (nl, _CRLF, _LF):
        if head.endswith(sep):
            head = head[: -len(sep)]
            break
    return head + original[stop:]


def patch_file(
    path: pathlib.Path, block: str, *, inside: Sequence[pathlib.Path] | None = None
) -> bool:
    """Set the managed section of the file at `path` to `block`; True when the file was written.

    A missing file is created. When the content would not change nothing is written (the mtime
    stays). Otherwise the new content goes to a temp file in the same directory, is fsynced and
    renamed over the original (os.replace), keeping its permission bits (a new file: 0644). A
    symlink is followed, so its target is updated and the link stays — but with `inside`, only
    when the real path is a regular file inside one of those folders. Raises Refused, naming
    `path`, and writes nothing, when the sentinels are malformed, the block text contains a
    sentinel line, or the target is not a regular file inside `inside`.
    """
    if inside is None:
        target = pathlib.Path(os.path.realpath(path))
    else:
        try:
            target = confined(path, list(inside))
        except Unsafe as exc:
            raise Refused(
                f"{exc}; gitvault writes only regular files inside the repository",
                hint="point it at a file inside the worktree, or remove it from patch.files",
            ) from exc
    current: bytes | None
    mode: int | None
    try:
        with open(target, "rb") as handle:
            mode = stat.S_IMODE(os.fstat(handle.fileno()).st_mode)
            current = handle.read()
    except FileNotFoundError:
        current, mode = None, None
    new = patch_bytes(current, block, name=str(path))
    if new == current:
        return False
    atomic_write(target, new, mode)
    return True
