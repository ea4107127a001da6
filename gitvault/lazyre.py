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


class _Lazy:
    __slots__ = ("_args", "_pattern")

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._pattern: object = None

    def __getattr__(self, name: str) -> object:
        if self._pattern is None:
            self._pattern = re.compile(*self._args)  # type: ignore[type-var]
        return getattr(self._pattern, name)


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
