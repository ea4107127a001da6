"""A typed writer for `git fast-import`: a chain of commits straight into one pack (no loose
objects), for bulk writes (backfill, a drained rebase). No branch is moved: the caller
publishes the last commit by compare-and-swap, like any other vault write.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitvault.vault import layout
from gitvault.vault.gitcmd import (
    VAULT_EMAIL,
    GitError,
    run_git,
    tail,
    vault_committer_name,
    write_failed,
)
from gitvault.vault.locking import scratch_dir


@dataclass(frozen=True)
class FileChange:
    path: str
    data: bytes | None  # None deletes

    def dump(self) -> bytes:
        path = layout.check_path(self.path).encode()
        if self.data is None:
            return b"D %s\n" % path
        return b"M 100644 inline %s\ndata %d\n%s\n" % (path, len(self.data), self.data)


@dataclass(frozen=True)
class ImportCommit:
    ref: str
    mark: int
    message: str
    when: int
    changes: tuple[FileChange, ...]
    parent: str | None = None  # only the first commit of a chain names its parent

    def dump(self) -> bytes:
        msg = self.message.encode()
        out = b"commit %s\nmark :%d\n" % (self.ref.encode(), self.mark)
        out += b"committer %s <%s> %d +0000\n" % (
            vault_committer_name().encode(),
            VAULT_EMAIL.encode(),
            self.when,
        )
        out += b"data %d\n%s\n" % (len(msg), msg)
        if self.parent:
            out += b"from %s\n" % self.parent.encode()
        out += b"".join(change.dump() for change in self.changes)
        return out + b"\n"


IMPORT_REF = "refs/gitvault/import"


def _remove_pid_refs(cwd: Path) -> None:
    proc = run_git(
        ["for-each-ref", "--format=%(refname)", "refs/gitvault/import-*"], cwd, check=False
    )
    for name in proc.stdout.decode("utf-8", "replace").split():
        run_git(["update-ref", "-d", name], cwd, check=False)


def chain(
    cwd: Path,
    parent: str,
    commits: Sequence[tuple[Mapping[str, bytes | None], str]],
    when: int,
) -> list[str]:
    """Write (changes, message) commits as a chain on top of parent; their ids in order."""
    # One scratch ref for every importer: fast-import needs a ref to build on, nothing reads it
    # (the marks file names the commits), and a killed run leaves at most this one behind, for
    # the next run to reuse and delete. (gitvault 0.1 used one per pid: those go too.)
    ref = IMPORT_REF
    _remove_pid_refs(cwd)
    stream = b"".join(
        ImportCommit(
            ref=ref,
            mark=index,
            message=message,
            when=when,
            changes=tuple(FileChange(p, d) for p, d in sorted(changes.items())),
            parent=parent if index == 1 else None,
        ).dump()
        for index, (changes, message) in enumerate(commits, 1)
    )
    with scratch_dir("gitvault-import-") as tmp:
        marks = tmp / "marks"
        try:
            proc = run_git(
                ["fast-import", "--quiet", "--force", f"--export-marks={marks}"],
                cwd,
                input=stream,
                check=False,
                # glibc otherwise returns freed memory to the system after every object, and
                # fast-import spends most of its time in those system calls.
                env={"MALLOC_TRIM_THRESHOLD_": "134217728"},
            )
            if proc.returncode != 0:
                detail = tail(proc.stderr) or tail(proc.stdout)
                if "Read-only" in detail or "Permission denied" in detail:
                    raise write_failed(detail)
                raise GitError(
                    f"`git fast-import` failed with exit code {proc.returncode}: {detail}"
                )
            ids: dict[int, str] = {}
            for line in marks.read_text(encoding="ascii").splitlines():
                mark, _, sha = line.partition(" ")
                ids[int(mark.lstrip(":"))] = sha.strip()
        finally:
            run_git(["update-ref", "-d", ref], cwd, check=False)
    return [ids[i] for i in range(1, len(commits) + 1)]
