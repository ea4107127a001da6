"""The data shipped inside the package (gitvault/data: hook templates, skills, schemas), read
with importlib.resources. The top-level hooks/ and schemas/ of a checkout link here."""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable


def data_root() -> Traversable:
    return files("gitvault").joinpath("data")


def schema_path(name: str) -> Traversable:
    return data_root().joinpath("schemas", name)


def hook_template(kind: str, name: str) -> Traversable:
    return data_root().joinpath("hooks", kind, *name.split("/"))


def view_asset(name: str) -> Traversable:
    """The style sheet and script `gitvault view` puts inline in its page."""
    return data_root().joinpath("view", name)
