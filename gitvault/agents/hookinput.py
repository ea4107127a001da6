"""The one validator of hook input: an agent's own input (the schemas its adapter names) and
the canonical payload (schemas/agent-hook-input.json), without jsonschema.

jsonschema costs ~100 ms to import, more than the session-start hook may spend in all. These
schemas use a small subset of JSON Schema (type, required, properties, const, enum, minLength,
maxLength, pattern, items, maxItems, additionalProperties: true), which this module
interprets; a test checks it agrees with jsonschema on the sample inputs and on broken ones.
"""

from __future__ import annotations

import json
import re
from functools import cache

from gitvault.named import TYPE_CHECKING
from gitvault.resources import schema_path

if TYPE_CHECKING:
    from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "number": (int, float),
    "integer": (int,),
    "null": (type(None),),
}


@cache
def _schema(name: str) -> dict[str, Any]:
    data = json.loads(schema_path(name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@cache
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


def _type_ok(value: Any, expected: str | list[str]) -> bool:
    names = [expected] if isinstance(expected, str) else expected
    for name in names:
        types = _TYPES[name]
        if isinstance(value, bool) and name in ("number", "integer"):
            continue
        if isinstance(value, types):
            return True
    return False


def problems(instance: Any, schema: dict[str, Any], where: str = "") -> list[str]:
    out: list[str] = []
    label = where or "(top)"
    if "type" in schema and not _type_ok(instance, schema["type"]):
        return [f"{label}: expected {schema['type']}"]
    if "const" in schema and instance != schema["const"]:
        out.append(f"{label}: expected {schema['const']!r}")
    if "enum" in schema and instance not in schema["enum"]:
        out.append(f"{label}: not one of {schema['enum']}")
    if isinstance(instance, str):
        if len(instance) < int(schema.get("minLength", 0)):
            out.append(f"{label}: too short")
        if "maxLength" in schema and len(instance) > int(schema["maxLength"]):
            out.append(f"{label}: too long")
        if "pattern" in schema and _pattern(schema["pattern"]).search(instance) is None:
            out.append(f"{label}: does not match {schema['pattern']}")
    if isinstance(instance, list):
        if "maxItems" in schema and len(instance) > int(schema["maxItems"]):
            out.append(f"{label}: more than {schema['maxItems']} items")
        if "items" in schema:
            for index, item in enumerate(instance):
                out += problems(item, schema["items"], f"{where}/{index}" if where else str(index))
    if isinstance(instance, dict):
        for key in schema.get("required", []):
            if key not in instance:
                out.append(f"{label}: missing {key!r}")
        for key, sub in schema.get("properties", {}).items():
            if key in instance:
                out += problems(instance[key], sub, f"{where}/{key}" if where else key)
    return out


def validate(schema: str, instance: Any) -> list[str]:
    """Problems with a hook input against the named schema (empty when it is valid)."""
    return problems(instance, _schema(schema))
