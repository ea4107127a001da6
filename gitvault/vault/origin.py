"""Where a vault file came from: this clone, or another clone through a remote.

By design a teammate's sessions, notes and digest reach recall and the agent files; what must
never happen is that their text reads as this clone's own. The origin is known from this
clone's own record, never from the file: `gitvault sync` (and the adoption at install) records
each path it took from a remote, the remote and its URL, and what the file claims about its
author and clone, before the merge lands. The record is a snapshot (statedir.ORIGINS_FILE) and
a log of what was taken since (statedir.ORIGINS_LOG_FILE, appended to: a sync of 100 files into
a record of 100k costs what 100 cost); a review decision or the fold's mark rewrites the
snapshot whole, taking the log in (the snapshot names the log it took in, so a crash between
the two never replays it). A remote can forge front
matter, commit authors and messages, but not this record, so nothing it sends reads as local.
A path that is not on record is this clone's; the digest (one path every fold rewrites) is on
record only with the blob that came in, and so are the digest lines it held.

Review (`git config gitvault.syncReview true`): incoming files are recorded "held" and stay out
of recall, the fold, search and the agent files until `gitvault review accept`; "rejected"
ones never enter them.

Standard library only: recall (the session-start hook) reads it. The edit-time block and every
other reader use `Origins.of(path)` and `label(origin)`.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable
from pathlib import Path

from gitvault import lazyre
from gitvault.named import TYPE_CHECKING, NamedTuple
from gitvault.resolve import Location
from gitvault.vault import gitcmd, layout, statedir

if TYPE_CHECKING:
    from typing import Any


def sync_auto(cwd: Path) -> str:
    """sync.auto for the clone at cwd: `git config gitvault.syncAuto` when set; else
    vault.toml's [sync] auto — unless the vault was adopted from a remote, whose vault.toml
    cannot turn pushing on here (off until this clone sets gitvault.syncAuto). The shims' sync
    (pre-push) and the drainer after a merge or pull (post-merge) read it here."""
    local = gitcmd.config_get(cwd, layout.SYNC_AUTO_KEY)
    if local in layout.SYNC_AUTO_MODES:
        return local
    if gitcmd.config_get(cwd, layout.ADOPTED_KEY):
        return "off"
    text = gitcmd.run_git(
        ["cat-file", "blob", f"{layout.branch_ref(gitcmd.vault_branch(cwd))}:{layout.CONFIG}"],
        cwd,
        check=False,
    ).stdout.decode("utf-8", "replace")
    mode = str(layout.read_settings(text, "sync")["auto"])
    return mode if mode in layout.SYNC_AUTO_MODES else "off"


HELD = "held"
ACCEPTED = "accepted"
REJECTED = "rejected"
REVIEW_KEY = layout.SYNC_REVIEW_KEY  # a trust choice of this clone: git config, never vault.toml
_CITE = lazyre.compile(r"\((?:[cs]:[^()]*)\)\s*$")
_SPACE = lazyre.compile(r"\s+")


class Origin(NamedTuple):
    """A file that came from another clone. remote and url are this clone's record (how it
    came); author and clone are what the file itself claims (shown as claims)."""

    path: str
    remote: str
    url: str
    author: str
    clone: str
    review: str  # "" (no review asked), held, accepted, rejected
    at: int

    @property
    def hidden(self) -> bool:
        """Kept out of recall, the fold, search and the agent files."""
        return self.review in (HELD, REJECTED)


def label(origin: Origin | None) -> str:
    """A short mark for text from another clone ("" for this clone's own)."""
    if origin is None:
        return ""
    who = origin.author or "unknown author"
    via = f" on {origin.clone}" if origin.clone else ""
    state = f", {origin.review}" if origin.review else ""
    return f"[from another clone: {_plain(who)}{_plain(via)} via {_plain(origin.remote)}{state}]"


def _plain(text: str) -> str:
    """One line, no control characters, bounded: what a remote claims is shown, never obeyed."""
    cleaned = "".join(c if c.isprintable() else " " for c in text)
    return _SPACE.sub(" ", cleaned).strip()[:80]


def line_key(line: str) -> str:
    """A digest line's identity whatever its citations: what carries a remote digest's lines
    through a later local fold that keeps them."""
    text = _CITE.sub("", line.strip()).strip()
    import hashlib  # here: OpenSSL's load costs every hook that only reads origins ~3 ms

    return hashlib.sha256(_SPACE.sub(" ", text).encode()).hexdigest()[:20]


class Origins:
    """The record of one clone (empty when nothing ever came from a remote)."""

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        data = data or {}
        files = data.get("files")
        self.files: dict[str, dict[str, Any]] = files if isinstance(files, dict) else {}
        lines = data.get("digest_lines")
        self.digest_lines: dict[str, str] = lines if isinstance(lines, dict) else {}
        self.log = ""  # the id of the log replayed on this record ("" none)

    def take(self, entry: dict[str, Any]) -> None:
        """Replay one entry of the log: a file taken (a path on record keeps its review
        decision), or a digest line's first remote."""
        line = entry.get("line")
        if isinstance(line, str):
            self.digest_lines.setdefault(line, str(entry.get("remote") or "?"))
            return
        path = entry.get("path")
        if not isinstance(path, str):
            return
        before = self.files.get(path)
        decided = before.get("review") if isinstance(before, dict) else None
        taken = {k: v for k, v in entry.items() if k != "path"}
        if decided in (ACCEPTED, REJECTED):
            taken["review"] = decided
        self.files[path] = taken

    def __bool__(self) -> bool:
        return bool(self.files)

    def of(self, path: str, blob: str | None = None) -> Origin | None:
        """The origin of the file at path (None: this clone's own). For the digest, which
        every fold rewrites, only the blob that came in is another clone's."""
        entry = self.files.get(path)
        if not isinstance(entry, dict):
            return None
        if path == layout.DIGEST and blob is not None and entry.get("blob") != blob:
            return None
        return Origin(
            path,
            str(entry.get("remote") or "?"),
            str(entry.get("url") or ""),
            str(entry.get("author") or ""),
            str(entry.get("clone") or ""),
            str(entry.get("review") or ""),
            int(entry.get("at") or 0),
        )

    def of_cite(self, cite: str) -> Origin | None:
        """The origin of the item a citation names (s:<slug>, c:<sha prefix>)."""
        kind, _, ident = cite.partition(":")
        if kind == "s":
            return self.of(layout.session_path(ident))
        if kind == "c" and len(ident) >= 7:
            for path in self._notes_by_prefix().get(ident[:7], []):
                sha = layout.note_sha(path)
                if sha is not None and sha.startswith(ident):
                    return self.of(path)
        return None

    def _notes_by_prefix(self) -> dict[str, list[str]]:
        if not hasattr(self, "_prefix"):
            index: dict[str, list[str]] = {}
            for path in self.files:
                sha = layout.note_sha(path)
                if sha is not None:
                    index.setdefault(sha[:7], []).append(path)
            self._prefix = index
        return self._prefix

    def line_from_remote(self, line: str) -> str | None:
        """The remote a digest line first came in with (a remote's digest), or None."""
        return self.digest_lines.get(line_key(line))

    def of_line(self, line: str, cited: list[str], local: Collection[str] = ()) -> Origin | None:
        """Another clone's origin a digest line rests on, or None: it came in with a remote's
        digest (whatever it cites, since a remote can cite anything), or every item it cites
        came from another clone. Accepted when what it rests on was accepted. `local`: cites
        of commits this repository holds (a teammate's note of one is checkable here with
        `git show`, as the commit's own message is in this clone's history)."""
        remote = self.digest_lines.get(line_key(line))
        if remote is not None:
            digest = self.files.get(layout.DIGEST)
            review = str(digest.get("review") or "") if isinstance(digest, dict) else ""
            return Origin(layout.DIGEST, remote, "", "", "", review, 0)
        found = [None if c in local else self.of_cite(c) for c in cited]
        if not cited or not all(found):
            return None
        origins = [o for o in found if o is not None]
        open_ = [o for o in origins if o.review != ACCEPTED]
        if open_ and all(o.hidden for o in origins):
            return open_[0]
        return next((o for o in open_ if not o.hidden), origins[0])

    def waiting_for_fold(self) -> list[str]:
        """Items accepted after the fold passed them by (held then): the next fold reads them."""
        return sorted(
            p
            for p, e in self.files.items()
            if isinstance(e, dict) and e.get("review") == ACCEPTED and e.get("unfolded")
        )

    def held(self) -> list[Origin]:
        return [o for p in sorted(self.files) if (o := self.of(p)) and o.review == HELD]

    def as_json(self) -> dict[str, Any]:
        return {"files": self.files, "digest_lines": self.digest_lines}


def load(loc: Location) -> Origins:
    """The record: the snapshot, and the log replayed on it unless the snapshot took it in.
    The log is read first: a rewrite in between leaves a snapshot that names it."""
    log = statedir.ORIGINS_LOG_FILE.read(loc)
    data = statedir.ORIGINS_FILE.read(loc)
    current = Origins(data)
    if log is not None and log[0] and (data or {}).get(_TOOK_IN) != log[0]:
        for entry in log[1]:
            current.take(entry)
        current.log = log[0]
    return current


_TOOK_IN = "took_in"  # the snapshot's key: the id of the last log it took in


def _rewrite(loc: Location, current: Origins) -> None:
    """The snapshot rewritten whole, taking in the log that `current` replayed (held under
    the record's lock: no append comes in between)."""
    if statedir.ORIGINS_FILE.write(loc, {**current.as_json(), _TOOK_IN: current.log}):
        statedir.ORIGINS_LOG_FILE.drop(loc)


def solo(loc: Location) -> bool:
    """Whether this clone's vault can hold nothing another clone wrote: no remote vault was
    ever fetched (sync's tracking refs, a remote-tracking branch of the vault's name that
    `git clone` or `git checkout vault` brings), adopted or set as the vault branch's upstream,
    and the record of what came from where is empty. Only then may a reader take a commit
    gitvault's committer made for this clone's own (the committer is forgeable, and the record
    can be lost or unreadable): a check for what it costs to trust, failing towards distrust."""
    path = statedir.ORIGINS_FILE.path(loc)
    if path.exists() or path.is_symlink():
        recorded = statedir.ORIGINS_FILE.read(loc)
        if recorded is None or Origins(recorded).files or Origins(recorded).digest_lines:
            return False
    log = statedir.ORIGINS_LOG_FILE.read(loc)
    if log is None or log[1]:
        return False
    cwd = loc.common_dir
    branch = gitcmd.vault_branch(cwd)
    if gitcmd.config_get(cwd, layout.ADOPTED_KEY) or gitcmd.config_get(
        cwd, f"branch.{branch}.remote"
    ):
        return False
    refs = gitcmd.run_git(
        ["for-each-ref", "--format=%(refname)", layout.TRACKING_PREFIX, "refs/remotes/"],
        cwd,
        check=False,
    ).stdout.decode("utf-8", "replace")
    for ref in refs.splitlines():
        if ref.startswith(layout.TRACKING_PREFIX) or ref.endswith("/" + branch):
            return False
    return True


class Incoming(NamedTuple):
    """One file sync takes from a remote."""

    path: str
    blob: str
    author: str  # as the file claims (front matter saved_by), "" when it claims nothing
    clone: str


def record(
    loc: Location,
    remote: str,
    url: str,
    files: Iterable[Incoming],
    *,
    review: bool,
    digest_lines: Iterable[str] = (),
) -> None:
    """Remember files taken from a remote (called under the sync lock, before the merge is
    published: a crash in between over-marks, never under-marks). A path already on record
    keeps its review decision."""
    with locked(loc):
        _record(loc, remote, url, files, review, digest_lines)


def locked(loc: Location) -> Any:
    """Syncs of different remotes run at once: the record is read and rewritten under a
    short lock of its own (a redaction rewriting the state files holds it too, so that no
    record a sync appends meanwhile is lost)."""
    from gitvault.vault.locking import file_lock

    statedir.ensure(loc)
    return file_lock(loc.state_dir / statedir.SYNC_LOCK, block=True, timeout=30.0)


def _record(
    loc: Location,
    remote: str,
    url: str,
    files: Iterable[Incoming],
    review: bool,
    digest_lines: Iterable[str],
) -> None:
    now = int(time.time())
    entries: list[dict[str, Any]] = [
        {
            "path": item.path,
            "remote": remote,
            "url": url,
            "blob": item.blob,
            "author": item.author[:200],
            "clone": item.clone[:200],
            "review": HELD if review else "",  # a decision on record is kept (Origins.take)
            "at": now,
        }
        for item in files
    ]
    entries += [{"line": line_key(line), "remote": remote} for line in digest_lines]
    if not entries:
        return
    if not statedir.ORIGINS_FILE.path(loc).is_file():  # it stands once anything is on record
        statedir.ORIGINS_FILE.write(loc, Origins().as_json())
    try:
        statedir.ORIGINS_LOG_FILE.append(loc, entries)
    except OSError:  # the log cannot be appended to: the snapshot takes it all in
        current = load(loc)
        for entry in entries:
            current.take(entry)
        _rewrite(loc, current)


def decide(loc: Location, paths: Iterable[str], decision: str) -> list[str]:
    """Accept or reject files on record; the paths changed."""
    assert decision in (ACCEPTED, REJECTED)
    with locked(loc):
        return _decide(loc, paths, decision)


def _decide(loc: Location, paths: Iterable[str], decision: str) -> list[str]:
    current = load(loc)
    changed = []
    for path in paths:
        entry = current.files.get(path)
        if isinstance(entry, dict) and entry.get("review") != decision:
            entry["unfolded"] = entry.get("review") == HELD and decision == ACCEPTED
            entry["review"] = decision
            entry["decided_at"] = int(time.time())
            changed.append(path)
    if changed:
        _rewrite(loc, current)
    return changed


def folded(loc: Location, paths: Iterable[str]) -> None:
    """The fold read these accepted items: they no longer wait for one."""
    with locked(loc):
        current = load(loc)
        changed = False
        for path in paths:
            entry = current.files.get(path)
            if isinstance(entry, dict) and entry.pop("unfolded", None) is not None:
                changed = True
        if changed:
            _rewrite(loc, current)


def claims(text: str) -> tuple[str, str]:
    """(author, clone) a vault file claims in its front matter (saved_by, clone)."""
    head = text[:4000]
    if not head.startswith("---"):
        return "", ""
    found = {}
    for line in head.splitlines()[1:40]:
        if line.strip() == "---":
            break
        key, _, value = line.partition(":")
        if key.strip() in ("saved_by", "clone"):
            found[key.strip()] = value.strip().strip('"')
    return found.get("saved_by", ""), found.get("clone", "")
