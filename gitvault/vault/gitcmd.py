"""Git through its command line: the one place a git process is started (run_git, stream_git;
through vault/processes, the package's one door to child processes), and the plain-git readers
the hooks use. Standard library only: importing this never loads pygit2 (~100 ms), which is
what keeps the post-commit shim's drainer start and the SessionStart hook fast.

The helpers drop the GIT_* variables git exports to hooks (GIT_INDEX_FILE and
friends point at the user's worktree and would redirect our plumbing), and its errors show
the command, return code and output.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from gitvault import lazyre, scrub
from gitvault.errors import GitvaultError, UnsafeRepository
from gitvault.named import TYPE_CHECKING, NamedTuple
from gitvault.vault import layout, processes

if TYPE_CHECKING:
    from typing import IO

# Identity used for commits on the vault branch (the user's HEAD is never touched).
VAULT_NAME = "gitvault"
VAULT_EMAIL = "gitvault@localhost"


def vault_committer_name() -> str:
    """The committer name of the vault commits this gitvault writes: VAULT_NAME and the secret
    filter's generation. A reader trusts a commit's text as already redacted (and skips the
    second scrub) only when it was written under the filter it runs now: not by an older
    gitvault, whose filter caught less, nor by a hand-made commit."""
    return f"{VAULT_NAME} (scrub {scrub.generation()})"


class GitError(GitvaultError):
    pass


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


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEEP_GIT_ENV}
    env.setdefault("LC_ALL", "C")
    if extra:
        env.update(extra)
    return env


_DUBIOUS = lazyre.compile(rb"detected dubious ownership in repository at '([^'\n]*)'")


def _refused_ownership(proc: processes.Finished, cwd: Path | None) -> None:
    """git's safe.directory refusal, named (every caller would take it for "no vault")."""
    if proc.returncode != 0 and b"dubious ownership" in proc.stderr:
        found = _DUBIOUS.search(proc.stderr)
        where = found.group(1).decode("utf-8", "replace") if found else str(cwd or os.getcwd())
        raise UnsafeRepository(where)


def _no_git() -> GitError:
    return GitError("git is not installed or not on PATH", hint="install git")


def run_git(
    args: Sequence[str],
    cwd: Path | None,
    *,
    input: bytes | None = None,
    check: bool = True,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> processes.Finished:
    """Run git to completion (cwd None: this process's directory). With check, a non-zero
    exit is a GitError naming the command and what git said."""
    cmd = ["git", *args]
    try:
        proc = processes.run(cmd, cwd=cwd, input=input, env=clean_env(env), timeout=timeout)
    except FileNotFoundError as exc:
        raise _no_git() from exc
    except processes.Timeout as exc:
        raise GitError(f"`{' '.join(cmd)}` did not finish within {timeout:.0f}s") from exc
    return _checked(cmd, proc, cwd, check)


def _checked(
    cmd: list[str], proc: processes.Finished, cwd: Path | None, check: bool
) -> processes.Finished:
    _refused_ownership(proc, cwd)
    if check and proc.returncode != 0:
        raise GitError(
            f"`{' '.join(cmd)}` failed with exit code {proc.returncode}: "
            f"{tail(proc.stderr) or tail(proc.stdout)}"
        )
    return proc


class StartedGit:
    """A git command running beside its caller (`start_git`); `result` waits for it."""

    def __init__(self, cmd: list[str], cwd: Path | None, started: processes.Started) -> None:
        self.cmd = cmd
        self._cwd = cwd
        self._started = started

    def result(self, *, check: bool = True, timeout: float | None = None) -> processes.Finished:
        """As run_git's: GitError when it failed (with check) or did not finish in time."""
        try:
            proc = self._started.finish(timeout)
        except processes.Timeout as exc:
            raise GitError(f"`{' '.join(self.cmd)}` did not finish within {timeout:.0f}s") from exc
        return _checked(self.cmd, proc, self._cwd, check)

    def abandon(self) -> None:
        self._started.abandon()


def start_git(
    args: Sequence[str], cwd: Path | None, *, env: Mapping[str, str] | None = None
) -> StartedGit:
    """Start git and come back at once: commands whose answers are all needed run side by side
    (a tool hook's three, ~3 ms each one after the other)."""
    cmd = ["git", *args]
    try:
        started = processes.start(cmd, cwd=cwd, env=clean_env(env))
    except FileNotFoundError as exc:
        raise _no_git() from exc
    return StartedGit(cmd, cwd, started)


def run_git_watched(
    args: Sequence[str],
    cwd: Path,
    *,
    timeout: float,
    watch: Callable[[], str | None],
    env: Mapping[str, str] | None = None,
    stall: float | None = None,
) -> processes.Finished:
    """git over the network (fetch, push): its process group killed at the timeout, when
    watch() names a reason, or when it wrote nothing for `stall` seconds (processes.Stopped /
    GitError for the timeout)."""
    cmd = ["git", *args]
    try:
        proc = processes.run_watched(
            cmd, cwd=cwd, env=clean_env(env), timeout=timeout, watch=watch, stall=stall
        )
    except FileNotFoundError as exc:
        raise _no_git() from exc
    except processes.Timeout as exc:
        raise GitError(f"`git {args[0]}` did not finish within {timeout:.0f}s") from exc
    _refused_ownership(proc, cwd)
    return proc


@contextmanager
def stream_git(args: Sequence[str], cwd: Path) -> Iterator[processes.Streaming]:
    """git's stdout while it runs (a history too long to hold, or a listing a reader stops
    early: leaving the block kills git). Check `.finish()` when the output must be complete."""
    with ExitStack() as stack:
        try:
            out = stack.enter_context(processes.stream(["git", *args], cwd=cwd, env=clean_env()))
        except FileNotFoundError as exc:
            raise _no_git() from exc
        yield out


def start_git_filed(
    args: Sequence[str], cwd: Path, stdin: IO[bytes], stdout: IO[bytes], stderr: IO[bytes]
) -> processes.Filed:
    """git started on open files (its input read from one, its output written to another)."""
    try:
        return processes.start_filed(
            ["git", *args], cwd=cwd, env=clean_env(), stdin=stdin, stdout=stdout, stderr=stderr
        )
    except FileNotFoundError as exc:
        raise _no_git() from exc


def tail(data: bytes, limit: int = 500) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text if len(text) <= limit else "…" + text[-limit:]


def write_failed(detail: object) -> GitError:
    """The error for an object or ref that could not be written (read-only repository)."""
    return GitError(
        f"cannot write to the repository: {detail}",
        hint="check that the repository's .git directory is writable (not a read-only mount)",
    )


def config_get(cwd: Path, key: str) -> str | None:
    proc = run_git(["config", "--get", key], cwd, check=False)
    value = proc.stdout.decode("utf-8", "replace").strip()
    return value if proc.returncode == 0 and value else None


GITVAULT_CONFIG = ("config", "--get-regexp", r"^gitvault\.")  # gitvault's keys, one process


def gitvault_config(cwd: Path) -> dict[str, str]:
    """gitvault's keys of the repository's git config (lower-cased; of a key set more than once,
    in several files or through an include, the last value, as `git config KEY` reads it), in
    one process."""
    return parse_gitvault_config(run_git(GITVAULT_CONFIG, cwd, check=False))


def parse_gitvault_config(proc: processes.Finished) -> dict[str, str]:
    """What `git config --get-regexp` (GITVAULT_CONFIG) printed, as gitvault_config's."""
    found: dict[str, str] = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        found[key.lower()] = value.strip()  # the last one wins, as in git
    return found


def config_files(common_dir: Path, git_dir: Path) -> list[Path]:
    """Every file git reads a worktree's config from (absolute, once each, whether or not it
    exists): the repository's, the worktree's, the system's and the user's, as this process's
    environment names them."""
    env = os.environ
    home = env.get("HOME", "")
    xdg = env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
    paths = [
        common_dir / "config",
        git_dir / "config.worktree",
        common_dir / "config.worktree",
        Path(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"),
    ]
    if env.get("GIT_CONFIG_GLOBAL"):
        paths.append(Path(env["GIT_CONFIG_GLOBAL"]))
    else:
        paths += [Path(home, ".gitconfig")] if home else []
        paths += [Path(xdg, "git", "config")] if xdg else []
    out: list[Path] = []
    for path in paths:
        absolute = Path(os.path.abspath(path))
        if absolute not in out:
            out.append(absolute)
    return out


_INCLUDE_PATHS = r"^include(if\..*)?\.path$"


def config_includes(cwd: Path, config: Sequence[Path]) -> list[Path] | None:
    """The files the config files' include.path and includeIf.<condition>.path name, whatever
    the condition and whether or not they exist (absolute; a change to one may change a
    setting, and one created later is newer than anything watched before). No git process when
    no config file mentions an include; None when git cannot tell."""
    from gitvault.vault.files import read_regular

    for path in config:
        try:
            if b"include" in read_regular(path, 4 * 1024 * 1024).lower():
                break
        except FileNotFoundError:
            continue
        except OSError:
            return None
    else:
        return []
    args = ["config", "--show-origin", "-z", "--type=path", "--get-regexp", _INCLUDE_PATHS]
    proc = run_git(args, cwd, check=False)
    if proc.returncode not in (0, 1):
        return None
    words = proc.stdout.split(b"\0")
    out: list[Path] = []
    for origin, entry in zip(words[0::2], words[1::2], strict=False):
        value = entry.partition(b"\n")[2].decode("utf-8", "surrogateescape")
        if not origin.startswith(b"file:") or not value:
            return None  # an include given on the command line or by a blob: not a file
        named = Path(os.path.abspath(cwd / origin[5:].decode("utf-8", "surrogateescape")))
        out.append(Path(os.path.abspath(named.parent / value)))
    return list(dict.fromkeys(out))


def vault_branch(cwd: Path) -> str:
    """The vault branch of the repository at cwd (plain git: for the hooks)."""
    return layout.branch_name(config_get(cwd, layout.BRANCH_KEY))


def first_parent_chain(cwd: Path, rev: str, limit: int) -> list[tuple[str, int]]:
    """(sha, committer time) of rev and its first parents, newest first, at most limit."""
    proc = run_git(
        ["log", "--first-parent", f"-n{limit}", "--format=%H %ct", rev, "--"], cwd, check=False
    )
    out = []
    for line in proc.stdout.decode("ascii", "replace").split("\n"):
        sha, _, when = line.partition(" ")
        if len(sha) == 40 and when.isdigit():
            out.append((sha, int(when)))
    return out


def approxidate(value: str) -> int | None:
    """Unix time for a date in git's approxidate syntax ('2 weeks ago'), strictly: None when git
    cannot read it. `config --type=expiry-date` works outside a repository (unlike
    `rev-parse --since`) and rejects garbage instead of reading it as "now"."""
    key = "gitvault.since"
    args = ["-c", f"{key}={value}", "config", "--type=expiry-date", "--get", key]
    proc = run_git(args, None, check=False)
    match = re.fullmatch(r"\s*(\d+)\s*", proc.stdout.decode("utf-8", "replace"))
    return int(match.group(1)) if proc.returncode == 0 and match else None


class Change(NamedTuple):
    """One file a commit of a range added, modified or deleted (`git log --raw`)."""

    time: int  # the commit's committer time
    commit: str
    status: str  # A, M or D (T: a type change; renames are split into D and A)
    path: str
    blob: str  # the new blob (zeros for a deletion)
    by_gitvault: bool = False  # the commit is gitvault's (its committer) and merges nothing:
    # no hand-made commit, no sync merge (what a remote brought is on origin's record)


def raw_changes(
    cwd: Path, rng: str, paths: Sequence[str] = (), *, commits: Sequence[str] | None = None
) -> Iterator[Change]:
    """Every file change in a revision range along its first-parent line, oldest first; a
    merge shows what it brought in against its first parent. Only what entered this line
    counts: never a merged parent's own history, which may hold what sync quarantined or kept
    out of the merge's tree (the search and path indexes read the vault this way). paths:
    only changes to these; commits: only these commits' own changes (rng is then ignored)."""
    if commits is not None and not commits:
        return
    walk = ["--no-walk=unsorted", "--stdin"] if commits else ["--reverse", "--topo-order", rng]
    proc = run_git(
        [
            "-c",
            "core.quotePath=false",
            "log",
            "--first-parent",
            "--diff-merges=first-parent",
            "--raw",
            "-z",
            "--no-abbrev",
            "--no-renames",
            "--format=%x01%H%x00%ct%x00%ce%x00%P%x00%cn",
            *walk,
            "--",
            *paths,
        ],
        cwd,
        input=("\n".join(commits) + "\n").encode() if commits else None,
    )
    mine = vault_committer_name().encode()
    for record in proc.stdout.split(b"\x01"):
        tokens = record.split(b"\0")
        if len(tokens) < 5 or not tokens[1].strip().isdigit():
            continue
        commit, when = tokens[0].decode(), int(tokens[1].strip())
        own = _made_alone(tokens[2], tokens[3], tokens[4], mine)
        index = 5
        while index + 1 < len(tokens):
            head = tokens[index].lstrip(b"\n")
            if not head.startswith(b":"):
                index += 1
                continue
            parts = head.split()
            path = tokens[index + 1].decode("utf-8", "replace")
            index += 2
            if len(parts) >= 5:
                yield Change(when, commit, parts[4][:1].decode(), path, parts[3].decode(), own)


def is_ancestor(cwd: Path, ancestor: str, descendant: str) -> bool:
    proc = run_git(["merge-base", "--is-ancestor", ancestor, descendant], cwd, check=False)
    return proc.returncode == 0


# -- plain-git readers for the fast path -----------------------------------------------------


class TreeEntry(NamedTuple):
    path: str
    oid: str
    is_dir: bool


def _made_alone(email: bytes, parents: bytes, name: bytes, mine: bytes) -> bool:
    """A commit this gitvault made alone: its committer (with this filter's generation) and
    at most one parent."""
    return email == VAULT_EMAIL.encode() and name == mine and b" " not in parents.strip()


def not_by_gitvault(cwd: Path, rev: str) -> list[str]:
    """The commits of a revision's first-parent line that this gitvault did not make alone:
    made by someone else (a hand-made commit), by a gitvault with another secret filter, or
    merging another line in (a sync)."""
    proc = run_git(["log", "--first-parent", "--format=%x01%H%x00%ce%x00%P%x00%cn", rev], cwd)
    mine = vault_committer_name().encode()
    out = []
    for record in proc.stdout.split(b"\x01"):
        fields = record.rstrip(b"\n").split(b"\0")
        if len(fields) == 4 and not _made_alone(fields[1], fields[2], fields[3], mine):
            out.append(fields[0].decode())
    return out


# git caches up to 96 MB of delta bases by default, and a reader of a whole vault or history
# fills it: `ls-tree -r` and `cat-file --batch` over git/git's 81,966 notes peaked at 171 and
# 180 MB, above the fold's own 148 MB; with 32 MB, 138 and 139 MB at the same CPU (1.1 s).
SMALL_DELTA_CACHE = ("-c", "core.deltaBaseCacheLimit=32m")


def ls_tree(
    cwd: Path, rev: str, paths: Sequence[str], *, recursive: bool = False
) -> list[TreeEntry]:
    """Entries at (or inside, for paths ending in '/') the given paths of a revision."""
    proc = run_git([*_ls_tree_args(recursive), rev, "--", *paths], cwd, check=False)
    if proc.returncode != 0:
        return []
    return [e for e in map(_tree_entry, proc.stdout.split(b"\0")) if e is not None]


def iter_tree(
    cwd: Path, rev: str, paths: Sequence[str], *, recursive: bool = False
) -> Iterator[TreeEntry]:
    """ls_tree's entries as git lists them (in path order), never held whole: a listing of
    100,000 notes held as git's output, its records and their entries took ~50 MB at once.
    Nothing when git cannot list the revision (as ls_tree); a listing git cannot finish
    raises GitError (its entries so far were yielded)."""
    listed = 0
    with stream_git([*_ls_tree_args(recursive), rev, "--", *paths], cwd) as out:
        rest = b""
        for chunk in out:
            records = (rest + chunk).split(b"\0")
            rest = records.pop()
            for entry in map(_tree_entry, records):
                if entry is not None:
                    listed += 1
                    yield entry
        done = out.finish()
        if done.returncode == 0 and (entry := _tree_entry(rest)) is not None:
            yield entry
        elif done.returncode != 0 and (listed or rest):
            raise GitError(f"git ls-tree {rev} stopped: {tail(done.stderr)}")


def _ls_tree_args(recursive: bool) -> list[str]:
    args = [*SMALL_DELTA_CACHE, "-c", "core.quotePath=false", "ls-tree", "-z"]
    return [*args, "-r"] if recursive else args


def _tree_entry(record: bytes) -> TreeEntry | None:
    head, _, path = record.partition(b"\t")
    parts = head.split()
    if not path or len(parts) < 3:
        return None
    return TreeEntry(path.decode("utf-8", "replace"), parts[2].decode(), parts[1] == b"tree")


def cat_blobs(cwd: Path, oids: Sequence[str]) -> dict[str, bytes]:
    """Contents of several blobs through one `git cat-file --batch`."""
    if not oids:
        return {}
    # --buffer: one write when the output fills, not one per blob (and one wake-up of ours)
    proc = run_git(
        [*SMALL_DELTA_CACHE, "cat-file", "--batch", "--buffer"],
        cwd,
        input=("\n".join(oids) + "\n").encode(),
    )
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


def ref_exists(cwd: Path, rev: str) -> str | None:
    """The object a revision names, or None."""
    proc = run_git(["rev-parse", "-q", "--verify", rev], cwd, check=False)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def existing_commits(cwd: Path, shas: Sequence[str]) -> list[str]:
    """Those of shas that are commits in the repository (one `git cat-file --batch-check`)."""
    if not shas:
        return []
    data = "".join(f"{sha}\n" for sha in shas).encode()
    proc = run_git(["cat-file", "--batch-check"], cwd, input=data, check=False)
    lines = proc.stdout.decode("utf-8", "replace").splitlines()
    # "<sha> commit <size>" for each one there, "<sha> missing" otherwise
    return [
        sha for sha, line in zip(shas, lines, strict=False) if line.split(" ")[1:2] == ["commit"]
    ]


def tree_readable(cwd: Path, rev: str) -> bool:
    return run_git(["cat-file", "-e", f"{rev}^{{tree}}"], cwd, check=False).returncode == 0


# -- a worktree's own state, read from its git dir (no process) ------------------------------


def rebase_in_progress(git_dir: str | os.PathLike[str] | None) -> bool:
    if not git_dir:
        return False
    return any(os.path.isdir(os.path.join(git_dir, d)) for d in ("rebase-merge", "rebase-apply"))


def head_ref(git_dir: str | os.PathLike[str]) -> str:
    """The content of a worktree's HEAD file: `ref: refs/heads/x` or a sha. Raises OSError."""
    with open(os.path.join(git_dir, "HEAD"), encoding="utf-8") as fh:
        return fh.read().strip()


HEADS_PREFIX = "refs/heads/"


def branch_of(head: str) -> str | None:
    """The branch a HEAD value names (`ref: refs/heads/x` or `refs/heads/x` → x); None for a
    detached HEAD (a sha), another kind of ref, or nothing."""
    head = head.strip()
    if head.startswith("ref: "):
        head = head[5:].strip()
    return head[len(HEADS_PREFIX) :] or None if head.startswith(HEADS_PREFIX) else None


def head_branch(git_dir: str | os.PathLike[str] | None) -> str | None:
    """The branch a worktree's HEAD is on, read from its git dir (no process); None when HEAD
    is detached or cannot be read."""
    if not git_dir:
        return None
    try:
        return branch_of(head_ref(git_dir))
    except OSError:
        return None


def amended_from(git_dir: str | os.PathLike[str] | None, sha: str) -> str | None:
    """The commit an amend replaced, read from this worktree's HEAD reflog."""
    if not git_dir:
        return None
    try:
        with open(os.path.join(git_dir, "logs", "HEAD"), "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 65536))
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        head, _, msg = line.partition("\t")
        parts = head.split(" ")
        if len(parts) >= 2 and parts[1] == sha:
            return parts[0] if msg.startswith("commit (amend)") else None
    return None
