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
from typing import TYPE_CHECKING

from gitvault import git
from gitvault.errors import Busy, GitvaultError, Refused
from gitvault.resolve import Location

if TYPE_CHECKING:
    import pygit2  # imported by git.open_repo when a vault is opened, not at import time

FORMAT_VERSION = 1
DEFAULT_BRANCH = "vault"
MARKER_FILE = "vault.toml"
CAS_ATTEMPTS = 64
PACK_THRESHOLD = 8

Changes = Mapping[str, bytes | None]


class PathTaken(GitvaultError):
    def __init__(self, path: str) -> None:
        super().__init__(f"{path} already exists in the vault")
        self.path = path


@dataclass(frozen=True)
class Write:
    """One vault commit: the paths it sets and the message that says what it did."""

    changes: Changes
    message: str


class Vault:
    def __init__(self, loc: Location, branch: str | None = None) -> None:
        self.loc = loc
        self.repo = git.open_repo(loc.common_dir)
        self.branch = branch or configured_branch(self.repo)
        self.ref = f"refs/heads/{self.branch}"

    # -- reading -------------------------------------------------------------------------
    def tip(self) -> str | None:
        return git.ref_target(self.repo, self.ref)

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
        if commit is None:
            return None
        return git.read_blob(self.repo, commit, path)

    def read_text(self, path: str, at: str | None = None) -> str | None:
        data = self.read(path, at)
        return None if data is None else data.decode("utf-8", "replace")

    def exists(self, path: str, at: str | None = None) -> bool:
        commit = at or self.tip()
        return commit is not None and git.path_exists(self.repo, commit, path)

    def listdir(self, path: str = "", at: str | None = None) -> list[tuple[str, bool]]:
        commit = at or self.tip()
        return [] if commit is None else git.list_tree(self.repo, commit, path)

    def is_gitvault(self, at: str | None = None) -> bool:
        return self.read(MARKER_FILE, at) is not None and self.format_version(at) is not None

    def format_version(self, at: str | None = None) -> int | None:
        raw = self.read(MARKER_FILE, at)
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
                f"branch '{self.branch}' is not a gitvault vault (no valid {MARKER_FILE})",
                hint="set another branch with `git config gitvault.branch NAME`",
            )
        if version > FORMAT_VERSION:
            raise Refused(
                f"this vault has format {version}; "
                f"this gitvault understands up to {FORMAT_VERSION}",
                hint="upgrade gitvault (pip install -U gitvault)",
            )
        return tip

    # -- writing -------------------------------------------------------------------------
    def commit(
        self,
        changes: Changes,
        message: str,
        *,
        author: pygit2.Signature | None = None,
        create_only: bool = False,
    ) -> str:
        """One commit. create_only: refuse (PathTaken) if a path already exists at the tip,
        so an append-only file is never overwritten, even by a racing writer."""
        skip = None
        if create_only:

            def skip(head: str, w: Write) -> bool:
                for path in w.changes:
                    if self.exists(path, head):
                        raise PathTaken(path)
                return False

        made = self.commit_many([Write(changes, message)], author=author, skip_if=skip)
        if not made:
            raise GitvaultError(f"nothing to commit for {message!r}: the vault already has it")
        return made[-1]

    def commit_many(
        self,
        writes: Sequence[Write],
        *,
        author: pygit2.Signature | None = None,
        skip_if: Callable[[str, Write], bool] | None = None,
    ) -> list[str]:
        """Append one commit per write and publish them with one compare-and-swap.

        On a lost race the chain is rebuilt on the new tip and retried (bounded), so
        concurrent writers in many worktrees never lose a write. skip_if(tip, write) lets a
        caller drop writes that became redundant on the new tip (idempotent notes).
        Eight or more writes (a drained rebase, a backfill batch) go through commit_packed:
        one pack instead of ~7 loose object files per note.
        """
        if not writes:
            return []
        if len(writes) >= PACK_THRESHOLD and author is None:
            return self.commit_packed(writes, skip_if=skip_if)
        for attempt in range(CAS_ATTEMPTS):
            old = self.check_format()
            head = old
            made: list[str] = []
            for w in writes:
                if skip_if is not None and skip_if(head, w):
                    continue
                tree = git.write_tree(self.repo, git.commit_tree_id(self.repo, head), w.changes)
                if tree == git.commit_tree_id(self.repo, head):
                    continue  # nothing changed: no empty commits
                head = git.create_commit(self.repo, tree, [head], w.message, author=author)
                made.append(head)
            if not made:
                return []
            if git.cas_ref(self.repo, self.ref, head, old, _reflog(writes)):
                return made
            time.sleep(min(0.2, 0.002 * (2 ** min(attempt, 6))) * random.random())
        raise Busy(
            f"{self.ref} kept moving: gave up after {CAS_ATTEMPTS} attempts",
            hint="another gitvault process is writing; try again",
        )

    def commit_packed(
        self, writes: Sequence[Write], *, skip_if: Callable[[str, Write], bool] | None = None
    ) -> list[str]:
        """Like commit_many, for bulk writes (backfill): the chain goes straight into one pack
        through `git fast-import` instead of thousands of loose objects, then is published by
        the same compare-and-swap, rebuilt on the new tip when another writer got in first."""
        for attempt in range(CAS_ATTEMPTS):
            old = self.check_format()
            todo = [w for w in writes if skip_if is None or not skip_if(old, w)]
            if not todo:
                return []
            made = git.fast_import_chain(
                self.loc.common_dir, old, [(w.changes, w.message) for w in todo], int(time.time())
            )
            if git.cas_ref(self.repo, self.ref, made[-1], old, _reflog(todo)):
                return made
            time.sleep(min(0.2, 0.002 * (2 ** min(attempt, 6))) * random.random())
        raise Busy(
            f"{self.ref} kept moving: gave up after {CAS_ATTEMPTS} attempts",
            hint="another gitvault process is writing; try again",
        )

    def create(self, files: Changes, message: str) -> str:
        """Create the orphan branch. Refuses when it already exists."""
        if self.tip() is not None:
            raise Refused(f"branch '{self.branch}' already exists")
        tree = git.write_tree(self.repo, None, files)
        sha = git.create_commit(self.repo, tree, [], message)
        if not git.cas_ref(self.repo, self.ref, sha, None, message):
            raise Busy(
                f"branch '{self.branch}' appeared while creating it", hint="run install again"
            )
        return sha

    # -- history -------------------------------------------------------------------------
    def history(self, stop: str | None = None) -> Iterator[pygit2.Commit]:
        tip = self.tip()
        if tip is None:
            return iter(())
        return iter(git.walk_history(self.repo, tip, stop))

    def changed_paths(self, commit: pygit2.Commit) -> list[str]:
        return git.changed_paths(self.repo, commit)


def _reflog(writes: Sequence[Write]) -> str:
    first = writes[0].message.splitlines()[0] if writes[0].message else "write"
    return f"gitvault: {first}" if len(writes) == 1 else f"gitvault: {first} (+{len(writes) - 1})"


def configured_branch(repo: pygit2.Repository) -> str:
    try:
        value = repo.config["gitvault.branch"]
    except KeyError:
        return DEFAULT_BRANCH
    return str(value).strip() or DEFAULT_BRANCH


def state_dir(loc: Location) -> Path:
    """Create (if needed) and return gitvault's folder in the common git dir."""
    path = loc.state_dir
    try:
        path.mkdir(exist_ok=True)
    except OSError as exc:
        raise GitvaultError(
            f"cannot write to {loc.common_dir}: {exc.strerror}",
            hint="check the permissions of the repository's .git directory",
        ) from exc
    return path
