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

from gitvault.named import NamedTuple
from gitvault.sync import incoming
from gitvault.vault import gitcmd, layout, origin


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
    blobs: dict[str, str] = field(default_factory=dict)  # path in changes → the remote's blob
    exact: bool = True  # every incoming change taken as it is: a fast-forward would do

    def lines(self) -> list[str]:
        out = [
            f"conflict: {shown(p)} changed on both sides; the remote's copy is {shown(to)}"
            for p, to in self.renamed
        ]
        out += [f"kept local {shown(p)}: {why}" for p, why in self.kept_local]
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


def shown(path: str) -> str:
    """A remote's file name as a record or a report can carry it: bytes that are not UTF-8
    and characters that are not printable written as escapes."""
    text = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


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


def arrivals(cwd: Path, local: str | None, remote: str, plan: Plan) -> list[origin.Incoming]:
    """The files the plan takes from the remote, with what each claims about who wrote it:
    the Saved-by / Clone trailers of the vault commit that added it on the remote (claims,
    shown as such). A note's commit author is not its writer: a teammate's backfill of
    pallets/click would otherwise read as thousands of clones of its contributors."""
    added = _trailers(cwd, merge_base(cwd, local, remote) if local else None, remote)
    out = []
    for path, data in plan.changes.items():
        if data is None or path == layout.CONFIG:
            continue
        source = next((p for p, copy in plan.renamed if copy == path), path)
        author, clone = added.get(source, ("", ""))
        out.append(origin.Incoming(path, plan.blobs.get(path, ""), author, clone))
    return out


def _trailers(cwd: Path, base: str | None, remote: str) -> dict[str, tuple[str, str]]:
    """path → (Saved-by, Clone) of the remote commit that added it, for sessions."""
    rng = [f"{base}..{remote}"] if base else [remote]
    proc = gitcmd.run_git(
        [
            "log",
            "--diff-filter=A",
            "--no-renames",
            "--name-only",
            "-z",
            "--format=%x01%B%x02",
            *rng,
            "--",
            f"{layout.SESSIONS}/",
        ],
        cwd,
        check=False,
    )
    out: dict[str, tuple[str, str]] = {}
    for record in proc.stdout.decode("utf-8", "replace").split("\x01")[1:]:
        body, _, names = record.partition("\x02")
        found = dict(
            (k.strip().lower(), v.strip())
            for k, _, v in (line.partition(":") for line in body.splitlines())
            if k.strip() in ("Saved-by", "Clone")
        )
        for name in names.strip("\0\n").split("\0"):
            name = name.strip("\n")
            if name and name not in out:
                out[name] = (found.get("saved-by", ""), found.get("clone", ""))
    return out


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
            result.quarantined.append(Quarantined(shown(path), d.new, why or "object missing"))
            result.exact = False
            continue
        if path == layout.CONFIG and local is not None:
            result.kept_local.append((path, "vault.toml differs; local wins"))
            result.exact = False
            continue
        if mine is None or mine == d.old:  # new on the remote, or unchanged here since the base
            result.changes[path] = data
            result.blobs[path] = d.new
            result.taken.append(path)
            continue
        result.exact = False
        if layout.session_slug(path) is not None or layout.is_pattern(path):
            copy = suffixed(path, data)
            result.changes[copy] = data
            result.blobs[copy] = d.new
            result.renamed.append((path, copy))
        elif path == layout.DIGEST:
            result.kept_local.append((path, "both sides folded; the local digest stays"))
        else:
            result.kept_local.append((path, "changed on both sides; the local copy stays"))
    return result
