"""The one answer to "which vault is this?". Every command and hook calls resolve().

Order: an explicit path (--repo / GITVAULT_REPO) → the repository around the current directory.
The answer is the repository's *common* git dir, so every linked worktree of one repository
resolves to the same vault (``--show-toplevel`` would split it).
"""

from __future__ import annotations

import os
from pathlib import Path

from gitvault.errors import NotARepository
from gitvault.named import NamedTuple

ENV_REPO = "GITVAULT_REPO"
STATE_DIRNAME = "gitvault"


class Location(NamedTuple):  # not a dataclass: hooks must not pay for importing `inspect`
    common_dir: Path  # shared by every worktree: the vault's home
    git_dir: Path  # this worktree's own git dir (== common_dir in the main worktree)
    workdir: Path | None  # this worktree's top level; None for a bare repository

    @property
    def state_dir(self) -> Path:
        """gitvault's private files (spool, locks, log) in the common git dir."""
        return self.common_dir / STATE_DIRNAME

    @property
    def worktree_name(self) -> str:
        """ "main" for the main worktree, else the linked worktree's name."""
        if self.git_dir == self.common_dir:
            return "main"
        return self.git_dir.name


def _find_git_dir(start: Path) -> tuple[Path, Path | None] | None:
    """Walk up from start like git does: a .git dir, a .git file (gitdir: …: a linked worktree,
    a submodule, `git init --separate-git-dir`) or a bare repo. Returns the git dir and the
    worktree top whose `.git` named it (None: a bare repository, or started inside .git)."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        dotgit = candidate / ".git"
        if dotgit.is_dir() and (dotgit / "HEAD").exists():
            return dotgit, candidate
        if dotgit.is_file():
            try:
                text = dotgit.read_text(encoding="utf-8").strip()
            except OSError:
                return None
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:") :].strip())
                if not target.is_absolute():
                    target = candidate / target
                return target.resolve(), candidate
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate, None  # a bare repository, or we were started inside .git
    return None


def _common_dir(git_dir: Path) -> Path:
    commondir = git_dir / "commondir"
    if commondir.is_file():
        target = Path(commondir.read_text(encoding="utf-8").strip())
        if not target.is_absolute():
            target = git_dir / target
        return target.resolve()
    return git_dir


def _workdir(git_dir: Path, common_dir: Path, top: Path | None) -> Path | None:
    if top is not None:
        return top  # the folder whose .git (a folder or a file) named the git dir
    if git_dir != common_dir:
        gitdir_file = git_dir / "gitdir"  # linked worktree: points at <worktree>/.git
        if gitdir_file.is_file():
            return Path(gitdir_file.read_text(encoding="utf-8").strip()).parent
    if git_dir.name == ".git":
        return git_dir.parent
    return None


def resolve(repo: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Location:
    """Resolve the vault for an explicit path, GITVAULT_REPO, or the current directory."""
    explicit = repo if repo is not None else os.environ.get(ENV_REPO) or None
    start = Path(explicit) if explicit is not None else (cwd or Path.cwd())
    if explicit is not None and not start.exists():
        raise NotARepository(
            f"{start}: no such directory",
            hint=f"check --repo / {ENV_REPO}",
        )
    found = _find_git_dir(start)
    if found is None:
        raise NotARepository(
            f"not inside a git repository: {start}",
            hint="run gitvault inside a repository, or pass --repo PATH",
        )
    git_dir, top = found
    common = _common_dir(git_dir)
    return Location(common_dir=common, git_dir=git_dir, workdir=_workdir(git_dir, common, top))
