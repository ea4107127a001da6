"""Which commits an agent session made: the commits its own worktree's HEAD moved to by
creating them, while the session ran.

Read from that worktree's HEAD reflog, which git writes for every commit made there — quiet
ones (`git commit -q`), amends, cherry-picks, reverts, merges, rebase steps and commits made by
scripts the session ran — so attribution does not depend on what the agent printed or on when
Claude Code writes its transcript. Printing history (`git log --all`) moves no HEAD and claims
nothing. Each linked worktree has its own HEAD reflog, so sessions in two worktrees never claim
each other's commits. Vault commits are made with plumbing (no HEAD moves) and are excluded again
by their committer identity in case someone checks the vault branch out and commits there.

Standard library and plain git only: the Stop hook calls this on every turn. The reflog is read
from its end, at most MAX_REFLOG_BYTES, and no git process runs unless there is a candidate.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from gitvault import lazyre
from gitvault.named import NamedTuple
from gitvault.vault import gitcmd

MAX_REFLOG_BYTES = 4_000_000
_CHUNK = 65_536
_HEX40 = lazyre.compile(r"[0-9a-f]{40}")
# Reflog messages of HEAD moves that CREATE a commit. Anything else (checkout, reset, branch,
# clone, a fast-forward merge or pull, rebase start/finish/abort) only moves HEAD to a commit
# that already existed, possibly one another session made.
_CREATES = lazyre.compile(
    r"^(?:commit(?: \((?:initial|amend|merge)\))?|cherry-pick|revert|am"
    r"|rebase(?: -i)? \((?!start|finish|abort|reset|label)[a-z]+\)"
    r"|pull(?: --rebase)?(?: \([a-z]+\))?"
    r"|merge [^:]*)(?::|$)"
)


class ReflogEntry(NamedTuple):
    old: str
    new: str
    time: int
    message: str


class Made(NamedTuple):
    sha: str
    time: int  # committer time
    subject: str


def creates_commit(message: str) -> bool:
    if "fast-forward" in message.lower():
        return False
    return _CREATES.match(message) is not None


def parse_line(line: str) -> ReflogEntry | None:
    head, tab, message = line.partition("\t")
    parts = head.split(" ")
    if len(parts) < 4 or not (_HEX40.fullmatch(parts[0]) and _HEX40.fullmatch(parts[1])):
        return None
    stamp = parts[-2]
    if not stamp.isdigit():
        return None
    return ReflogEntry(parts[0], parts[1], int(stamp), message.strip() if tab else "")


def _open_reflog(git_dir: str | os.PathLike[str]) -> tuple[int, int] | None:
    """(fd, size) of a worktree's HEAD reflog when it is a regular file (never a FIFO or a
    device a hostile repository put there), else None."""
    path = os.path.join(os.fspath(git_dir), "logs", "HEAD")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        return None
    return fd, info.st_size


def head_reflog(git_dir: str | os.PathLike[str], since: float) -> list[ReflogEntry]:
    """The entries of a worktree's HEAD reflog made at or after `since`, oldest first. Reads
    backwards from the end of the file and stops at the first older entry (or the byte cap)."""
    opened = _open_reflog(git_dir)
    if opened is None:
        return []
    fd, end = opened
    try:
        data = b""
        pos = end
        while pos > 0 and end - pos < MAX_REFLOG_BYTES:
            step = min(_CHUNK, pos)
            pos -= step
            data = os.pread(fd, step, pos) + data
            first = data.split(b"\n", 1)
            if pos > 0 and len(first) == 2:
                entry = parse_line(first[1].split(b"\n", 1)[0].decode("utf-8", "replace"))
                if entry is not None and entry.time < since:
                    break
    finally:
        os.close(fd)
    lines = data.split(b"\n")
    if pos > 0:
        lines = lines[1:]  # began mid-line
    out = []
    for raw in lines:
        entry = parse_line(raw.decode("utf-8", "replace"))
        if entry is not None and entry.time >= since:
            out.append(entry)
    return out


class Run(NamedTuple):
    """One interval a session was live: wall-clock bounds, and the size of the worktree's HEAD
    reflog when it began and ended (None when unknown). Byte offsets are the evidence that
    counts: a reflog line's time is the commit's committer date, which a script, a rebase or
    GIT_COMMITTER_DATE can set to anything; its place in the append-only file cannot lie."""

    start: float
    end: float | None  # None: still running
    begin_at: int | None = None
    end_at: int | None = None


def reflog_size(git_dir: str | os.PathLike[str]) -> int | None:
    try:
        info = os.stat(os.path.join(os.fspath(git_dir), "logs", "HEAD"))
    except OSError:
        return 0 if os.path.isdir(os.fspath(git_dir)) else None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def _lines_from(fd: int, start: int, end: int) -> list[tuple[int, ReflogEntry]]:
    """(offset, entry) of every complete line in [start, end) of the file."""
    start = max(start, end - MAX_REFLOG_BYTES)
    data = os.pread(fd, end - start, start) if end > start else b""
    out = []
    pos = start
    for raw in data.split(b"\n")[:-1]:
        entry = parse_line(raw.decode("utf-8", "replace"))
        if entry is not None:
            out.append((pos, entry))
        pos += len(raw) + 1
    return out


def _in_run(run: Run, offset: int, entry: ReflogEntry, size: int, by_offset: bool) -> bool:
    if by_offset:
        assert run.begin_at is not None
        return run.begin_at <= offset and (run.end_at is None or offset < run.end_at)
    if entry.time < run.start - 1:
        return False
    return run.end is None or entry.time <= run.end + 1


def made_in(git_dir: str | os.PathLike[str], runs: Sequence[Run]) -> list[str]:
    """Shas of the commits HEAD moved to by creating them during any of the runs, oldest
    first, once each. A commit an amend replaced is left out (the amended commit stands for
    it). Runs with reflog offsets are matched by offset; runs without (or when the reflog was
    rewritten since, e.g. by `git reflog expire`) by time. No git process runs."""
    if not runs:
        return []
    opened = _open_reflog(git_dir)
    if opened is None:
        return []
    fd, size = opened
    try:
        by_offset = [r.begin_at is not None and r.begin_at <= size for r in runs]
        if all(by_offset):
            lines = _lines_from(fd, min(r.begin_at or 0 for r in runs), size)
        else:
            since = min(r.start for r in runs)
            lines = [(-1, e) for e in head_reflog(git_dir, since - 1)]
            by_offset = [False] * len(runs)
    finally:
        os.close(fd)
    found: dict[str, None] = {}
    replaced: set[str] = set()
    for offset, entry in lines:
        if not creates_commit(entry.message):
            continue
        if not any(
            _in_run(r, offset, entry, size, o) for r, o in zip(runs, by_offset, strict=True)
        ):
            continue
        if entry.message.startswith("commit (amend)"):
            replaced.add(entry.old)
        found.setdefault(entry.new, None)
    return [sha for sha in found if sha not in replaced]


def describe(cwd: Path, shas: Iterable[str]) -> list[Made]:
    """Committer time and subject of each commit that still exists, in the given order; vault
    commits (gitvault's own identity) are dropped. One git process."""
    wanted = [s for s in dict.fromkeys(shas) if _HEX40.fullmatch(s)]
    if not wanted:
        return []
    proc = gitcmd.run_git(
        ["log", "--no-walk=unsorted", "--ignore-missing", "--format=%H%x00%ct%x00%ce%x00%s"]
        + wanted
        + ["--"],
        cwd,
        check=False,
    )
    out: list[Made] = []
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        parts = line.split("\0")
        if len(parts) != 4 or not parts[1].isdigit() or parts[2] == gitcmd.VAULT_EMAIL:
            continue
        out.append(Made(parts[0], int(parts[1]), parts[3]))
    return out
