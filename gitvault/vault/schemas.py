"""Validate front matter and inputs against schemas/ (the single source of truth for formats)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from gitvault.errors import GitvaultError
from gitvault.resources import schema_path


class SchemaError(GitvaultError):
    pass


@cache
def _validator(name: str) -> Any:
    import jsonschema  # imported lazily: ~40 ms that hooks on the fast path never pay

    schema = json.loads(schema_path(name).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def errors(name: str, instance: Any) -> list[str]:
    validator = _validator(name)
    out = []
    for err in sorted(validator.iter_errors(instance), key=lambda e: list(e.path)):
        where = "/".join(str(p) for p in err.path) or "(top)"
        out.append(f"{where}: {err.message}")
    return out


def validate(name: str, instance: Any, what: str) -> None:
    problems = errors(name, instance)
    if problems:
        raise SchemaError(
            f"{what} does not match {name}: {problems[0]}"
            + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else "")
        )
