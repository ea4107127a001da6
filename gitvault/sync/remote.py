"""The remote end: which remote, fetching its vault into a tracking ref, pushing without force.

Every transfer is plain `git fetch` / `git push` (any transport: path, ssh, https), so only
new objects travel. Nothing here repacks, rewrites history or forces a ref.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from gitvault.errors import GitvaultError
from gitvault.resolve import Location
from gitvault.vault import gitcmd, layout, processes, statedir
from gitvault.vault.files import NotRegular, make_dirs

NETWORK_TIMEOUT = 300.0  # seconds for one fetch or push


class SyncError(GitvaultError):
    pass


def cwd_of(loc: Location) -> Path:
    return loc.workdir or loc.common_dir


def remotes(loc: Location) -> list[str]:
    proc = gitcmd.run_git(["remote"], cwd_of(loc), check=False)
    return proc.stdout.decode("utf-8", "replace").split()


def default_remote(loc: Location) -> str:
    """`gitvault.syncRemote` in git config, else the remote of the current branch's upstream,
    else `origin`."""
    cwd = cwd_of(loc)
    configured = gitcmd.config_get(cwd, layout.SYNC_REMOTE_KEY)
    if configured:
        return configured
    proc = gitcmd.run_git(["symbolic-ref", "--short", "-q", "HEAD"], cwd, check=False)
    branch = proc.stdout.decode("utf-8", "replace").strip()
    if proc.returncode == 0 and branch:
        upstream = gitcmd.config_get(cwd, f"branch.{branch}.remote")
        if upstream and upstream != ".":
            return upstream
    return "origin"


def remote_url(loc: Location, remote: str) -> str:
    proc = gitcmd.run_git(["remote", "get-url", remote], cwd_of(loc), check=False)
    url = proc.stdout.decode("utf-8", "replace").strip()
    return url if proc.returncode == 0 and url else remote


def is_known(loc: Location, remote: str) -> bool:
    """A configured remote name, or something git can push to directly (a URL or a path)."""
    return remote in remotes(loc) or "://" in remote or ":" in remote or Path(remote).exists()


# Bounds of one fetch, per clone (git config; a travelling vault.toml cannot loosen them).
MAX_FETCH_BYTES = 64 * 1024 * 1024  # layout.SYNC_MAX_FETCH_KEY: objects one fetch may bring
DISK_RESERVE = 64 * 1024 * 1024  # free space a fetch never eats into (git status must work)
STALL_SECONDS = 60.0  # layout.SYNC_STALL_KEY: no byte arrived (or, pushing, went) for this long
MAX_BYTES_KEY = layout.SYNC_MAX_FETCH_KEY
STALL_KEY = layout.SYNC_STALL_KEY
TIMEOUT_KEY = layout.SYNC_TIMEOUT_KEY


@dataclass
class Fetched:
    """A remote's vault tip as fetched. clean: git fsck --strict passed every object it
    brought, which are now in the repository (the tracking ref points at tip). Otherwise none
    of them entered the repository: they are in `where`, a throwaway repository that borrows
    the repository's objects, until the fetch's block ends."""

    tip: str | None
    clean: bool
    where: Path  # the git dir to read tip from (the common dir when clean)
    problems: list[str]


def bound(loc: Location, key: str, default: float) -> float:
    value = gitcmd.config_get(cwd_of(loc), key)
    try:
        number = float(value) if value else default
    except ValueError:
        return default
    return number if number > 0 else default


def network_env(loc: Location) -> dict[str, str]:
    """No prompt can hang a background sync: no terminal credential prompt, ssh in batch
    mode (a host key or password question fails at once instead of waiting) unless the user
    chose their own ssh command (which then runs with no terminal to ask on)."""
    env = {"GIT_TERMINAL_PROMPT": "0"}
    own = gitcmd.config_get(cwd_of(loc), "core.sshCommand")
    if not own and "GIT_SSH_COMMAND" not in os.environ and "GIT_SSH" not in os.environ:
        env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes -o ConnectTimeout=30"
    return env


Screen = Callable[[Path, str], None]  # (the throwaway repository, the remote's tip): may raise


@contextmanager
def fetch(
    loc: Location, remote: str, remote_ref: str, tracking: str, screen: Screen | None = None
) -> Iterator[Fetched]:
    """Fetch the remote's vault, bounded in size, disk and time, into a throwaway repository;
    only objects git fsck --strict accepts enter this one (tracking ref updated). Yields what
    came (tip None: the remote has no vault; the tracking ref is removed). screen(where, tip)
    runs first, on the throwaway repository: what it refuses (history that was redacted here)
    never enters this one."""
    import shutil

    cwd = cwd_of(loc)
    key = tracking.removeprefix(layout.TRACKING_PREFIX).removesuffix("/vault").replace("/", "-")
    folder = statedir.path(loc, statedir.SYNC_INCOMING)
    make_dirs(folder)
    for stale in folder.glob(f"{key}-*"):  # a killed sync's leftovers (we hold the remote's lock)
        shutil.rmtree(stale, ignore_errors=True)
    _drop_stale_packs(loc)
    where = folder / f"{key}-{os.getpid()}"
    try:
        _quarantine_repo(loc, where)
        tip = _fetch_into(loc, where, remote, remote_ref)
        if tip is None:
            gitcmd.run_git(["update-ref", "-d", tracking], cwd, check=False)
            yield Fetched(None, True, loc.common_dir, [])
            return
        problems = _fsck(where)
        if screen is not None:
            screen(where, tip)  # a remote failing fsck too: its files may still be taken
        if problems:
            yield Fetched(tip, False, where, problems)
            return
        if _move_objects(where, Path(os.path.realpath(loc.common_dir / "objects"))):
            gitcmd.run_git(["update-ref", tracking, tip], cwd)  # refuses a missing object
            yield Fetched(tip, True, loc.common_dir, [])
            return
        moved = gitcmd.run_git(  # another file system: git copies them
            [
                "-c",
                "fetch.fsckObjects=true",
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                "--no-auto-gc",
                str(where),
                f"+{_INCOMING}:{tracking}",
            ],
            cwd,
            check=False,
        )
        if moved.returncode != 0:
            raise SyncError(f"cannot keep what {remote} sent: {gitcmd.tail(moved.stderr)}")
        yield Fetched(tip, True, loc.common_dir, [])
    finally:
        shutil.rmtree(where, ignore_errors=True)


_INCOMING = "refs/gitvault/incoming"


def _quarantine_repo(loc: Location, where: Path) -> None:
    """A bare repository that reads this one's configuration (remotes, URL rewrites, http and
    ssh settings, credentials) and borrows its objects, so only new objects land in it."""
    gitcmd.run_git(["init", "--bare", "--quiet", str(where)], loc.common_dir)
    config = loc.common_dir / "config"
    with open(where / "config", "a", encoding="utf-8") as out:
        out.write(f'[include]\n\tpath = "{_quoted(config)}"\n[core]\n\tbare = true\n')
    objects = os.path.realpath(loc.common_dir / "objects")
    (where / "objects" / "info" / "alternates").write_text(objects + "\n")


def _move_objects(where: Path, objects: Path) -> bool:
    """Link the objects a fetch brought, now that git fsck passed them, from the throwaway
    repository into the repository's object folder, as git's receive-pack moves its own
    quarantine in: a pack before its index (a reader never finds an index without its pack),
    nothing overwritten (a pack of the same name holds the same objects), loose objects too.
    All or nothing: False, with what was linked removed again (nothing names those objects
    yet), when one cannot be linked (another file system): the caller has git fetch them."""
    src = where / "objects"
    made: list[Path] = []
    try:
        packs = [p for p in (src / "pack").iterdir() if p.name.startswith("pack-")]
        rank = {".pack": 0, ".idx": 2}  # .rev and the like between; a .keep is never taken
        for path in sorted(packs, key=lambda p: (rank.get(p.suffix, 1), p.name)):
            if path.suffix != ".keep":
                _link(path, objects / "pack" / path.name, made)
        for folder in src.iterdir():
            if len(folder.name) == 2 and all(c in "0123456789abcdef" for c in folder.name):
                for path in folder.iterdir():
                    _link(path, objects / folder.name / path.name, made)
    except OSError:
        for path in reversed(made):
            path.unlink(missing_ok=True)
        return False
    return True


def _link(path: Path, to: Path, made: list[Path]) -> None:
    """One object file linked into place unless one of its name is there. Raises OSError."""
    if not stat.S_ISREG(os.lstat(path).st_mode):
        raise NotRegular(errno.EINVAL, f"{path} is not a regular file")
    if os.path.lexists(to):
        return
    make_dirs(to.parent)
    os.link(path, to)
    made.append(to)


def _quoted(path: Path) -> str:
    return str(path).replace("\\", "\\\\").replace('"', '\\"')


def _fetch_into(loc: Location, where: Path, remote: str, remote_ref: str) -> str | None:
    max_bytes = bound(loc, MAX_BYTES_KEY, MAX_FETCH_BYTES)
    stall = bound(loc, STALL_KEY, STALL_SECONDS)
    timeout = bound(loc, TIMEOUT_KEY, NETWORK_TIMEOUT)
    free = _free(where)
    if free is not None and free < DISK_RESERVE + min(max_bytes, 16 * 1024 * 1024):
        raise SyncError(
            f"not fetching from {remote}: {free // (1024 * 1024)} MB free on the disk of "
            f"{loc.common_dir}, and a fetch never uses the last {DISK_RESERVE // (1024 * 1024)} MB",
            hint="free some space, then run `gitvault sync` again",
        )
    seen = {"size": 0, "since": time.monotonic()}

    def watch() -> str | None:
        size = _size(where / "objects")
        now = time.monotonic()
        if size != seen["size"]:
            seen["size"], seen["since"] = size, now
        if size > max_bytes:
            return f"{remote} sent more than {int(max_bytes):,} bytes (git config {MAX_BYTES_KEY})"
        left = _free(where)
        if left is not None and left < DISK_RESERVE:
            return f"the disk is nearly full ({left // (1024 * 1024)} MB free)"
        if now - seen["since"] > stall:
            return f"{remote} sent nothing for {stall:.0f}s (git config {STALL_KEY})"
        return None

    try:
        proc = gitcmd.run_git_watched(
            [
                "-c",
                "fetch.unpackLimit=1",
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-write-fetch-head",
                "--no-auto-gc",
                "--no-recurse-submodules",
                remote if remote in remotes(loc) else remote_url(loc, remote),
                f"+{remote_ref}:{_INCOMING}",
            ],
            where,
            timeout=timeout,
            watch=watch,
            env=network_env(loc),
        )
    except processes.Stopped as exc:
        raise SyncError(
            f"stopped fetching the vault from {remote}: {exc}; nothing it sent was kept",
            hint="check the remote (`git fetch " + remote + "`), or raise the bound in git config",
        ) from exc
    except gitcmd.GitError as exc:
        raise SyncError(
            f"stopped fetching the vault from {remote}: {exc.message}; nothing it sent was kept",
            hint=f"check the remote, or raise git config {TIMEOUT_KEY}",
        ) from exc
    late = watch()  # a fetch quicker than one look still keeps to the bounds
    if late is not None:
        raise SyncError(
            f"stopped fetching the vault from {remote}: {late}; nothing it sent was kept",
            hint="check the remote (`git fetch " + remote + "`), or raise the bound in git config",
        )
    if proc.returncode != 0:
        text = gitcmd.tail(proc.stderr) or gitcmd.tail(proc.stdout)
        if "couldn't find remote ref" in text or "could not find remote ref" in text:
            return None
        raise SyncError(
            f"cannot fetch the vault from {remote}: {text or f'exit {proc.returncode}'}",
            hint="check the remote's address and your access (`git fetch " + remote + "`)",
        )
    return gitcmd.ref_exists(where, _INCOMING)


def _fsck(where: Path) -> list[str]:
    """What git fsck --strict finds wrong in the objects the fetch brought (only those: the
    borrowed objects are hidden from it, so what they lack is not counted), one line each."""
    alternates = where / "objects" / "info" / "alternates"
    borrowed = alternates.read_text()
    alternates.unlink()
    try:
        proc = gitcmd.run_git(
            ["fsck", "--strict", "--no-dangling", "--no-reflogs", "--no-progress", "--full"],
            where,
            check=False,
        )
    finally:
        alternates.write_text(borrowed)
    found = []
    for line in (
        proc.stderr.decode("utf-8", "replace").splitlines()
        + proc.stdout.decode("utf-8", "replace").splitlines()
    ):
        if line.startswith(("error in ", "warning in ", "fatal:", "error: object ")) or (
            line.startswith("error: ")
            and "missing" not in line
            and "broken link" not in line
            and "invalid sha1 pointer" not in line
            and "HEAD" not in line
        ):
            found.append(line.strip())
    # a ref that is no commit (a blob, a tag, a tree) is the remote's fault too
    kind = gitcmd.run_git(["cat-file", "-t", _INCOMING], where, check=False)
    kind_name = kind.stdout.decode().strip()
    if kind_name != "commit":
        found.append(
            f"the remote's vault ref points at a {kind_name or 'missing object'}, not a commit"
        )
    return found


def _size(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


def _free(folder: Path) -> int | None:
    try:
        st = os.statvfs(folder)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def _drop_stale_packs(loc: Location) -> None:
    """A fetch that died (a full disk, a kill) leaves tmp_pack_* in the object folder, which
    keeps the disk full; git removes them only at gc. Ones older than an hour are no live
    fetch's."""
    pack = loc.common_dir / "objects" / "pack"
    cutoff = time.time() - 3600
    for path in [*pack.glob("tmp_pack_*"), *pack.glob("tmp_idx_*")] if pack.is_dir() else []:
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
        except OSError:
            continue


@dataclass(frozen=True)
class PushResult:
    ok: bool
    retry: bool  # the remote moved (or was busy): fetch, merge and push again
    reason: str


_RETRYABLE = (
    "fetch first",
    "non-fast-forward",
    "stale info",
    "failed to update ref",
    "cannot lock ref",
    "failed to lock",
    "incorrect old value",
    "reference already exists",
)


def push(loc: Location, remote: str, sha: str, remote_ref: str) -> PushResult:
    """Push sha to remote_ref without force (a fast-forward or a new ref, nothing else).
    --no-verify: the vault is data gitvault wrote, not code; the user's pre-push hooks (and
    gitvault's own pre-push shim) are for their branches."""
    stall = bound(loc, STALL_KEY, STALL_SECONDS)
    try:
        proc = gitcmd.run_git_watched(
            # --progress: git reports as it sends, even to a file, so silence is a stall
            ["push", "--porcelain", "--progress", "--no-verify", remote, f"{sha}:{remote_ref}"],
            cwd_of(loc),
            timeout=bound(loc, TIMEOUT_KEY, NETWORK_TIMEOUT),
            watch=lambda: None,
            env=network_env(loc),
            stall=stall,
        )
    except processes.Stopped as exc:
        return PushResult(
            False, False, f"{remote} took nothing for {stall:.0f}s: {exc} (git config {STALL_KEY})"
        )
    except gitcmd.GitError as exc:
        return PushResult(False, False, f"{exc.message} (git config {TIMEOUT_KEY})")
    if proc.returncode == 0:
        return PushResult(True, False, "")
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    status = [line for line in out.splitlines() if line.startswith("!")]
    reason = status[0].split("\t")[-1].strip() if status else (err.strip() or out.strip())
    retry = any(marker in reason for marker in _RETRYABLE) and "hook declined" not in reason
    if not status and not retry:
        reason = gitcmd.tail(proc.stderr) or gitcmd.tail(proc.stdout) or f"exit {proc.returncode}"
    return PushResult(False, retry, reason)
