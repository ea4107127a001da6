"""Forwarder for Claude Code settings written by gitvault 0.1, which run
`python -m gitvault.claude_hooks EVENT`. `gitvault install` rewrites those settings; until then
this keeps them working. New code: gitvault.agents.runtime (`gitvault-hook <agent> <event>`)."""

from __future__ import annotations

import sys

from gitvault.agents.runtime import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
