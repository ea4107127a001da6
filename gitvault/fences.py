"""The recall fences: what SessionStart injects is wrapped in them, and `save` strips them
(old memory must never be saved back as new work). A module of its own so the SessionStart
hook can import the two strings without textclean's regexes."""

from __future__ import annotations

RECALL_BEGIN = "=== VAULT RECALL ==="
RECALL_END = "=== END VAULT RECALL ==="
