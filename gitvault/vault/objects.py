"""Git through pygit2: named operations on one repository's object database and refs. The only
module that imports pygit2, and only when a Repo is opened (~100 ms the hook paths never pay).

Nothing outside gitvault.vault sees a pygit2 type: commits come back as VaultCommit tuples.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from gitvault.errors import Refused, UnsafeRepository
from gitvault.named import TYPE_CHECKING, NamedTuple
from gitvault.vault import layout
from gitvault.vault.gitcmd import VAULT_EMAIL, GitError, vault_committer_name, write_failed

if TYPE_CHECKING:
    import pygit2

_FILE_MODE = 0o100644
_TREE_MODE = 0o040000


class VaultCommit(NamedTuple):
    sha: str
    parents: tuple[str, ...]
    message: str
    time: int  # committer time, Unix seconds


class ProjectCommit(NamedTuple):
    sha: str
    time: int


class Repo:
    """One repository (opened at its common git dir)."""

    def __init__(self, path: Path) -> None:
        import pygit2

        self._pygit2 = pygit2
        try:
            self._repo = pygit2.Repository(str(path))
        except pygit2.GitError as exc:
            if "not owned by current user" in str(exc):
                raise UnsafeRepository(_owned_path(str(exc), path)) from exc
            if "unknown object format" in str(exc):
                raise Refused(
                    f"{path} is a SHA-256 repository (git init --object-format=sha256): "
                    f"gitvault cannot open it (libgit2 {pygit2.LIBGIT2_VERSION}, pygit2's, is "
                    "built without SHA-256 objects, and vault paths name commits by SHA-1)",
                    hint="gitvault works in SHA-1 repositories (git's default) only",
                ) from exc
            raise GitError(f"cannot open repository at {path}: {exc}") from exc

    # -- config and refs -----------------------------------------------------------------
    def config_get(self, key: str) -> str | None:
        try:
            return str(self._repo.config[key])
        except KeyError:
            return None

    def ref_target(self, ref: str) -> str | None:
        found = self._repo.references.get(ref)
        return None if found is None else str(found.resolve().target)

    def cas_ref(self, ref: str, new: str, old: str | None, message: str) -> bool:
        """Move ref from old to new atomically. False when someone else moved it first."""
        pygit2 = self._pygit2
        try:
            if old is None:
                self._repo.create_reference_direct(ref, pygit2.Oid(hex=new), False, message=message)
                return True
            current = self._repo.references.get(ref)
            if current is None or str(current.target) != old:
                return False
            current.set_target(pygit2.Oid(hex=new), message)
            return True
        except pygit2.AlreadyExistsError:
            return False
        except (pygit2.GitError, OSError) as exc:
            # libgit2 reports a ref lock held by another writer as OSError("failed to lock file
            # '….lock' for writing: "): that is contention, retried by the caller. A lock file
            # it cannot create at all (read-only, permissions) is a real error.
            text = str(exc)
            if "does not match" in text or "exists" in text or "failed to lock file" in text:
                return False
            raise GitError(
                f"cannot update {ref}: {text}",
                hint="check that the repository's .git directory is writable",
            ) from exc

    def delete_ref(self, ref: str) -> None:
        found = self._repo.references.get(ref)
        if found is not None:
            found.delete()

    # -- commits -------------------------------------------------------------------------
    def contains(self, sha: str) -> bool:
        try:
            return sha in self._repo
        except (ValueError, TypeError):
            return False

    def resolve_commit(self, rev: str) -> ProjectCommit | None:
        """A revision (sha, short sha, ref, HEAD~2) peeled to a commit, or None."""
        pygit2 = self._pygit2
        try:
            commit = self._repo.revparse_single(rev).peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        return ProjectCommit(str(commit.id), int(commit.commit_time))

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """Whether ancestor is descendant or one of its ancestors."""
        if ancestor == descendant:
            return True
        pygit2 = self._pygit2
        try:
            return bool(
                self._repo.descendant_of(pygit2.Oid(hex=descendant), pygit2.Oid(hex=ancestor))
            )
        except (ValueError, KeyError, pygit2.GitError):
            return False

    def walk(
        self, tip: str, hide: str | None = None, *, oldest_first: bool = False
    ) -> Iterator[VaultCommit]:
        """Commits reachable from tip and not from hide: newest first (topological, then time)
        or, with oldest_first, parents before children."""
        pygit2 = self._pygit2
        order = pygit2.enums.SortMode.TOPOLOGICAL
        order |= pygit2.enums.SortMode.REVERSE if oldest_first else pygit2.enums.SortMode.TIME
        walker = self._repo.walk(pygit2.Oid(hex=tip), order)
        if hide:
            walker.hide(pygit2.Oid(hex=hide))
        for commit in walker:
            yield VaultCommit(
                str(commit.id),
                tuple(str(p) for p in commit.parent_ids),
                commit.message,
                int(commit.commit_time),
            )

    def create_commit(
        self, tree: str, parents: Sequence[str], message: str, *, when: int | None = None
    ) -> str:
        pygit2 = self._pygit2
        sig = (
            pygit2.Signature(vault_committer_name(), VAULT_EMAIL)
            if when is None
            else pygit2.Signature(vault_committer_name(), VAULT_EMAIL, when, 0)
        )
        try:
            oid = self._repo.create_commit(
                None,
                sig,
                sig,
                message,
                pygit2.Oid(hex=tree),
                [pygit2.Oid(hex=p) for p in parents],
            )
        except OSError as exc:  # libgit2 reports a failed object write as OSError
            raise write_failed(exc) from exc
        return str(oid)

    # -- trees ---------------------------------------------------------------------------
    def tree_of(self, commit_sha: str) -> str:
        return str(self._tree(commit_sha).id)

    def _tree(self, commit_sha: str) -> pygit2.Tree:
        return self._repo[commit_sha].peel(self._pygit2.Tree)

    def read_blob(self, commit_sha: str, path: str) -> bytes | None:
        """The bytes at path in a commit's tree, or None."""
        try:
            entry = self._tree(commit_sha)[path]
        except KeyError:
            return None
        obj = self._repo[entry.id]
        if not isinstance(obj, self._pygit2.Blob):
            return None
        return bytes(obj.data)

    def path_exists(self, commit_sha: str, path: str) -> bool:
        try:
            self._tree(commit_sha)[path]
        except KeyError:
            return False
        return True

    def list_tree(self, commit_sha: str, path: str = "") -> list[tuple[str, bool]]:
        """(name, is_dir) entries of a folder in a commit's tree, sorted by name."""
        tree = self._tree(commit_sha)
        if path:
            try:
                entry = tree[path]
            except KeyError:
                return []
            obj = self._repo[entry.id]
            if not isinstance(obj, self._pygit2.Tree):
                return []
            tree = obj
        return sorted((e.name, e.filemode == _TREE_MODE) for e in tree if e.name is not None)

    def write_tree(self, base_commit: str | None, changes: Mapping[str, bytes | None]) -> str:
        """Apply path → bytes (None deletes) to base_commit's tree; the new tree id."""
        tree_id: pygit2.Oid | None = self._tree(base_commit).id if base_commit else None
        try:
            for path, data in sorted(changes.items()):
                parts = layout.check_path(path).split("/")
                blob = self._repo.create_blob(data) if data is not None else None
                current = self._repo[tree_id].peel(self._pygit2.Tree) if tree_id else None
                tree_id = self._write_path(current, parts, blob)
            if tree_id is None:
                tree_id = self._repo.TreeBuilder().write()
        except OSError as exc:
            raise write_failed(exc) from exc
        return str(tree_id)

    def _write_path(
        self, tree: pygit2.Tree | None, parts: list[str], blob: pygit2.Oid | None
    ) -> pygit2.Oid | None:
        """A new tree equal to `tree` with parts set to blob (None deletes). None when empty."""
        repo = self._repo
        builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
        head, rest = parts[0], parts[1:]
        if not rest:
            if blob is None:
                if builder.get(head) is not None:
                    builder.remove(head)
            else:
                builder.insert(head, blob, _FILE_MODE)
        else:
            sub: pygit2.Tree | None = None
            existing = builder.get(head)
            if existing is not None and existing.filemode == _TREE_MODE:
                obj = repo[existing.id]
                sub = obj if isinstance(obj, self._pygit2.Tree) else None
            new_sub = self._write_path(sub, rest, blob)
            if new_sub is None:
                if existing is not None:
                    builder.remove(head)
            else:
                builder.insert(head, new_sub, _TREE_MODE)
        if len(builder) == 0:
            return None
        return builder.write()

    def committer_email(self, commit_sha: str) -> str:
        return str(self._repo[commit_sha].peel(self._pygit2.Commit).committer.email)

    def entry_id(self, commit_sha: str, path: str) -> str | None:
        """The object id at path (a file or a folder) in a commit's tree, or None."""
        try:
            return str(self._tree(commit_sha)[path].id)
        except KeyError:
            return None

    def diff_files(self, old_sha: str, new_sha: str) -> list[tuple[str, str | None, str | None]]:
        """(path, blob id in old, blob id in new) of every file that differs between two
        commits' trees, deletions and additions included (None: absent). Walks only subtrees
        whose ids differ."""
        out: list[tuple[str, str | None, str | None]] = []
        self._diff_both(self._tree(old_sha), self._tree(new_sha), "", out)
        return sorted(out)

    def _diff_both(
        self,
        old: pygit2.Tree | None,
        new: pygit2.Tree | None,
        prefix: str,
        out: list[tuple[str, str | None, str | None]],
    ) -> None:
        Tree = self._pygit2.Tree
        before = {e.name or "": e for e in old} if old is not None else {}
        after = {e.name or "": e for e in new} if new is not None else {}
        for name in sorted(set(before) | set(after)):
            a, b = before.get(name), after.get(name)
            if a is not None and b is not None and a.id == b.id:
                continue
            a_tree = self._repo[a.id] if a is not None and a.filemode == _TREE_MODE else None
            b_tree = self._repo[b.id] if b is not None and b.filemode == _TREE_MODE else None
            if isinstance(a_tree, Tree) or isinstance(b_tree, Tree):
                self._diff_both(
                    a_tree if isinstance(a_tree, Tree) else None,
                    b_tree if isinstance(b_tree, Tree) else None,
                    f"{prefix}{name}/",
                    out,
                )
            a_blob = str(a.id) if a is not None and a.filemode != _TREE_MODE else None
            b_blob = str(b.id) if b is not None and b.filemode != _TREE_MODE else None
            if a_blob != b_blob:
                out.append((f"{prefix}{name}", a_blob, b_blob))

    def read_object(self, oid: str) -> bytes:
        return bytes(self._repo[oid].peel(self._pygit2.Blob).data)

    def changed_paths(self, commit_sha: str) -> list[str]:
        """Files added or modified by a commit relative to its first parent. Walks only the
        subtrees whose ids differ: cost follows the change, not the vault's size."""
        commit = self._repo[commit_sha].peel(self._pygit2.Commit)
        new_tree = commit.peel(self._pygit2.Tree)
        old_tree = commit.parents[0].peel(self._pygit2.Tree) if commit.parents else None
        out: list[str] = []
        self._diff_trees(old_tree, new_tree, "", out)
        return sorted(out)

    def _diff_trees(
        self, old: pygit2.Tree | None, new: pygit2.Tree, prefix: str, out: list[str]
    ) -> None:
        Tree = self._pygit2.Tree
        old_entries = {e.name: e for e in old} if old is not None else {}
        for e in new:
            before = old_entries.get(e.name)
            if before is not None and before.id == e.id:
                continue
            name = f"{prefix}{e.name}"
            if e.filemode == _TREE_MODE:
                sub = self._repo[e.id]
                prev = (
                    self._repo[before.id]
                    if before is not None and before.filemode == _TREE_MODE
                    else None
                )
                if isinstance(sub, Tree):
                    self._diff_trees(prev if isinstance(prev, Tree) else None, sub, name + "/", out)
            else:
                out.append(name)


def _owned_path(message: str, path: Path) -> str:
    """The folder libgit2's ownership refusal names ("repository path '…' is not owned …")."""
    start = message.find("'")
    end = message.find("'", start + 1)
    return message[start + 1 : end] if 0 <= start < end else str(path)
