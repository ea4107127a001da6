"""Forwarder for repositories installed by gitvault 0.1, whose shims run
`python -m gitvault.drain DIR [--detach|--wait]`. `gitvault install` replaces those shims;
until then this keeps them working, up to the release REMOVED_IN names. New code:
gitvault.notes.drain."""

from __future__ import annotations

import sys

from gitvault import FORWARDERS_REMOVED_IN
from gitvault.notes.drain import main

REMOVED_IN = FORWARDERS_REMOVED_IN

if __name__ == "__main__":
    sys.exit(main())
