"""The data shipped inside the package (gitvault/data: hook templates, skills, schemas). The
top-level hooks/ and schemas/ of a checkout link here.

Read as files beside this module: every way gitvault is installed (pip, pipx, uv, an editable
checkout) puts the package on disk, and `importlib.resources` would cost every hook ~9 M
instructions of imports at start-up for a zip import gitvault never runs from.
"""

from __future__ import annotations

from pathlib import Path

_DATA = Path(__file__).parent / "data"


def data_root() -> Path:
    return _DATA


def schema_path(name: str) -> Path:
    return _DATA.joinpath("schemas", name)


def hook_template(kind: str, name: str) -> Path:
    return _DATA.joinpath("hooks", kind, *name.split("/"))


def view_asset(name: str) -> Path:
    """The style sheet and script `gitvault view` puts inline in its page."""
    return _DATA.joinpath("view", name)
