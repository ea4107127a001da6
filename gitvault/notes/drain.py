"""Turn the spool the git hooks append to into note commits on the vault branch.

The post-commit shim only appends a line to <common git dir>/gitvault/spool and makes sure a
drainer runs; this module is that drainer. One runs at a time (flock on drain.lock); it claims
the spool by renaming it, writes the notes, deletes the claimed file, and exits when the spool
is empty. A claimed file left by a crash is picked up by the next drainer; writing is
idempotent, so nothing is lost or doubled.

Why no line is lost, by construction:
- A writer (the shims' spool_append, `respool` here) counts a line as delivered only when the
  file it wrote to is still the spool after the write (files.append(confirm=True)); otherwise
  it writes again. A claim renames the spool and only then reads it, so every delivered line
  is read by the drainer that claims its file; a line written into a file already claimed is
  never counted as delivered, and a line read twice makes one note.
- A hook that finds a drainer running leaves its line to it. The drainer removes its pid file,
  releases the lock and only then looks at the spool one last time; whoever holds the lock
  last does the same. So a line delivered while a drainer runs is read by that drainer's last
  look, or by a drainer that took the lock after it.
- And whatever still has no note — a commit that ran no hook at all — is found by the walk of
  every worktree's HEAD log (notes/walk) that each drainer runs before it exits.

Spool lines (tab-separated): kind, sha or old sha, [new sha,] branch, worktree, git dir.
  commit  <sha>  <branch> <worktree> <git-dir>     post-commit
  pending <sha>  <branch> <worktree> <git-dir>     post-commit while a rebase runs
  merge   <sha>  <branch> <worktree> <git-dir>     post-merge
  rewrite <old> <new> <branch> <worktree> <git-dir> post-rewrite (amend, rebase)
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from gitvault.notes import burst, quarantine, render, walk
from gitvault.notes.commits import read_commits
from gitvault.notes.index import already_written
from gitvault.resolve import Location
from gitvault.vault import gitcmd, layout, statedir
from gitvault.vault.files import append, atomic_write, make_dirs, read_regular
from gitvault.vault.locking import file_lock, log_failure
from gitvault.vault.statedir import DRAIN_LOCK, DRAIN_PID, PENDING, SPOOL, SPOOL_WORK
from gitvault.vault.store import Vault, Write

PENDING_GRACE_SECONDS = 30.0
BATCH = 256
CATCH_UP_MAX = 500
LINGER_SECONDS = 1.0  # a background drainer waits this long for more lines before it exits
SPOOL_LIMIT = 256 * 1024 * 1024  # one spool file (~1.7 million lines)


@dataclass
class Entry:
    kind: str
    sha: str
    branch: str | None
    worktree: str | None
    git_dir: str | None
    old: str | None = None
    stamp: float = 0.0

    def line(self) -> str:
        fields = [self.kind]
        if self.kind == "rewrite":
            fields.append(self.old or "")
        fields += [self.sha, self.branch or "", self.worktree or "", self.git_dir or ""]
        if self.kind == "pending":
            fields.append(f"{self.stamp:.0f}")
        return "\t".join(fields)


def parse_line(line: str) -> Entry | None:
    parts = line.rstrip("\n").split("\t")
    kind = parts[0]
    if kind == "rewrite" and len(parts) >= 3:
        old, rest = parts[1], parts[2:]
    elif kind in ("commit", "pending", "merge") and len(parts) >= 2:
        old, rest = None, parts[1:]
    else:
        return None
    rest += [""] * (5 - len(rest))
    sha = rest[0]
    if len(sha) < 40 or any(c not in "0123456789abcdef" for c in sha.lower()):
        return None
    stamp = float(rest[4]) if kind == "pending" and rest[4].replace(".", "").isdigit() else 0.0
    return Entry(kind, sha, _branch(rest[1]), rest[2] or None, rest[3] or None, old, stamp)


def _branch(head: str) -> str | None:
    head = head.strip()
    if not head or len(head) == 40:
        return None  # a bare sha means detached HEAD
    return gitcmd.branch_of(head) or (None if head.startswith(("ref: ", "refs/")) else head)


def spool_backlog(loc: Location) -> int:
    """Lines waiting in the spool (including claimed files of a drainer that died)."""
    count = 0
    files = [loc.state_dir / SPOOL]
    work = loc.state_dir / SPOOL_WORK
    if work.is_dir() and not work.is_symlink():
        files += list(work.iterdir())
    for path in files:
        try:
            count += read_regular(path, SPOOL_LIMIT).count(b"\n")
        except OSError:
            pass  # missing, or not a regular file: the next drain removes it
    return count


def _claim(state: Path) -> list[Path]:
    work = state / SPOOL_WORK
    if work.is_symlink():
        _remove_planted(state, work)
    make_dirs(work)
    spool = state / SPOOL
    try:
        st = spool.lstat()
        if stat.S_ISREG(st.st_mode):
            if st.st_size > 0:
                os.rename(spool, work / f"{time.time_ns()}-{os.getpid()}")
        elif not stat.S_ISDIR(st.st_mode):  # a folder stays: status names it
            _remove_planted(state, spool)
    except FileNotFoundError:
        pass
    files = []
    for path in sorted(work.iterdir()):
        if stat.S_ISREG(path.lstat().st_mode):
            files.append(path)
        elif not path.is_dir():
            _remove_planted(state, path)
    return files


def _remove_planted(state: Path, path: Path) -> None:
    """A link, FIFO or device where the spool should be: never read or written through."""
    log_failure(state, f"drain: removed {path.name}, which was not a regular file")
    try:
        path.unlink()
    except OSError:
        pass


class Drainer:
    def __init__(self, loc: Location) -> None:
        self.loc = loc
        self.state = statedir.ensure(loc)
        self.vault = Vault(loc)
        self.written = 0
        self.merged: list[str] = []  # the worktrees a merge or pull happened in (sync.auto)

    def process(self, entries: list[Entry]) -> list[Entry]:
        """Write notes for entries; return pending entries to keep for later."""
        vault_branch = self.vault.branch
        keep: list[Entry] = []
        rewritten: dict[str, list[str]] = {}
        ctx: dict[str, Entry] = {}
        order: list[str] = []
        now = time.time()
        for e in entries:
            if e.branch == vault_branch:
                continue  # commits on the vault branch itself are never noted
            if e.kind == "merge" and e.git_dir and e.git_dir not in self.merged:
                self.merged.append(e.git_dir)  # fast-forward pulls included
            if e.kind == "rewrite":
                if e.old and e.old not in rewritten.setdefault(e.sha, []):
                    rewritten[e.sha].append(e.old)
                ctx[e.sha] = e
            elif e.kind == "pending":
                if gitcmd.rebase_in_progress(e.git_dir) or (
                    e.stamp and now - e.stamp < PENDING_GRACE_SECONDS
                ):
                    if not e.stamp:
                        e.stamp = now
                    keep.append(e)
                    continue
                ctx.setdefault(e.sha, e)  # the rebase ended without a rewrite line for it
            else:
                ctx.setdefault(e.sha, e)
            if e.sha not in order:
                order.append(e.sha)
        # A pending commit named by a rewrite line is handled by that line.
        keep = [e for e in keep if e.sha not in rewritten]
        present = [s for s in order if self.vault.git.contains(s)]
        for missing in set(order) - set(present):
            log_failure(self.state, f"drain: commit {missing} no longer exists; not noted")
        # A commit made during a rebase that the rebase did not keep (a pick later squashed or
        # amended away, or a rebase that was aborted) is in no rewrite line and no longer on
        # its worktree's HEAD: it is not part of the project's history, so it gets no note.
        present = [
            s
            for s in present
            if ctx[s].kind != "pending" or s in rewritten or self._on_head(s, ctx[s].git_dir)
        ]
        infos = read_commits(self.loc.common_dir, present)
        writes: list[Write] = []
        for sha in present:
            info = infos.get(sha)
            e = ctx[sha]
            if info is None:
                continue
            if e.kind == "merge" and len(info.parents) < 2:
                continue  # a fast-forward brings commits noted where they were made
            replaces = list(rewritten.get(sha, []))
            if e.kind == "commit" and not replaces:
                amended = gitcmd.amended_from(e.git_dir, sha)
                if amended:
                    replaces.append(amended)
            note_ctx = render.NoteContext(e.branch, e.worktree, tuple(replaces))
            try:
                writes.append(render.note_write(info, note_ctx))
            except Exception as exc:  # noqa: BLE001 - one bad commit never blocks the others
                quarantine.set_aside(self.state, e.line(), f"{type(exc).__name__}: {exc}")
        for start in range(0, len(writes), BATCH):
            chunk = writes[start : start + BATCH]
            made = self.vault.commit_many(chunk, skip_if=already_written(self.vault))
            self.written += len(made)
        worktrees = {ctx[s].git_dir: ctx[s] for s in rewritten if ctx[s].git_dir}
        for git_dir, entry in worktrees.items():
            assert git_dir is not None
            self.catch_up(git_dir, entry)
        return keep

    def catch_up(self, git_dir: str, like: Entry) -> None:
        """Note the commits on a worktree's HEAD that have none, newest back to the first noted
        one (bounded). A rebase's picks run no post-commit work (the shim leaves at once, for
        speed), and post-rewrite names only rewritten commits: commits that `exec` lines made
        during the rebase are found here."""
        try:
            head = gitcmd.head_ref(git_dir)
        except OSError:
            return
        target = self.vault.git.ref_target(head[5:]) if head.startswith("ref: ") else head
        if not target:
            return
        missing: list[str] = []
        for sha, when in gitcmd.first_parent_chain(self.loc.common_dir, target, CATCH_UP_MAX):
            if self.vault.exists(layout.note_path(sha, when)):
                break
            missing.append(sha)
        if missing:
            entries = [Entry("commit", sha, like.branch, like.worktree, git_dir) for sha in missing]
            self.process(list(reversed(entries)))

    def walk(self) -> bool:
        """Note what the walk of every worktree's HEAD log finds without a note; whether it
        read anything new (the caller then looks at the spool again)."""
        made, position = walk.read_new(self.loc, self.vault)
        fresh = [m for m in made if not self._noted(m.sha)]
        if fresh:  # a commit set aside stays set aside (status names it), never retried here
            held = set_aside_shas(self.state)
            fresh = [m for m in fresh if m.sha not in held]
        if fresh:
            self.process([Entry(m.kind, m.sha, m.branch, m.worktree, m.git_dir) for m in fresh])
        advanced = position != statedir.walk_state(self.loc)
        kept = statedir.write_walk_state(self.loc, position)
        # Unrecorded (walk.json is not a file it can write), the walk starts over each time
        # and finds the same commits: only new notes are progress then, or it never ends.
        return bool(made) and (bool(fresh) or (advanced and kept))

    def _noted(self, sha: str) -> bool:
        """Whether sha has a note (or is gone: nothing to note)."""
        found = self.vault.git.resolve_commit(sha)
        return found is None or self.vault.exists(layout.note_path(found.sha, found.time))

    def _on_head(self, sha: str, git_dir: str | None) -> bool:
        """Whether sha is the HEAD of the worktree it was made in, or an ancestor of it."""
        if not git_dir:
            return True
        try:
            head = gitcmd.head_ref(git_dir)
        except OSError:
            return True  # cannot tell: keep the note rather than lose it
        target = self.vault.git.ref_target(head[5:]) if head.startswith("ref: ") else head
        return target is not None and self.vault.git.is_ancestor(sha, target)

    def drain_once(self) -> bool:
        """Process every claimed file. False when there was nothing to do."""
        files = _claim(self.state)
        pending_path = self.state / PENDING
        if not files and not pending_path.exists():
            return False
        offsets: dict[Path, int] = {}
        entries = self._read(pending_path, offsets, final=True)
        for path in files:
            entries += self._read(path, offsets)
        # A rebase that ended after the claim: git runs post-rewrite before it removes the
        # rebase state, so the rewrite lines for these pending commits are in the spool now.
        if any(e.kind == "pending" and not gitcmd.rebase_in_progress(e.git_dir) for e in entries):
            for path in _claim(self.state):
                if path not in offsets:
                    files.append(path)
                    entries += self._read(path, offsets)
        keep = self.process(entries)
        # A hook that opened the spool just before we renamed it may have appended to the
        # claimed file since we read it: process those lines before the file is deleted.
        late = [e for path in files for e in self._read(path, offsets, final=True)]
        if late:
            keep = self.process(keep + late)
        try:
            if keep:
                atomic_write(pending_path, ("\n".join(e.line() for e in keep) + "\n").encode())
            else:
                pending_path.unlink(missing_ok=True)
        except OSError as exc:
            # Not a file it can write (a folder): the walk notes a rebase's commits once it
            # ended, from the HEAD log it leaves alone while the rebase runs.
            log_failure(self.state, f"drain: cannot keep {PENDING} ({exc}); left to the walk")
        for path in files:
            path.unlink(missing_ok=True)
        return bool(files)

    def _read(self, path: Path, offsets: dict[Path, int], *, final: bool = False) -> list[Entry]:
        """Entries of the complete lines of path after offsets[path] (all bytes when final)."""
        start = offsets.get(path, 0)
        try:
            data = read_regular(path, SPOOL_LIMIT)[start:]
        except FileNotFoundError:
            return []
        except OSError as exc:
            try:
                path.unlink(missing_ok=True)
                log_failure(self.state, f"drain: cannot read {path.name} ({exc}); removed it")
            except OSError:  # a folder: left for the person to move (status shows the log)
                log_failure(self.state, f"drain: cannot read {path.name} ({exc})")
            return []
        if not final:
            data = data[: data.rfind(b"\n") + 1]
        offsets[path] = start + len(data)
        entries: list[Entry] = []
        # Only "\n" ends a spool line: names may hold any other line separator (U+2028 …).
        for line in data.decode("utf-8", "replace").split("\n"):
            entry = parse_line(line)
            if entry is not None and not entry.git_dir and entry.worktree:
                # The shim leaves the git dir out when its path cannot be a spool field
                # (a tab or newline in it): the worktree's name says where it is.
                common = self.loc.common_dir
                wt = entry.worktree
                entry.git_dir = str(common if wt == "main" else common / "worktrees" / wt)
            if entry is None:
                if line.strip():
                    log_failure(self.state, f"drain: ignored malformed spool line {line[:80]!r}")
                continue
            entries.append(entry)
        return entries


def set_aside_shas(state: Path) -> set[str]:
    """The commits of the spool lines set aside (notes/quarantine)."""
    out = set()
    for record in quarantine.entries(state):
        entry = parse_line(str(record.get("line", "")))
        if entry is not None:
            out.add(entry.sha)
    return out


def vault_locked(loc: Location) -> bool:
    """Whether a lock file sits on the vault branch right now (plain files, no pygit2)."""
    branch = gitcmd.vault_branch(loc.workdir or loc.common_dir)
    return (loc.common_dir / f"{layout.branch_ref(branch)}.lock").exists()


def respool(loc: Location, lines: list[str]) -> None:
    """Append spool lines (a retry of set-aside entries), delivered as the shims deliver
    theirs (see the module's docstring)."""
    if lines:
        data = "".join(line.rstrip("\n") + "\n" for line in lines)
        append(statedir.ensure(loc) / SPOOL, data.encode("utf-8", "replace"), confirm=True)


def drain(loc: Location, *, block: bool = False, timeout: float = 60.0, linger: float = 0.0) -> int:
    """Drain the spool now. Returns notes written; 0 if another drainer holds the lock
    and block is False. With linger, wait that long for more lines before exiting (the
    background drainer: a burst of commits — a cherry-pick, `git am` — is served by one
    process instead of one start-up per few commits)."""
    state = statedir.ensure(loc)
    merged: list[str] = []
    try:
        return _drain(loc, state, block, timeout, linger, merged)
    finally:
        if merged:
            _auto_pull(loc, merged)


def _drain(
    loc: Location, state: Path, block: bool, timeout: float, linger: float, merged: list[str]
) -> int:
    written = 0
    while True:
        with file_lock(state / DRAIN_LOCK, block=block, timeout=timeout) as got:
            if not got:
                return written
            pid_path = state / DRAIN_PID
            _hint(state, partial(atomic_write, pid_path, str(os.getpid()).encode()))
            try:
                drainer = Drainer(loc)
                try:
                    while _settled(state, linger) and (
                        drainer.drain_once() or drainer.walk() or _more_within(state, linger)
                    ):
                        pass
                finally:
                    merged += [d for d in drainer.merged if d not in merged]
                written += drainer.written
            finally:
                _hint(state, partial(pid_path.unlink, missing_ok=True))
        # A hook that saw our pid file did not start a drainer: re-check after unlocking (the
        # pid file is gone by now, so a later hook starts a drainer of its own).
        if not _spool_waiting(state):
            return written


def _hint(state: Path, write: Callable[[], None]) -> None:
    """Write or remove the pid file: only a hint for the shims (they start a drainer of their
    own without it), so one that cannot be written (a folder there) never stops a drain."""
    try:
        write()
    except OSError as exc:
        log_failure(state, f"drain: {DRAIN_PID} not written or removed ({exc})")


def _auto_pull(loc: Location, git_dirs: list[str]) -> None:
    """After a merge or a pull (the post-merge shim's line): start `gitvault-hook git sync
    post-merge` detached when sync.auto is pull or both. The shim used to read the setting
    itself — three processes on every merge; the drainer reads it off git's path."""
    from gitvault.vault import origin, processes
    from gitvault.vault.files import open_regular

    try:
        if origin.sync_auto(loc.common_dir) not in ("pull", "both"):
            return
        where = next((d for d in git_dirs if Path(d).is_dir()), str(loc.common_dir))
        launcher = loc.state_dir / statedir.LAUNCHER  # what the shim ran (-m: cwd on sys.path)
        if not os.access(launcher, os.X_OK):
            return
        log = open_regular(loc.state_dir / statedir.LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            processes.spawn_detached(
                [str(launcher), "git", "sync", "post-merge", where],
                cwd=where,
                env=os.environ,
                output=log,
            )
        finally:
            os.close(log)
    except Exception as exc:  # noqa: BLE001 - a background hook logs, never raises
        log_failure(loc.state_dir, f"auto sync (post-merge) not started: {exc}")


def _spool_waiting(state: Path) -> bool:
    try:
        info = (state / SPOOL).lstat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size > 0


def _settled(state: Path, linger: float) -> bool:
    """A background drainer (one that lingers) lets a burst of commits end before each pass."""
    if linger:
        burst.settle(str(state / SPOOL))
    return True


def _more_within(state: Path, seconds: float) -> bool:
    """Whether spool lines arrive within `seconds` (polled every 50 ms)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.05)
        if _spool_waiting(state):
            return True
    return False


def main(argv: list[str] | None = None) -> int:
    """Entry point of the background drainer the shims start: never raises, always exits 0."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        return 0
    common = Path(args[0])
    loc = Location(common_dir=common, git_dir=common, workdir=None)
    try:
        drain(loc, block="--wait" in args, linger=LINGER_SECONDS if "--detach" in args else 0.0)
    except Exception as exc:  # noqa: BLE001 - a background hook must never surface a traceback
        log_failure(loc.state_dir, f"drain failed: {type(exc).__name__}: {exc}")
    return 0
