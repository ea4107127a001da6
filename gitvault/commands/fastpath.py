"""What the commands answered before typer and rich load share (search_fast, recall_fast): the
root's --repo/-C option as the full CLI reads it, and whether the vault is settled enough to
read without the drain every full command runs first."""

from __future__ import annotations

from pathlib import Path

from gitvault.notes import heads
from gitvault.resolve import Location
from gitvault.vault import statedir

REPO_OPTIONS = ("--repo", "-C")


def repo_option(argv: list[str], index: int) -> tuple[int, str | None]:
    """How many arguments a --repo/-C option at index takes (0: it is not one), and its value."""
    arg = argv[index]
    if arg in REPO_OPTIONS and index + 1 < len(argv):
        return 2, argv[index + 1]
    if arg.startswith("--repo="):
        return 1, arg.split("=", 1)[1]
    return 0, None


def _spooled(state: Path) -> bool:
    """Whether commits wait in the spool (or in files a drainer claimed and left)."""
    try:
        if (state / statedir.SPOOL).stat().st_size > 0:
            return True
    except OSError:
        pass  # no spool
    try:
        return any((state / statedir.SPOOL_WORK).iterdir())
    except OSError:  # no claimed files' folder (or none readable): nothing claimed
        return False


def settled(loc: Location) -> bool:
    """Whether a read needs no drain first (commonsense of commands.common.location): nothing
    spooled, and no worktree's HEAD log grew since the last walk (a commit no hook saw)."""
    return not _spooled(loc.state_dir) and not heads.due(loc)
