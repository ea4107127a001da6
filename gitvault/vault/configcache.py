"""gitvault's keys of git config, remembered per worktree: one `git config --get-regexp` per
change of the files git reads them from, not one per agent hook (a git process from Python
costs a hook ~4 ms of its ~60).

The cache names every file git reads the worktree's config from (gitcmd.config_files, and the
files their include.path / includeIf entries name), each with its inode, size and mtime (or
"absent"), and the environment that chose them (launcher.config_env). It is used only while all
of that is as it was; git writes a config file through a lock file and a rename, so any change
is a new inode. It is stored only when every one of those files is older than SETTLE_NS (a
change in the same clock tick as the read would otherwise look unchanged), and never when the
command line or the environment adds config (GIT_CONFIG_PARAMETERS / GIT_CONFIG_COUNT).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from gitvault.resolve import Location
from gitvault.vault import files, launcher, statedir

MAX_BYTES = 256 * 1024
Stamp = list[int] | None  # inode, size, mtime_ns; None: no such file


def _path(loc: Location) -> Path:
    return loc.state_dir / (statedir.CONFIG_CACHE + statedir.ready_key(loc))


def _stamp(path: str) -> Stamp:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return [info.st_ino, info.st_size, info.st_mtime_ns]


def _env_adds_config() -> bool:
    return any(os.environ.get(name) for name in ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"))


def read(loc: Location) -> dict[str, str] | None:
    """The cached keys, or None when there is no cache or anything it was built from changed."""
    if _env_adds_config():
        return None
    data = files.load_json_object(_path(loc), MAX_BYTES)
    if data is None:
        return None
    try:
        if data.get("env") != list(launcher.config_env(os.environ)):
            return None
        for name, stamp in data["files"]:
            if _stamp(name) != stamp:
                return None
        values = data["values"]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    if not isinstance(values, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in values.items()
    ):
        return None
    return values


def store(loc: Location, values: dict[str, str]) -> None:
    """Remember `values`, read from git just now, when it is safe to (see the module's doc).
    Never raises: a cache that cannot be written is a git process next time."""
    from gitvault.vault import gitcmd

    if _env_adds_config() or loc.workdir is None:
        return
    try:
        config = gitcmd.config_files(loc.common_dir, loc.git_dir)
        included = gitcmd.config_includes(loc.workdir, config)
        if included is None:
            return
        names = list(dict.fromkeys(str(p) for p in (*config, *included)))
        stamps = [_stamp(name) for name in names]
        now = time.time_ns()
        if any(s is not None and now - s[2] < launcher.SETTLE_NS for s in stamps):
            return  # written just now: a change in the same tick would look unchanged
        data = {
            "env": list(launcher.config_env(os.environ)),
            "files": [[name, stamp] for name, stamp in zip(names, stamps, strict=True)],
            "values": values,
        }
        files.write_json(_path(loc), data, durable=False)
    except (OSError, gitcmd.GitError):
        return


# vault.toml as committed at a vault tip: a commit never changes, so its text is remembered
# for good (the last few tips), and a hook asks git for it only after the vault moved.
TOML_KEEP = 4
_HEX = frozenset("0123456789abcdef")


def vault_tip(loc: Location, branch: str) -> str | None:
    """The vault branch's tip from its loose ref file (None: packed, missing, or not a name)."""
    from gitvault.vault import layout

    try:
        text = files.read_regular(loc.common_dir / layout.branch_ref(branch), 200)
        tip = text.decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return tip if len(tip) in (40, 64) and set(tip) <= _HEX else None


def toml_at(loc: Location, tip: str) -> str | None:
    """The remembered vault.toml text at `tip`, or None when it is not remembered."""
    data = files.load_json_object(loc.state_dir / statedir.TOML_CACHE, MAX_BYTES)
    text = data.get(tip) if data is not None else None
    return text if isinstance(text, str) else None


def remember_toml(loc: Location, tip: str, text: str) -> None:
    """Remember vault.toml's text at `tip` (never raises)."""
    path = loc.state_dir / statedir.TOML_CACHE
    data = files.load_json_object(path, MAX_BYTES) or {}
    kept = {k: v for k, v in data.items() if isinstance(v, str) and k != tip}
    kept = dict(list(kept.items())[-(TOML_KEEP - 1) :])
    kept[tip] = text
    try:
        files.write_json(path, kept, durable=False)
    except OSError:
        return
