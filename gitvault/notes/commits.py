"""Project commits as git reports them: metadata, message and file stats (never diff content),
read in batches (`git log --no-walk --stdin`) or streamed for a whole history (backfill)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from gitvault.vault import gitcmd

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


READ_AHEAD = 512  # chunks of git's output (64 KB each) waiting for the caller at most


def stream_commits(repo_dir: Path, rev_args: list[str]) -> Iterator[CommitInfo]:
    """Commits of a rev range, oldest first, parsed as git streams them (for backfill).

    git's output is read ahead by a thread, so git keeps computing file stats while the caller
    renders and writes notes (a blocked pipe made them take turns: git's numstat is half of a
    backfill's CPU); at most READ_AHEAD chunks wait in memory."""
    with gitcmd.stream_git([*_LOG_ARGS, "--reverse", *rev_args, "--"], repo_dir) as out:
        chunks: queue.Queue[bytes | None] = queue.Queue(maxsize=READ_AHEAD)
        stop = threading.Event()

        def pump() -> None:
            try:
                for chunk in out:
                    while not stop.is_set():
                        try:
                            chunks.put(chunk, timeout=0.1)
                            break
                        except queue.Full:
                            continue
                    if stop.is_set():
                        return
            except (OSError, ValueError):  # the pipe closed under it: the reader left early
                pass
            finally:
                while not stop.is_set():
                    try:
                        chunks.put(None, timeout=0.1)
                        break
                    except queue.Full:
                        continue

        reader = threading.Thread(target=pump, name="git-log-reader", daemon=True)
        reader.start()
        try:
            buffer = b""
            while (chunk := chunks.get()) is not None:
                buffer += chunk
                cut = buffer.rfind(b"\x01")
                if cut > 0:
                    yield from _parse_records(buffer[:cut])
                    buffer = buffer[cut:]
            yield from _parse_records(buffer)
        finally:
            stop.set()
        reader.join()
        done = out.finish()
        if done.returncode != 0:
            raise gitcmd.GitError(f"`git log` failed: {gitcmd.tail(done.stderr)}")
