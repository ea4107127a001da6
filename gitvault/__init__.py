"""gitvault: Git-native memory for coding agents."""

from __future__ import annotations

__version__ = "0.2.0"
