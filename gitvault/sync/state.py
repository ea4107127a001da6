"""What `status` shows about sharing: sync.json (per remote: when, what, result) and the
quarantine records, both in gitvault's folder of the common git dir (never on the branch)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from gitvault.resolve import Location
from gitvault.sync.merge import Quarantined
from gitvault.vault import layout
from gitvault.vault.files import atomic_write

MAX_RECORDS = 50


def _path(loc: Location) -> Path:
    return loc.state_dir / layout.SYNC_STATE


def read(loc: Location) -> dict[str, Any]:
    try:
        data = json.loads(_path(loc).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record(loc: Location, remote: str, entry: dict[str, Any]) -> None:
    """Remember the outcome of a sync with remote (called under the sync lock)."""
    data = read(loc)
    remotes = data.setdefault("remotes", {})
    remotes[remote] = {**remotes.get(remote, {}), **entry, "at": int(time.time())}
    data["last"] = remote
    loc.state_dir.mkdir(exist_ok=True)
    atomic_write(_path(loc), (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())


def quarantine(loc: Location, remote: str, tip: str, items: list[Quarantined]) -> Path | None:
    """One JSON record of what a sync refused; the blobs stay in the object database, so
    `git cat-file -p <blob>` shows each one."""
    if not items:
        return None
    folder = loc.state_dir / layout.QUARANTINE
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    target = folder / f"{stamp}-{tip[:12]}.json"
    doc = {
        "remote": remote,
        "remote_tip": tip,
        "at": int(time.time()),
        "files": [{"path": q.path, "blob": q.blob, "reason": q.reason} for q in items],
    }
    atomic_write(target, (json.dumps(doc, indent=2) + "\n").encode())
    records = sorted(folder.glob("*.json"))
    for old in records[:-MAX_RECORDS]:
        old.unlink(missing_ok=True)
    return target


def quarantined(loc: Location) -> list[dict[str, Any]]:
    """Every quarantined file on record, newest first (one entry per path and blob)."""
    folder = loc.state_dir / layout.QUARANTINE
    seen: set[tuple[str, str]] = set()
    out: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.json"), reverse=True) if folder.is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        for f in doc.get("files", []):
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
