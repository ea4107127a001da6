"""Every worktree's HEAD log, as far as a glance tells: which worktrees there are, and whether
any HEAD log grew since the last walk (notes/walk reads what it says). Light on purpose: the
commands' fast paths ask `due` before typer, pygit2 or the store load.
"""

from __future__ import annotations

import os
from pathlib import Path

from gitvault.named import NamedTuple
from gitvault.resolve import Location
from gitvault.vault import statedir

MAX_WORKTREES = 256
MAIN = "."


class Worktree(NamedTuple):
    key: str  # its git dir relative to the common one: "." or "worktrees/<id>"
    name: str  # "main" or the linked worktree's id (what notes record)
    git_dir: Path


def worktrees(common: Path) -> list[Worktree]:
    """The main worktree and every linked one that has a HEAD (at most MAX_WORKTREES)."""
    out = [Worktree(MAIN, "main", common)]
    try:
        names = sorted(os.listdir(common / "worktrees"))
    except OSError:
        names = []
    for name in names[: MAX_WORKTREES - 1]:
        git_dir = common / "worktrees" / name
        if os.path.isfile(git_dir / "HEAD"):
            out.append(Worktree(f"worktrees/{name}", name, git_dir))
    return out


def due(loc: Location) -> bool:
    """Whether any worktree's HEAD log grew since the last walk (a few stats, no git)."""
    state = statedir.walk_state(loc)
    if state is None:
        return True
    for tree in worktrees(loc.common_dir):
        try:
            info = os.stat(tree.git_dir / "logs" / "HEAD")
        except OSError:
            continue
        if state.logs.get(tree.key) != (info.st_ino, info.st_size):
            return True
    return False
