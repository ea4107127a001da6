"""gitvault: Git-native memory for coding agents."""

from __future__ import annotations

__version__ = "0.2.0"
# gitvault/drain.py and gitvault/claude_hooks.py only forward what gitvault 0.1 installed (shims
# and Claude Code settings naming a module path); `gitvault install` replaces those. They go in
# this release: a test fails once __version__ reaches it, so removing them is not forgotten.
FORWARDERS_REMOVED_IN = "0.4.0"
