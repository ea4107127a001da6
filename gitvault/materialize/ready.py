"""The recall block, materialized: what SessionStart injects into a fresh context (startup,
clear, compact), computed when the vault changes — by the detached drainer after a commit, and
by save, fold, sync, forget, verify and backfill after they wrote — never at a session start,
and stored per worktree with everything it was built from, so that the launcher's sh serves a
session start without Python while all of that still holds (gitvault/vault/launcher holds the
file's format and its reader).

What the block depends on, and how the sh knows it still holds:
- the vault branch and the private sessions' ref: their tips (loose ref files, compared);
- the worktree's HEAD (its branch's sessions come first, its handovers): compared;
- the state files recall reads (fold state, verify's results, origins, handovers offered):
  every write of one replaces a token (statedir.recall_inputs_changed) the file names;
- git config (the vault branch's name, the agents served), packed-refs, the user's patterns
  folder and files: not newer than the file, whose mtime is the newest of theirs; a file is
  written only when they are SETTLE_NS old (as the quiet stamp is);
- the session itself: a resumed conversation, a handover to offer, an agent's environment file
  to write, git config given in the environment — Python serves those starts.

Which worktrees: every one whose ready file exists (install writes its own; a session start
Python served marks its worktree, `want`). One refresh at a time (an flock); each worktree's
inputs are observed before the block is built and again after, and a change in between builds
it again, so a refresh never stores a block older than what it names.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from gitvault.materialize.inputs import Seen, observe
from gitvault.resolve import Location
from gitvault.vault import files, gitcmd, launcher, statedir

MAX_WORKTREES = 16  # ready files kept; beyond, the least recently built go
ATTEMPTS = 3  # builds of one worktree's block while its inputs keep moving
BACKGROUND_ENV = "GITVAULT_BACKGROUND"  # a detached process already (the background fold)


def _folder(loc: Location) -> Path:
    return loc.state_dir / statedir.READY


def _ledger_line(seen: Seen, parts: dict[str, str]) -> str:
    """What the session's ledger takes from a start the sh served (gitvault.agents.ledger):
    what the Python session start records besides its run."""
    loc = seen.loc
    data = {
        "git_dir": str(loc.git_dir),
        "worktree": str(loc.workdir or ""),
        "branch": gitcmd.branch_of(seen.head) or "",
        "recall": parts,
    }
    return json.dumps(data, separators=(",", ":"))


def build(loc: Location, wait: float = 0.0) -> tuple[bytes, int | None]:
    """The ready file of the worktree at loc and the mtime it must carry: servable, or one that
    only names the worktree (mtime None: when its inputs would not settle within WAIT seconds,
    kept moving, or a handover waits to be offered — Python serves those starts)."""
    from gitvault.memory import recall
    from gitvault.vault.controls import neutralise_controls

    assert loc.workdir is not None
    waiting = launcher.ready_wait(loc.workdir, loc.git_dir) or b""
    for _ in range(ATTEMPTS):
        seen = observe(loc)
        if seen is None:
            break
        young = launcher.SETTLE_NS - (seen.at - seen.newest)
        if young > 0:
            if young / 1e9 > wait:
                break
            time.sleep(young / 1e9 + 0.05)
            wait -= young / 1e9
            continue
        here = gitcmd.branch_of(seen.head) or ""
        result = recall.build(loc.workdir, seen.branch, here=here, loc=loc, handover=True)
        if result.handovers:
            break  # offering one consumes it: Python's
        after = observe(loc)
        if after is None or after.key() != seen.key():
            continue
        ready = launcher.Ready(
            gen=seen.gen,
            workdir=loc.workdir,
            head=(Path(os.path.abspath(loc.git_dir / "HEAD")), seen.head),
            vault=seen.vault,
            private=seen.private,
            patterns=seen.patterns,
            agents=seen.agents,
            env=seen.env,
            reflog=Path(os.path.abspath(loc.git_dir / "logs" / "HEAD")),
            ledger=_ledger_line(seen, result.parts),
            watched=seen.watched,
        )
        # What the agent decodes reaches its model: no control sequence (the runtime's rule).
        data = launcher.ready_text(ready, neutralise_controls(result.text))
        if data is None:
            break
        return data, seen.newest
    return waiting, None


def _named(loc: Location, key: str, git_dir: Path) -> bool:
    """Whether a ready file called KEY may name GIT_DIR: the main worktree's is the common
    dir, a linked worktree's is <common dir>/worktrees/KEY."""
    try:
        if key == statedir.READY_MAIN:
            return os.path.samefile(git_dir, loc.common_dir)
        return git_dir.name == key and os.path.samefile(
            git_dir.parent, loc.common_dir / "worktrees"
        )
    except OSError:
        return False


def _worktrees(loc: Location) -> list[tuple[Path, Location]]:
    """(ready file, worktree) of every worktree the ready folder names, most recently built
    first; a file that names none (or another than its name says) is dropped."""
    folder = _folder(loc)
    try:
        entries = [e for e in os.scandir(folder) if statedir.is_ready_key(e.name)]
    except OSError:
        return []
    out: list[tuple[float, Path, Location]] = []
    for entry in entries:
        try:
            named = launcher.ready_worktree(files.read_range(entry.path, 0, 4096)[0])
            when = entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            named, when = None, 0.0
        if named is None or not _named(loc, entry.name, named[1]):
            Path(entry.path).unlink(missing_ok=True)
            continue
        out.append((when, Path(entry.path), Location(loc.common_dir, named[1], named[0])))
    out.sort(key=lambda item: item[0], reverse=True)
    for _, gone, _ in out[MAX_WORKTREES:]:
        gone.unlink(missing_ok=True)
    return [(path, found) for _, path, found in out[:MAX_WORKTREES]]


def refresh(loc: Location, *, wait: float = 0.0) -> int:
    """Build every named worktree's block again (WAIT: seconds a detached caller may sleep for
    just-written settings to settle). Never raises: a session start falls back to Python. How
    many are servable now."""
    from gitvault.vault.locking import file_lock, log_failure

    folder = _folder(loc)
    if not folder.is_dir():
        return 0
    served = 0
    try:
        with file_lock(folder / statedir.READY_LOCK, block=True, timeout=30.0) as got:
            if not got:
                return 0
            files.make_dirs(loc.state_dir / statedir.QUIET)  # where the sh records a start
            from gitvault.materialize import blocks

            # The edit-time blocks beside (a detached caller may spend longer on them).
            budget = blocks.BACKGROUND_BUDGET_S if wait > 0 else blocks.BUDGET_S
            deadline = time.monotonic() + budget
            for path, worktree in _worktrees(loc):
                assert worktree.workdir is not None
                if not worktree.git_dir.is_dir() or not (worktree.workdir / ".git").exists():
                    path.unlink(missing_ok=True)  # a worktree removed since
                    blocks.path_for(worktree).unlink(missing_ok=True)
                    continue
                data, mtime = build(worktree, wait)
                if data:
                    files.atomic_write(path, data, mtime_ns=mtime)
                served += mtime is not None
                left = max(deadline - time.monotonic(), 0.0)
                blocks.refresh(worktree, wait=wait, budget=left)
            from gitvault.memory import vaultstate

            vaultstate.materialize(loc)  # what `status --line` shows, beside the blocks
    except Exception as exc:  # noqa: BLE001 - a cache must never fail the write it follows
        log_failure(loc.state_dir, f"recall not materialized: {type(exc).__name__}: {exc}")
    return served


def want(loc: Location) -> None:
    """A session start Python served here: name this worktree for the next refresh, when no
    ready file does. Never raises."""
    if loc.workdir is None:
        return
    path = statedir.ready_file(loc)
    if os.path.lexists(path):
        return
    data = launcher.ready_wait(loc.workdir, loc.git_dir)
    if data is not None:
        try:
            files.make_dirs(path.parent)
            files.create_new(path, data)
        except OSError:
            pass


def after_change(loc: Location) -> None:
    """After the vault (or what recall reads) changed: the ready files are built again, here
    (a detached caller, BACKGROUND_ENV, may wait for just-written settings to settle). Nothing
    when the repository was never installed with this gitvault. Never raises."""
    if not _folder(loc).is_dir():
        return
    wait = launcher.SETTLE_NS / 1e9 + 0.5 if _truthy(os.environ.get(BACKGROUND_ENV)) else 0.0
    refresh(loc, wait=wait)


def _truthy(value: str | None) -> bool:
    return bool(value) and value not in ("0", "false")
