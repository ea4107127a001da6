"""The per-path index: what the vault knows about each project path, kept in
`<common git dir>/gitvault/paths.sqlite` (statedir.PATH_INDEX) beside the list of the paths it
knows (statedir.KNOWN_PATHS, see pathrecall.known).

A cache, never committed and never authoritative. It remembers the vault commit it read last on
each ref it reads (the vault branch, and the local-only ref of private sessions) and catches up
from `mark..tip` with one `git log --raw` and one `git cat-file --batch` per ref, so an update
costs what is new; it is rebuilt from the vault when it is missing, unreadable, of another
format, or when a mark is no longer in its ref's history (`gitvault redact` rewrote it).
Updates hold an flock (statedir.PATH_INDEX_LOCK) and are one SQLite transaction each; readers
hold nothing and never see half an update. Text is redacted again before it is stored.

Format 4 (FORMAT; a mined digest line is linked to a path only by naming it; a path's base
name is a column of its own, so that "does any other path bear this file name" is one indexed
lookup, not a scan of every path): tables

    meta(key, value)                 format, the vault ref, a watermark per ref read
    paths(id, path, base)            every project path a note names, and its last component
    commits(id, sha, short, time, subject, files, parents, kind, target, reason)
                                     one row per note; kind: plain | fix | revert | merge;
                                     target: the reverted commit (a sha prefix) or its quoted
                                     subject; reason: the revert message's own words
    touches(path, commit)            which commits touched which path (merges: none, their
                                     commits carry the change)
    renames(old, new, commit)        `old => new` lines of the notes' file lists
    sessions(id, slug, time, title, mode, branch)
    session_commits(session, short)  the commits a session made (its front matter)
    facts(id, source, kind, time, text)
                                     digest lines (source "digest", kind = the category) and
                                     session bullets (source "s:<slug>", kind decision |
                                     gotcha | next)
    cites(fact, short)               the commits a fact cites (first 7 hex digits)
    mentions(fact, token)            the path-like words a fact names
    tombs(cite)                      forgotten items (tombstones), never indexed again
    replaced(sha)                    commits an amend or a rebase replaced (a note's
                                     `replaces`): no longer history, never indexed again

The query API (what the edit-time block and the fold's miners read):

    PathIndex(loc).update()               bring it to the vault's tip (or rebuild)
    PathIndex(loc).facts(path)            PathFacts for one path, or None: nothing known
    PathIndex(loc).co_changed(path, n)    [(other path, commits together)], renames followed
    PathIndex(loc).hot_spots(n, since)    [(path, commits, fixes)] the most-changed paths
    PathIndex(loc).pairs(n, min_count)    [(a, b, commits together)] over the whole history
    PathIndex(loc).reverts(n)             [(revert, what it reverted or None)], newest first
    knows(loc, path)                      the cheap "anything known?" (pathrecall.known)
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing
from pathlib import Path

from gitvault.errors import GitvaultError
from gitvault.memory import cites as cites_mod
from gitvault.memory import sections as sections_mod
from gitvault.named import TYPE_CHECKING, NamedTuple
from gitvault.pathrecall import known
from gitvault.resolve import Location
from gitvault.scrub.engine import scrub_secrets
from gitvault.vault import files, frontmatter, gitcmd, layout, notebody, statedir
from gitvault.vault.files import ready_for_sqlite
from gitvault.vault.locking import file_lock
from gitvault.vault.times import parse_time

if TYPE_CHECKING:
    from typing import Any

FORMAT = "4"
LOCK_TIMEOUT = 60.0
BLOB_BATCH = 4000
# A commit touching more files is a sweep (formatting, a licence header, a move of a tree): it
# says little about which files belong together, so co-change leaves it out.
MAX_PAIR_FILES = 30
SUBJECT_MAX = 200
REASON_MAX = 300
FACT_MAX = 600
RECENT_COMMITS = 2000  # the newest commits of a path its co-change is counted over

# Compiled when an update first needs them: a hook that only looks a path up never does.
_PATTERNS = {
    "revert_subject": r'^Revert "(.+)"\s*$',
    "revert_short": r"^Revert ([0-9a-f]{7,40})\b",
    "revert_body": r"(?i)This reverts commit ([0-9a-f]{7,40})",
    "fix": r"(?i)^(?:fix|bugfix|hotfix)(?:\([^)]*\))?!?:|^fix(?:es|ed)?\b|\bbug\s?fix"
    r"|\bregression\b|\bcrash(?:es|ed)?\b|\bfix(?:es|ed)? (?:a |the )?(?:bug|crash|issue|error)",
    # Words of a digest line or a session bullet that look like a path: with a slash, or a
    # name with an extension (`core.py`, src/click/core.py, `docs/index.rst`).
    "pathlike": r"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]{1,10}|(?:[\w.-]+/)+[\w.-]+)",
}


@functools.cache
def pattern(name: str) -> re.Pattern[str]:
    """One of the index's patterns (revert_subject, revert_short, revert_body, fix, pathlike),
    compiled once per process."""
    return re.compile(_PATTERNS[name])


SESSION_KINDS = {
    "key decisions": "decision",
    "decisions": "decision",
    "gotchas": "gotcha",
    "pitfalls": "gotcha",
    "next steps": "next",
}

_DDL = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE paths(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, base TEXT NOT NULL);
CREATE INDEX paths_base ON paths(base);
CREATE TABLE commits(
    id INTEGER PRIMARY KEY, sha TEXT NOT NULL UNIQUE, short TEXT NOT NULL, time INTEGER NOT NULL,
    subject TEXT NOT NULL, files INTEGER NOT NULL, parents INTEGER NOT NULL, kind TEXT NOT NULL,
    target TEXT NOT NULL DEFAULT '', reason TEXT NOT NULL DEFAULT '',
    parent TEXT NOT NULL DEFAULT ''
);
CREATE INDEX commits_short ON commits(short);
CREATE INDEX commits_kind ON commits(kind);
CREATE TABLE touches(path INTEGER NOT NULL, "commit" INTEGER NOT NULL,
    PRIMARY KEY(path, "commit")) WITHOUT ROWID;
CREATE INDEX touches_commit ON touches("commit", path);
CREATE TABLE renames(old INTEGER NOT NULL, new INTEGER NOT NULL, "commit" INTEGER NOT NULL,
    PRIMARY KEY(old, new, "commit")) WITHOUT ROWID;
CREATE INDEX renames_new ON renames(new);
CREATE TABLE sessions(id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, time INTEGER NOT NULL,
    title TEXT NOT NULL, mode TEXT NOT NULL, branch TEXT NOT NULL);
CREATE TABLE session_commits(session INTEGER NOT NULL, short TEXT NOT NULL,
    PRIMARY KEY(short, session)) WITHOUT ROWID;
CREATE TABLE facts(id INTEGER PRIMARY KEY, source TEXT NOT NULL, kind TEXT NOT NULL,
    time INTEGER NOT NULL, text TEXT NOT NULL);
CREATE INDEX facts_source ON facts(source);
CREATE TABLE cites(short TEXT NOT NULL, fact INTEGER NOT NULL, PRIMARY KEY(short, fact))
    WITHOUT ROWID;
CREATE INDEX cites_fact ON cites(fact);
CREATE TABLE mentions(token TEXT NOT NULL, fact INTEGER NOT NULL, PRIMARY KEY(token, fact))
    WITHOUT ROWID;
CREATE INDEX mentions_fact ON mentions(fact);
CREATE TABLE tombs(cite TEXT PRIMARY KEY);
CREATE TABLE replaced(sha TEXT PRIMARY KEY);
"""


class IndexError_(GitvaultError):
    pass


# -- what a lookup returns -----------------------------------------------------------------


class CommitRow(NamedTuple):
    sha: str
    time: int
    subject: str
    kind: str  # plain | fix | revert
    target: str  # reverts: the reverted commit (sha prefix) or its quoted subject
    reason: str  # reverts: why, in the revert message's own words ("" when it says nothing)
    files: int


class Fact(NamedTuple):
    source: str  # "digest" or "s:<slug>"
    kind: str  # a digest category, or decision | gotcha | next
    time: int
    text: str


class SessionRow(NamedTuple):
    slug: str
    time: int
    title: str
    mode: str
    branch: str


class PathFacts(NamedTuple):
    """Everything the index holds about one path (newest first everywhere)."""

    path: str
    names: tuple[str, ...]  # earlier names (renames followed back)
    commits: int  # commits touching it (under any of its names)
    first: int  # time of the oldest, and of the newest
    last: int
    recent: tuple[CommitRow, ...]  # the newest commits
    reverts: tuple[tuple[CommitRow, CommitRow | None], ...]  # (revert, what it reverted)
    reverted: tuple[tuple[CommitRow, CommitRow], ...]  # (its commit, the revert undoing it)
    fixes: tuple[CommitRow, ...]
    partners: tuple[tuple[str, int], ...]  # (path, commits together), most first
    paired: int  # the commits co-change was counted over (≤ MAX_PAIR_FILES files)
    facts: tuple[Fact, ...]  # digest lines and session bullets citing its commits or naming it
    session: SessionRow | None  # the newest session that made one of its commits or named it
    next_steps: tuple[str, ...]  # that session's next steps


class Updated(NamedTuple):
    tip: str | None
    added: int = 0
    removed: int = 0
    rebuilt: bool = False
    reason: str = ""
    deferred: bool = False  # a rebuild was due and left to the caller (update(rebuild=False))


# -- parsing what the vault holds ----------------------------------------------------------


def _one_line(text: str, limit: int) -> str:
    return " ".join(text.split())[: limit * 2]


def _redacted(text: str, limit: int) -> str:
    return scrub_secrets(_one_line(text, limit))[0][:limit]


_JOIN = "\n\x1f\n"


def redact_many(texts: list[str], limit: int) -> list[str]:
    """Each one-line text redacted, in one pass of the secret filter over all of them (a
    rebuild reads 100,000 subjects: one pass each would cost more than the rest of it). A
    secret spanning two texts would swallow the separator: then each is redacted alone."""
    if not texts:
        return []
    joined = scrub_secrets(_JOIN.join(texts))[0].split(_JOIN)
    if len(joined) != len(texts):
        joined = [scrub_secrets(t)[0] for t in texts]
    return [t[:limit] for t in joined]


def classify(subject: str, message: str, parents: int) -> tuple[str, str, str]:
    """(kind, target, reason) of a commit from its note: a revert names what it reverted (a
    sha prefix from "This reverts commit", else the subject it quotes) and why (its message's
    own words); a fix by its subject; a merge by its parents."""
    if parents > 1:
        return "merge", "", ""
    body = pattern("revert_body").search(message)
    quoted = pattern("revert_subject").match(subject)
    short = pattern("revert_short").match(subject)
    if body or quoted or short:
        target = (body or short).group(1).lower() if (body or short) else ""  # type: ignore[union-attr]
        if not target and quoted:
            target = '"' + quoted.group(1) + '"'
        words = []
        for line in message.splitlines():
            text = line.strip()
            if (
                not text
                or pattern("revert_body").search(text)
                or text.lower().startswith("this reverts")
            ):
                continue
            if text.startswith(("[…", "Signed-off-by", "Co-authored-by", "(cherry picked")):
                continue
            words.append(text)
        return "revert", target[:80], " ".join(words)
    if pattern("fix").search(subject):
        return "fix", "", ""
    return "plain", "", ""


class Note(NamedTuple):
    sha: str
    time: int
    subject: str
    files: int
    parents: int
    parent: str  # the first parent's SHA ('' for a root commit or when not listed)
    paths: tuple[str, ...]
    renames: tuple[tuple[str, str], ...]
    kind: str
    target: str
    reason: str
    replaces: tuple[str, ...]  # commits this one replaced (amend, rebase): no longer history


NOTE_KEYS = frozenset({"parents", "committed", "files_changed", "replaces"})


def parse_note(text: str, sha: str, fallback_time: int) -> Note:
    """A note's commit as the index keeps it (subject and reason one line each, not yet
    redacted: the index redacts them in batches)."""
    meta, body = frontmatter.parse(text, NOTE_KEYS)
    parsed = notebody.parse_body(body)
    parents = meta.get("parents")
    n_parents = len(parents) if isinstance(parents, list) else 1
    moment = parse_time(meta.get("committed"))
    changed = meta.get("files_changed")
    listed = parsed.whole_files
    paths: list[str] = []
    renames: list[tuple[str, str]] = []
    for entry in listed:
        old, arrow, new = entry.partition(" => ")
        if arrow and " => " not in new and old and new:
            renames.append((old, new))
            paths.append(new)
        else:
            paths.append(entry)
    kind, target, reason = classify(parsed.subject, parsed.message, n_parents)
    return Note(
        sha=sha,
        time=int(moment) if moment is not None else fallback_time,
        subject=_one_line(parsed.subject, SUBJECT_MAX),
        files=changed if isinstance(changed, int) and changed >= 0 else len(listed),
        parents=n_parents,
        parent=str(parents[0]).lower() if isinstance(parents, list) and parents else "",
        paths=tuple(dict.fromkeys(paths)),
        renames=tuple(renames),
        kind=kind,
        target=target,
        reason=_one_line(reason, REASON_MAX),
        replaces=tuple(
            str(r).lower()
            for r in meta.get("replaces") or []
            if isinstance(r, str) and len(r) == 40
        ),
    )


def newest_first(rows: list[Any]) -> list[Any]:
    """Rows (id, sha, time, ..., parent last) sorted newest first, where commits made in the
    same second (a rebase, a script, a revert right after) put a child before its parent
    rather than in SHA order; rows must arrive sorted by time, newest first."""
    out: list[Any] = []
    start = 0
    while start < len(rows):
        end = start
        while end < len(rows) and rows[end][2] == rows[start][2]:
            end += 1
        group = rows[start:end]
        if len(group) > 1:
            parent_of = {r[1]: r[-1] for r in group}
            depth: dict[str, int] = {}
            for row in group:
                chain: list[str] = []
                sha = row[1]
                while sha in parent_of and sha not in depth and len(chain) <= len(group):
                    chain.append(sha)
                    sha = parent_of[sha]
                base = depth.get(sha, -1)
                for n, link in enumerate(reversed(chain), 1):
                    depth[link] = base + n
            group = sorted(group, key=lambda r: (-depth.get(r[1], 0), r[1]))
        out.extend(group)
        start = end
    return out


def mentioned(text: str) -> list[str]:
    """The path-like words of a line (backticks and trailing punctuation dropped)."""
    out = []
    for match in pattern("pathlike").finditer(text.replace("`", " ")):
        token = match.group(1).rstrip(".,;:")
        if len(token) >= 3 and not token.startswith(("http", "www.")) and "://" not in token:
            out.append(token.lstrip("./"))
    return list(dict.fromkeys(t for t in out if t))


class Bullet(NamedTuple):
    kind: str
    text: str
    cites: tuple[str, ...]  # short shas
    mentions: tuple[str, ...]


def _bullet(kind: str, raw: str) -> Bullet:
    text = _redacted(raw, FACT_MAX)
    shorts = tuple(
        dict.fromkeys(
            c[2:9] for c in cites_mod.cites_in(text) if c.startswith("c:") and len(c) >= 9
        )
    )
    return Bullet(kind, text, shorts, tuple(mentioned(text)))


class Session(NamedTuple):
    slug: str
    time: int
    title: str
    mode: str
    branch: str
    commits: tuple[str, ...]  # short shas
    bullets: tuple[Bullet, ...]


def parse_session(text: str, slug: str, fallback_time: int) -> Session:
    meta, body = frontmatter.parse(text)
    # redacted as a whole before it is cut into one-line bullets: a secret split over lines
    # (a wrapped token, "ab" + "cd" on two lines) is only found while they are together
    body = scrub_secrets(body)[0]
    moment = parse_time(meta.get("saved_at"))
    made = meta.get("commits")
    shorts = (
        tuple(str(c)[:7].lower() for c in made if isinstance(c, str) and len(c) >= 7)
        if isinstance(made, list)
        else ()
    )
    bullets = []
    for name, section in sections_mod.split_sections(body).items():
        kind = SESSION_KINDS.get(name)
        if kind is None:
            continue
        bullets += [_bullet(kind, item) for item in sections_mod.bullets(section)[:40]]
    title = meta.get("title")
    branch = meta.get("branch")
    return Session(
        slug=slug,
        time=int(moment) if moment is not None else fallback_time,
        title=_redacted(title if isinstance(title, str) else slug, 200),
        mode=str(meta.get("mode") or "manual")[:16],
        branch=_redacted(branch, 200) if isinstance(branch, str) else "",
        commits=shorts,
        bullets=tuple(bullets),
    )


def parse_digest(text: str) -> list[Bullet]:
    """Each fact line of a digest, with its category as the kind."""
    _, body = frontmatter.parse(text)
    out = []
    category = ""
    for raw in body.splitlines():
        line = raw.strip()
        if line.startswith("## "):
            category = line[3:].strip()[:60]
            continue
        if not line.startswith("- ") or line.startswith("- [… ") or line == "- (none yet)":
            continue
        out.append(_bullet(category, line[2:]))
    return out


# -- the index -----------------------------------------------------------------------------


def _refs(branch: str) -> tuple[str, ...]:
    return (layout.branch_ref(branch), layout.PRIVATE_REF)


class PathIndex:
    """The per-path index of one repository's vault."""

    def __init__(self, loc: Location, branch: str | None = None) -> None:
        self.loc = loc
        self.cwd = loc.common_dir
        self.branch = branch or gitcmd.vault_branch(self.cwd)
        self.ref = layout.branch_ref(self.branch)
        self.path = loc.state_dir / statedir.PATH_INDEX
        self.known_file = loc.state_dir / statedir.KNOWN_PATHS

    # -- opening -------------------------------------------------------------------------
    def _connect(self, path: Path, *, write: bool = False) -> sqlite3.Connection:
        ready_for_sqlite(path)
        if write:
            conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=DELETE")
            conn.execute("PRAGMA synchronous=NORMAL")
        else:
            # Read only: a reader never creates, locks for long or rolls back anything.
            conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5.0)
        return conn

    def _marks(self, conn: sqlite3.Connection) -> dict[str, str]:
        """The watermark of each ref read; raises sqlite3.DatabaseError for a broken file or
        one of another format or vault."""
        rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if rows.get("format") != FORMAT or rows.get("ref") != self.ref:
            raise sqlite3.DatabaseError("an index of another format or vault")
        return {k[5:]: v for k, v in rows.items() if k.startswith("mark:")}

    def tips(self) -> dict[str, str]:
        out = {}
        for ref in _refs(self.branch):
            tip = gitcmd.ref_exists(self.cwd, ref)
            if tip:
                out[ref] = tip
        return out

    def current(self) -> bool:
        """Whether the index is built from the vault's tips as they are now."""
        try:
            with closing(self._connect(self.path)) as conn:
                return self._marks(conn) == self.tips()
        except (sqlite3.DatabaseError, OSError):
            return False

    # -- updating ------------------------------------------------------------------------
    def update(self, *, rebuild: bool = True) -> Updated:
        """Bring the index up to the vault's tips (or rebuild it; with rebuild=False, a
        rebuild that is due is only reported, as deferred). Returns what changed."""
        tips = self.tips()
        if self.path.exists():
            try:
                with closing(self._connect(self.path)) as conn:
                    if self._marks(conn) == tips:
                        return Updated(tips.get(self.ref))
            except sqlite3.DatabaseError:
                pass  # rebuilt below, under the lock
        try:
            statedir.ensure(self.loc)
        except GitvaultError as exc:
            raise IndexError_(exc.message, hint=exc.hint) from exc
        lock = self.loc.state_dir / statedir.PATH_INDEX_LOCK
        # Without rebuild (a command the user waits for), a busy index is never waited for:
        # another process is building or updating it, and a background drainer follows up.
        with file_lock(lock, block=rebuild, timeout=LOCK_TIMEOUT) as got:
            if not got and not rebuild:
                return Updated(None, reason="another process is updating it", deferred=True)
            if not got:
                raise IndexError_(
                    "another gitvault process has been updating the path index for a minute",
                    hint="try again",
                )
            return self._update_locked(self.tips(), rebuild)

    def _update_locked(self, tips: dict[str, str], rebuild: bool = True) -> Updated:
        reason = "no index yet"
        if self.path.exists():
            try:
                with closing(self._connect(self.path, write=True)) as conn:
                    marks = self._marks(conn)
                    if marks == tips:
                        return Updated(tips.get(self.ref))
                    ranges = {}
                    for ref, tip in tips.items():
                        mark = marks.get(ref)
                        if mark and mark != tip and not gitcmd.is_ancestor(self.cwd, mark, tip):
                            raise _Rewritten
                        ranges[ref] = (mark, tip)
                    if set(marks) - set(tips):
                        raise _Rewritten  # a ref went away (private sessions deleted)
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        counts = [0, 0]
                        for ref, (mark, tip) in ranges.items():
                            if mark != tip:
                                self._apply(conn, ref, mark, tip, counts)
                                conn.execute(
                                    "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                    (f"mark:{ref}", tip),
                                )
                        conn.execute("COMMIT")
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
                    self._write_known(conn, tips.get(self.ref, ""))
                    return Updated(tips.get(self.ref), counts[0], counts[1])
            except _Rewritten:
                reason = "the vault's history was rewritten"
            except _Resurrected:
                reason = "a tombstone was removed"
            except sqlite3.DatabaseError as exc:
                reason = f"the index could not be read ({exc})"
        if not rebuild:
            return Updated(None, reason=reason, deferred=True)
        return self._rebuild(tips, reason)

    def _rebuild(self, tips: dict[str, str], reason: str) -> Updated:
        """Build a fresh index beside the old one and swap it in (readers of the old file keep
        reading it until they close it)."""
        tmp = self.path.with_name(f".{statedir.PATH_INDEX}.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        counts = [0, 0]
        try:
            with closing(self._connect(tmp, write=True)) as conn:
                conn.executescript(_DDL)
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany(
                    "INSERT INTO meta VALUES (?, ?)", [("format", FORMAT), ("ref", self.ref)]
                )
                for ref, tip in tips.items():
                    self._apply(conn, ref, None, tip, counts)
                    conn.execute("INSERT INTO meta VALUES (?, ?)", (f"mark:{ref}", tip))
                conn.execute("COMMIT")
                Path(f"{self.path}-journal").unlink(missing_ok=True)
                os.replace(tmp, self.path)
                self._write_known(conn, tips.get(self.ref, ""))
        except sqlite3.DatabaseError as exc:
            raise IndexError_(f"cannot build the path index: {exc}") from exc
        except OSError as exc:
            raise IndexError_(
                f"cannot write the path index {self.path}: {exc.strerror}",
                hint="check the permissions of the repository's .git directory",
            ) from exc
        finally:
            tmp.unlink(missing_ok=True)
        return Updated(tips.get(self.ref), counts[0], counts[1], True, reason)

    def _write_known(self, conn: sqlite3.Connection, tip: str) -> None:
        rows = conn.execute(
            "SELECT path FROM paths WHERE id IN (SELECT DISTINCT path FROM touches)"
        ).fetchall()
        files.atomic_write(self.known_file, known.render((r[0] for r in rows), tip))

    def _changes(
        self, mark: str | None, tip: str
    ) -> tuple[dict[str, tuple[int, str, str]], tuple[str, int] | None, dict[str, str]]:
        """What changed on a ref since `mark` (None: everything at `tip`): item path → (time,
        op, blob), the digest's (blob, time) when it changed ("" when deleted), and the
        tombstones added ("A") or removed ("D")."""
        items: dict[str, tuple[int, str, str]] = {}
        digest: tuple[str, int] | None = None
        buried: dict[str, str] = {}
        if mark is None:  # a rebuild reads the tip's tree, not its history
            folders = [layout.NOTES + "/", layout.SESSIONS + "/", layout.TOMBSTONES + "/"]
            listed = gitcmd.iter_tree(self.cwd, tip, [layout.DIGEST, *folders], recursive=True)
            changes: Iterable[gitcmd.Change] = (
                gitcmd.Change(0, tip, "A", e.path, e.oid) for e in listed if not e.is_dir
            )
        else:
            changes = gitcmd.raw_changes(self.cwd, f"{mark}..{tip}")
        for change in changes:
            path = change.path
            if path == layout.DIGEST:
                digest = (change.blob if change.status != "D" else "", change.time)
            elif layout.is_item(path):
                items[path] = (change.time, change.status, change.blob)
            else:
                cite = layout.tombstone_cite(path)
                if cite is not None:
                    buried[cite] = change.status
        return items, digest, buried

    def _apply(
        self, conn: sqlite3.Connection, ref: str, mark: str | None, tip: str, counts: list[int]
    ) -> None:
        items, digest, buried = self._changes(mark, tip)
        if mark is not None and "D" in buried.values():
            raise _Resurrected
        new_tombs = [c for c, op in buried.items() if op != "D"]
        conn.executemany("INSERT OR IGNORE INTO tombs VALUES (?)", [(t,) for t in new_tombs])
        tombs = {row[0] for row in conn.execute("SELECT cite FROM tombs")}
        for path, (_, op, _) in items.items():
            if op == "D":
                counts[1] += self._forget_item(conn, path)
        if new_tombs:
            counts[1] += self._bury(conn, tombs)
        wanted = [(p, v) for p, v in items.items() if v[1] != "D"]
        for start in range(0, len(wanted), BLOB_BATCH):
            chunk = wanted[start : start + BLOB_BATCH]
            blobs = gitcmd.cat_blobs(self.cwd, [v[2] for _, v in chunk])
            notes: list[Note] = []
            for path, (when, _, blob) in chunk:
                data = blobs.get(blob)
                if data is None:
                    continue
                text = data.decode("utf-8", "replace")
                sha, slug = layout.note_sha(path), layout.session_slug(path)
                if sha is not None and not cites_mod.is_buried(f"c:{sha}", tombs):
                    notes.append(parse_note(text, sha, when))
                elif slug is not None and not cites_mod.is_buried(f"s:{slug}", tombs):
                    counts[0] += self._put_session(conn, parse_session(text, slug, when))
            subjects = redact_many([n.subject for n in notes], SUBJECT_MAX)
            reasons = redact_many([n.reason for n in notes], REASON_MAX)
            gone = {r for n in notes for r in n.replaces}
            conn.executemany("INSERT OR IGNORE INTO replaced VALUES (?)", [(s,) for s in gone])
            for sha in gone:
                counts[1] += self._forget_commit(conn, sha)
            for note, subject, reason in zip(notes, subjects, reasons, strict=True):
                if (
                    note.sha in gone
                    or conn.execute("SELECT 1 FROM replaced WHERE sha = ?", (note.sha,)).fetchone()
                ):
                    continue
                counts[0] += self._put_note(conn, note._replace(subject=subject, reason=reason))
        if digest is not None and ref == self.ref:
            self._put_digest(conn, digest[0], digest[1], tombs)

    def _path_id(self, conn: sqlite3.Connection, path: str) -> int:
        row = conn.execute("SELECT id FROM paths WHERE path = ?", (path,)).fetchone()
        if row:
            return int(row[0])
        cur = conn.execute(
            "INSERT INTO paths(path, base) VALUES (?, ?)", (path, path.rpartition("/")[2])
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    def _put_note(self, conn: sqlite3.Connection, note: Note) -> int:
        self._forget_commit(conn, note.sha)
        cur = conn.execute(
            "INSERT INTO commits(sha, short, time, subject, files, parents, kind, target, reason,"
            " parent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                note.sha,
                note.sha[:7],
                note.time,
                note.subject,
                note.files,
                note.parents,
                note.kind,
                note.target,
                note.reason,
                note.parent,
            ),
        )
        commit = cur.lastrowid
        if note.kind == "merge":
            return 1  # its file list is the branch it brought in: those commits carry it
        ids = {self._path_id(conn, p) for p in note.paths}
        conn.executemany("INSERT OR IGNORE INTO touches VALUES (?, ?)", [(i, commit) for i in ids])
        conn.executemany(
            "INSERT OR IGNORE INTO renames VALUES (?, ?, ?)",
            [
                (self._path_id(conn, old), self._path_id(conn, new), commit)
                for old, new in note.renames
                if old != new
            ],
        )
        return 1

    def _forget_commit(self, conn: sqlite3.Connection, sha: str) -> int:
        row = conn.execute("SELECT id FROM commits WHERE sha = ?", (sha,)).fetchone()
        if not row:
            return 0
        conn.execute('DELETE FROM touches WHERE "commit" = ?', row)
        conn.execute('DELETE FROM renames WHERE "commit" = ?', row)
        conn.execute("DELETE FROM commits WHERE id = ?", row)
        return 1

    def _add_fact(self, conn: sqlite3.Connection, source: str, when: int, bullet: Bullet) -> None:
        cur = conn.execute(
            "INSERT INTO facts(source, kind, time, text) VALUES (?, ?, ?, ?)",
            (source, bullet.kind, when, bullet.text),
        )
        fact = cur.lastrowid
        # A mined line's citations are examples of a project-wide pattern ("recent changes are
        # mostly in src/"): it belongs to a path only by naming it, never by what it cites.
        cites = () if layout.MINED_MARK in bullet.text else bullet.cites
        conn.executemany("INSERT OR IGNORE INTO cites VALUES (?, ?)", [(s, fact) for s in cites])
        conn.executemany(
            "INSERT OR IGNORE INTO mentions VALUES (?, ?)", [(t, fact) for t in bullet.mentions]
        )

    def _drop_facts(self, conn: sqlite3.Connection, source: str) -> None:
        ids = [r[0] for r in conn.execute("SELECT id FROM facts WHERE source = ?", (source,))]
        for table, key in (("cites", "fact"), ("mentions", "fact"), ("facts", "id")):
            conn.executemany(f"DELETE FROM {table} WHERE {key} = ?", [(i,) for i in ids])

    def _put_session(self, conn: sqlite3.Connection, session: Session) -> int:
        self._forget_session(conn, session.slug)
        cur = conn.execute(
            "INSERT INTO sessions(slug, time, title, mode, branch) VALUES (?, ?, ?, ?, ?)",
            (session.slug, session.time, session.title, session.mode, session.branch),
        )
        conn.executemany(
            "INSERT OR IGNORE INTO session_commits VALUES (?, ?)",
            [(cur.lastrowid, s) for s in session.commits],
        )
        for bullet in session.bullets:
            self._add_fact(conn, f"s:{session.slug}", session.time, bullet)
        return 1

    def _forget_session(self, conn: sqlite3.Connection, slug: str) -> int:
        row = conn.execute("SELECT id FROM sessions WHERE slug = ?", (slug,)).fetchone()
        self._drop_facts(conn, f"s:{slug}")
        if not row:
            return 0
        conn.execute("DELETE FROM session_commits WHERE session = ?", row)
        conn.execute("DELETE FROM sessions WHERE id = ?", row)
        return 1

    def _forget_item(self, conn: sqlite3.Connection, path: str) -> int:
        sha, slug = layout.note_sha(path), layout.session_slug(path)
        if sha is not None:
            return self._forget_commit(conn, sha)
        return self._forget_session(conn, slug) if slug is not None else 0

    def _put_digest(self, conn: sqlite3.Connection, blob: str, when: int, tombs: set[str]) -> None:
        self._drop_facts(conn, "digest")
        if not blob:
            return
        data = gitcmd.cat_blobs(self.cwd, [blob]).get(blob)
        if data is None:
            return
        for bullet in parse_digest(data.decode("utf-8", "replace")):
            if cites_mod.is_forgotten(bullet.text, tombs) or any(
                cites_mod.is_buried(f"c:{s}", tombs) for s in bullet.cites
            ):
                continue  # a line citing a forgotten item may quote it, whatever else it cites
            self._add_fact(conn, "digest", when, bullet)

    def _bury(self, conn: sqlite3.Connection, tombs: set[str]) -> int:
        """Remove forgotten items, and every digest fact citing one of them."""
        gone = 0
        for tomb in tombs:
            kind, _, ident = tomb.partition(":")
            if kind == "c" and len(ident) >= 7:
                rows = conn.execute(
                    "SELECT sha FROM commits WHERE sha >= ? AND sha < ?", (ident, ident + "~")
                ).fetchall()
                gone += sum(self._forget_commit(conn, r[0]) for r in rows)
            elif kind == "s":
                gone += self._forget_session(conn, ident)
        digest_facts = "SELECT id, text FROM facts WHERE source = 'digest'"
        for fact, text in conn.execute(digest_facts).fetchall():
            shorts = [r[0] for r in conn.execute("SELECT short FROM cites WHERE fact = ?", (fact,))]
            if cites_mod.is_forgotten(text, tombs) or any(
                cites_mod.is_buried(f"c:{s}", tombs) for s in shorts
            ):
                for table, key in (("cites", "fact"), ("mentions", "fact"), ("facts", "id")):
                    conn.execute(f"DELETE FROM {table} WHERE {key} = ?", (fact,))
                gone += 1
        return gone

    # -- reading -------------------------------------------------------------------------
    def _read(self) -> sqlite3.Connection:
        try:
            conn = self._connect(self.path)
            self._marks(conn)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise IndexError_(
                f"the path index cannot be read ({exc})",
                hint="`gitvault recall --for PATH` rebuilds it",
            ) from exc
        return conn

    def _names(self, conn: sqlite3.Connection, path: str) -> tuple[int, list[int], list[str]]:
        """The path's id, the ids of it and its earlier names, and those earlier names."""
        row = conn.execute("SELECT id FROM paths WHERE path = ?", (path,)).fetchone()
        if row is None:
            return 0, [], []
        rows = conn.execute(
            "WITH RECURSIVE names(id) AS (SELECT ? UNION SELECT r.old FROM renames r "
            "JOIN names n ON r.new = n.id) SELECT names.id, paths.path FROM names "
            "JOIN paths ON paths.id = names.id LIMIT 50",
            (row[0],),
        ).fetchall()
        ids = [int(r[0]) for r in rows]
        return int(row[0]), ids, [r[1] for r in rows if r[0] != row[0]]

    def _current_names(self, conn: sqlite3.Connection, ids: list[int]) -> dict[int, int]:
        """id → the id of its newest name (renames followed forward)."""
        out: dict[int, int] = {}
        for start in ids:
            here, seen = start, {start}
            while True:
                row = conn.execute(
                    'SELECT r.new FROM renames r JOIN commits c ON c.id = r."commit" '
                    "WHERE r.old = ? ORDER BY c.time DESC LIMIT 1",
                    (here,),
                ).fetchone()
                if row is None or row[0] in seen:
                    break
                here = int(row[0])
                seen.add(here)
            out[start] = here
        return out

    def facts(self, path: str, *, recent: int = 12, partners: int = 60) -> PathFacts | None:
        """What the index knows about `path` (repository-relative, POSIX), or None: nothing."""
        with closing(self._read()) as conn:
            return self._facts(conn, path, recent, partners)

    def facts_of(self, paths: list[str]) -> Iterator[tuple[str, PathFacts | None]]:
        """facts() of many paths, through one connection (the materialized blocks)."""
        with closing(self._read()) as conn:
            for path in paths:
                yield path, self._facts(conn, path, 12, 60)

    def marks(self) -> dict[str, str]:
        """The vault commit the index read last on each ref ({} when it cannot be read)."""
        try:
            with closing(self._connect(self.path)) as conn:
                return self._marks(conn)
        except (sqlite3.DatabaseError, OSError):
            return {}

    def touched_by(self, shas: list[str]) -> tuple[set[str], int]:
        """The paths these commits touched, and how many commits an amend or a rebase has
        replaced so far (a change of that count may have taken paths' history away)."""
        out: set[str] = set()
        with closing(self._read()) as conn:
            for start in range(0, len(shas), 500):
                chunk = shas[start : start + 500]
                rows = conn.execute(
                    "SELECT DISTINCT p.path FROM commits c "
                    'JOIN touches t ON t."commit" = c.id JOIN paths p ON p.id = t.path '
                    f"WHERE c.sha IN ({','.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
                out.update(r[0] for r in rows)
            gone = conn.execute("SELECT count(*) FROM replaced").fetchone()[0]
        return out, int(gone)

    def _facts(
        self, conn: sqlite3.Connection, path: str, n_recent: int, n_partners: int
    ) -> PathFacts | None:
        own, ids, former = self._names(conn, path)
        if not ids:
            return None
        marks = ",".join("?" * len(ids))
        rows = conn.execute(
            "SELECT c.id, c.sha, c.time, c.subject, c.kind, c.target, c.reason, c.files, c.parent "
            f'FROM touches t JOIN commits c ON c.id = t."commit" WHERE t.path IN ({marks}) '
            "GROUP BY c.id ORDER BY c.time DESC, c.sha",
            ids,
        ).fetchall()
        if not rows:
            return None
        rows = newest_first(rows)
        commits = [CommitRow(*r[1:8]) for r in rows]
        undoes = self._reverts(conn)
        reverts = [(c, self._target(conn, c.target)) for c in commits if c.kind == "revert"]
        mine = {c.sha for c in commits}
        reverted = []
        for c in commits:
            undo = undoes.get(c.sha[:7]) or undoes.get('"' + c.subject + '"')
            if (
                undo is not None
                and undo.sha not in mine
                and undo.target
                in (
                    c.sha[: len(undo.target)],
                    '"' + c.subject + '"',
                )
            ):
                reverted.append((c, undo))
        fixes = tuple(c for c in commits if c.kind == "fix")[:8]
        window = [r[0] for r in rows if r[7] <= MAX_PAIR_FILES][:RECENT_COMMITS]
        together: dict[int, int] = {}
        for start in range(0, len(window), 500):
            chunk = window[start : start + 500]
            cmarks = ",".join("?" * len(chunk))
            for pid, n in conn.execute(
                f'SELECT path, count(*) FROM touches WHERE "commit" IN ({cmarks}) '
                f"AND path NOT IN ({marks}) GROUP BY path",
                [*chunk, *ids],
            ):
                together[int(pid)] = together.get(int(pid), 0) + int(n)
        ranked = sorted(together.items(), key=lambda kv: -kv[1])[: n_partners * 2]
        forward = self._current_names(conn, [pid for pid, _ in ranked])
        merged: dict[int, int] = {}
        for pid, n in ranked:
            target = forward.get(pid, pid)
            if target in ids:
                continue
            merged[target] = merged.get(target, 0) + n
        names = (
            dict(
                conn.execute(
                    f"SELECT id, path FROM paths WHERE id IN ({','.join('?' * len(merged))})",
                    list(merged),
                ).fetchall()
            )
            if merged
            else {}
        )
        partner_list = sorted(
            ((names[pid], n) for pid, n in merged.items() if pid in names),
            key=lambda pn: (-pn[1], pn[0]),
        )[:n_partners]
        facts, session, steps = self._memory(conn, path, [c.sha[:7] for c in commits])
        return PathFacts(
            path=path,
            names=tuple(former),
            commits=len(commits),
            first=commits[-1].time,
            last=commits[0].time,
            recent=tuple(commits[:n_recent]),
            reverts=tuple(reverts),
            reverted=tuple(reverted),
            fixes=fixes,
            partners=tuple(partner_list),
            paired=len(window),
            facts=facts,
            session=session,
            next_steps=steps,
        )

    def _reverts(self, conn: sqlite3.Connection) -> dict[str, CommitRow]:
        """Every revert by what it names: the reverted commit's short sha, or its quoted
        subject (the newest revert of each)."""
        out: dict[str, CommitRow] = {}
        for row in conn.execute(
            "SELECT sha, time, subject, kind, target, reason, files FROM commits "
            "WHERE kind = 'revert' AND target != '' ORDER BY time"
        ):
            revert = CommitRow(*row)
            out[revert.target if revert.target.startswith('"') else revert.target[:7]] = revert
        return out

    def _target(self, conn: sqlite3.Connection, target: str) -> CommitRow | None:
        if not target:
            return None
        if target.startswith('"'):
            row = conn.execute(
                "SELECT sha, time, subject, kind, target, reason, files FROM commits "
                "WHERE subject = ? ORDER BY time DESC LIMIT 1",
                (target.strip('"'),),
            ).fetchone()
        else:
            row = conn.execute(
                "SELECT sha, time, subject, kind, target, reason, files FROM commits "
                "WHERE short = ? AND sha LIKE ? || '%' LIMIT 1",
                (target[:7], target),
            ).fetchone()
        return CommitRow(*row) if row else None

    def _memory(
        self, conn: sqlite3.Connection, path: str, shorts: list[str]
    ) -> tuple[tuple[Fact, ...], SessionRow | None, tuple[str, ...]]:
        """Facts citing the path's commits or naming the path; the newest session that made
        one of its commits or named it, and that session's next steps."""
        fact_ids: set[int] = set()
        session_ids: set[int] = set()
        for start in range(0, len(shorts), 500):
            chunk = shorts[start : start + 500]
            qs = ",".join("?" * len(chunk))
            fact_ids.update(
                r[0] for r in conn.execute(f"SELECT fact FROM cites WHERE short IN ({qs})", chunk)
            )
            session_ids.update(
                r[0]
                for r in conn.execute(
                    f"SELECT session FROM session_commits WHERE short IN ({qs})", chunk
                )
            )
        parts = path.split("/")
        tokens = ["/".join(parts[i:]) for i in range(len(parts) - 1)]
        base = parts[-1]
        if conn.execute("SELECT count(*) FROM paths WHERE base = ?", (base,)).fetchone()[0] <= 1:
            tokens.append(base)  # a bare file name counts when no other path bears it
        qs = ",".join("?" * len(tokens))
        fact_ids.update(
            r[0] for r in conn.execute(f"SELECT fact FROM mentions WHERE token IN ({qs})", tokens)
        )
        rows = []
        if fact_ids:
            qs = ",".join("?" * len(fact_ids))
            rows = conn.execute(
                f"SELECT source, kind, time, text FROM facts WHERE id IN ({qs}) "
                "ORDER BY time DESC, id",
                list(fact_ids),
            ).fetchall()
        facts = tuple(Fact(*r) for r in rows)
        named = {f.source[2:] for f in facts if f.source.startswith("s:")}
        if named:
            qs = ",".join("?" * len(named))
            session_ids.update(
                r[0]
                for r in conn.execute(f"SELECT id FROM sessions WHERE slug IN ({qs})", list(named))
            )
        session = None
        steps: tuple[str, ...] = ()
        if session_ids:
            qs = ",".join("?" * len(session_ids))
            row = conn.execute(
                f"SELECT slug, time, title, mode, branch FROM sessions WHERE id IN ({qs}) "
                "ORDER BY mode = 'auto', time DESC LIMIT 1",
                list(session_ids),
            ).fetchone()
            if row:
                session = SessionRow(*row)
                steps = tuple(
                    r[0]
                    for r in conn.execute(
                        "SELECT text FROM facts WHERE source = ? AND kind = 'next' ORDER BY id",
                        (f"s:{session.slug}",),
                    )
                )
        return facts, session, steps

    def co_changed(self, path: str, n: int = 20) -> list[tuple[str, int]]:
        found = self.facts(path, recent=0, partners=n)
        return list(found.partners) if found else []

    def hot_spots(self, n: int = 20, since: int = 0) -> list[tuple[str, int, int]]:
        """(path, commits, fixes) of the most-changed paths since a time, most first."""
        with closing(self._read()) as conn:
            rows = conn.execute(
                "SELECT p.path, count(*), sum(c.kind = 'fix') FROM touches t "
                'JOIN commits c ON c.id = t."commit" JOIN paths p ON p.id = t.path '
                "WHERE c.time >= ? GROUP BY t.path ORDER BY 2 DESC, 3 DESC, p.path LIMIT ?",
                (since, n),
            ).fetchall()
        return [(r[0], int(r[1]), int(r[2] or 0)) for r in rows]

    def reverts(self, n: int = 50) -> list[tuple[CommitRow, CommitRow | None]]:
        """(revert, what it reverted when the index holds it) of the newest noted reverts."""
        with closing(self._read()) as conn:
            rows = conn.execute(
                "SELECT sha, time, subject, kind, target, reason, files FROM commits "
                "WHERE kind = 'revert' ORDER BY time DESC, sha LIMIT ?",
                (n,),
            ).fetchall()
            return [(c, self._target(conn, c.target)) for c in map(CommitRow._make, rows)]

    def pairs(self, n: int = 20, min_count: int = 2) -> list[tuple[str, str, int]]:
        """(a, b, commits together) of the paths that change together most, over commits of at
        most MAX_PAIR_FILES files."""
        with closing(self._read()) as conn:
            rows = conn.execute(
                'SELECT pa.path, pb.path, count(*) FROM touches a JOIN touches b ON a."commit" = '
                'b."commit" AND a.path < b.path JOIN commits c ON c.id = a."commit" '
                "JOIN paths pa ON pa.id = a.path JOIN paths pb ON pb.id = b.path "
                "WHERE c.files <= ? GROUP BY a.path, b.path HAVING count(*) >= ? "
                "ORDER BY 3 DESC, 1, 2 LIMIT ?",
                (MAX_PAIR_FILES, min_count, n),
            ).fetchall()
        return [(r[0], r[1], int(r[2])) for r in rows]

    def drop(self) -> None:
        """Delete the index and its path list (after a redaction: no old text may linger)."""
        lock = self.loc.state_dir / statedir.PATH_INDEX_LOCK
        with file_lock(lock, block=True, timeout=LOCK_TIMEOUT):
            for name in (self.path, Path(f"{self.path}-journal"), self.known_file):
                name.unlink(missing_ok=True)


class _Rewritten(Exception):
    pass


class _Resurrected(Exception):
    pass


def knows(loc: Location, path: str) -> bool | None:
    """Whether the index has history for `path` (None: the path list cannot tell)."""
    return known.knows(loc.state_dir / statedir.KNOWN_PATHS, path)


def update_quietly(loc: Location, *, rebuild_here: bool = True) -> Updated | None:
    """Bring the index up to date, logging instead of raising (drain, fold, sync and save call
    this after they wrote: the index must never fail the write it follows). A command the user
    waits for passes rebuild_here=False: an index to build whole (none yet, a rewritten
    history) is then built by a background drainer, not on the user's time."""
    from gitvault.notes.background import in_foreground
    from gitvault.vault.locking import log_failure

    try:
        updated = PathIndex(loc).update(rebuild=rebuild_here or in_foreground())
        if updated.deferred:
            from gitvault.notes.background import start_drainer

            start_drainer(loc, f"path index to build ({updated.reason})")
        return updated
    except (GitvaultError, sqlite3.Error, OSError) as exc:
        detail = exc.message if isinstance(exc, GitvaultError) else f"{type(exc).__name__}: {exc}"
        log_failure(loc.state_dir, f"path index not updated: {detail}")
        return None


def iter_known(loc: Location) -> Iterator[str]:
    """The paths the path list holds (for tests and the bench)."""
    found = known.read(loc.state_dir / statedir.KNOWN_PATHS)
    if found is None:
        return
    for line in found[1].split(b"\n"):
        if line:
            yield line.decode("utf-8", "surrogateescape")
