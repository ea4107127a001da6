"""Where the shipped data lives: hooks/ and schemas/ at the top of a checkout, or
gitvault/data/ inside an installed wheel."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@cache
def data_root() -> Path:
    for candidate in (_PACKAGE / "data", _PACKAGE.parent):
        if (candidate / "schemas").is_dir() and (candidate / "hooks").is_dir():
            return candidate
    raise FileNotFoundError("gitvault's hooks/ and schemas/ are missing from this installation")


def schema_path(name: str) -> Path:
    return data_root() / "schemas" / name


def hook_template(kind: str, name: str) -> Path:
    return data_root() / "hooks" / kind / name
