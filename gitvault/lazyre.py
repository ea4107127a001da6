"""Regular expressions compiled at their first use, for the modules every hook imports, and
kept compiled between processes.

A hook is a whole process and its imports are its cost: the patterns a module compiles at import
(a vault path's shape, a fence, a settings line) cost ~0.2 M instructions each, and most runs use
few of them. `compile(pattern, flags)` returns a stand-in for the re.Pattern that compiles it
the first time one of its methods is used; everything else is the pattern's own. Pass it only
to its own methods (`P.search(text)`), never to `re.sub(P, …)`. Only the package's own literal
patterns go through it (never a user's or a vault's text).

Compiling is most of that first use: `re` parses a pattern and builds its program in Python, and
the secret filter's patterns (case-insensitive words beside classes that exclude whole CJK
blocks, each a loop over 40,000 code points) cost a hook that redacts anything 20-40 ms of
compiling before it reads a byte. Once a process `adopt`s a store (vault/statedir.keep_patterns
reads it from the repository's state dir and writes `export()` back at exit, only when this
process compiled something it lacked), each program compiled here is kept with the Python that
built it, and later processes hand the kept program straight to the regular expression engine
(`_sre.compile`, which checks a program before it runs one): the Pattern is equal (`==`: same
flags, same program) to the one `re.compile` returns. A store of another Python, or a torn or
foreign one, is ignored; anything unexpected falls back to `re.compile`. This module does no
I/O.
"""

from __future__ import annotations

import re

from gitvault.named import TYPE_CHECKING

# What a first use copies from the compiled pattern onto the stand-in, so that every later
# use is a plain attribute lookup (a pattern in a loop over 100,000 vault paths pays nothing).
_COPIED = (
    "match",
    "fullmatch",
    "search",
    "sub",
    "subn",
    "split",
    "findall",
    "finditer",
    "pattern",
    "flags",
    "groups",
    "groupindex",
)

MAX_STORE_BYTES = 8 << 20  # far above what the package's patterns need (~0.3 MB)
MAX_ENTRIES = 4000  # beyond it, a save keeps only what this process used

if TYPE_CHECKING:
    from typing import Any

    # pattern, flags -> (flags, program, groups, group index, index group)
    _Entry = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]
_store: dict[tuple[str | bytes, int], _Entry] = {}
_used: set[tuple[str | bytes, int]] = set()
_storing = False
_dirty = False


class _Lazy:
    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._args = (pattern, flags)

    def __getattr__(self, name: str) -> object:
        compiled = _compiled(*self._args)
        for attribute in _COPIED:
            setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)


def _engine() -> Any:
    """CPython's regular expression engine (`re`'s own, which compiles through it)."""
    import _sre  # type: ignore[import-not-found]

    return _sre


def _header() -> tuple[object, ...]:
    import sys

    _sre = _engine()
    return ("gitvault-regex", 1, sys.version, _sre.MAGIC, _sre.CODESIZE, sys.maxunicode)


def _program(pattern: str | bytes, flags: int) -> _Entry:
    """What re.compile hands the engine for (pattern, flags), as plain values."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed = _parser.parse(pattern, flags)
    code = [int(op) for op in _compiler._code(parsed, flags)]
    groupindex = {str(k): int(v) for k, v in parsed.state.groupdict.items()}
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for key, index in groupindex.items():
        indexgroup[index] = key
    return (
        int(flags | parsed.state.flags),
        code,
        parsed.state.groups - 1,
        groupindex,
        tuple(indexgroup),
    )


def _compiled(pattern: Any, flags: int) -> Any:
    global _dirty
    if not _storing:
        return re.compile(pattern, flags)
    _sre = _engine()
    flags = int(flags)  # a RegexFlag is an int marshal refuses
    key = (pattern, flags)
    entry = _store.get(key)
    if entry is not None and _valid(key, entry):
        try:
            restored = _sre.compile(pattern, *entry)
        except Exception:  # noqa: BLE001 - a stored program the engine refuses: compile again
            _store.pop(key, None)
        else:
            _used.add(key)
            return restored
    try:
        entry = _program(pattern, flags)
        made = _sre.compile(pattern, *entry)
    except Exception:  # noqa: BLE001 - re's internals moved: the public way, unstored
        return re.compile(pattern, flags)
    _store[key] = entry
    _used.add(key)
    _dirty = True
    return made


def adopt(data: bytes | None) -> None:
    """Compile through a store from now on, starting from `data` (what `export` returned in an
    earlier process; None, or anything else not a store of this Python, starts it empty)."""
    global _storing
    _storing = True
    _store.update(_parse(data) if data else {})


def export() -> bytes | None:
    """The store to keep for later processes, when this one compiled something it lacked."""
    global _dirty
    if not _dirty:
        return None
    _dirty = False
    import marshal
    import zlib

    entries = _store
    if len(entries) > MAX_ENTRIES:
        entries = {k: v for k, v in _store.items() if k in _used}
    body = marshal.dumps((_header(), entries))  # type: ignore[arg-type]
    return zlib.crc32(body).to_bytes(4, "big") + body


def _parse(data: bytes) -> dict[tuple[str | bytes, int], _Entry]:
    import marshal
    import zlib

    try:
        check, body = int.from_bytes(data[:4], "big"), data[4:]
        if len(data) > MAX_STORE_BYTES or zlib.crc32(body) != check:
            return {}
        header, entries = marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return {}
    if header != _header() or not isinstance(entries, dict):
        return {}
    return entries  # each entry is checked when it is used (_valid, then the engine's own check)


def _valid(key: object, entry: object) -> bool:
    return (
        isinstance(key, tuple)
        and len(key) == 2
        and isinstance(key[0], str | bytes)
        and type(key[1]) is int
        and isinstance(entry, tuple)
        and len(entry) == 5
        and type(entry[0]) is int
        and isinstance(entry[1], list)  # of ints: the engine refuses anything else
        and type(entry[2]) is int
        and isinstance(entry[3], dict)
        and isinstance(entry[4], tuple)
    )


if TYPE_CHECKING:
    from typing import overload

    @overload
    def compile(pattern: str, flags: int = 0) -> re.Pattern[str]: ...
    @overload
    def compile(pattern: bytes, flags: int = 0) -> re.Pattern[bytes]: ...
    def compile(pattern: str | bytes, flags: int = 0) -> Any:  # noqa: A001 - re's own name
        """re.compile(pattern, flags), done when the pattern is first used."""
else:
    compile = _Lazy  # noqa: A001 - re's own name
