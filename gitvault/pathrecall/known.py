"""The paths the per-path index knows, as one small text file (`recall-paths` in the state
folder): a header line, then one repository-relative path a line, sorted bytewise. Standard
library only, no SQLite: an edit-time hook about a path the vault knows nothing of reads this
file and stops.

    # gitvault recall-paths 1 <vault tip the index was built from>
    CHANGES.rst
    src/click/core.py

A path holding a line break, or starting with '#', is not listed (it cannot be one line of this
file); the index still knows it, and KNOWS_MORE in the header's place says so:

    # gitvault recall-paths 1 <tip> +

so a reader that finds a path missing from the list asks the index whenever the header ends
with " +". A shell answers "nothing known" with `grep -Fxq -- "$path" recall-paths` when the
header has no "+" (POSIX grep; the file is written whole and renamed into place, so a reader
never sees half of it).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

FORMAT = 1
HEADER = f"# gitvault recall-paths {FORMAT} "
KNOWS_MORE = " +"
MAX_BYTES = 64 * 1024 * 1024


def listable(path: str) -> bool:
    return bool(path) and "\n" not in path and "\r" not in path and not path.startswith("#")


def render(paths: Iterable[str], tip: str) -> bytes:
    """The file for these paths, built from the index at vault tip `tip`."""
    encoded = sorted({p.encode("utf-8", "surrogateescape") for p in paths})
    kept = [p for p in encoded if listable(p.decode("utf-8", "surrogateescape"))]
    more = KNOWS_MORE if len(kept) < len(encoded) else ""
    head = f"{HEADER}{tip}{more}\n".encode()
    return head + b"".join(p + b"\n" for p in kept)


def read(file: Path) -> tuple[str, bytes, bool] | None:
    """(tip, the listed paths with a leading newline, whether more are known), or None when the
    file is missing, not a regular file, too large or not of this format."""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        import stat

        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        data = b"".join(chunks)
    finally:
        os.close(fd)
    head, sep, rest = data.partition(b"\n")
    text = head.decode("utf-8", "replace")
    if not sep or not text.startswith(HEADER):
        return None
    tip = text[len(HEADER) :]
    more = tip.endswith(KNOWS_MORE)
    return tip.removesuffix(KNOWS_MORE).strip(), b"\n" + rest, more


def knows(file: Path, path: str) -> bool | None:
    """True: the index has history for `path`; False: it has none; None: the list cannot tell
    (no list yet, or the path is one the list cannot hold and the index knows such paths)."""
    return lists(read(file), path)


def lists(found: tuple[str, bytes, bool] | None, path: str) -> bool | None:
    """knows(), for a list already read (`read`): one read for every path a tool call names."""
    if found is None:
        return None
    _, listed, more = found
    if not listable(path):
        return None if more else False
    needle = b"\n" + path.encode("utf-8", "surrogateescape") + b"\n"
    return needle in listed
