"""`NamedTuple` for the modules every hook and `status --line` import, without `typing`.

Those run as whole processes many times a session, so their import time is their cost:
importing `typing` costs about 15 M instructions (~4 ms here), and its NamedTuple compiles every
field's annotation (a ForwardRef each, as `from __future__ import annotations` makes them
strings), ~0.3 M more per field. Measured with callgrind, `gitvault status --line` in a wheel
install (tests/test_named.py keeps those modules free of `typing` at run time).

The class syntax is typing's, and mypy reads typing.NamedTuple; at run time the class is
collections.namedtuple's, with the body's defaults, methods and properties, as typing builds
it. Use it only where start-up counts; everything else imports typing.NamedTuple.
"""

from __future__ import annotations

import collections

TYPE_CHECKING = False  # mypy takes any name TYPE_CHECKING as true; Python runs the else

if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    _OWN = frozenset({"__module__", "__qualname__", "__annotations__", "_root"})
    _REFUSED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields"})

    class _Maker(type):
        def __new__(mcls, name, bases, namespace):  # noqa: N804 - a metaclass's first argument
            if namespace.get("_root"):
                return super().__new__(mcls, name, bases, namespace)
            fields = tuple(namespace.get("__annotations__", {}))
            defaults = [namespace[field] for field in fields if field in namespace]
            if any(field not in namespace for field in fields[len(fields) - len(defaults) :]):
                raise TypeError(f"{name}: a field without a default follows one with a default")
            made = collections.namedtuple(
                name, fields, defaults=defaults, module=namespace.get("__module__")
            )
            for key, value in namespace.items():
                if key in _REFUSED:
                    raise AttributeError(f"{name}: cannot overwrite NamedTuple attribute {key}")
                if key not in _OWN and key not in fields:
                    setattr(made, key, value)
            made.__qualname__ = namespace.get("__qualname__", name)
            made.__annotations__ = dict(namespace.get("__annotations__", {}))
            return made

    class NamedTuple(metaclass=_Maker):
        _root = True
