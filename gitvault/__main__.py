from __future__ import annotations

from gitvault.cli import entry

entry()
