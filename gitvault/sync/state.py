"""What `status` shows about sharing: sync.json (per remote: when, what, result) and the
quarantine records, both in gitvault's folder of the common git dir (never on the branch)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from gitvault.resolve import Location
from gitvault.sync.merge import Quarantined
from gitvault.vault import layout, statedir
from gitvault.vault.files import load_json_object, make_dirs, write_json

MAX_RECORDS = 50


def read(loc: Location) -> dict[str, Any]:
    return statedir.SYNC_STATE_FILE.read(loc) or {}


def record(loc: Location, remote: str, entry: dict[str, Any]) -> None:
    """Remember the outcome of a sync with remote (syncs of other remotes run at once: under
    a short lock of its own)."""
    from gitvault.vault.locking import file_lock

    with file_lock(loc.state_dir / statedir.SYNC_LOCK, block=True, timeout=30.0):
        _record(loc, remote, entry)


def _record(loc: Location, remote: str, entry: dict[str, Any]) -> None:
    data = read(loc)
    remotes = data.get("remotes")
    if not isinstance(remotes, dict):
        data["remotes"] = remotes = {}
    before = remotes.get(remote)
    remotes[remote] = {
        **(before if isinstance(before, dict) else {}),
        **entry,
        "at": int(time.time()),
    }
    data["last"] = remote
    statedir.SYNC_STATE_FILE.write(loc, data, indent=2)


def quarantine(loc: Location, remote: str, tip: str, items: list[Quarantined]) -> Path | None:
    """One JSON record of what a sync refused; the blobs stay in the object database, so
    `git cat-file -p <blob>` shows each one."""
    if not items:
        return None
    folder = make_dirs(statedir.path(loc, statedir.SYNC_QUARANTINE))
    stamp = time.strftime("%Y%m%dT%H%M%S")
    target = folder / f"{stamp}-{tip[:12]}.json"
    doc = {
        "remote": remote,
        "remote_tip": tip,
        "at": int(time.time()),
        "files": [{"path": q.path, "blob": q.blob, "reason": q.reason} for q in items],
    }
    write_json(target, doc, indent=2)
    records = sorted(folder.glob("*.json"))
    for old in records[:-MAX_RECORDS]:
        old.unlink(missing_ok=True)
    return target


def quarantined(loc: Location) -> list[dict[str, Any]]:
    """Every quarantined file on record, newest first (one entry per path and blob)."""
    folder = statedir.path(loc, statedir.SYNC_QUARANTINE)
    seen: set[tuple[str, str]] = set()
    out: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.json"), reverse=True) if folder.is_dir() else []:
        doc = load_json_object(path)
        if doc is None:
            continue
        files = doc.get("files")
        for f in files if isinstance(files, list) else []:
            if not isinstance(f, dict):
                continue
            key = (str(f.get("path")), str(f.get("blob")))
            if key not in seen:
                seen.add(key)
                out.append({**f, "remote": doc.get("remote"), "record": str(path)})
    return out


def sharing(loc: Location, branch: str, remote_ref: str, auto: str) -> dict[str, Any]:
    """Whether and where the vault is shared, how far ahead/behind the last fetched remote tip
    it is, when it last synced, and what was quarantined (no network: the tracking ref)."""
    from gitvault.sync import remote as remote_mod
    from gitvault.vault import gitcmd

    data = read(loc)
    remotes = data.get("remotes", {}) if isinstance(data.get("remotes"), dict) else {}
    name = str(data.get("last") or remote_mod.default_remote(loc))
    entry = remotes.get(name, {}) if isinstance(remotes.get(name), dict) else {}
    cwd = remote_mod.cwd_of(loc)
    tracking = layout.tracking_ref(name)
    fetched = gitcmd.ref_exists(cwd, tracking)
    ahead = behind = None
    if fetched is not None:
        proc = gitcmd.run_git(
            ["rev-list", "--left-right", "--count", f"{layout.branch_ref(branch)}...{tracking}"],
            cwd,
            check=False,
        )
        parts = proc.stdout.decode().split()
        if proc.returncode == 0 and len(parts) == 2:
            ahead, behind = int(parts[0]), int(parts[1])
    at = entry.get("at")
    return {
        "shared": fetched is not None,
        "remote": name if (fetched is not None or entry) else None,
        "url": entry.get("url"),
        "remote_ref": remote_ref,
        "ahead": ahead,
        "behind": behind,
        "last_sync": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(at))
        if isinstance(at, int)
        else None,
        "last_error": entry.get("error"),
        "auto": auto,
        "quarantined": quarantined(loc),
        "remotes": remotes,
    }
