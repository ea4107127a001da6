"""Project commits as git reports them: metadata, message and file stats (never diff content),
read in batches (`git log --no-walk --stdin`): one for the drainer's few, chunks computed side
by side for a backfill's whole history (read_listed)."""

from __future__ import annotations

import tempfile
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from gitvault.vault import gitcmd, processes

# One record per commit: \x01 header fields (NUL-separated) \x02 then -z numstat entries.
_FORMAT = "%x01%H%x00%P%x00%an%x00%ae%x00%aI%x00%cI%x00%ct%x00%B%x02"
_LOG_ARGS = [
    "-c",
    "core.quotePath=false",
    # git maps pack windows of up to 1 GB and keeps up to 8 GB of them: a whole history's
    # `--numstat` held 500 MB of git/git's pack resident. Smaller windows: 284 -> 158 MB
    # for 12,897 commits, +8 % CPU (bench.real's git/git clone).
    "-c",
    "core.packedGitWindowSize=16m",
    "-c",
    "core.packedGitLimit=64m",
    # and its cache of delta bases (96 MB by default) fills up over a long history: git/git's
    # newest 6,000 first-parent commits, 219 -> 154 MB peak, CPU 34.2 s both (load ~7).
    *gitcmd.SMALL_DELTA_CACHE,
    "log",
    "-z",
    "--numstat",
    "-M",
    "--diff-merges=first-parent",
    f"--format={_FORMAT}",
]


@dataclass(frozen=True)
class FileStat:
    path: str
    added: int | None  # None for binary files
    deleted: int | None


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    authored: str
    committed: str
    commit_time: int
    message: str
    files: tuple[FileStat, ...] = field(default=())

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()

    @property
    def body(self) -> str:
        parts = self.message.split("\n", 1)
        return parts[1].strip("\n") if len(parts) > 1 else ""


def _parse_records(data: bytes) -> Iterator[CommitInfo]:
    for record in data.split(b"\x01"):
        if not record:
            continue
        header, _, stats = record.partition(b"\x02")
        fields = header.split(b"\x00", 7)
        if len(fields) < 8:
            continue
        sha, parents, an, ae, ad, cd, ct, msg = (f.decode("utf-8", "replace") for f in fields)
        yield CommitInfo(
            sha=sha,
            parents=tuple(parents.split()),
            author_name=an,
            author_email=ae,
            authored=ad,
            committed=cd,
            commit_time=int(ct or 0),
            message=msg.rstrip("\n"),
            files=tuple(_parse_numstat(stats)),
        )


def _parse_numstat(data: bytes) -> Iterator[FileStat]:
    items = data.lstrip(b"\n\x00").split(b"\x00")
    i = 0
    while i < len(items):
        item = items[i].lstrip(b"\n")
        i += 1
        if not item:
            continue
        parts = item.split(b"\t", 2)
        if len(parts) < 3:
            continue
        added, deleted, path = parts
        if not path and i + 1 < len(items) + 1:  # rename: "a\td\t" NUL old NUL new
            old = items[i] if i < len(items) else b""
            new = items[i + 1] if i + 1 < len(items) else b""
            i += 2
            path = old + b" => " + new
        yield FileStat(
            path=path.decode("utf-8", "replace"),
            added=int(added) if added.isdigit() else None,
            deleted=int(deleted) if deleted.isdigit() else None,
        )


def read_commits(repo_dir: Path, shas: Iterable[str]) -> dict[str, CommitInfo]:
    """Metadata and file stats for the given commits (one git process for the batch)."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    proc = gitcmd.run_git(
        [*_LOG_ARGS, "--no-walk=unsorted", "--stdin"],
        repo_dir,
        input=("\n".join(wanted) + "\n").encode(),
    )
    return {c.sha: c for c in _parse_records(proc.stdout)}


LISTED_CHUNK = 2000  # commits one git process computes the file stats of (read_listed)
LISTED_AHEAD = 2  # such processes running ahead of the reader


def read_listed(repo_dir: Path, shas: Iterable[str]) -> Iterator[CommitInfo]:
    """The commits `shas`, in that order, for a backfill. git's file stats (a whole history's
    `--numstat` is most of a backfill's CPU) are computed by several git processes at once,
    LISTED_CHUNK commits each, up to LISTED_AHEAD of them ahead of the chunk being read, so
    that a machine's other cores work while this one writes notes: git/git's 81,966 commits
    took 92 s of one core (load ~1) and 58 s in two halves side by side, the same bytes out.
    `shas` is read as chunks are started (a history's list need not be held whole). Each
    chunk's output goes into a file of a private temporary folder (what the repository's own
    objects hold, removed as soon as it is read, and with the folder whatever happens); none
    is ever blocked on a pipe nobody reads."""
    pending = iter(shas)
    with tempfile.TemporaryDirectory(prefix="gitvault-backfill-") as folder:
        running: deque[tuple[processes.Filed, Path, Path]] = deque()
        started = 0

        def start() -> bool:
            nonlocal started
            chunk = list(islice(pending, LISTED_CHUNK))
            if not chunk:
                return False
            base = Path(folder) / str(started)
            started += 1
            listed, out, err = (
                base.with_suffix(".in"),
                base.with_suffix(".out"),
                base.with_suffix(".err"),
            )
            listed.write_text("\n".join(chunk) + "\n", encoding="ascii")
            with listed.open("rb") as stdin, out.open("wb") as stdout, err.open("wb") as stderr:
                args = [*_LOG_ARGS, "--no-walk=unsorted", "--stdin"]
                child = gitcmd.start_git_filed(args, repo_dir, stdin, stdout, stderr)
            running.append((child, out, err))
            listed.unlink()
            return True

        try:
            more = True
            while True:
                while more and len(running) <= LISTED_AHEAD:
                    more = start()
                if not running:
                    return
                child, out, err = running.popleft()
                if child.wait() != 0:
                    raise gitcmd.GitError(
                        f"git log failed: {gitcmd.tail(err.read_bytes())}",
                        hint="check the repository with `git fsck`",
                    )
                data = out.read_bytes()
                out.unlink()
                yield from _parse_records(data)
        finally:
            for child, _, _ in running:
                child.stop()
