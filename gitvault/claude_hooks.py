"""Forwarder for Claude Code settings written by gitvault 0.1, which run
`python -m gitvault.claude_hooks EVENT`. `gitvault install` rewrites those settings; until then
this keeps them working, up to the release REMOVED_IN names. New code: gitvault.agents.runtime
(`gitvault-hook <agent> <event>`)."""

from __future__ import annotations

import sys

from gitvault import FORWARDERS_REMOVED_IN
from gitvault.agents.runtime import main

REMOVED_IN = FORWARDERS_REMOVED_IN

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
