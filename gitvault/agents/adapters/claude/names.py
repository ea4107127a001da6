"""Names the Claude Code adapter and its wiring share (a module of their own, so that wiring,
which the adapter imports when it installs, never imports the adapter: no import cycle)."""

from __future__ import annotations

AGENT = "claude-code"  # what `gitvault save --agent` records
SETTINGS_LOCAL = ".claude/settings.local.json"
PROJECT_VAR = "CLAUDE_PROJECT_DIR"  # the project folder in a hook's environment
