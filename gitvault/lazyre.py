"""Regular expressions compiled at their first use, for the modules every hook imports.

A hook is a whole process and its imports are its cost: the patterns a module compiles at import
(a vault path's shape, a fence, a settings line) cost ~0.2 M instructions each, and most runs use
few of them. `compile(pattern, flags)` returns a stand-in for the re.Pattern that compiles it
the first time one of its methods is used; everything else is the pattern's own. Pass it only
to its own methods (`P.search(text)`), never to `re.sub(P, …)`.
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


class _Lazy:
    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._args = (pattern, flags)

    def __getattr__(self, name: str) -> object:
        compiled = re.compile(*self._args)  # type: ignore[type-var]
        for attribute in _COPIED:
            setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)


if TYPE_CHECKING:
    from typing import Any, overload

    @overload
    def compile(pattern: str, flags: int = 0) -> re.Pattern[str]: ...
    @overload
    def compile(pattern: bytes, flags: int = 0) -> re.Pattern[bytes]: ...
    def compile(pattern: str | bytes, flags: int = 0) -> Any:  # noqa: A001 - re's own name
        """re.compile(pattern, flags), done when the pattern is first used."""
else:
    compile = _Lazy  # noqa: A001 - re's own name
