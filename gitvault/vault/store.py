"""The vault branch: read its tip, append commits to it by compare-and-swap.

Written only through the object database (blob → tree → commit → ref update). Nothing here
checks anything out or touches the user's HEAD, index, working tree or other refs.
"""

from __future__ import annotations

import random
import time
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitvault.errors import Busy, GitvaultError, Refused
from gitvault.resolve import Location
from gitvault.vault import fastimport, layout, repair
from gitvault.vault.locking import log_failure
from gitvault.vault.objects import Repo, VaultCommit

CAS_ATTEMPTS = 64
STALE_LOCK_SECONDS = 5.0
PACK_THRESHOLD = 8

Changes = Mapping[str, bytes | None]


class PathTaken(GitvaultError):
    def __init__(self, path: str) -> None:
        super().__init__(f"{path} already exists in the vault")
        self.path = path


@dataclass(frozen=True)
class Write:
    """One vault commit: the paths it sets and the message that says what it did.

    merge: more parents after the tip (gitvault sync: the remote's vault), recorded even when
    the tree does not change, so `git log vault` shows who brought what. fast_forward: no new
    commit, the branch moves to this descendant of the tip (sync, when everything incoming is
    accepted as it is)."""

    changes: Changes
    message: str
    merge: tuple[str, ...] = ()
    fast_forward: str | None = None


SkipIf = Callable[[str, Write], bool]  # (tip, write) → the write became redundant on this tip
Rebuild = Callable[[str], Sequence[Write]]  # tip → the writes to make on it (sync's merge)


def with_ci_skip(message: str) -> str:
    """A vault commit message with the CI-skip marker as a trailer line: hosted CI (GitHub,
    GitLab, Bitbucket, Azure) does not run for a pushed vault, and the subject stays readable."""
    if layout.CI_SKIP in message:
        return message
    return f"{message.rstrip()}\n\n{layout.CI_SKIP}\n"


class Vault:
    def __init__(self, loc: Location, branch: str | None = None, *, ref: str | None = None) -> None:
        self.loc = loc
        self.git = Repo(loc.common_dir)
        self.branch = branch or layout.branch_name(self.git.config_get(layout.BRANCH_KEY))
        # ref: another ref with the vault's layout (the local-only private sessions).
        self.ref = ref or layout.branch_ref(self.branch)
        # What this object's writes repaired (vault/repair): said by the command that wrote.
        self.repairs: list[str] = []

    # -- reading -------------------------------------------------------------------------
    def tip(self) -> str | None:
        return self.git.ref_target(self.ref)

    def require_tip(self) -> str:
        tip = self.tip()
        if tip is None:
            raise GitvaultError(
                f"no vault yet: branch '{self.branch}' does not exist",
                hint="run `gitvault install`",
            )
        return tip

    def read(self, path: str, at: str | None = None) -> bytes | None:
        commit = at or self.tip()
        return None if commit is None else self.git.read_blob(commit, path)

    def read_text(self, path: str, at: str | None = None) -> str | None:
        data = self.read(path, at)
        return None if data is None else data.decode("utf-8", "replace")

    def exists(self, path: str, at: str | None = None) -> bool:
        commit = at or self.tip()
        return commit is not None and self.git.path_exists(commit, path)

    def listdir(self, path: str = "", at: str | None = None) -> list[tuple[str, bool]]:
        commit = at or self.tip()
        return [] if commit is None else self.git.list_tree(commit, path)

    def is_gitvault(self, at: str | None = None) -> bool:
        return self.format_version(at) is not None

    def format_version(self, at: str | None = None) -> int | None:
        raw = self.read(layout.CONFIG, at)
        if raw is None:
            return None
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            return None
        value = data.get("format_version")
        return value if isinstance(value, int) else None

    def check_format(self) -> str:
        """The tip, after refusing a vault this gitvault cannot safely write."""
        tip = self.require_tip()
        version = self.format_version(tip)
        if version is None:
            raise Refused(
                f"branch '{self.branch}' is not a gitvault vault (no valid {layout.CONFIG})",
                hint=f"set another branch with `git config {layout.BRANCH_KEY} NAME`",
            )
        if version > layout.FORMAT_VERSION:
            raise Refused(
                f"this vault has format {version}; "
                f"this gitvault understands up to {layout.FORMAT_VERSION}",
                hint="upgrade gitvault (pip install -U gitvault)",
            )
        return tip

    # -- history -------------------------------------------------------------------------
    def history(self, stop: str | None = None) -> Iterator[VaultCommit]:
        """Vault commits from the tip backwards, stopping at `stop` (exclusive)."""
        tip = self.tip()
        return iter(()) if tip is None else self.git.walk(tip, stop)

    def changed_paths(self, commit: str) -> list[str]:
        return self.git.changed_paths(commit)

    # -- writing -------------------------------------------------------------------------
    def commit(self, changes: Changes, message: str, *, create_only: bool = False) -> str:
        """One commit. create_only: refuse (PathTaken) if a path already exists at the tip,
        so an append-only file is never overwritten, even by a racing writer."""
        skip: SkipIf | None = None
        if create_only:

            def skip(head: str, w: Write) -> bool:
                for path in w.changes:
                    if self.exists(path, head):
                        raise PathTaken(path)
                return False

        made = self.commit_many([Write(changes, message)], skip_if=skip)
        if not made:
            raise GitvaultError(f"nothing to commit for {message!r}: the vault already has it")
        return made[-1]

    def commit_many(self, writes: Sequence[Write], *, skip_if: SkipIf | None = None) -> list[str]:
        """Append one commit per write, published together by one compare-and-swap.

        skip_if(tip, write) drops writes that became redundant on the tip (idempotent notes).
        Eight or more writes (a drained rebase, a backfill batch) go through `git fast-import`
        into one pack instead of ~7 loose object files per write.
        """
        packed = len(writes) >= PACK_THRESHOLD
        return self._publish(writes, skip_if, packed=packed) if writes else []

    def commit_packed(self, writes: Sequence[Write], *, skip_if: SkipIf | None = None) -> list[str]:
        """commit_many through `git fast-import` whatever the number of writes (backfill)."""
        return self._publish(writes, skip_if, packed=True) if writes else []

    def publish_merge(self, build: Rebuild) -> list[str]:
        """Merge commits (or a fast-forward) built by build(tip) and published by the one
        compare-and-swap loop: when a local writer moved the branch meanwhile, build runs
        again on the new tip."""
        return self._publish((), None, packed=False, rebuild=build)

    def commit_built(self, build: Callable[[str], Write | None]) -> str | None:
        """One commit whose changes are computed from the tip it lands on (`gitvault forget`
        rewrites the digest it finds there): when another writer moved the branch first, build
        runs again on the new tip. None when build(tip) has nothing to write."""

        def rebuild(tip: str) -> list[Write]:
            write = build(tip)
            return [write] if write is not None else []

        made = self._publish((), None, packed=False, rebuild=rebuild)
        return made[-1] if made else None

    def _chain_loose(self, old: str, writes: list[Write]) -> list[str]:
        head = old
        made: list[str] = []
        for w in writes:
            if w.fast_forward is not None:
                if not self.git.is_ancestor(head, w.fast_forward):
                    raise GitvaultError(f"{w.fast_forward[:12]} does not descend from {head[:12]}")
                head = w.fast_forward
                made.append(head)
                continue
            base = self.git.tree_of(head)
            tree = self.git.write_tree(head, w.changes)
            if tree == base and not w.merge:
                continue  # nothing changed: no empty commits
            head = self.git.create_commit(tree, [head, *w.merge], w.message)
            made.append(head)
        return made

    def _chain_packed(self, old: str, writes: list[Write]) -> list[str]:
        if not writes:
            return []
        commits = [(w.changes, w.message) for w in writes]
        return fastimport.chain(self.loc.common_dir, old, commits, int(time.time()))

    def _publish(
        self,
        writes: Sequence[Write],
        skip_if: SkipIf | None,
        *,
        packed: bool,
        rebuild: Rebuild | None = None,
    ) -> list[str]:
        """The one compare-and-swap loop: build a chain on the current tip, move the branch
        from that tip to the chain's end; when another writer got in first, rebuild on the new
        tip and try again (bounded, with jitter), so concurrent writers never lose a write.
        Every message gets the CI-skip trailer."""
        for attempt in range(CAS_ATTEMPTS):
            old = self.check_format()
            chosen = rebuild(old) if rebuild is not None else writes
            todo = [
                Write(w.changes, with_ci_skip(w.message), w.merge, w.fast_forward)
                for w in chosen
                if skip_if is None or not skip_if(old, w)
            ]
            # A hand-made commit at the tip that undid gitvault's work is repaired first, in
            # the same compare-and-swap (a sync's merge or fast-forward is built as it is).
            fix = None if rebuild is not None else repair.find(self.git, self.loc.common_dir, old)
            if fix is not None:
                todo.insert(0, Write(fix.changes, with_ci_skip(fix.message)))
            made = (self._chain_packed if packed else self._chain_loose)(old, todo)
            if not made:
                return []
            if self.git.cas_ref(self.ref, made[-1], old, _reflog(todo)):
                if fix is None:
                    return made
                self.repairs.append(fix.said)
                log_failure(self.loc.state_dir, fix.said)
                return made[1:]
            if self.clear_stale_lock():
                continue
            time.sleep(min(0.2, 0.002 * (2 ** min(attempt, 6))) * random.random())
        lock = self.ref_lock()
        if lock.exists():
            raise Busy(
                f"{self.ref} is locked by {lock} (a git or gitvault process was killed while "
                "updating it, or one is still running)",
                hint=f"if no git or gitvault process is running, remove it: rm {lock}",
            )
        raise Busy(
            f"{self.ref} kept moving: gave up after {CAS_ATTEMPTS} attempts",
            hint="another gitvault process is writing; try again",
        )

    def repair(self) -> str | None:
        """Repair now what hand-made commits at the tip undid (vault/repair), before anything
        reads the digest; what was repaired, or None when nothing needed it."""
        if repair.find(self.git, self.loc.common_dir, self.check_format()) is None:
            return None
        before = len(self.repairs)
        self._publish((), None, packed=False)
        return self.repairs[-1] if len(self.repairs) > before else None

    def ref_lock(self) -> Path:
        """The lock file git and libgit2 create while they move the vault branch."""
        return self.loc.common_dir / f"{self.ref}.lock"

    def stale_lock_age(self) -> float | None:
        """Seconds since a lock on the vault branch was taken, when one is left (else None).
        Moving a ref holds its lock for microseconds: an old one was left by a killed writer."""
        try:
            return max(0.0, time.time() - self.ref_lock().stat().st_mtime)
        except OSError:
            return None

    def clear_stale_lock(self) -> bool:
        """Remove a lock on the vault branch older than STALE_LOCK_SECONDS; whether it did."""
        age = self.stale_lock_age()
        if age is None or age < STALE_LOCK_SECONDS:
            return False
        try:
            self.ref_lock().unlink()
        except OSError:
            return False
        log_failure(
            self.loc.state_dir,
            f"removed {self.ref_lock()} left {age:.0f}s ago by a killed writer",
        )
        return True

    def replace_history(self, new_tip: str, old_tip: str, backup_ref: str, message: str) -> bool:
        """The one exception to append-only (`gitvault redact`): keep old_tip under backup_ref,
        then move the branch from old_tip to new_tip, a history that does not contain it.
        False (nothing moved but the backup) when another writer moved the branch first: the
        caller rewrites again from the new tip."""
        if not self.git.cas_ref(backup_ref, old_tip, None, f"gitvault: backup before {message}"):
            raise Busy(f"{backup_ref} already exists", hint="try again in a second")
        if self.git.cas_ref(self.ref, new_tip, old_tip, f"gitvault: {message}"):
            return True
        self.git.delete_ref(backup_ref)
        return False

    def create(self, files: Changes, message: str, *, at: str | None = None) -> str:
        """Create the orphan branch (at: create it at this existing commit instead, e.g. a
        remote's vault being adopted). Refuses when it already exists."""
        if self.tip() is not None:
            raise Refused(f"branch '{self.branch}' already exists")
        if at is not None:
            sha = at
        else:
            tree = self.git.write_tree(None, files)
            sha = self.git.create_commit(tree, [], with_ci_skip(message))
        if not self.git.cas_ref(self.ref, sha, None, message):
            raise Busy(
                f"branch '{self.branch}' appeared while creating it", hint="run install again"
            )
        return sha


def _reflog(writes: Sequence[Write]) -> str:
    first = writes[0].message.splitlines()[0] if writes[0].message else "write"
    return f"gitvault: {first}" if len(writes) == 1 else f"gitvault: {first} (+{len(writes) - 1})"
