"""Edit-time blocks, materialized: the block a file's first read or edit in a session gets
(gitvault.pathrecall.block), computed when the vault changes — by the same refresh as the
session start's recall block (gitvault.materialize.ready) — for the files agents were shown lately,
and stored per worktree with everything it was built from, so that the launcher's sh serves it
without Python while all of that still holds (gitvault/vault/launcher: the format, the sh).

Which files: those the sessions of the last SHOWN_DAYS were shown (their shown lists,
statedir.SHOWN_PATHS), newest first, at most MAX_PATHS: a file an agent was shown is one it
opens again. Any other file gets its block from Python, at the call.

A refresh builds again only what may have changed. A block is carried over from the last file
when nothing but commit notes entered the vault since, no amend or rebase replaced a commit,
the worktree's HEAD only moved forward, everything else the header names is as it was, and
neither its file nor any path its text names was touched by those commits or by that move of
HEAD (a commit that deletes a file changes the block of every file that names it), and that
move added no file (one that comes back is again a partner of the files it changed with, and
no carried block names it). Anything
else (a fold, a session, a sync of more than notes, a forget, a setting, a checkout) builds
every block again. Within a time budget: a refresh a command waits for spends BUDGET_S, the
detached drainer's BACKGROUND_BUDGET_S; blocks left out are Python's, at the call.

Besides the ready file's header, what the sh checks before it serves: the worktree's HEAD
reflog, info/exclude and the user's excludes file are not newer than the file, nor any
.gitignore on the path's way down from the worktree's top (git's ignore rules: a file git
ignores never gets a block). A file deleted in the worktree without a commit is not noticed: a
block may name it among the files that changed with it until the next refresh.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from gitvault.materialize.inputs import Seen, observe
from gitvault.named import NamedTuple
from gitvault.resolve import Location
from gitvault.vault import files, gitcmd, launcher, layout, statedir

MAX_PATHS = 256
SHOWN_DAYS = 30
BUDGET_S = 0.15  # a refresh a command waits for (save, fold, sync): the rest is the drainer's
BACKGROUND_BUDGET_S = 5.0
ATTEMPTS = 3


def path_for(loc: Location) -> Path:
    """The blocks file of the worktree at loc."""
    return loc.state_dir / statedir.READY / (statedir.READY_FILES + statedir.ready_key(loc))


class Previous(NamedTuple):
    """What the last blocks file was built from, and its blocks."""

    basis: str  # a digest of every input a change of which builds every block again
    vault: str  # the vault tip the blocks were built at
    head: str  # the worktree's HEAD commit then ("-": none)
    gone: int  # how many commits an amend or a rebase had replaced then
    blocks: dict[str, bytes]  # path -> its block line (#<length><TAB><block>)


def _previous(path: Path) -> Previous | None:
    try:
        data = files.read_regular(path, 64 * 1024 * 1024)
    except OSError:
        return None
    lines = data.split(b"\n")
    if len(lines) < 3 or lines[0] != launcher.FILES_FORMAT.encode():
        return None
    words = lines[1].decode("ascii", "replace").split(" ")
    if len(words) != 5 or words[0] != launcher.FILES_BASIS or not words[4].isdigit():
        return None
    try:
        end = lines.index(launcher.QUIET_END.encode(), 2)
    except ValueError:
        return None
    body = lines[end + 1 :]
    blocks = {
        body[i].decode("utf-8", "surrogateescape"): body[i + 1]
        for i in range(0, len(body) - 1, 2)
        if body[i + 1].startswith(b"#")
    }
    return Previous(words[1], words[2], words[3], int(words[4]), blocks)


def wanted(loc: Location, listing: tuple[str, bytes, bool] | None) -> list[str]:
    """The paths the sessions of the last SHOWN_DAYS were shown, newest first, that the path
    list knows and a blocks file can hold (at most MAX_PATHS)."""
    from gitvault.pathrecall import known

    folder = loc.state_dir / statedir.SHOWN_PATHS
    cutoff = time.time() - SHOWN_DAYS * 86400
    lists: list[tuple[float, str]] = []
    try:
        for entry in os.scandir(folder):
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.is_file(follow_symlinks=False) and info.st_mtime >= cutoff:
                lists.append((info.st_mtime, entry.path))
    except OSError:
        return []
    out: dict[str, None] = {}
    for _, found in sorted(lists, reverse=True):
        try:
            data = files.read_regular(Path(found), launcher.SHOWN_MAX_BYTES)
        except OSError:
            continue
        for raw in reversed(data.split(b"\n")):
            rel = raw.decode("utf-8", "surrogateescape")
            if not raw or rel in out or not known.listable(rel):
                continue
            if known.lists(listing, rel) is True:
                out[rel] = None
                if len(out) >= MAX_PATHS:
                    return list(out)
    return list(out)


def _not_ignored(workdir: Path, paths: list[str]) -> set[str]:
    """The paths git does not ignore (one `git check-ignore --stdin`; a failure: none)."""
    if not paths:
        return set()
    encoded = [p.encode("utf-8", "surrogateescape") for p in paths]
    proc = gitcmd.run_git(
        ["check-ignore", "--stdin", "-z"], workdir, check=False, input=b"\0".join(encoded) + b"\0"
    )
    if proc.returncode not in (0, 1):
        return set()
    ignored = set(proc.stdout.split(b"\0"))
    return {p for p, e in zip(paths, encoded, strict=True) if e not in ignored}


def _mtime(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def _gitignores(workdir: Path, paths: list[str]) -> list[Path]:
    """Every .gitignore on the paths' way down from the worktree's top (as the sh walks it)."""
    folders = {""}
    for rel in paths:
        parts = rel.split("/")[:-1]
        folders.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    return [workdir / f / ".gitignore" if f else workdir / ".gitignore" for f in sorted(folders)]


def _excludes_file(workdir: Path) -> Path:
    """The user's excludes file as git finds it (core.excludesFile, else XDG's git/ignore)."""
    proc = gitcmd.run_git(["config", "--path", "--get", "core.excludesFile"], workdir, check=False)
    named = proc.stdout.decode("utf-8", "surrogateescape").strip()
    if proc.returncode == 0 and named:
        return Path(os.path.abspath(workdir / named))
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.environ.get("HOME", "/"), ".config")
    return Path(os.path.abspath(os.path.join(xdg, "git", "ignore")))


def _head_commit(workdir: Path) -> str:
    proc = gitcmd.run_git(["rev-parse", "-q", "--verify", "HEAD^{commit}"], workdir, check=False)
    found = proc.stdout.decode("ascii", "replace").strip()
    return found if proc.returncode == 0 and found else "-"


def _moved(loc: Location, prev: Previous, tip: str, head: str, gone: int) -> set[str] | None:
    """The paths touched since the last file was built (None: build every block again)."""
    from gitvault.pathrecall.index import PathIndex

    assert loc.workdir is not None
    touched: set[str] = set()
    if prev.head != head:
        if prev.head == "-" or head == "-":
            return None
        if not gitcmd.is_ancestor(loc.workdir, prev.head, head):
            return None
        proc = gitcmd.run_git(
            ["-c", "core.quotePath=false", "diff", "--name-status", "--no-renames", "-z"]
            + [prev.head, head],
            loc.workdir,
            check=False,
        )
        if proc.returncode != 0:
            return None
        words = proc.stdout.split(b"\0")
        for status, name in zip(words[0::2], words[1::2], strict=False):
            if status[:1] not in (b"M", b"D", b"T"):
                return None  # a file added (or back): a partner no carried block names
            touched.add(name.decode("utf-8", "surrogateescape"))
    if prev.vault != tip:
        if not gitcmd.is_ancestor(loc.common_dir, prev.vault, tip):
            return None
        shas = []
        for change in gitcmd.raw_changes(loc.common_dir, f"{prev.vault}..{tip}"):
            sha = layout.note_sha(change.path)
            if sha is None or change.status != "A":
                return None  # a session, the digest, a setting, a tombstone: everything
            shas.append(sha)
        paths, now_gone = PathIndex(loc).touched_by(shas)
        if now_gone != gone:
            return None
        touched |= paths
    return touched


def _stale(rel: str, line: bytes, touched: set[str]) -> bool:
    """Whether a carried block may have changed: its file, or a path its text names, was
    touched (names compared as the block's JSON escaping writes them)."""
    if rel in touched:
        return True
    text = line.decode("utf-8", "surrogateescape")
    return any(json.dumps(p)[1:-1] in text for p in touched)


class _Inputs(NamedTuple):
    seen: Seen
    head: str
    watched: tuple[Path, ...]
    newest: int
    basis: str


def _observe(loc: Location, paths: list[str]) -> _Inputs | None:
    assert loc.workdir is not None
    seen = observe(loc)
    if seen is None:
        return None
    head = _head_commit(loc.workdir)
    own = (
        Path(os.path.abspath(loc.git_dir / "logs" / "HEAD")),
        Path(os.path.abspath(loc.common_dir / "info" / "exclude")),
        _excludes_file(loc.workdir),
    )
    watched = tuple(dict.fromkeys((*seen.watched, *own)))
    newest = max([seen.newest, *(_mtime(p) for p in own)])
    newest = max([newest, *(_mtime(p) for p in _gitignores(loc.workdir, paths))])
    from gitvault import __version__
    from gitvault.pathrecall.index import FORMAT

    basis = [
        launcher.FILES_FORMAT,
        __version__,
        FORMAT,
        seen.gen,
        seen.head,
        seen.branch,
        seen.agents,
        seen.private[1],
        seen.patterns,
        [str(p) for p in watched],
        seen.newest,
        _mtime(own[1]),
        _mtime(own[2]),
    ]
    digest = hashlib.sha256(json.dumps(basis).encode()).hexdigest()[:32]
    return _Inputs(seen, head, watched, newest, digest)


def build(
    loc: Location, *, wait: float = 0.0, budget: float = BUDGET_S
) -> tuple[bytes, int] | None:
    """The blocks file of the worktree at loc and the mtime it must carry; None when there is
    none to serve (nothing wanted, edit-time recall off, inputs that do not settle within WAIT
    seconds or keep moving, an index behind the vault)."""
    from gitvault.pathrecall import known
    from gitvault.pathrecall.block import LIMIT, edit_time_on, render
    from gitvault.pathrecall.index import PathIndex
    from gitvault.vault import origin
    from gitvault.vault.controls import neutralise_controls

    assert loc.workdir is not None
    started = time.monotonic()
    listing = known.read(loc.state_dir / statedir.KNOWN_PATHS)
    paths = wanted(loc, listing)
    if not paths:
        return None
    paths = [p for p in paths if p in _not_ignored(loc.workdir, paths)]
    prev = _previous(path_for(loc))
    for _ in range(ATTEMPTS):
        inputs = _observe(loc, paths)
        if inputs is None:
            return None
        seen = inputs.seen
        young = launcher.SETTLE_NS - (seen.at - inputs.newest)
        if young > 0:
            if young / 1e9 > wait:
                return None
            time.sleep(young / 1e9 + 0.05)
            wait -= young / 1e9
            continue
        index = PathIndex(loc, seen.branch)
        tips = index.tips()
        tip = tips.get(index.ref, "")
        if not tip or index.marks() != tips or seen.vault[1] not in (None, tip):
            return None  # the index is behind the vault: its updater refreshes again
        if not edit_time_on(loc, seen.branch):
            return None
        gone = index.touched_by([])[1]
        touched = (
            _moved(loc, prev, tip, inputs.head, gone)
            if prev is not None and prev.basis == inputs.basis
            else None
        )
        carried = prev.blocks if prev is not None and touched is not None else {}
        entries: dict[str, bytes] = {}
        todo = []
        for rel in paths:
            line = carried.get(rel)
            if line is not None and touched is not None and not _stale(rel, line, touched):
                entries[rel] = line
            else:
                todo.append(rel)
        origins = origin.load(loc)
        for rel, found in index.facts_of(todo):
            if time.monotonic() - started > budget:
                break
            if found is None:
                continue
            text = neutralise_controls(render(found, loc.workdir, LIMIT, origins))
            entries[rel] = f"#{len(text)}\t{json.dumps(text)[1:-1]}".encode()
        after = _observe(loc, paths)
        if after is None or after.basis != inputs.basis or after.head != inputs.head:
            continue
        if after.seen.key() != seen.key() or after.newest != inputs.newest:
            continue
        head = launcher.FilesHead(
            basis=f"{inputs.basis} {tip} {inputs.head} {gone}",
            gen=seen.gen,
            workdir=loc.workdir,
            head=(Path(os.path.abspath(loc.git_dir / "HEAD")), seen.head),
            vault=seen.vault,
            private=seen.private,
            patterns=seen.patterns,
            agents=seen.agents,
            env=seen.env,
            watched=inputs.watched,
        )
        data = launcher.files_text(head, [(p, entries[p]) for p in paths if p in entries])
        return (data, inputs.newest) if data is not None else None
    return None


def refresh(loc: Location, *, wait: float = 0.0, budget: float = BUDGET_S) -> bool:
    """Build the worktree's blocks file again (or remove it: a file that cannot be built
    again must not keep text a forget or a redaction took out of the vault). Called under the
    ready folder's lock (gitvault.materialize.ready.refresh). Whether one is served now."""
    where = path_for(loc)
    built = build(loc, wait=wait, budget=budget)
    if built is None:
        where.unlink(missing_ok=True)
        return False
    files.atomic_write(where, built[0], mtime_ns=built[1])
    return True
