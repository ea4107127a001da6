"""The merge rules of two vaults, as one plan of path changes on top of the local tip.

Three-way, per path, against the merge base (none for two unrelated roots: everything the
remote has is incoming). Only paths the remote changed since the base and that differ from
the local tip are looked at, so the cost follows what is new, not the vault's size.

- notes/, sessions/ (append-only, unique paths): union. A path only the remote added or
  changed is taken after validation (incoming.py).
- the same path changed on both sides: a session or a pattern file keeps both (the remote's
  is added as <name>-<7 hex of its content>, deterministic, so every clone names it alike);
  a note (the same project commit, noted in two clones) keeps the local one; reported.
- _master.md: the local digest stays when both folded; when only the remote folded, its
  digest is taken (its watermark is in the merged history either way). Items merged in from
  the other side are outside the local watermark's ancestry, so the next fold absorbs them.
- vault.toml: never taken from a remote (local wins); differences are reported. A remote
  can therefore never widen what gitvault runs or writes here.
- a path the remote deleted: kept (nothing is dropped from an append-only vault).
- anything invalid or outside the layout: quarantined (kept out of the tree, recorded).
- kinds not listed in [sync] share neither leave nor enter.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from gitvault.sync import incoming
from gitvault.vault import gitcmd, layout


class Delta(NamedTuple):
    old_mode: str
    new_mode: str
    old: str | None  # blob id, None when absent
    new: str | None


@dataclass(frozen=True)
class Quarantined:
    path: str
    blob: str
    reason: str


@dataclass
class Plan:
    changes: dict[str, bytes | None] = field(default_factory=dict)  # on top of the local tip
    taken: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (path, where the copy went)
    kept_local: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    quarantined: list[Quarantined] = field(default_factory=list)
    exact: bool = True  # every incoming change taken as it is: a fast-forward would do

    def lines(self) -> list[str]:
        out = [
            f"conflict: {p} changed on both sides; the remote's copy is {to}"
            for p, to in self.renamed
        ]
        out += [f"kept local {p}: {why}" for p, why in self.kept_local]
        out += [f"quarantined {q.path} (blob {q.blob[:12]}): {q.reason}" for q in self.quarantined]
        return out


def empty_tree(cwd: Path) -> str:
    proc = gitcmd.run_git(["hash-object", "-t", "tree", "--stdin"], cwd, input=b"")
    return proc.stdout.decode().strip()


def diff(cwd: Path, old: str | None, new: str) -> dict[str, Delta]:
    """path → Delta between two commits (old None: the empty tree), recursively."""
    base = old or empty_tree(cwd)
    proc = gitcmd.run_git(
        ["diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", base, new], cwd
    )
    out: dict[str, Delta] = {}
    fields = proc.stdout.split(b"\0")
    i = 0
    while i + 1 < len(fields):
        head = fields[i].decode("ascii", "replace")
        if not head.startswith(":"):
            i += 1
            continue
        path = fields[i + 1].decode("utf-8", "surrogateescape")
        old_mode, new_mode, old_id, new_id, _ = head[1:].split(" ", 4)
        out[path] = Delta(
            old_mode,
            new_mode,
            None if set(old_id) == {"0"} else old_id,
            None if set(new_id) == {"0"} else new_id,
        )
        i += 2
    return out


def merge_base(cwd: Path, a: str, b: str) -> str | None:
    proc = gitcmd.run_git(["merge-base", a, b], cwd, check=False)
    text = proc.stdout.decode().strip()
    return text if proc.returncode == 0 and text else None


def suffixed(path: str, data: bytes) -> str:
    """Where the remote's copy of a conflicting session or pattern goes: same folder, the name
    plus 7 hex of its content (so every clone that meets the conflict names it alike)."""
    tag = hashlib.sha256(data).hexdigest()[:7]
    folder, _, name = path.rpartition("/")
    stem = name[: -len(".md")]
    if layout.session_slug(path) is not None:
        stem = stem[: 120 - 8].rstrip("-")
        return f"{folder}/{stem}-{tag}.md"
    return f"{folder}/{stem[: 80 - 8]}.{tag}.md"


def plan(cwd: Path, local: str | None, remote: str, share: tuple[str, ...]) -> Plan:
    """What merging the remote tip into the local tip changes (local None: adopting)."""
    result = Plan()
    base = merge_base(cwd, local, remote) if local else None
    incoming_delta = diff(cwd, base, remote)
    if local is None:
        against = {p: Delta(d.new_mode, d.new_mode, None, d.new) for p, d in incoming_delta.items()}
    elif base == local:
        against = incoming_delta
    else:
        against = diff(cwd, local, remote)
    todo = [p for p in incoming_delta if p in against]
    wanted = [incoming_delta[p].new for p in todo if incoming_delta[p].new]
    blobs = gitcmd.cat_blobs(cwd, [b for b in wanted if b])
    for path in sorted(todo):
        d = incoming_delta[path]
        mine = against[path].old if local is not None else None
        if d.new is None:  # the remote deleted it
            if mine is not None:
                result.kept_local.append((path, "deleted on the remote"))
                result.exact = False
            continue
        kind = layout.shared_kind(path)
        if kind is not None and kind not in share:
            result.exact = False
            if local is not None:
                result.kept_local.append((path, f"{kind} are not shared ([sync] share)"))
            continue
        data = blobs.get(d.new)
        why = incoming.problem(path, d.new_mode, data)
        if why is not None or data is None:
            result.quarantined.append(Quarantined(path, d.new, why or "object missing"))
            result.exact = False
            continue
        if path == layout.CONFIG and local is not None:
            result.kept_local.append((path, "vault.toml differs; local wins"))
            result.exact = False
            continue
        if mine is None or mine == d.old:  # new on the remote, or unchanged here since the base
            result.changes[path] = data
            result.taken.append(path)
            continue
        result.exact = False
        if layout.session_slug(path) is not None or layout.is_pattern(path):
            copy = suffixed(path, data)
            result.changes[copy] = data
            result.renamed.append((path, copy))
        elif path == layout.DIGEST:
            result.kept_local.append((path, "both sides folded; the local digest stays"))
        else:
            result.kept_local.append((path, "changed on both sides; the local copy stays"))
    return result
