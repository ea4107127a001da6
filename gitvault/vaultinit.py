"""The files a new vault branch starts with."""

from __future__ import annotations

from gitvault.config import DEFAULT_VAULT_TOML

README = """\
# gitvault vault

This orphan branch is the memory of this repository, written by gitvault
(https://pypi.org/project/gitvault/). It never shares history with your code branches.

- `notes/YYYY/MM/DD/<sha>.md`: one small note per project commit (message, file stats; never diffs).
- `sessions/YYYY-MM-DD-HHMM-<slug>.md`: an agent's saved session. Append-only.
- `_master.md`: the digest a model folds from the notes and sessions: six categories, capped.
- `patterns/*.md`: standing rules, one per line (`- …`), recalled at every session start.
- `vault.toml`: format version, digest categories and caps, fold budgets.

Every commit on this branch does one thing and says so in its message. Audit it with
`git log vault`, `git show vault:_master.md`, or `git worktree add ../vault-audit vault`.
"""

PATTERNS_README = """\
# patterns

Standing rules recalled at every session start, one per line starting with `- `.
Add a file here (for example `testing.md`) on the vault branch; keep each rule one line.
"""


def initial_files() -> dict[str, bytes | None]:
    return {
        "README.md": README.encode(),
        "vault.toml": DEFAULT_VAULT_TOML.encode(),
        "notes/.keep": b"",
        "sessions/.keep": b"",
        "patterns/README.md": PATTERNS_README.encode(),
    }
