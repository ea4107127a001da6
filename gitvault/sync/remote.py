"""The remote end: which remote, fetching its vault into a tracking ref, pushing without force.

Every transfer is plain `git fetch` / `git push` (any transport: path, ssh, https), so only
new objects travel. Nothing here repacks, rewrites history or forces a ref.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gitvault.errors import GitvaultError
from gitvault.resolve import Location
from gitvault.vault import gitcmd, layout

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


def fetch(loc: Location, remote: str, remote_ref: str, tracking: str) -> str | None:
    """Fetch the remote's vault into the tracking ref; its tip, or None when the remote has no
    vault (the tracking ref is then removed)."""
    cwd = cwd_of(loc)
    proc = gitcmd.run_git(
        [
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-auto-gc",
            "--no-recurse-submodules",
            remote,
            f"+{remote_ref}:{tracking}",
        ],
        cwd,
        check=False,
        timeout=NETWORK_TIMEOUT,
    )
    if proc.returncode != 0:
        text = gitcmd.tail(proc.stderr) or gitcmd.tail(proc.stdout)
        if "couldn't find remote ref" in text or "could not find remote ref" in text:
            gitcmd.run_git(["update-ref", "-d", tracking], cwd, check=False)
            return None
        raise SyncError(
            f"cannot fetch the vault from {remote}: {text or f'exit {proc.returncode}'}",
            hint="check the remote's address and your access (`git fetch " + remote + "`)",
        )
    return gitcmd.ref_exists(cwd, tracking)


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
    proc = gitcmd.run_git(
        ["push", "--porcelain", "--no-verify", remote, f"{sha}:{remote_ref}"],
        cwd_of(loc),
        check=False,
        timeout=NETWORK_TIMEOUT,
    )
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
