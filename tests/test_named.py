"""gitvault.named.NamedTuple behaves as typing.NamedTuple does, for what gitvault uses."""

from __future__ import annotations

import pickle
import typing

import pytest

from gitvault.named import NamedTuple


class Point(NamedTuple):
    """A point."""

    x: int
    y: int = 0
    label: str | None = None

    @property
    def norm1(self) -> int:
        return abs(self.x) + abs(self.y)

    def moved(self, dx: int) -> Point:
        return self._replace(x=self.x + dx)


class TypingPoint(typing.NamedTuple):
    x: int
    y: int = 0
    label: str | None = None


def test_fields_defaults_and_methods_match_typing() -> None:
    point = Point(3, -4)
    assert tuple(point) == (3, -4, None) and point.norm1 == 7 and point.moved(1) == Point(4, -4)
    assert Point._fields == TypingPoint._fields
    assert Point._field_defaults == TypingPoint._field_defaults
    assert Point(1)._asdict() == TypingPoint(1)._asdict()
    assert repr(Point(1, 2, "a")) == repr(TypingPoint(1, 2, "a")).replace("TypingPoint", "Point")
    assert Point.__doc__ == "A point." and Point.__module__ == __name__
    assert Point.__qualname__ == "Point" and Point.__annotations__["x"] == "int"
    assert isinstance(point, tuple) and pickle.loads(pickle.dumps(point)) == point
    with pytest.raises(AttributeError):
        point.x = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]


def test_what_typing_refuses_is_refused() -> None:
    with pytest.raises(TypeError, match="without a default"):

        class Bad(NamedTuple):
            a: int = 1
            b: int  # type: ignore[misc]

    with pytest.raises(AttributeError, match="_fields"):

        class Worse(NamedTuple):
            a: int
            _fields = ("b",)  # type: ignore[misc]


def test_the_package_takes_namedtuple_from_gitvault_named_only() -> None:
    """typing.NamedTuple compiles every field's annotation at import: every hook would pay."""
    import ast
    from pathlib import Path

    import gitvault

    root = Path(gitvault.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "named.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "typing"
                and any(alias.name == "NamedTuple" for alias in node.names)
            ):
                offenders.append(str(path.relative_to(root)))
            if isinstance(node, ast.Attribute) and node.attr == "NamedTuple":
                offenders.append(str(path.relative_to(root)))
    assert offenders == []
