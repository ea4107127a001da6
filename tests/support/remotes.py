"""Helpers for the sync tests: a bare remote that refuses non-fast-forwards (so a force push
would fail loudly), clones of it with gitvault installed, and tree/fsck checks."""

from __future__ import annotations

from pathlib import Path

from tests.support.repos import NO_HOOKS, Repo, git


def bare_remote(path: Path, *, hook: str | None = None) -> Path:
    """A bare repository with receive.denyNonFastForwards and an update hook that rejects any
    non-fast-forward (belt and braces), plus an optional extra pre-receive hook body."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "--bare", "-b", "main")
    git(path, "config", "receive.denyNonFastForwards", "true")
    git(path, "config", "receive.denyDeletes", "true")
    update = path / "hooks" / "update"
    update.write_text(
        "#!/bin/sh\n"
        "ref=$1 old=$2 new=$3\n"
        "zero=0000000000000000000000000000000000000000\n"
        '[ "$old" = "$zero" ] && exit 0\n'
        'if [ "$(git merge-base "$old" "$new")" != "$old" ]; then\n'
        '  echo "non-fast-forward to $ref refused" >&2; exit 1\n'
        "fi\n"
        "exit 0\n"
    )
    update.chmod(0o755)
    if hook is not None:
        pre = path / "hooks" / "pre-receive"
        pre.write_text("#!/bin/sh\n" + hook)
        pre.chmod(0o755)
    return path


def seed(remote: Path, scratch: Path) -> None:
    """Give the remote a first code commit (main), as a real project would have."""
    git(scratch.parent, "clone", "-q", str(remote), str(scratch))
    (scratch / "README.md").write_text("# project\n")
    git(scratch, "add", "README.md")
    git(scratch, *NO_HOOKS, "commit", "-q", "-m", "Initial commit")
    git(scratch, "push", "-q", "origin", "main")


def clone(remote: Path, path: Path, *, install: bool = True) -> Repo:
    git(path.parent, "clone", "-q", str(remote), str(path))
    repo = Repo(path, sync=True)
    if install:
        result = repo.gv("install", "--no-claude")
        assert result.code == 0, result
    return repo


def tree(repo: Repo, ref: str = "vault") -> dict[str, str]:
    """path → blob of a vault tree."""
    out = {}
    for line in repo.git("ls-tree", "-r", ref).splitlines():
        meta, _, path = line.partition("\t")
        out[path] = meta.split()[2]
    return out


def fsck(path: Path) -> None:
    proc = git(path, "fsck", "--strict", "--no-progress")
    assert "error" not in proc.lower(), proc
