"""The vault's fold state as `status --line` shows it: how many notes and sessions wait for a
fold, when the digest was folded, the stale thresholds vault.toml sets, the last fold's failure.

computed() reads it with plain git (three processes); the refresh that materializes the recall
blocks (gitvault.materialize.ready) stores it beside them with what it was read from, and
materialized() serves it from that one small file while all of it still holds: the vault tip
(its loose ref file), the token the fold's state file replaces (statedir.recall_inputs_changed),
and the git config files and packed-refs (not newer than the file, whose mtime is the newest of
theirs, written only once they are SETTLE_NS old). The age is the caller's: it changes with
the clock, not with the vault.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from gitvault.named import NamedTuple
from gitvault.resolve import Location
from gitvault.vault import files, launcher, statedir

PENDING_CAP = 1000  # unfolded items counted up to this many ("1000+")
FORMAT = "gitvault-status 1"


class VaultState(NamedTuple):  # not a dataclass: the status line cannot pay `dataclasses`
    exists: bool  # a vault branch here (False: the line says nothing)
    pending: int  # notes and sessions not folded yet, up to PENDING_CAP
    folded_at: float | None  # the digest's fold time (None: no digest yet)
    stale_items: int  # vault.toml [status]
    stale_days: int
    failure: str | None  # the configured merger, when its last fold failed
    fallback: str | None  # the merger that stood in for it (the digest is current then)


NONE = VaultState(False, 0, None, 0, 0, None, None)


def unfolded_count(cwd: Path, mark: str | None, tip: str, cap: int | None) -> int:
    """Note and session commits not yet folded (watermark..tip), counted up to cap."""
    from gitvault.vault import gitcmd

    args = ["rev-list", "--count", "--grep=^note ", "--grep=^session "]
    if cap is not None:
        args.append(f"--max-count={cap}")
    args += [tip, f"^{mark}"] if mark else [tip]
    proc = gitcmd.run_git([*args, "--"], cwd, check=False)
    text = proc.stdout.decode().strip()
    return int(text) if proc.returncode == 0 and text.isdigit() else 0


def computed(loc: Location, rev: str | None = None) -> VaultState:
    """The state read from git (REV: the vault's tip, else its branch as configured)."""
    from gitvault.vault import frontmatter, gitcmd, layout
    from gitvault.vault.times import parse_time

    cwd = loc.common_dir
    rev = rev or layout.branch_ref(gitcmd.vault_branch(cwd))
    digest_spec, config_spec = f"{rev}:{layout.DIGEST}", f"{rev}:{layout.CONFIG}"
    # One `cat-file --batch` answers whether the vault exists and reads the digest and settings.
    blobs = gitcmd.cat_blobs(cwd, [rev, digest_spec, config_spec])
    if rev not in blobs:  # no vault here: a prompt shown in every repository stays quiet
        return NONE
    config = blobs.get(config_spec)
    config_text = config.decode("utf-8", "replace") if config else None
    settings = layout.read_settings(config_text, "status")
    meta: dict[str, object] = {}
    if digest_spec in blobs:
        meta, _ = frontmatter.parse(blobs[digest_spec].decode("utf-8", "replace"))
    mark = meta.get("watermark") if isinstance(meta.get("watermark"), str) else None
    fold_state = statedir.fold_state(loc)
    configured = str(layout.read_settings(config_text, "fold")["merger"])
    failure = fold_state.failure_of(configured)
    return VaultState(
        True,
        unfolded_count(cwd, str(mark) if mark else None, rev, PENDING_CAP),
        parse_time(meta.get("folded_at")),
        int(settings["stale_items"]),
        int(settings["stale_days"]),
        failure.merger if failure is not None else None,
        fold_state.fallback if failure is not None else None,
    )


def _path(loc: Location) -> Path:
    return loc.state_dir / statedir.READY / statedir.READY_STATUS


def _watched(loc: Location) -> list[Path]:
    from gitvault.vault import gitcmd

    return [
        *gitcmd.config_files(loc.common_dir, loc.common_dir),
        Path(os.path.abspath(loc.common_dir / "packed-refs")),
    ]


def _loose_tip(ref: Path) -> str | None:
    try:
        return files.read_regular(ref, 200).decode("ascii").strip() or None
    except FileNotFoundError:
        return None


def materialize(loc: Location) -> bool:
    """Store the state beside the recall blocks (the refresh's lock held); whether it can be
    served. Raises OSError."""
    from gitvault.vault import gitcmd, layout

    path = _path(loc)
    watched = _watched(loc)
    newest = max((_mtime(p) for p in watched), default=0)
    if time.time_ns() - newest < launcher.SETTLE_NS:
        path.unlink(missing_ok=True)
        return False
    gen = statedir.ready_gen(loc)
    ref = Path(
        os.path.abspath(loc.common_dir / layout.branch_ref(gitcmd.vault_branch(loc.common_dir)))
    )
    tip = _loose_tip(ref)
    fold_print = _print(statedir.FOLD_STATE_FILE.path(loc))
    state = computed(loc, tip) if tip else computed(loc)
    values = [
        FORMAT,
        gen,
        fold_print,
        str(ref),
        tip or "-",
        "1" if state.exists else "0",
        str(state.pending),
        repr(state.folded_at) if state.folded_at is not None else "-",
        str(state.stale_items),
        str(state.stale_days),
        state.failure or "-",
        state.fallback or "-",
        *(str(p) for p in watched),
        launcher.QUIET_END,
    ]
    after = max((_mtime(p) for p in watched), default=0)
    moved = _print(statedir.FOLD_STATE_FILE.path(loc)) != fold_print
    if after != newest or moved or _loose_tip(ref) != tip or any("\n" in v for v in values):
        path.unlink(missing_ok=True)
        return False
    files.atomic_write(path, ("\n".join(values) + "\n").encode(), mtime_ns=newest)
    return True


def materialized(loc: Location) -> VaultState | None:
    """The stored state while everything it was read from still holds; None otherwise."""
    path = _path(loc)
    try:
        mtime = os.lstat(path).st_mtime_ns
        lines = files.read_regular(path, 16_384).decode("utf-8").split("\n")
        gen = files.read_regular(path.parent / statedir.READY_GEN, 200).decode().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if len(lines) < 14 or lines[0] != FORMAT or lines[1] != gen:
        return None
    if launcher.QUIET_END not in lines[12:]:
        return None
    if lines[2] != _print(statedir.FOLD_STATE_FILE.path(loc)):
        return None  # written since, by a writer that replaced no token
    tip = lines[4] if lines[4] != "-" else None
    try:
        if _loose_tip(Path(lines[3])) != tip:
            return None
    except OSError:
        return None
    for watched in lines[12 : lines.index(launcher.QUIET_END, 12)]:
        if _mtime(Path(watched)) > mtime:
            return None
    try:
        return VaultState(
            lines[5] == "1",
            int(lines[6]),
            float(lines[7]) if lines[7] != "-" else None,
            int(lines[8]),
            int(lines[9]),
            lines[10] if lines[10] != "-" else None,
            lines[11] if lines[11] != "-" else None,
        )
    except ValueError:
        return None


def _print(path: Path) -> str:
    """Which version of a file this is: inode, size, mtime (ns); "-" when there is none."""
    try:
        info = os.lstat(path)
    except OSError:
        return "-"
    return f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns}"


def _mtime(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
