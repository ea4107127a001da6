"""Validate front matter and inputs against schemas/ (the single source of truth for formats)."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import TYPE_CHECKING, Any

from gitvault.errors import GitvaultError
from gitvault.resources import schema_path

if TYPE_CHECKING:
    from gitvault.resolve import Location

VALIDATED_KEPT = 16  # texts remembered as valid (a vault.toml changes rarely)


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


def validate_text(name: str, instance: Any, what: str, source: bytes, loc: Location | None) -> None:
    """validate, for an instance parsed from `source`, skipped when this clone found that very
    text valid against this very schema before (a digest of both, kept in the state folder).
    A text that fails is never remembered; without a location it is always checked."""
    if loc is None:
        validate(name, instance, what)
        return
    from gitvault.vault import statedir

    schema = schema_path(name).read_bytes()
    key = hashlib.sha256(b"%d\0%s\0%s" % (len(schema), schema, source)).hexdigest()
    held = statedir.VALIDATED_FILE.read(loc) or {}
    known = [k for k in held.get("valid", []) if isinstance(k, str)]
    if key in known:
        return
    validate(name, instance, what)
    try:
        statedir.VALIDATED_FILE.write(loc, {"valid": [key, *known][:VALIDATED_KEPT]})
    except OSError:
        pass  # a cache: the next command checks again
