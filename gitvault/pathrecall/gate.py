"""Which project path a file an agent names is, or None: the one check every way in (the
edit-time hooks, `gitvault recall --for`, the MCP tools) passes a path through.

A path is accepted only when it names a place inside the worktree, checked twice: as written
(`..` resolved lexically, relative paths taken from the session's folder) and after every
symbolic link is followed (a link out of the tree, or into another worktree, is refused, the
same as an absolute path elsewhere). Nothing in a git directory (`.git/…`, or the `.git` file
of a linked worktree) is a project path. The file need not exist (an agent about to write it
again after it was deleted still gets its history). Whether git ignores it is a separate,
costlier question (one git process, `ignored`), asked only once the index knows the path.
"""

from __future__ import annotations

import os
from pathlib import Path

from gitvault.named import TYPE_CHECKING

if TYPE_CHECKING:
    from gitvault.vault.processes import Finished

MAX_PATH = 4096


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def project_path(name: object, workdir: Path, cwd: Path | None = None) -> str | None:
    """The repository-relative POSIX path of `name` in the worktree at `workdir`, or None."""
    if not isinstance(name, str) or not name or len(name) > MAX_PATH or "\0" in name:
        return None
    root = os.path.realpath(workdir)
    base = os.path.realpath(cwd) if cwd is not None else root
    if not _inside(base, root):
        base = root
    written = os.path.normpath(os.path.join(base, name))
    if not _inside(written, root) and not _inside(written, os.path.normpath(str(workdir))):
        return None
    real = os.path.realpath(written)
    if not _inside(real, root) or real == root:
        return None
    rel = os.path.relpath(real, root)
    parts = rel.split(os.sep)
    if ".git" in parts or any(p in ("", ".", "..") for p in parts):
        return None
    return "/".join(parts)


def ignored(workdir: Path, rel: str) -> bool:
    """Whether git ignores the path (an untracked file matching the ignore rules; a tracked
    file is never ignored). A git failure counts as ignored: say nothing rather than guess."""
    from gitvault.vault import gitcmd

    return ignored_of(gitcmd.run_git(check_ignore(rel), workdir, check=False))


def check_ignore(rel: str) -> list[str]:
    """The git command that says whether git ignores the worktree path `rel` (ignored_of)."""
    return ["check-ignore", "-q", "--", rel]


def ignored_of(proc: Finished) -> bool:
    """check_ignore's answer: exit 1 is "not ignored"; a failure counts as ignored."""
    return proc.returncode != 1
