"""The mined history: every noted commit as the miner (gitvault.fold.mine) and the truth model
(gitvault.fold.truth) read it, with the counts the miner states, kept in a local cache
(statedir.MINED, SQLite) that a fold or `gitvault verify` brings up to the vault's tip by
reading only the notes added since: what a fold costs follows what is new, not the history.

What it holds is a function of the notes at the tip (and of fold.horizon_days):
- the record: every note that is not forgotten (a tombstone), not held for review or rejected
  (vault/origin) and not past the horizon — its commit's subject, files, date, parents, what
  it replaces and reverts (`Record`, what the truth model reads);
- the counted commits, the miner's: no merge commit, no commit a rewrite replaced (a note's
  `replaces`), one commit per change (copies with the same subject and files count once: the
  newest by date, then ancestry depth among the notes, then sha);
- counts over the counted commits (files, pairs of files, areas and their changelog
  companions, tests, fixes) over the whole history, so a mined line's numbers are what
  `git log` shows.

Brought forward, the notes added since the cache's mark are inserted: their counts are added,
and a commit they replace or shadow leaves the counts. Anything else — a rewritten history
(redact), a note deleted or changed, a tombstone that buries a note it holds or one that is
removed, a changed review decision, a horizon that moved, a note that is the ancestor of one
it holds (depths would change), a cache of another format or one that cannot be read — makes
it rebuild from the tip's tree. Either way it equals a rebuild at the same tip.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import zlib
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass
from functools import cached_property
from itertools import islice
from pathlib import Path

from gitvault.errors import GitvaultError
from gitvault.fold import items as items_mod
from gitvault.fold import kinds
from gitvault.fold.items import BODY_CHARS, Item, folder_time
from gitvault.memory import cites
from gitvault.named import NamedTuple
from gitvault.resolve import Location
from gitvault.vault import frontmatter, gitcmd, layout, origin, statedir
from gitvault.vault.files import ready_for_sqlite
from gitvault.vault.locking import file_lock
from gitvault.vault.notebody import parse_body
from gitvault.vault.store import Vault
from gitvault.vault.times import parse_time

FORMAT = "1"
DAY = 86_400
LOCK_TIMEOUT = 120.0
READ_CHUNK = 4000  # note blobs per `git cat-file --batch`
PAGE = 200  # rows per query when walking counted commits newest first
COUNT_KEYS = 50_000  # distinct counts and paths a rebuild sums in memory before SQLite adds them
_KEYS = frozenset({"kind", "sha", "parents", "replaces", "branch", "worktree", "committed"})
_NEWEST = "ORDER BY when_ DESC, depth DESC, sha DESC"
_OLDEST = "ORDER BY when_, depth, sha"

_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    sha TEXT NOT NULL,
    subject TEXT NOT NULL,
    subject_key INTEGER NOT NULL,
    first_line TEXT NOT NULL,
    reason TEXT NOT NULL,
    breaking TEXT,
    reverts TEXT NOT NULL,
    quoted TEXT,
    files TEXT NOT NULL,
    files_key INTEGER NOT NULL,
    nfiles INTEGER NOT NULL,
    tests INTEGER NOT NULL,
    fix INTEGER NOT NULL,
    copy_key INTEGER NOT NULL,
    when_ INTEGER NOT NULL,
    depth INTEGER NOT NULL,
    branch TEXT NOT NULL,
    worktree TEXT NOT NULL,
    merge INTEGER NOT NULL,
    parents TEXT NOT NULL,
    replaces TEXT NOT NULL,
    past INTEGER NOT NULL,
    counted INTEGER NOT NULL
);
CREATE TABLE parents (parent INTEGER NOT NULL);
CREATE TABLE replaced (old TEXT NOT NULL, by TEXT NOT NULL, path TEXT NOT NULL);
CREATE TABLE files (note INTEGER NOT NULL, path TEXT NOT NULL);
CREATE TABLE counts (
    kind TEXT NOT NULL, a TEXT NOT NULL, b TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (kind, a, b)
) WITHOUT ROWID;
CREATE TABLE ever (path TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE present (sha TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE patch_ids (sha TEXT PRIMARY KEY, pid TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE on_head (sha TEXT PRIMARY KEY) WITHOUT ROWID;
"""
_INDEXES = """
CREATE INDEX notes_path ON notes(path);
CREATE INDEX notes_sha ON notes(sha);
CREATE INDEX notes_order ON notes(counted, when_, depth, sha);
CREATE INDEX notes_copy ON notes(copy_key);
CREATE INDEX notes_subject ON notes(subject_key);
CREATE INDEX notes_files ON notes(files_key);
CREATE INDEX parents_parent ON parents(parent);
CREATE INDEX replaced_old ON replaced(old);
CREATE INDEX files_path ON files(path);
CREATE INDEX files_note ON files(note);
CREATE INDEX counts_rank ON counts(kind, n);
"""
_NOTE_COLUMNS = (
    "path, sha, subject, subject_key, first_line, reason, breaking, reverts, quoted, files,"
    " files_key, nfiles, tests, fix, copy_key, when_, depth, branch, worktree,"
    " merge, parents, replaces, past, counted"
)


class HistoryError(GitvaultError):
    pass


class _Rebuild(Exception):
    """The cache cannot be brought forward: rebuilt from the tip (the reason says why)."""


# --------------------------------------------------------------------------- one note


class Note(NamedTuple):
    """One note as the mined history keeps it."""

    path: str
    sha: str  # from the front matter, lower case
    subject: str
    first_line: str  # the message's first line
    reason: str  # a revert's first line saying why
    breaking: str | None  # what a BREAKING CHANGE footer or a `type!:` subject says
    reverts: tuple[str, ...]  # the shas its "This reverts commit …" lines name, as written
    quoted: str | None  # the subject a `Revert "…"` quotes, when it names no sha
    files: tuple[str, ...]  # as the note lists them (a rename: "old => new")
    names: tuple[str, ...]  # the files as named after the commit (a rename's new name)
    when: int  # the commit date (0 when the note has none)
    branch: str
    worktree: str
    parents: tuple[str, ...]
    replaces: tuple[str, ...]

    @property
    def merge(self) -> bool:
        return len(self.parents) > 1

    @property
    def copy_key(self) -> str:
        return copy_key(self.subject, self.names)


def copy_key(subject: str, names: Iterable[str]) -> str:
    """Copies of one change (a rebase's, a cherry-pick's) share the subject and files (no
    line of a note holds a line break: one a field)."""
    return "\n".join((subject, *names))


def _hash(text: str) -> int:
    """A 63-bit key for an index; what it finds is compared in full (two texts may share one)."""
    data = text.encode("utf-8", "surrogatepass")
    return (zlib.crc32(data) << 31) ^ zlib.adler32(data)


def _sha_key(sha: str) -> int:
    """A commit's key in the parents index (a collision only costs a needless rebuild)."""
    try:
        return int(sha[:15], 16)
    except ValueError:
        return _hash(sha)


def _join(values: Iterable[str]) -> str:
    return "\n".join(values)


def _split(text: object) -> tuple[str, ...]:
    return tuple(str(text).split("\n")) if text else ()


def _shas(value: object) -> tuple[str, ...]:
    """A front-matter list of commit ids (parents, replaces), lower case; anything that is no
    id is left out (it names no commit, and the cache joins these with line breaks)."""
    if not isinstance(value, list):
        return ()
    return tuple(v.lower() for v in value if isinstance(v, str) and v.isalnum())


def parse_note(path: str, raw: str) -> Note | None:
    """A note file as the miner reads it (None: not a note)."""
    if not layout.note_sha(path):
        return None
    meta, body = frontmatter.parse(raw, _KEYS)
    if meta.get("kind") != "note":
        return None
    parsed = parse_body(body[:BODY_CHARS])
    subject, message, files = parsed.subject, parsed.message, parsed.files
    named = tuple(kinds.REVERT_BODY.findall(message))
    quoted = None if named else kinds.quoted_revert(subject)
    moment = parse_time(meta.get("committed"))
    return Note(
        path=path,
        sha=str(meta.get("sha") or "").lower(),
        subject=subject,
        first_line=message.split("\n", 1)[0] if message else "",
        reason=kinds.revert_reason(message) if named or quoted is not None else "",
        breaking=kinds.breaking_change(subject, message),
        reverts=named,
        quoted=quoted,
        files=files,
        names=tuple(kinds.current_name(f) for f in files),
        when=0 if moment is None else int(moment),
        branch=str(meta.get("branch") or ""),
        worktree=str(meta.get("worktree") or ""),
        parents=_shas(meta.get("parents")),
        replaces=_shas(meta.get("replaces")),
    )


def contributions(
    subject: str, names: tuple[str, ...], fix: bool | None = None
) -> list[tuple[str, str, str]]:
    """What a counted commit (its subject, its files as named after it) adds to the counts
    the miner reads (gitvault.fold.mine): (kind, a, b) once per count it raises. `fix`: the
    caller's is_counted_fix, when it has it."""
    out: list[tuple[str, str, str]] = []
    kind = [kinds.classify(f) for f in names]
    small = len(names) <= kinds.MAX_FILES
    if names and small:  # co-change: bulk commits are no evidence
        out.append(("usable", "", ""))
        comps = sorted({k.companion for k in kind if k.changelog})
        areas = sorted({k.area for f, k in zip(names, kind, strict=True) if k.code and "/" in f})
        out += [("comp", c, "") for c in comps]
        out += [("area", a, "") for a in areas]
        out += [("comp_area", c, a) for c in comps for a in areas]
        plain = sorted({f for f, k in zip(names, kind, strict=True) if not k.changelog})
        out += [("file", f, "") for f in plain]
        if len(plain) <= kinds.MAX_PAIR_FILES:
            out += [("pair", a, b) for i, a in enumerate(plain) for b in plain[i + 1 :]]
    tests = sorted({f for f, k in zip(names, kind, strict=True) if k.test})
    for a in sorted({k.area for k in kind if k.code}):
        out.append(("touched", a, ""))
        if tests:
            out.append(("tested", a, ""))
    out += [("test", f, "") for f in tests]
    if small:
        if tests:
            out += [("tested_by", code, test) for code, test in kinds.tested_module(names)]
        if counted_fix(subject, names) if fix is None else fix:
            out += [("fix", f, "") for f, k in zip(names, kind, strict=True) if k.code]
    return out


def counted_fix(subject: str, names: tuple[str, ...]) -> bool:
    """A fix the hot spots count: a fix's subject, and not a bulk commit."""
    return len(names) <= kinds.MAX_FILES and kinds.is_fix(subject)


# --------------------------------------------------------------------------- what it reads


@dataclass(frozen=True)
class Commit:
    """A counted commit, as the miner reads it."""

    sha: str
    cite: str
    subject: str
    first_line: str
    reason: str
    breaking: str | None
    files: tuple[str, ...]  # as named after the commit (a rename's new name)
    when: int
    branch: str
    worktree: str
    depth: int = 0  # ancestry depth among the notes: orders commits made in the same second

    @property
    def order(self) -> tuple[int, int, str]:
        return (self.when, self.depth, self.sha)


@dataclass(frozen=True)
class Noted:
    """One noted commit as the truth model needs it."""

    sha: str
    subject: str
    files: tuple[str, ...]  # as the note lists them (a rename: "old => new")
    when: int
    reverts_named: tuple[str, ...] = ()  # the shas its "This reverts commit …" lines name
    merge: bool = False
    depth: int = 0  # ancestry depth among the notes: orders commits made in the same second

    @property
    def order(self) -> tuple[int, int]:
        return (self.when, self.depth)

    @property
    def reverts_quoted(self) -> str | None:
        """The subject its `Revert "…"` quotes, when it names no sha."""
        return None if self.reverts_named else kinds.quoted_revert(self.subject)


_COMMIT_SELECT = (
    "SELECT sha, path, subject, first_line, reason, breaking, files, when_, branch, worktree,"
    " depth FROM notes"
)
_NOTED_SELECT = "SELECT sha, subject, files, when_, reverts, merge, depth FROM notes"


def _commit(row: tuple[object, ...]) -> Commit:
    sha, path, subject, first, reason, breaking, files, when, branch, worktree, depth = row
    named = layout.note_sha(str(path)) or ""
    return Commit(
        sha=str(sha),
        cite=f"c:{named[:7]}",
        subject=str(subject),
        first_line=str(first),
        reason=str(reason),
        breaking=None if breaking is None else str(breaking),
        files=tuple(kinds.current_name(f) for f in _split(files)),
        when=int(str(when)),
        branch=str(branch),
        worktree=str(worktree),
        depth=int(str(depth)),
    )


def _noted(row: tuple[object, ...]) -> Noted:
    sha, subject, files, when, reverts, merge, depth = row
    return Noted(
        sha=str(sha),
        subject=str(subject),
        files=_split(files),
        when=int(str(when)),
        reverts_named=_split(reverts),
        merge=bool(merge),
        depth=int(str(depth)),
    )


def dirs_of(files: Iterable[str]) -> frozenset[str]:
    out: set[str] = set()
    for path in files:
        parts = path.split("/")
        for i in range(1, len(parts)):
            out.add("/".join(parts[:i]))
    return frozenset(out)


class _BySha(Mapping[str, Noted]):
    """The record's notes by full sha, read as asked."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._seen: dict[str, Noted | None] = {}

    def _get(self, sha: str) -> Noted | None:
        if sha not in self._seen:
            row = self._conn.execute(
                f"{_NOTED_SELECT} WHERE sha = ? AND past = 0 ORDER BY id LIMIT 1", (sha,)
            ).fetchone()
            self._seen[sha] = _noted(row) if row else None
        return self._seen[sha]

    def __getitem__(self, sha: str) -> Noted:
        found = self._get(sha) if isinstance(sha, str) else None
        if found is None:
            raise KeyError(sha)
        return found

    def __contains__(self, sha: object) -> bool:
        return isinstance(sha, str) and self._get(sha) is not None

    def __iter__(self) -> Iterator[str]:
        for (sha,) in self._conn.execute("SELECT DISTINCT sha FROM notes WHERE past = 0"):
            yield str(sha)

    def __len__(self) -> int:
        row = self._conn.execute("SELECT COUNT(DISTINCT sha) FROM notes WHERE past = 0")
        return int(row.fetchone()[0])


class Record:
    """What the notes say about the project's commits: who reverted what, which paths the
    history ever had (the truth model's side of history)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self.by_sha: Mapping[str, Noted] = _BySha(conn)

    def resolve(self, ident: str) -> str | None:
        """The full sha of a noted commit a (short) sha names, when exactly one matches."""
        ident = ident.lower()
        if ident in self.by_sha:
            return ident
        rows = self._conn.execute(
            "SELECT DISTINCT sha FROM notes WHERE past = 0 AND sha >= ? AND sha < ? LIMIT 2",
            (ident, ident + "\uffff"),
        ).fetchall()
        return str(rows[0][0]) if len(rows) == 1 else None

    @cached_property
    def reverts(self) -> dict[str, tuple[str, ...]]:
        """revert sha → the commits it reverts (full shas when noted, else as written)."""
        out: dict[str, tuple[str, ...]] = {}
        rows = self._conn.execute(
            "SELECT sha, reverts, quoted, when_, depth FROM notes WHERE past = 0 AND merge = 0"
            " AND (reverts != '' OR quoted IS NOT NULL) ORDER BY id"
        ).fetchall()
        for sha, named, quoted, when, depth in rows:
            shas = _split(named)
            if shas:
                out[sha] = tuple(dict.fromkeys(self.resolve(n) or n.lower() for n in shas))
                continue
            older = [
                (int(w), int(d), int(i), str(s))
                for s, subject, w, d, i in self._conn.execute(
                    "SELECT sha, subject, when_, depth, id FROM notes WHERE past = 0"
                    " AND subject_key = ? AND (when_ < ? OR (when_ = ? AND depth < ?))",
                    (_hash(quoted), when, when, depth),
                )
                if kinds.PR_SUFFIX.sub("", str(subject)) == quoted
            ]
            out[sha] = (max(older)[3],) if older else ()
        return out

    @cached_property
    def reverted_by(self) -> dict[str, tuple[str, ...]]:
        """commit → the noted reverts that revert it, oldest first."""
        found: dict[str, list[Noted]] = defaultdict(list)
        for revert, targets in self.reverts.items():
            for target in targets:
                found[target].append(self.by_sha[revert])
        return {
            t: tuple(r.sha for r in sorted(rs, key=lambda r: r.when)) for t, rs in found.items()
        }

    @cached_property
    def ever_paths(self) -> frozenset[str]:
        return frozenset(str(p) for (p,) in self._conn.execute("SELECT path FROM ever"))

    @cached_property
    def ever_dirs(self) -> frozenset[str]:
        return dirs_of(self.ever_paths)

    @cached_property
    def ever_basenames(self) -> frozenset[str]:
        return frozenset(p.rsplit("/", 1)[-1] for p in self.ever_paths)

    def later_with_files(self, files: Iterable[str], after: Noted) -> list[Noted]:
        """Noted commits after `after` touching exactly these files, oldest first."""
        want = sorted(files)
        rows = self._conn.execute(
            f"{_NOTED_SELECT} WHERE past = 0 AND merge = 0 AND files_key = ?"
            " AND (when_ > ? OR (when_ = ? AND depth > ?)) ORDER BY when_, depth, id",
            (_files_key(want), after.when, after.when, after.depth),
        ).fetchall()
        return [n for n in map(_noted, rows) if sorted(n.files) == want]


def _files_key(files: Iterable[str]) -> int:
    return _hash(_join(sorted(files)))


class View:
    """The mined history at one vault commit (`mark`), read through one connection."""

    def __init__(
        self, conn: sqlite3.Connection, meta: Mapping[str, str], owner: History | None = None
    ) -> None:
        self._conn = conn
        self._owner = owner
        self.mark = meta["mark"]
        cutoff = meta.get("cutoff", "None")
        self.cutoff = None if cutoff == "None" else int(cutoff)  # fold.horizon_days, as a date
        self._head = meta.get("head", "")
        self.record = Record(conn)
        self._learned: dict[str, str] = {}
        self._on_head: tuple[str, set[str]] | None = None
        self._on_head_new = False
        self._release = _release_memo(meta.get("release", ""))
        self._release_new = False

    def close(self) -> None:
        """Close the connection; what was learned meanwhile is kept for the next reader."""
        self._conn.close()
        if self._owner is not None and (self._learned or self._on_head_new or self._release_new):
            self._owner.remember(
                self._learned,
                self._on_head if self._on_head_new else None,
                self._release if self._release_new else None,
            )
            self._learned, self._on_head_new, self._release_new = {}, False, False

    # ------------------------------------------------------------ what git said before
    # Facts about project commits that do not change (a commit's patch-id) or that hold as
    # long as HEAD only moves forward (a commit is on HEAD's history): asked of git once,
    # kept in the cache (a rebuild forgets them).

    def patch_id(self, sha: str) -> str | None:
        """The patch-id remembered for a commit ("" when it has none), None if unknown."""
        if sha in self._learned:
            return self._learned[sha]
        row = self._conn.execute("SELECT pid FROM patch_ids WHERE sha = ?", (sha,)).fetchone()
        return None if row is None else str(row[0])

    def learn_patch_id(self, sha: str, pid: str) -> None:
        self._learned[sha] = pid

    def on_head(self, head: str, is_ancestor: Callable[[str, str], bool]) -> set[str]:
        """Commits known to be on `head`'s history: those remembered for an earlier HEAD that
        `head` descends from."""
        if self._on_head is not None and self._on_head[0] == head:
            return self._on_head[1]
        known: set[str] = set()
        if self._head and (self._head == head or is_ancestor(self._head, head)):
            known = {str(s) for (s,) in self._conn.execute("SELECT sha FROM on_head")}
        self._on_head = (head, known)
        return known

    def learn_on_head(self, head: str, shas: Iterable[str]) -> None:
        if self._on_head is None or self._on_head[0] != head:
            self._on_head = (head, set())
        self._on_head[1].update(shas)
        self._on_head_new = True

    def release(self) -> ReleaseMemo | None:
        """Where a release's commit met HEAD, as a fold last found it (see ReleaseMemo)."""
        return self._release

    def learn_release(self, memo: ReleaseMemo) -> None:
        self._release, self._release_new = memo, True

    def __enter__(self) -> View:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ------------------------------------------------------------ counted commits

    def newest(self, n: int) -> list[Commit]:
        """The newest n counted commits, oldest first."""
        rows = self._conn.execute(
            f"{_COMMIT_SELECT} WHERE counted = 1 {_NEWEST} LIMIT ?", (n,)
        ).fetchall()
        return [_commit(r) for r in reversed(rows)]

    def since(self, when: int) -> list[Commit]:
        """The counted commits after `when`, oldest first."""
        rows = self._conn.execute(
            f"{_COMMIT_SELECT} WHERE counted = 1 AND when_ > ? {_OLDEST}", (when,)
        ).fetchall()
        return [_commit(r) for r in rows]

    def newest_first(self, where: str = "") -> Iterator[Commit]:
        """Counted commits newest first (with `where`, a fixed SQL condition), read in pages:
        a caller that stops early reads little."""
        cond = f"counted = 1 AND ({where})" if where else "counted = 1"
        last: tuple[int, int, str] | None = None
        while True:
            if last is None:
                rows = self._conn.execute(
                    f"{_COMMIT_SELECT} WHERE {cond} {_NEWEST} LIMIT ?", (PAGE,)
                ).fetchall()
            else:
                when, depth, sha = last
                rows = self._conn.execute(
                    f"{_COMMIT_SELECT} WHERE {cond} AND (when_ < ? OR (when_ = ? AND"
                    " (depth < ? OR (depth = ? AND sha < ?)))) "
                    f"{_NEWEST} LIMIT ?",
                    (when, when, depth, depth, sha, PAGE),
                ).fetchall()
            for row in rows:
                commit = _commit(row)
                yield commit
                last = commit.order
            if len(rows) < PAGE:
                return

    def touching(self, *paths: str, fixes: bool = False) -> list[Commit]:
        """The counted commits that changed every one of these files (with `fixes`: only the
        fixes hot spots count), oldest first."""
        if not paths:
            return []
        inner = " INTERSECT ".join("SELECT note FROM files WHERE path = ?" for _ in paths)
        ids = [int(i) for (i,) in self._conn.execute(inner, paths)]
        found: list[Commit] = []
        for start in range(0, len(ids), 500):  # by id: the files index, not a scan in order
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            only = " AND +fix = 1" if fixes else ""
            rows = self._conn.execute(  # `+`: found by id, not by walking an index of all
                f"{_COMMIT_SELECT} WHERE +counted = 1{only} AND id IN ({marks})", chunk
            )
            found += [_commit(r) for r in rows]
        return sorted(found, key=lambda c: c.order)

    # ------------------------------------------------------------ counts

    def count(self, kind: str, a: str = "", b: str = "") -> int:
        row = self._conn.execute(
            "SELECT n FROM counts WHERE kind = ? AND a = ? AND b = ?", (kind, a, b)
        ).fetchone()
        return int(row[0]) if row else 0

    def ranked(self, kind: str, least: int = 1) -> Iterator[tuple[str, str, int]]:
        """(a, b, n) of one kind of count, largest first (then by name), n >= least."""
        rows = self._conn.execute(
            "SELECT a, b, n FROM counts WHERE kind = ? AND n >= ? ORDER BY n DESC, a, b",
            (kind, least),
        )
        for a, b, n in rows:
            yield str(a), str(b), int(n)

    def pairs(self, least: int, ratio: float) -> list[tuple[str, str, int, int]]:
        """(a, b, n together, the fewer commits of either) for the file pairs changed together
        at least `least` times and in at least `ratio` of the commits of the one changed less."""
        rows = self._conn.execute(
            "SELECT p.a, p.b, p.n, MIN(fa.n, fb.n) FROM counts p"
            " JOIN counts fa ON fa.kind = 'file' AND fa.a = p.a AND fa.b = ''"
            " JOIN counts fb ON fb.kind = 'file' AND fb.a = p.b AND fb.b = ''"
            " WHERE p.kind = 'pair' AND p.n >= ? AND p.n * 1.0 / MIN(fa.n, fb.n) >= ?",
            (least, ratio),
        )
        return [(str(a), str(b), int(n), int(m)) for a, b, n, m in rows]

    def counts(self, kind: str) -> dict[tuple[str, str], int]:
        rows = self._conn.execute("SELECT a, b, n FROM counts WHERE kind = ? AND n > 0", (kind,))
        return {(str(a), str(b)): int(n) for a, b, n in rows}

    # ------------------------------------------------------------ the vault's notes

    def has_note(self, ident: str) -> bool:
        """Whether a note at the tip names a commit starting with ident (>= 7 hex digits)."""
        ident = ident.lower()
        if len(ident) < 7:
            return False
        row = self._conn.execute(
            "SELECT 1 FROM present WHERE sha >= ? AND sha < ? LIMIT 1", (ident, ident + "\uffff")
        ).fetchone()
        return row is not None

    def note_named(self, ident: str) -> str | None:
        """The full sha of the one note at the tip whose commit starts with ident."""
        ident = ident.lower()
        rows = self._conn.execute(
            "SELECT sha FROM present WHERE sha >= ? AND sha < ? LIMIT 2", (ident, ident + "\uffff")
        ).fetchall()
        return str(rows[0][0]) if len(rows) == 1 else None

    def replaced_by(self, sha: str) -> str | None:
        """The commit whose note says it replaces sha (an amend, a rebase)."""
        row = self._conn.execute(
            "SELECT by FROM replaced WHERE old = ? ORDER BY path DESC LIMIT 1", (sha.lower(),)
        ).fetchone()
        return str(row[0]) if row else None

    def dates(self, paths: Iterable[str]) -> dict[str, int]:
        """The commit dates (Unix seconds) of the notes at these paths it holds and knows."""
        out: dict[str, int] = {}
        wanted = list(paths)
        if len(wanted) > 20_000:  # most of them: one pass beats an index look-up each
            wanted_set = set(wanted)
            rows = self._conn.execute("SELECT path, when_ FROM notes WHERE when_ != 0")
            return {str(p): int(w) for p, w in rows if p in wanted_set}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for path, when in self._conn.execute(
                f"SELECT path, when_ FROM notes WHERE when_ != 0 AND path IN ({marks})", chunk
            ):
                out[str(path)] = int(when)
        return out


class ReleaseMemo(NamedTuple):
    """What git said of the latest release at one HEAD: where the release's commit meets HEAD
    (`git merge-base`) and how many non-merge commits HEAD has since. Kept while HEAD only moves
    forward, so a fold after a few commits asks git about those commits only (on git/git the
    two questions cost ~0.6 s of a 1 s incremental fold)."""

    commit: str  # the release's tagged commit
    head: str
    base: str
    since: int

    def dump(self) -> str:
        return f"{self.commit} {self.head} {self.base} {self.since}"


def _release_memo(raw: str) -> ReleaseMemo | None:
    parts = raw.split()
    if len(parts) != 4 or not parts[3].isdigit():
        return None
    return ReleaseMemo(parts[0], parts[1], parts[2], int(parts[3]))


# --------------------------------------------------------------------------- the cache


@dataclass(frozen=True)
class Settings:
    """What the cache's content depends on besides the notes: fold.horizon_days, counted from
    the newest note or session."""

    horizon_days: int = 0
    newest_session: int = 0

    def cutoff(self, newest_note: int) -> int | None:
        if self.horizon_days <= 0:
            return None
        return max(newest_note, self.newest_session) - self.horizon_days * DAY


class _Scope:
    """Which notes at a tip the record leaves out: forgotten, held for review or rejected."""

    def __init__(self, loc: Location, vault: Vault, tip: str) -> None:
        self.tombs = cites.forgotten(vault, tip)
        origins = origin.load(loc)
        self.hidden = frozenset(
            p
            for p in origins.files
            if layout.note_sha(p) and (o := origins.of(p)) is not None and o.hidden
        )

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256("\n".join(sorted(self.hidden)).encode()).hexdigest()

    def keeps(self, path: str) -> bool:
        return path not in self.hidden and not cites.path_is_buried(path, self.tombs)


class History:
    """The mined-history cache of one repository."""

    def __init__(self, loc: Location, vault: Vault) -> None:
        self.loc = loc
        self.vault = vault
        self.cwd = loc.workdir or loc.common_dir
        self.path = statedir.path(loc, statedir.MINED)
        self.rebuilt: str | None = None  # why the last update rebuilt it, if it did

    def open(
        self, tip: str | None = None, settings: Settings | None = None, *, rebuild: bool = False
    ) -> View:
        """The mined history brought up to `tip` (default: the vault's tip), for reading; with
        `rebuild`, built anew from the tip (`gitvault fold --rebuild`). Its `mark` is the vault
        commit it holds: `tip`, or a later one another process brought it to meanwhile."""
        settings = settings or Settings()
        tip = tip or self.vault.tip()
        if tip is None:
            raise HistoryError("the vault has no commit yet")
        statedir.ensure(self.loc)
        lock = statedir.path(self.loc, statedir.MINED_LOCK)
        with file_lock(lock, block=True, timeout=LOCK_TIMEOUT) as got:
            if not got:
                raise HistoryError(
                    "another gitvault process has been updating the mined history for two minutes",
                    hint="try again",
                )
            if rebuild:
                self._rebuild(tip, settings, "asked to rebuild")
            else:
                self._update(tip, settings)
        try:
            conn = self._connect(self.path)
            conn.execute("BEGIN")  # one snapshot for every read: a writer waits, a rebuild renames
            return View(conn, self._meta(conn), self)
        except (sqlite3.DatabaseError, KeyError) as exc:
            raise HistoryError(f"cannot read the mined history: {exc}") from exc

    def remember(
        self,
        patch_ids: Mapping[str, str],
        on_head: tuple[str, set[str]] | None,
        release: ReleaseMemo | None = None,
    ) -> None:
        """Keep what git said during a read (View): patch-ids, the commits found on HEAD's
        history (they replace those of an earlier HEAD), where the latest release meets HEAD.
        Best effort: a cache."""
        lock = statedir.path(self.loc, statedir.MINED_LOCK)
        try:
            with file_lock(lock, block=True, timeout=5.0) as got:
                if not got:
                    return
                with closing(self._connect(self.path, write=True)) as conn:
                    self._meta(conn)
                    conn.execute("BEGIN IMMEDIATE")
                    conn.executemany(
                        "INSERT OR REPLACE INTO patch_ids VALUES (?, ?)", patch_ids.items()
                    )
                    if on_head is not None:
                        head, shas = on_head
                        row = conn.execute("SELECT value FROM meta WHERE key = 'head'").fetchone()
                        if row is None or row[0] != head:
                            conn.execute("DELETE FROM on_head")
                        conn.executemany(
                            "INSERT OR IGNORE INTO on_head VALUES (?)", [(s,) for s in shas]
                        )
                        conn.execute("INSERT OR REPLACE INTO meta VALUES ('head', ?)", (head,))
                    if release is not None:
                        conn.execute(
                            "INSERT OR REPLACE INTO meta VALUES ('release', ?)", (release.dump(),)
                        )
                    conn.execute("COMMIT")
        except (sqlite3.DatabaseError, OSError):
            pass  # what is not remembered is asked again next time

    # ------------------------------------------------------------ the file

    def _connect(self, path: Path, *, write: bool = False) -> sqlite3.Connection:
        ready_for_sqlite(path)
        if write:
            conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=DELETE")
            conn.execute("PRAGMA synchronous=NORMAL")
            return conn
        return sqlite3.connect(
            f"{path.as_uri()}?mode=ro", uri=True, timeout=30.0, isolation_level=None
        )

    @staticmethod
    def _meta(conn: sqlite3.Connection) -> dict[str, str]:
        rows = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}
        if rows.get("format") != FORMAT:
            raise sqlite3.DatabaseError("a cache of another format")
        return rows

    # ------------------------------------------------------------ bringing it up to a tip

    def _update(self, tip: str, settings: Settings) -> None:
        reason = "no mined history yet"
        if self.path.exists():
            try:
                with closing(self._connect(self.path, write=True)) as conn:
                    meta = self._meta(conn)
                    if meta.get("mark") == tip and _same_horizon(meta, settings, None):
                        return
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        self._forward(conn, meta, tip, settings)
                        conn.execute("COMMIT")
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
                    return
            except _Rebuild as why:
                reason = str(why)
            except sqlite3.DatabaseError as exc:
                reason = f"the cache could not be read ({exc})"
        self._rebuild(tip, settings, reason)

    def _forward(
        self, conn: sqlite3.Connection, meta: dict[str, str], tip: str, settings: Settings
    ) -> None:
        """Insert the notes added since the cache's mark; _Rebuild when that cannot be done."""
        mark = meta.get("mark", "")
        if not mark or not self.vault.git.is_ancestor(mark, tip):
            raise _Rebuild("the vault's history was rewritten")
        scope = _Scope(self.loc, self.vault, tip)
        if scope.fingerprint != meta.get("hidden"):
            raise _Rebuild("what is held for review changed")
        added: dict[str, str] = {}
        for change in gitcmd.raw_changes(self.cwd, f"{mark}..{tip}"):
            if layout.note_sha(change.path):
                if change.status != "A" or change.path in added:
                    raise _Rebuild(f"a note was changed or deleted ({change.path})")
                added[change.path] = change.blob
                continue
            cite = layout.tombstone_cite(change.path)
            if cite is None:
                continue
            if change.status != "A":
                raise _Rebuild("a tombstone was changed or removed")
            if _buries_a_held_note(conn, cite):
                raise _Rebuild("a note it holds was forgotten")
        conn.executemany(
            "INSERT OR IGNORE INTO present VALUES (?)", [(layout.note_sha(p),) for p in added]
        )
        kept = {p: oid for p, oid in added.items() if scope.keeps(p)}
        notes = [n for n in _read_notes(self.cwd, sorted(kept.items())) if n is not None]
        newest = max([int(meta.get("newest", "0")), *(n.when for n in notes)])
        if not _same_horizon(meta, settings, newest):
            raise _Rebuild("the horizon moved")
        cutoff = settings.cutoff(newest)
        for note in notes:
            if cutoff is not None and note.when < cutoff:
                _insert(conn, note, 0, past=True)
        _Counting(conn).add([n for n in notes if cutoff is None or n.when >= cutoff])
        conn.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", [("mark", tip), ("newest", str(newest))]
        )

    def _rebuild(self, tip: str, settings: Settings, reason: str) -> None:
        """Build a fresh cache beside the old one and swap it in (a reader of the old file
        keeps reading it until it closes it)."""
        self.rebuilt = reason
        scope = _Scope(self.loc, self.vault, tip)
        tmp = self.path.with_name(f".{statedir.MINED}.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        try:
            with closing(self._connect(tmp, write=True)) as conn:
                conn.execute("PRAGMA synchronous=OFF")  # a torn file is never renamed in
                conn.executescript(_DDL)
                conn.execute("BEGIN IMMEDIATE")
                # The vault's listing goes to the file as git writes it, never held here (a
                # whole vault's paths and blob ids were ~25 MB of a first fold at 100,000).
                conn.execute(_LISTED_DDL)
                _list_notes(conn, self.cwd, tip, scope)
                notes = _read_notes(self.cwd, _within_horizon(conn, settings))
                newest, cutoff = _fill(conn, notes, settings)
                conn.execute("DROP TABLE temp.listed")
                conn.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [
                        ("format", FORMAT),
                        ("mark", tip),
                        ("hidden", scope.fingerprint),
                        ("newest", str(newest)),
                        ("horizon", str(settings.horizon_days)),
                        ("cutoff", str(cutoff)),
                    ],
                )
                conn.execute("COMMIT")
                conn.executescript(_INDEXES)  # once the rows are in: faster than row by row
            Path(f"{tmp}-journal").unlink(missing_ok=True)
            os.replace(tmp, self.path)
        except sqlite3.DatabaseError as exc:
            raise HistoryError(f"cannot build the mined history: {exc}") from exc
        except OSError as exc:
            raise HistoryError(
                f"cannot write the mined history {self.path}: {exc.strerror}",
                hint="check the permissions of the repository's .git directory",
            ) from exc
        finally:
            tmp.unlink(missing_ok=True)


def _buries_a_held_note(conn: sqlite3.Connection, cite: str) -> bool:
    """Whether a new tombstone buries a note the cache holds (commit citations match by prefix
    either way, as cites.is_buried says)."""
    if not cite.startswith("c:") or len(cite) < 9:
        return False
    prefix = cite[2:9].lower()
    rows = conn.execute(
        "SELECT path FROM notes WHERE sha >= ? AND sha < ?", (prefix, prefix + "\uffff")
    )
    return any(cites.path_is_buried(str(p), {cite}) for (p,) in rows)


def _same_horizon(meta: Mapping[str, str], settings: Settings, newest: int | None) -> bool:
    """Whether the cache was built for this horizon and cutoff (newest: the newest note's date
    once the new notes are counted; None: as the cache holds it)."""
    if meta.get("horizon") != str(settings.horizon_days):
        return False
    latest = int(meta.get("newest", "0")) if newest is None else newest
    return meta.get("cutoff") == str(settings.cutoff(latest))


_LISTED_DDL = "CREATE TEMP TABLE listed (path TEXT NOT NULL, oid TEXT NOT NULL, day INTEGER)"


def _list_notes(conn: sqlite3.Connection, cwd: Path, tip: str, scope: _Scope) -> None:
    """Every note at the tip into `present` (its commit) and the ones the scope keeps into
    `temp.listed` (path, blob, date folder's day), in chunks as git lists them."""
    present: list[tuple[str]] = []
    listed: list[tuple[str, str, int]] = []

    def flush() -> None:
        conn.executemany("INSERT OR IGNORE INTO present VALUES (?)", present)
        conn.executemany("INSERT INTO temp.listed VALUES (?, ?, ?)", listed)
        present.clear()
        listed.clear()

    for entry in gitcmd.iter_tree(cwd, tip, [layout.NOTES + "/"], recursive=True):
        sha = None if entry.is_dir else layout.note_sha(entry.path)
        if not sha:
            continue
        present.append((sha,))
        if scope.keeps(entry.path):
            listed.append((entry.path, entry.oid, folder_time(entry.path) // DAY))
        if len(present) >= READ_CHUNK:
            flush()
    flush()


def _within_horizon(conn: sqlite3.Connection, settings: Settings) -> Iterator[tuple[str, str]]:
    """The notes a rebuild reads (path, blob), in path order: with a horizon, not those in
    date folders older than it (they are past it whatever they hold; read, they would only be
    counted out)."""
    first = None
    if settings.horizon_days > 0:
        (latest,) = conn.execute("SELECT max(day) FROM temp.listed").fetchone()
        if latest is not None:
            newest = max(int(latest), settings.newest_session // DAY)
            first = newest - settings.horizon_days - 2
    rows = conn.execute(
        "SELECT path, oid FROM temp.listed WHERE day >= ? ORDER BY path",
        (-(1 << 62) if first is None else first,),
    )
    for path, oid in rows:
        yield str(path), str(oid)


def _read_notes(cwd: Path, blobs: Iterable[tuple[str, str]]) -> Iterator[Note | None]:
    """The notes of these (path, blob id) pairs, in their order, read in chunks through
    `git cat-file`."""
    pairs = iter(blobs)
    while chunk := list(islice(pairs, READ_CHUNK)):
        data = gitcmd.cat_blobs(cwd, [oid for _, oid in chunk])
        for path, oid in chunk:
            raw = data.get(oid)
            yield None if raw is None else parse_note(path, raw.decode("utf-8", "replace"))


# --------------------------------------------------------------------------- filling it


def _row(
    note: Note, depth: int, *, past: bool, counted: bool, fix: bool | None = None
) -> tuple[object, ...]:
    if fix is None:
        fix = counted_fix(note.subject, note.names)
    return (
        note.path,
        note.sha,
        note.subject,
        _hash(kinds.PR_SUFFIX.sub("", note.subject)),
        note.first_line,
        note.reason,
        note.breaking,
        _join(note.reverts),
        note.quoted,
        _join(note.files),
        _files_key(note.files),
        len(note.names),
        sum(1 for f in note.names if kinds.classify(f).test),
        int(fix),
        _hash(note.copy_key),
        note.when,
        depth,
        note.branch,
        note.worktree,
        int(note.merge),
        _join(note.parents),
        _join(note.replaces),
        int(past),
        int(counted),
    )


_INSERT = f"INSERT INTO notes ({_NOTE_COLUMNS}) VALUES ({', '.join('?' * 24)})"
_INSERT_ID = f"INSERT INTO notes (id, {_NOTE_COLUMNS}) VALUES ({', '.join('?' * 25)})"


def _insert(conn: sqlite3.Connection, note: Note, depth: int, *, past: bool) -> int:
    cursor = conn.execute(_INSERT, _row(note, depth, past=past, counted=False))
    return int(cursor.lastrowid or 0)


def _ever(files: Iterable[str]) -> set[str]:
    """The paths a note's file list names (both names of a rename)."""
    out: set[str] = set()
    for f in files:
        renamed = kinds.split_rename(f)
        out.update(renamed if renamed else (f,))
    return out


def _fill(
    conn: sqlite3.Connection, notes: Iterable[Note | None], settings: Settings
) -> tuple[int, int | None]:
    """A rebuild's content, streamed: every note is written as it is read, nothing of it is
    kept (a brief of each, held until the depths were known, was ~45 MB at 100,000 notes);
    then the horizon, the depths, the counted copies and the counts, each from the file.
    Returns (the newest note's date, the horizon's cutoff)."""
    rows: list[tuple[object, ...]] = []
    newest = written = 0
    for note in notes:
        if note is None:
            continue
        newest = max(newest, note.when)
        written += 1
        rows.append((written, *_row(note, 0, past=False, counted=False)))
        if len(rows) >= READ_CHUNK:
            conn.executemany(_INSERT_ID, rows)
            rows.clear()
    conn.executemany(_INSERT_ID, rows)
    cutoff = settings.cutoff(newest)
    if cutoff is not None:
        conn.execute("UPDATE notes SET past = 1 WHERE when_ < ?", (cutoff,))
    _settle_depths(conn)
    _elect_all(conn)
    _count_all(conn)
    return newest, cutoff


def _commit_key(sha: str) -> bytes | str:
    """A commit id as a rebuild's maps hold it: 20 (or 32) bytes for a lower-case hex id, else
    the text itself (equal exactly when the texts are, as the ids are compared elsewhere)."""
    if len(sha) in (40, 64) and sha == sha.lower():
        try:
            return bytes.fromhex(sha)
        except ValueError:
            pass
    return sha


def _settle_depths(conn: sqlite3.Connection) -> None:
    """Each counted-in note's depth in the ancestry the notes record (parents first; a parent
    that is also a descendant — a cycle only hostile notes can make — counts as none), its
    parents into `parents` and what it replaces into `replaced`, read back from the file into
    flat arrays: one node per commit id (a later note of the same id overrides an earlier
    one's parents, as it always did)."""
    node: dict[bytes | str, int] = {}
    ids = array("q")  # the notes in id order …
    at = array("q")  # … and their commit's node
    for note_id, sha in conn.execute("SELECT id, sha FROM notes WHERE past = 0 ORDER BY id"):
        ids.append(int(note_id))
        at.append(node.setdefault(_commit_key(str(sha)), len(node)))
    first = array("q", [-1]) * len(node)
    more: dict[int, tuple[int, ...]] = {}
    parent_keys: list[tuple[int]] = []
    replaced: list[tuple[str, str, str]] = []
    for sha, path, parents, replaces in conn.execute(
        "SELECT sha, path, parents, replaces FROM notes WHERE past = 0 ORDER BY id"
    ):
        n = node[_commit_key(str(sha))]
        named = _split(parents)
        noted = [m for p in named if (m := node.get(_commit_key(p))) is not None]
        first[n] = noted[0] if noted else -1
        if len(noted) > 1:
            more[n] = tuple(noted[1:])
        else:
            more.pop(n, None)
        parent_keys += [(_sha_key(p),) for p in named]
        replaced += [(r, str(sha), str(path)) for r in _split(replaces)]
        if len(parent_keys) >= READ_CHUNK:
            conn.executemany("INSERT INTO parents VALUES (?)", parent_keys)
            parent_keys.clear()
    conn.executemany("INSERT INTO parents VALUES (?)", parent_keys)
    conn.executemany("INSERT INTO replaced VALUES (?, ?, ?)", replaced)

    def parents_of(n: int) -> tuple[int, ...]:
        return () if first[n] < 0 else (first[n], *more.get(n, ()))

    depth = array("q", [0]) * len(node)
    state = bytearray(len(node))  # 0: not reached, 1: on the walk's stack, 2: its depth known
    for start in range(len(node)):
        stack = [start]
        while stack:
            n = stack[-1]
            if state[n] == 2:
                stack.pop()
                continue
            state[n] = 1
            todo = [p for p in parents_of(n) if state[p] == 0]
            if todo:
                stack.extend(todo)
                continue
            depth[n] = 1 + max((depth[p] for p in parents_of(n) if state[p] == 2), default=0)
            state[n] = 2
            stack.pop()
    conn.executemany(
        "UPDATE notes SET depth = ? WHERE id = ?",
        ((depth[at[i]], ids[i]) for i in range(len(ids))),
    )


def _elect_all(conn: sqlite3.Connection) -> None:
    """Count, of every change, the newest copy that is a candidate (not a merge, not replaced),
    as _Counting._elect does for one: the rows come grouped by their copy key's hash, so only
    one group is held, and are compared by the whole key within it."""
    group: dict[str, tuple[int, int, str, int]] = {}
    group_hash: object = None
    counted: list[tuple[int]] = []
    for key_hash, note_id, sha, when, depth, subject, files in conn.execute(
        "SELECT copy_key, id, sha, when_, depth, subject, files FROM notes"
        " WHERE past = 0 AND merge = 0 AND sha NOT IN (SELECT old FROM replaced)"
        " ORDER BY copy_key, id"
    ):
        if key_hash != group_hash:
            counted += [(w[3],) for w in group.values()]
            group.clear()
            group_hash = key_hash
        key = copy_key(str(subject), _names(files))
        mine = (int(when), int(depth), str(sha), int(note_id))
        old = group.get(key)
        if old is None or mine[:3] > old[:3]:
            group[key] = mine
    counted += [(w[3],) for w in group.values()]
    conn.executemany("UPDATE notes SET counted = 1 WHERE id = ?", counted)


def _count_all(conn: sqlite3.Connection) -> None:
    """The counts and files of the counted notes, and every path named, summed by SQLite: a
    Counter of a whole history's keys (every pair of files changed together) was most of a
    first fold's memory. Only COUNT_KEYS distinct keys wait in memory at a time, and each
    flush adds them to what the table holds."""
    counts: Counter[tuple[str, str, str]] = Counter()
    files: list[tuple[int, str]] = []
    ever: set[str] = set()
    for note_id, subject, listed, fix, is_counted in conn.execute(
        "SELECT id, subject, files, fix, counted FROM notes WHERE past = 0"
    ):
        raw = _split(listed)
        ever |= _ever(raw)
        if is_counted:
            names = tuple(kinds.current_name(f) for f in raw)
            counts.update(contributions(str(subject), names, bool(fix)))
            files += [(int(note_id), f) for f in sorted(set(names))]
            if len(files) >= READ_CHUNK:
                conn.executemany("INSERT INTO files VALUES (?, ?)", files)
                files.clear()
        if len(counts) + len(ever) >= COUNT_KEYS:
            _add_counts(conn, counts, ever)
    conn.executemany("INSERT INTO files VALUES (?, ?)", files)
    _add_counts(conn, counts, ever)


def _add_counts(
    conn: sqlite3.Connection, counts: Counter[tuple[str, str, str]], ever: set[str]
) -> None:
    """Add what a rebuild counted so far to the tables, and forget it."""
    conn.executemany(
        "INSERT INTO counts VALUES (?, ?, ?, ?) ON CONFLICT (kind, a, b)"
        " DO UPDATE SET n = n + excluded.n",
        [(*k, n) for k, n in counts.items()],
    )
    conn.executemany("INSERT OR IGNORE INTO ever VALUES (?)", [(p,) for p in ever])
    counts.clear()
    ever.clear()


class _Counting:
    """Notes inserted into a cache one by one, the counts kept as a rebuild would make them."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def add(self, notes: list[Note]) -> None:
        if len({n.sha for n in notes}) < len(notes):
            raise _Rebuild("two notes name one commit")
        for note in _parents_first(notes):
            self._add(note)

    def _add(self, note: Note) -> None:
        conn = self.conn
        if conn.execute("SELECT 1 FROM notes WHERE sha = ? LIMIT 1", (note.sha,)).fetchone():
            raise _Rebuild(f"two notes name commit {note.sha[:12]}")
        if conn.execute(
            "SELECT 1 FROM parents WHERE parent = ? LIMIT 1", (_sha_key(note.sha),)
        ).fetchone():
            raise _Rebuild("a note came in for an ancestor of noted commits")
        depth = 1
        if note.parents:
            marks = ",".join("?" * len(note.parents))
            row = conn.execute(
                f"SELECT MAX(depth) FROM notes WHERE past = 0 AND sha IN ({marks})", note.parents
            ).fetchone()
            depth = 1 + int(row[0] or 0)
        _insert(conn, note, depth, past=False)
        conn.executemany("INSERT INTO parents VALUES (?)", [(_sha_key(p),) for p in note.parents])
        conn.executemany(
            "INSERT INTO replaced VALUES (?, ?, ?)",
            [(r, note.sha, note.path) for r in note.replaces],
        )
        conn.executemany("INSERT OR IGNORE INTO ever VALUES (?)", [(p,) for p in _ever(note.files)])
        keys = set() if note.merge else {note.copy_key}
        for old in note.replaces:
            rows = conn.execute(
                "SELECT subject, files FROM notes WHERE sha = ? AND past = 0", (old,)
            )
            keys.update(copy_key(str(s), _names(f)) for s, f in rows)
        for key in sorted(keys):
            self._elect(key)

    def _elect(self, key: str) -> None:
        """Count the newest copy of one change that is still a candidate, and only it."""
        rows = [
            (int(note_id), str(sha), int(when), int(depth), bool(merge), bool(counted))
            for note_id, sha, when, depth, merge, counted, subject, files in self.conn.execute(
                "SELECT id, sha, when_, depth, merge, counted, subject, files FROM notes"
                " WHERE copy_key = ? AND past = 0 ORDER BY id",
                (_hash(key),),
            )
            if copy_key(str(subject), _names(files)) == key
        ]
        winner: tuple[int, int, int, str] | None = None
        for note_id, sha, when, depth, merge, _ in rows:
            if (
                merge
                or self.conn.execute(
                    "SELECT 1 FROM replaced WHERE old = ? LIMIT 1", (sha,)
                ).fetchone()
            ):
                continue
            if winner is None or (when, depth, sha) > winner[1:]:
                winner = (note_id, when, depth, sha)
        want = winner[0] if winner else None
        held = [r[0] for r in rows if r[5]]
        for note_id in held:
            if note_id != want:
                self._count(note_id, -1)
        if want is not None and want not in held:
            self._count(want, +1)

    def _count(self, note_id: int, step: int) -> None:
        conn = self.conn
        subject, files = conn.execute(
            "SELECT subject, files FROM notes WHERE id = ?", (note_id,)
        ).fetchone()
        names = _names(files)
        keys = contributions(str(subject), names)
        conn.executemany(
            "INSERT INTO counts VALUES (?, ?, ?, ?) ON CONFLICT (kind, a, b)"
            " DO UPDATE SET n = n + excluded.n",
            [(*key, step) for key in keys],
        )
        if step < 0:  # a count that reaches 0 goes, as a rebuild would never write it
            conn.executemany(
                "DELETE FROM counts WHERE kind = ? AND a = ? AND b = ? AND n = 0", keys
            )
        conn.execute("UPDATE notes SET counted = ? WHERE id = ?", (int(step > 0), note_id))
        if step > 0:
            files = sorted(set(names))
            conn.executemany("INSERT INTO files VALUES (?, ?)", [(note_id, f) for f in files])
        else:
            conn.execute("DELETE FROM files WHERE note = ?", (note_id,))


def _names(files: object) -> tuple[str, ...]:
    """A held note's files as named after its commit."""
    return tuple(kinds.current_name(f) for f in _split(files))


def _parents_first(notes: list[Note]) -> list[Note]:
    """The notes ordered so that a note's parents among them come before it (a parent that is
    also a descendant, which only hostile notes can make, is passed over)."""
    by_sha = {n.sha: n for n in notes}
    entered: set[str] = set()
    done: set[str] = set()
    out: list[Note] = []
    for start in sorted(notes, key=lambda n: (n.when, n.path)):
        stack = [start]
        while stack:
            note = stack[-1]
            if note.sha in done:
                stack.pop()
                continue
            entered.add(note.sha)
            todo = [by_sha[p] for p in note.parents if p in by_sha and p not in entered]
            if todo:
                stack.extend(todo)
                continue
            done.add(note.sha)
            out.append(note)
            stack.pop()
    return out


def drop(loc: Location) -> None:
    """Delete the cache (after a redaction: the old text must not linger in it); the next
    fold or verify builds it from the rewritten vault."""
    lock = statedir.path(loc, statedir.MINED_LOCK)
    if not lock.parent.is_dir():
        return
    with file_lock(lock, block=True, timeout=LOCK_TIMEOUT):
        for suffix in ("", "-journal", "-wal", "-shm"):
            statedir.path(loc, f"{statedir.MINED}{suffix}").unlink(missing_ok=True)


# --------------------------------------------------------------------------- for a fold, verify


def shown_sessions(loc: Location, vault: Vault, at: str) -> list[Item]:
    """The sessions at `at` a digest covers: not forgotten, not held for review or rejected."""
    origins = origin.load(loc)
    found = items_mod.sessions_at(vault, at)
    return [s for s in found if (o := origins.of(s.path)) is None or not o.hidden]


def open_at_tip(
    loc: Location, vault: Vault, horizon_days: int, *, rebuild: bool = False
) -> tuple[View, list[Item]]:
    """The mined history at the vault's tip and the sessions that go with it (within the
    horizon): what the fold mines and what verify and the fold check lines against."""
    tip = vault.require_tip()
    sessions = shown_sessions(loc, vault, tip)
    settings = Settings(horizon_days, max((s.when for s in sessions), default=0))
    view = History(loc, vault).open(tip, settings, rebuild=rebuild)
    if view.mark != tip:  # another process brought it further meanwhile
        sessions = shown_sessions(loc, vault, view.mark)
    cutoff = view.cutoff
    return view, [s for s in sessions if cutoff is None or s.when >= cutoff]
