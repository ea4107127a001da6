"""Every git access goes through here: named pygit2 operations plus one subprocess helper.

The subprocess helper drops the GIT_* variables git exports to hooks (GIT_INDEX_FILE and
friends point at the user's worktree and would redirect our plumbing), and its errors show
the command, return code and output.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from gitvault.errors import GitvaultError

if TYPE_CHECKING:
    import pygit2

# pygit2 costs ~100 ms to import; the hooks on the fast path (post-commit shim, SessionStart
# recall) use the plain-git helpers below and never pay it. Everything else imports it lazily.

# Identity used for commits on the vault branch (the user's HEAD is never touched).
VAULT_NAME = "gitvault"
VAULT_EMAIL = "gitvault@localhost"

_FILE_MODE = 0o100644
_TREE_MODE = 0o040000


class GitError(GitvaultError):
    pass


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEEP_GIT_ENV}
    env.setdefault("LC_ALL", "C")
    if extra:
        env.update(extra)
    return env


# Identity and config-isolation variables are the user's to set; location variables are not.
_KEEP_GIT_ENV = frozenset(
    {
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_ASKPASS",
        "GIT_TERMINAL_PROMPT",
    }
)


def run_git(
    args: Sequence[str],
    cwd: Path,
    *,
    input: bytes | None = None,
    check: bool = True,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    cmd = ["git", *args]
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, input=input, capture_output=True, env=clean_env(env), check=False
        )
    except FileNotFoundError as exc:
        raise GitError("git is not installed or not on PATH", hint="install git") from exc
    if check and proc.returncode != 0:
        raise GitError(
            f"`{' '.join(cmd)}` failed with exit code {proc.returncode}: "
            f"{_tail(proc.stderr) or _tail(proc.stdout)}"
        )
    return proc


def _tail(data: bytes, limit: int = 500) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text if len(text) <= limit else "…" + text[-limit:]


def open_repo(path: Path) -> pygit2.Repository:
    import pygit2

    try:
        return pygit2.Repository(str(path))
    except pygit2.GitError as exc:
        raise GitError(f"cannot open repository at {path}: {exc}") from exc


def signature(time: int | None = None, offset: int = 0) -> pygit2.Signature:
    import pygit2

    if time is None:
        return pygit2.Signature(VAULT_NAME, VAULT_EMAIL)
    return pygit2.Signature(VAULT_NAME, VAULT_EMAIL, time, offset)


def ref_target(repo: pygit2.Repository, ref: str) -> str | None:
    found = repo.references.get(ref)
    if found is None:
        return None
    target = found.resolve().target
    return str(target)


def read_blob(repo: pygit2.Repository, commit_sha: str, path: str) -> bytes | None:
    """The bytes at path in a commit's tree, or None."""
    import pygit2

    commit = repo[commit_sha]
    try:
        entry = commit.peel(pygit2.Tree)[path]
    except KeyError:
        return None
    obj = repo[entry.id]
    if not isinstance(obj, pygit2.Blob):
        return None
    return bytes(obj.data)


def path_exists(repo: pygit2.Repository, commit_sha: str, path: str) -> bool:
    import pygit2

    tree = repo[commit_sha].peel(pygit2.Tree)
    try:
        tree[path]
    except KeyError:
        return False
    return True


def list_tree(repo: pygit2.Repository, commit_sha: str, path: str = "") -> list[tuple[str, bool]]:
    """(name, is_dir) entries of a folder in a commit's tree, sorted by name."""
    import pygit2

    tree = repo[commit_sha].peel(pygit2.Tree)
    if path:
        try:
            entry = tree[path]
        except KeyError:
            return []
        obj = repo[entry.id]
        if not isinstance(obj, pygit2.Tree):
            return []
        tree = obj
    return sorted((e.name, e.filemode == _TREE_MODE) for e in tree if e.name is not None)


def _write_path(
    repo: pygit2.Repository, tree: pygit2.Tree | None, parts: list[str], blob: pygit2.Oid | None
) -> pygit2.Oid | None:
    """A new tree equal to `tree` with parts set to blob (None deletes). None when empty."""
    import pygit2

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
            sub = obj if isinstance(obj, pygit2.Tree) else None
        new_sub = _write_path(repo, sub, rest, blob)
        if new_sub is None:
            if existing is not None:
                builder.remove(head)
        else:
            builder.insert(head, new_sub, _TREE_MODE)
    if len(builder) == 0:
        return None
    return builder.write()


def write_tree(
    repo: pygit2.Repository, base_tree: str | None, changes: Mapping[str, bytes | None]
) -> str:
    """Apply path → bytes (None deletes) to base_tree and return the new tree id."""
    import pygit2

    tree: pygit2.Tree | None = repo[base_tree].peel(pygit2.Tree) if base_tree else None
    tree_id: pygit2.Oid | None = tree.id if tree is not None else None
    try:
        for path, data in sorted(changes.items()):
            parts = [p for p in path.split("/") if p]
            if not parts or any(p in (".", "..") for p in parts):
                raise GitvaultError(f"invalid vault path: {path!r}")
            blob = repo.create_blob(data) if data is not None else None
            current = repo[tree_id].peel(pygit2.Tree) if tree_id is not None else None
            tree_id = _write_path(repo, current, parts, blob)
        if tree_id is None:
            tree_id = repo.TreeBuilder().write()
    except OSError as exc:  # libgit2 reports a failed object write as OSError
        raise _write_failed(exc) from exc
    return str(tree_id)


def _write_failed(exc: OSError) -> GitError:
    return GitError(
        f"cannot write to the repository: {exc}",
        hint="check that the repository's .git directory is writable (not a read-only mount)",
    )


def create_commit(
    repo: pygit2.Repository,
    tree: str,
    parents: Sequence[str],
    message: str,
    *,
    author: pygit2.Signature | None = None,
) -> str:
    import pygit2

    committer = signature()
    try:
        oid = repo.create_commit(
            None,
            author or committer,
            committer,
            message,
            pygit2.Oid(hex=tree),
            [pygit2.Oid(hex=p) for p in parents],
        )
    except OSError as exc:
        raise _write_failed(exc) from exc
    return str(oid)


def commit_tree_id(repo: pygit2.Repository, commit_sha: str) -> str:
    import pygit2

    return str(repo[commit_sha].peel(pygit2.Tree).id)


def cas_ref(repo: pygit2.Repository, ref: str, new: str, old: str | None, message: str) -> bool:
    """Move ref from old to new atomically. False when someone else moved it first."""
    import pygit2

    try:
        if old is None:
            repo.create_reference_direct(ref, pygit2.Oid(hex=new), False, message=message)
            return True
        current = repo.references.get(ref)
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


def delete_ref(repo: pygit2.Repository, ref: str) -> None:
    found = repo.references.get(ref)
    if found is not None:
        found.delete()


def walk_history(
    repo: pygit2.Repository, tip: str, stop: str | None = None
) -> Iterable[pygit2.Commit]:
    """Commits from tip backwards (time order, all parents), stopping at `stop` (exclusive)."""
    import pygit2

    walker = repo.walk(
        pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME
    )
    if stop:
        walker.hide(pygit2.Oid(hex=stop))
    yield from walker


def changed_paths(repo: pygit2.Repository, commit: pygit2.Commit) -> list[str]:
    """Files added or modified by a commit relative to its first parent (vault trees are small
    deltas)."""
    import pygit2

    new_tree = commit.peel(pygit2.Tree)
    if not commit.parents:
        return sorted(_all_paths(repo, new_tree, ""))
    old_tree = commit.parents[0].peel(pygit2.Tree)
    out: list[str] = []
    _diff_trees(repo, old_tree, new_tree, "", out)
    return sorted(out)


def _all_paths(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str) -> list[str]:
    import pygit2

    out: list[str] = []
    for e in tree:
        name = f"{prefix}{e.name}"
        if e.filemode == _TREE_MODE:
            sub = repo[e.id]
            if isinstance(sub, pygit2.Tree):
                out.extend(_all_paths(repo, sub, name + "/"))
        else:
            out.append(name)
    return out


def _diff_trees(
    repo: pygit2.Repository, old: pygit2.Tree | None, new: pygit2.Tree, prefix: str, out: list[str]
) -> None:
    import pygit2

    # Walk only subtrees whose ids differ: cost follows the change, not the vault size.
    old_entries = {e.name: e for e in old} if old is not None else {}
    for e in new:
        before = old_entries.get(e.name)
        if before is not None and before.id == e.id:
            continue
        name = f"{prefix}{e.name}"
        if e.filemode == _TREE_MODE:
            sub = repo[e.id]
            prev = repo[before.id] if before is not None and before.filemode == _TREE_MODE else None
            if isinstance(sub, pygit2.Tree):
                _diff_trees(
                    repo, prev if isinstance(prev, pygit2.Tree) else None, sub, name + "/", out
                )
        else:
            out.append(name)


# -- plain-git readers for the fast path (no pygit2 import) --------------------------------


def config_get(cwd: Path, key: str) -> str | None:
    proc = run_git(["config", "--get", key], cwd, check=False)
    value = proc.stdout.decode("utf-8", "replace").strip()
    return value if proc.returncode == 0 and value else None


class TreeEntry(NamedTuple):
    path: str
    oid: str
    is_dir: bool


def ls_tree(
    cwd: Path, rev: str, paths: Sequence[str], *, recursive: bool = False
) -> list[TreeEntry]:
    """Entries at (or inside, for paths ending in '/') the given paths of a revision."""
    args = ["-c", "core.quotePath=false", "ls-tree", "-z"]
    if recursive:
        args.append("-r")
    proc = run_git([*args, rev, "--", *paths], cwd, check=False)
    if proc.returncode != 0:
        return []
    out = []
    for record in proc.stdout.split(b"\0"):
        if not record:
            continue
        head, _, path = record.partition(b"\t")
        parts = head.split()
        if len(parts) < 3:
            continue
        out.append(
            TreeEntry(path.decode("utf-8", "replace"), parts[2].decode(), parts[1] == b"tree")
        )
    return out


def count_files(cwd: Path, rev: str, folder: str, suffix: str) -> int:
    """How many files below folder end with suffix (counted on git's output, not parsed)."""
    proc = run_git(["ls-tree", "-r", "-z", "--name-only", rev, "--", folder], cwd, check=False)
    if proc.returncode != 0:
        return 0
    tail = suffix.encode()
    return sum(1 for name in proc.stdout.split(b"\0") if name.endswith(tail))


def cat_blobs(cwd: Path, oids: Sequence[str]) -> dict[str, bytes]:
    """Contents of several blobs through one `git cat-file --batch`."""
    if not oids:
        return {}
    proc = run_git(["cat-file", "--batch"], cwd, input=("\n".join(oids) + "\n").encode())
    data = proc.stdout
    out: dict[str, bytes] = {}
    pos = 0
    for oid in oids:
        end = data.find(b"\n", pos)
        if end < 0:
            break
        header = data[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        out[oid] = data[pos : pos + size]
        pos += size + 1
    return out


def fast_import_chain(
    cwd: Path,
    parent: str,
    commits: Sequence[tuple[Mapping[str, bytes | None], str]],
    when: int,
) -> list[str]:
    """Write a chain of commits on top of `parent` straight into one pack with
    `git fast-import` (no loose objects) and return their ids in order. No ref is moved:
    the caller publishes the last one by compare-and-swap."""
    import tempfile

    tmp_ref = f"refs/gitvault/import-{os.getpid()}"
    stream = bytearray()
    for index, (changes, message) in enumerate(commits, 1):
        msg = message.encode()
        stream += b"commit %s\nmark :%d\n" % (tmp_ref.encode(), index)
        stream += b"committer %s <%s> %d +0000\n" % (
            VAULT_NAME.encode(),
            VAULT_EMAIL.encode(),
            when,
        )
        stream += b"data %d\n%s\n" % (len(msg), msg)
        if index == 1:
            stream += b"from %s\n" % parent.encode()
        for path, data in sorted(changes.items()):
            if any(c in path for c in '\n"\\') or path.startswith("/"):
                raise GitvaultError(f"invalid vault path: {path!r}")
            if data is None:
                stream += b"D %s\n" % path.encode()
            else:
                stream += b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data)
        stream += b"\n"
    with tempfile.TemporaryDirectory(prefix="gitvault-import-") as tmp:
        marks = Path(tmp) / "marks"
        proc = run_git(
            ["fast-import", "--quiet", "--force", f"--export-marks={marks}"],
            cwd,
            input=bytes(stream),
            check=False,
            # glibc otherwise returns freed memory to the system after every object, and
            # fast-import spends most of its time in those system calls.
            env={"MALLOC_TRIM_THRESHOLD_": "134217728"},
        )
        if proc.returncode != 0:
            detail = _tail(proc.stderr) or _tail(proc.stdout)
            if "Read-only" in detail or "Permission denied" in detail:
                raise _write_failed(OSError(detail))
            raise GitError(f"`git fast-import` failed with exit code {proc.returncode}: {detail}")
        ids: dict[int, str] = {}
        for line in marks.read_text(encoding="ascii").splitlines():
            mark, _, sha = line.partition(" ")
            ids[int(mark.lstrip(":"))] = sha.strip()
    run_git(["update-ref", "-d", tmp_ref], cwd, check=False)
    return [ids[i] for i in range(1, len(commits) + 1)]
