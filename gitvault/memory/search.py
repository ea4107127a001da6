"""`gitvault search`: ranked full-text search over the notes, the sessions and every line the
digest ever had, with SQLite FTS5 (Python's sqlite3; no server, nothing to install).

The index is a cache, never committed and never authoritative: `search.sqlite` in gitvault's
folder of the common git dir (one per repository, shared by its worktrees). It remembers the
vault commit it indexed last (its own watermark) and catches up from `watermark..vault` with one
`git log --raw` and one `git cat-file --batch`, so the cost follows what is new. It is rebuilt
from the vault when it is missing, unreadable, of another schema, or when its watermark is no
longer in the vault's history (after `gitvault redact` rewrote it). Updates are serialised by an
flock (`search.lock`) and each is one SQLite transaction; readers never see half an update.

What is indexed (memory/searchtext says how words and names are cut): each note (its subject,
message without trailers, and file list; dated by the commit), each session (dated by its save),
and each distinct line any version of `_master.md` ever held (dated by the fold that first wrote
it, cited `digest:<fold commit>`). Two indexes, both holding postings only (the text stays in
git, so the index is small): words (Porter-stemmed, title and body apart) and names (identifiers
and paths whole). Forgotten items (tombstones) are removed and never indexed again, with every
digest line citing one of them (past versions too). Nothing indexed or shown holds a secret:
in a vault that never took anything from a remote (origin.solo), what gitvault wrote was
redacted as it was written; everything else (all of a vault that ever took a remote's, whose
committer a remote can forge; what a hand-made vault commit wrote) is redacted again here. A
rebuild reads the tip's tree, and the history only for the digest's versions and for the
commits gitvault did not make alone.

Relevance, honestly. Each query term (a word, or a name kept whole) weighs its inverse document
frequency: a word in half the vault says little, a rare one a lot. A result's coverage is the
weight of the terms it holds (a term only in the paths a commit touched at FILES_WEIGHT of its
weight among paths). Results are ranked by coverage first, counted COVER_WEIGHT times, plus
where the terms stand: a term in the title counting TITLE_WEIGHT times, one in the body scaled
down as the body grows (BM25's length normalisation, with term frequency left out: a note that
names a thing once is about it). Coverage first, because where alone let one rare word in a
short subject outrank a long message holding every word asked for (on git/git's long commit
messages, a query of three words from one body found that body at rank 3 or better for 0.70 of
them, `git log --grep` ranked by words matched for 1.00). A result holding fewer than all the
terms is marked partial, with the words it holds; one holding less than SHOW_SHARE of what the
best result holds is not shown. A raw score cannot be the
threshold: weights depend on the vault's size. A pull request's merge and the commits it brought
in are one result when the merge matched, the merge first, naming the others; when it did not,
each commit stands on its own (folded under the best of them, a commit holding the same words
as a sibling was hidden: on git/git, 3 of 80 body and identifier queries). One branch merged
into several lines is one result. A merge's subject names a branch, not what changed: its
words weigh as a body's. A name asked for (`test_testing_logging.py`) is also asked for by its
words; a document holding the name whole holds those words too, counted as prose.

Measured and not taken (2026-12-02, click, every kind scored in one process per setting, load
5-6; hit@3 of the dev questions / held-out 1, 2, 3, before 0.58 / 0.60, 0.62, 0.41): a title
weighing 4 (0.62 / 0.53, 0.57, 0.27; the file kind 1.00 → 0.93), coverage weighing 2 (0.62 /
0.53, 0.57, 0.36), BM25's b at 1.0 (unchanged), paths at 0.25 (held-out 2 0.57), and two tried
as code and taken out: the body's length discounting coverage as well as position (0.62 / 0.53,
0.52, 0.32-0.41) and query words held by more than 10, 5 or 2 % of the documents dropped (0.58 →
0.50 / 0.60 → 0.53, 0.62 → 0.48, 0.36; at 2 % the inflected kind 0.97 → 0.85). The weights
moved one dev question up and held-out questions down; the cut moved none up. On git/git
(`requery --set`, load 2-4; before 0.52 / 0.53, 0.19, 0.24) both weights cost dev and held-out
1 questions: title 4 0.40 / 0.40, coverage 2 0.40 / 0.33, identifier 0.95 → 0.93. Most misses
are vocabulary: the question's words are not the commit's, which no weight reaches.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import math
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from gitvault import scrub
from gitvault.errors import GitvaultError
from gitvault.memory import cites as cites_mod
from gitvault.memory import searchtext
from gitvault.named import NamedTuple
from gitvault.resolve import Location
from gitvault.scrub.engine import scrub_secrets
from gitvault.vault import frontmatter, gitcmd, layout, origin, statedir
from gitvault.vault.files import ready_for_sqlite
from gitvault.vault.locking import file_lock
from gitvault.vault.notebody import parse_body
from gitvault.vault.times import parse_time

# 7: digest lines' twins, 6: merges' twins, 5: own (4: a note's file list is a column of its own)
SCHEMA_VERSION = "7"
KINDS = ("note", "session", "digest")
DEFAULT_LIMIT = 10  # results shown unless -n says otherwise
MAX_LIMIT = 200
AGENT_MAX_CHARS = 4000  # the whole text answer, for an agent's context
SNIPPET_TOKENS = 14
TITLE_WEIGHT = 2.0  # a term in the title counts this many times one in a body of average length
COVER_WEIGHT = 4.0  # coverage (the terms held, wherever they stand) against where they stand
FILES_WEIGHT = 0.5  # a term only in the paths a commit touched (weighed by its df among paths)
SHOW_SHARE = 0.4  # a shown result holds at least this share of the best result's coverage
CANDIDATES = 400  # results scored in full (title, length) after the first cut by coverage
BM25_B = 0.75  # how much a long body dilutes a match (BM25's b; its k1 below)
BM25_K1 = 1.2
WALK_MAX = 200  # commits followed back from a merge to find what it brought in
BLOB_BATCH = 4000
INSERT_BATCH = 2000  # rows a rebuild inserts at a time
BODY_MAX = 20_000  # characters of one document indexed (a session is ≤ ~200 KB at most)
LOCK_TIMEOUT = 60.0

_TOKENIZER = "porter unicode61 remove_diacritics 2"
_NAME_TOKENIZER = f"unicode61 remove_diacritics 2 tokenchars '{searchtext.NAME_TOKEN_CHARS}_'"
_DDL = f"""
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE docs(
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,  -- c:<sha> | s:<slug> | d:<hash of the digest line>
    kind TEXT NOT NULL,
    time INTEGER NOT NULL,
    size INTEGER NOT NULL,  -- words indexed: BM25's document length
    blob BLOB,  -- notes and sessions: the indexed version (its text, to show or unindex)
    path TEXT,  -- only when it is not the path the key gives
    parent BLOB,  -- notes: the first parent
    merge INTEGER NOT NULL DEFAULT 0,  -- notes: a merge commit
    grp INTEGER,  -- notes a merge brought in: that merge's id
    line TEXT,  -- digest lines: fold commit, category, line, cites (unit-separated)
    twin INTEGER,  -- notes: a hash of the subject (copies of one change) or of a merged branch;
    -- digest lines: of the line without its citations and numbers (its versions)
    own INTEGER NOT NULL DEFAULT 0  -- this clone's gitvault wrote it (scrubbed as it was written)
);
CREATE INDEX docs_parent ON docs(parent) WHERE parent IS NOT NULL;
CREATE TABLE tombs(cite TEXT PRIMARY KEY);
CREATE VIRTUAL TABLE words USING fts5(
    title, body, files, tokenize = '{_TOKENIZER}', content = '', detail = column, columnsize = 0
);
CREATE VIRTUAL TABLE names USING fts5(
    name, tokenize = "{_NAME_TOKENIZER}", content = '', detail = none, columnsize = 0
);
"""
_INSERT_DOC = (
    "INSERT INTO docs(id, key, kind, time, size, blob, path, parent, merge, grp, line, twin, own)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_WORDS = "INSERT INTO words(rowid, title, body, files) VALUES (?, ?, ?, ?)"
_INSERT_NAMES = "INSERT INTO names(rowid, name) VALUES (?, ?)"
_SNIPPET_DDL = f"CREATE VIRTUAL TABLE shown USING fts5(title, body, tokenize = '{_TOKENIZER}')"
_US = "\x1f"


class SearchError(GitvaultError):
    pass


class _Rebuild(Exception):
    """The index cannot be caught up (a blob it must unindex is gone): rebuild it."""


class Related(NamedTuple):
    cite: str
    title: str
    relation: str  # "merge": the merge that brought this result in; "commit": one it brought;
    # "copy": the same change again (a cherry-pick, a squash: the same subject)

    def as_json(self) -> dict[str, object]:
        return {"id": self.cite, "title": self.title, "relation": self.relation}


class Hit(NamedTuple):
    cite: str  # c:<sha7> | s:<slug> | digest:<fold commit sha7>
    kind: str  # note | session | digest
    time: int  # the commit's date (notes), the save (sessions), the fold (digest lines)
    title: str
    snippet: str  # the best-matching passage, matched words in [brackets]
    score: float  # higher is better (comparable within one answer only)
    partial: bool  # holds some of the query's terms, not all of them
    path: str
    matched: tuple[str, ...]  # the query's terms this result holds: why it is here
    related: tuple[Related, ...]  # the same pull request's merge or commits, folded in
    # origin.label of a result that came from another clone ("" for this clone's own): a
    # teammate's text, shown as such to whoever reads the answer (a person, an agent).
    origin: str = ""

    @property
    def date(self) -> str:
        return datetime.fromtimestamp(self.time, tz=UTC).strftime("%Y-%m-%d")

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.cite,
            "kind": self.kind,
            "date": self.date,
            "time": datetime.fromtimestamp(self.time, tz=UTC).isoformat(timespec="seconds"),
            "title": self.title,
            "snippet": self.snippet,
            "score": self.score,
            "partial": self.partial,
            "path": self.path,
            "matched": list(self.matched),
            "related": [r.as_json() for r in self.related],
            "origin": self.origin,
        }


class Answer(NamedTuple):
    query: str
    terms: list[str]
    hits: list[Hit]
    min_terms: int  # the fewest terms a shown result holds
    indexed: int  # documents in the index

    def as_json(self) -> dict[str, object]:
        return {
            "query": self.query,
            "terms": self.terms,
            "min_terms": self.min_terms,
            "indexed": self.indexed,
            "results": [h.as_json() for h in self.hits],
        }


class Updated:
    """What one update did."""

    def __init__(self, tip: str | None) -> None:
        self.tip = tip
        self.added = 0
        self.removed = 0
        self.rebuilt = False
        self.reasons: list[str] = []


class _Text(NamedTuple):
    """What one document is indexed as (a pure function of its blob, so the same text can be
    taken out of the contentless index again)."""

    title: str
    body: str
    names: str
    size: int
    files: str = ""  # notes: the paths the commit touched, one a line


class _Doc(NamedTuple):
    id: int
    key: str
    kind: str
    time: int
    size: int
    blob: bytes | None
    path: str | None
    merge: int
    grp: int | None
    line: str | None
    twin: int | None
    own: int


_DOC_COLUMNS = "id, key, kind, time, size, blob, path, merge, grp, line, twin, own"
# The front matter an index reads (decoding every key of 100,000 notes is most of a parse).
_META_KEYS = frozenset({"committed", "saved_at", "parents", "title"})


# -- the text of a document ------------------------------------------------------------------


def _note_text(body: str) -> _Text:
    note = parse_body(body)
    message = searchtext.strip_trailers(note.message)
    files = note.files
    names = searchtext.names_in(note.subject + "\n" + message)
    for path in files:
        names += _path_names(path)
    listed = "\n".join(files)[:BODY_MAX]
    return _text(note.subject, message.strip()[:BODY_MAX], names, listed)


@functools.lru_cache(maxsize=1 << 15)  # 85,000 distinct paths in 65,536: ~12 MB more
def _path_names(path: str) -> tuple[str, ...]:
    """A touched path's names (it and its tails): the same paths recur in thousands of notes."""
    return tuple(searchtext.names_in(path))


def _text(title: str, body: str, names: Iterable[str], files: str = "") -> _Text:
    title = title[:500]
    size = len(title.split()) + len(body.split())
    return _Text(title, body, searchtext.name_tokens(list(dict.fromkeys(names))), size, files)


def _decoded(data: bytes, own: bool) -> str:
    """A vault file's text as the index may hold it: secrets redacted, so no posting, stored
    line or snippet carries one. What this clone's gitvault wrote was redacted as it was
    written (notes/render, memory/sessions, the fold) and is not scanned again; anything else
    is: what a remote brought (a teammate's clone, an older gitvault), a hand-made commit."""
    text = data.decode("utf-8", "replace")
    return text if own else scrub_secrets(text)[0]


def _item_text(kind: str, data: bytes, own: bool) -> tuple[dict[str, object], _Text]:
    meta, body = frontmatter.parse(_decoded(data, own), _META_KEYS)
    if kind == "note":
        return meta, _note_text(body)
    title, rest = _title_and_rest(body)
    if isinstance(meta.get("title"), str):
        title = str(meta["title"])
    rest = searchtext.strip_trailers(rest)[:BODY_MAX]
    return meta, _text(title, rest, searchtext.names_in(title + "\n" + rest))


def _digest_text(category: str, line: str) -> _Text:
    return _text(category, line, searchtext.names_in(line))


def _title_and_rest(body: str) -> tuple[str, str]:
    lines = body.strip().splitlines()
    if lines and lines[0].startswith("# "):
        return lines[0][2:].strip(), "\n".join(lines[1:]).strip()
    return "", body.strip()


_PR_NUMBER = re.compile(r"\s*\((?:#|!|gh-)\d+\)\s*$", re.IGNORECASE)


_MERGED_BRANCH = re.compile(r"Merge (?:remote-tracking )?branch '([^'\s]+)'")


def _twin(subject: str, merge: bool) -> int | None:
    """What copies of one change share: its subject, case and spacing folded, a trailing pull
    request number dropped (a cherry-pick to a stable branch, a squash of the same change);
    for a merge, the branch it merged (one topic merged into maint, next and master). None
    for a subject too short to tell changes apart, or a merge that names no branch."""
    if merge:
        found = _MERGED_BRANCH.match(subject)
        if found is None:
            return None
        folded = "merge " + found.group(1)
    else:
        folded = " ".join(_PR_NUMBER.sub("", subject).lower().split())
        if len(folded.split()) < 3:
            return None
    return int.from_bytes(hashlib.sha1(folded.encode()).digest()[:7], "big")


_NOT_WORDS = re.compile(r"[\W\d_]+")


def _digest_twin(stored: str) -> int:
    """What the versions of one digest line share (each fold rewrites the digest, and a line
    whose claim stands gets new citations and counts): its category and words, without its
    citations, numbers and punctuation. Search shows one of them, the newest."""
    _, category, line, *_ = (*stored.split(_US), "", "", "")
    for start, end, _cite in reversed(cites_mod.cite_spans(line)):
        line = line[:start] + " " + line[end:]
    folded = " ".join(_NOT_WORDS.sub(" ", f"{category} {line}").lower().split())
    return int.from_bytes(hashlib.sha1(f"\0digest {folded}".encode()).digest()[:7], "big")


def _clean(text: str, limit: int) -> str:
    """One line of display text: no control characters (escape sequences), no line breaks."""
    text = " ".join(searchtext.CONTROL.sub(" ", text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _quoted(term: str) -> str:
    """A term as an FTS5 string: never read as query syntax."""
    return '"' + term.replace('"', '""') + '"'


class _Commit(NamedTuple):
    id: int
    sha: bytes
    parent: bytes | None
    merge: bool
    grp: int | None


class _StoredGraph:
    """The commit graph as the index holds it (an update adds a few notes to many)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.claimed: dict[bytes, int] = {}

    def commit(self, sha: bytes) -> _Commit | None:
        row = self.conn.execute(
            "SELECT id, parent, merge, grp FROM docs WHERE key = ?", (f"c:{sha.hex()}",)
        ).fetchone()
        if row is None:
            return None
        return _Commit(row[0], sha, row[1], bool(row[2]), self.claimed.get(sha, row[3]))

    def children(self, sha: bytes) -> int:
        sql = "SELECT count(*) FROM (SELECT 1 FROM docs WHERE parent = ? LIMIT 2)"
        return int(self.conn.execute(sql, (sha,)).fetchone()[0])

    def claim(self, sha: bytes, merge_id: int) -> None:
        self.claimed[sha] = merge_id


class _BuildGraph:
    """The commit graph of the notes a rebuild inserts, in memory (git.git has 25,000 merges:
    a query per step would cost seconds)."""

    def __init__(self) -> None:
        self.commits: dict[bytes, _Commit] = {}
        self.kids: dict[bytes, int] = {}

    def add(self, doc: int, sha: bytes, parent: bytes | None, merge: bool) -> None:
        self.commits[sha] = _Commit(doc, sha, parent, merge, None)
        if parent is not None:
            self.kids[parent] = self.kids.get(parent, 0) + 1

    def commit(self, sha: bytes) -> _Commit | None:
        return self.commits.get(sha)

    def children(self, sha: bytes) -> int:
        return self.kids.get(sha, 0)

    def claim(self, sha: bytes, merge_id: int) -> None:
        self.commits[sha] = self.commits[sha]._replace(grp=merge_id)


# -- the index ---------------------------------------------------------------------------------


class Index:
    """The search index of one repository's vault."""

    def __init__(self, loc: Location, branch: str | None = None) -> None:
        self.loc = loc
        self.cwd = loc.common_dir
        self.branch = branch or gitcmd.vault_branch(self.cwd)
        self.ref = layout.branch_ref(self.branch)
        self.path = loc.state_dir / statedir.SEARCH_INDEX
        self._fresh = False  # building a new index (no document to replace)
        self._graph: _BuildGraph | None = None  # the commits a rebuild inserted
        # A rebuild's items, inserted many rows at a time (ids given here, in order)
        self._batch: list[tuple[tuple[object, ...], _Text]] | None = None
        self._batched: set[str] = set()
        self._next_id = 1

    # -- opening -------------------------------------------------------------------------
    def _connect(self, path: Path) -> sqlite3.Connection:
        ready_for_sqlite(path)
        conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _watermark(self, conn: sqlite3.Connection) -> str | None:
        """The vault commit indexed last; raises sqlite3.DatabaseError for a broken file."""
        rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if (
            rows.get("schema") != SCHEMA_VERSION
            or rows.get("ref") != self.ref
            or rows.get("scrub") != scrub.generation()
        ):
            raise sqlite3.DatabaseError("index of another schema, branch or secret filter")
        return rows.get("watermark") or None

    def tip(self) -> str | None:
        return gitcmd.ref_exists(self.cwd, self.ref)

    def noted(self, prefix: str) -> list[str] | None:
        """The vault paths of the notes of the commits whose sha starts with `prefix` (lower
        hex), from the index when it is built from the vault's tip; None when it is not (the
        caller reads the vault instead)."""
        if not self.path.exists() or any(c not in "0123456789abcdef" for c in prefix):
            return None
        try:
            with closing(self._connect(self.path)) as conn:
                if self._watermark(conn) != self.tip():
                    return None
                rows = conn.execute(
                    "SELECT key, time, path FROM docs WHERE key >= ? AND key < ? AND kind = 'note'",
                    (f"c:{prefix}", f"c:{prefix}g"),
                ).fetchall()
        except (sqlite3.DatabaseError, OSError):
            return None
        return [path or _path_of(key, moment) for key, moment, path in rows]

    # -- updating ------------------------------------------------------------------------
    def update(self) -> Updated:
        """Bring the index up to the vault's tip (or rebuild it). Returns what changed."""
        tip = self.tip()
        try:
            if self.path.exists():
                with closing(self._connect(self.path)) as conn:
                    if self._watermark(conn) == tip:
                        return Updated(tip)
        except sqlite3.DatabaseError:
            pass  # rebuilt below, under the lock
        state = self.loc.state_dir
        try:
            state.mkdir(exist_ok=True)
        except OSError as exc:
            raise SearchError(
                f"cannot write the search index to {state}: {exc.strerror}",
                hint="check the permissions of the repository's .git directory",
            ) from exc
        with file_lock(state / statedir.SEARCH_LOCK, block=True, timeout=LOCK_TIMEOUT) as got:
            if not got:
                raise SearchError(
                    "another gitvault process has been updating the search index for a minute",
                    hint="try again",
                )
            return self._update_locked(tip)

    def _update_locked(self, tip: str | None) -> Updated:
        result = Updated(tip)
        mark: str | None = None
        try:
            if self.path.exists():
                with closing(self._connect(self.path)) as conn:
                    mark = self._watermark(conn)
                    if mark == tip:
                        return result
                    if (
                        tip is not None
                        and mark is not None
                        and gitcmd.is_ancestor(self.cwd, mark, tip)
                    ):
                        conn.execute("BEGIN IMMEDIATE")
                        try:
                            self._apply(conn, mark, tip, result)
                            self._set_watermark(conn, tip)
                            conn.execute("COMMIT")
                            return result
                        except _Rebuild as why:
                            conn.execute("ROLLBACK")
                            result.reasons.append(str(why))
                        except BaseException:
                            conn.execute("ROLLBACK")
                            raise
                    else:
                        result.reasons.append(
                            "the vault's history was rewritten" if mark else "the index was empty"
                        )
            else:
                result.reasons.append("no index yet")
        except sqlite3.DatabaseError as exc:
            result.reasons.append(f"the index could not be read ({exc})")
        self._rebuild(tip, result)
        return result

    def _rebuild(self, tip: str | None, result: Updated) -> None:
        """Build a fresh index beside the old one and swap it in (readers of the old file
        keep reading it until they close it)."""
        result.rebuilt = True
        result.added = result.removed = 0
        tmp = self.path.with_name(f".{statedir.SEARCH_INDEX}.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        try:
            with closing(self._connect(tmp)) as conn:
                conn.executescript(_DDL)
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [
                        ("schema", SCHEMA_VERSION),
                        ("ref", self.ref),
                        ("scrub", scrub.generation()),  # a new filter: built again
                        ("watermark", ""),
                    ],
                )
                if tip is not None:
                    self._fresh, self._graph, self._batch = True, _BuildGraph(), []
                    try:
                        self._apply(conn, None, tip, result)
                    finally:
                        self._fresh, self._graph, self._batch = False, None, None
                        self._batched, self._next_id = set(), 1
                self._set_watermark(conn, tip)
                conn.execute("COMMIT")
            # never roll the new file back with the old
            Path(f"{self.path}-journal").unlink(missing_ok=True)
            os.replace(tmp, self.path)
        except _Rebuild as exc:  # a blob of the vault's own tip is missing
            raise SearchError(f"cannot build the search index: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            raise SearchError(f"cannot build the search index: {exc}") from exc
        except OSError as exc:
            raise SearchError(
                f"cannot write the search index {self.path}: {exc.strerror}",
                hint="check the permissions of the repository's .git directory",
            ) from exc
        finally:
            tmp.unlink(missing_ok=True)

    def _set_watermark(self, conn: sqlite3.Connection, tip: str | None) -> None:
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('watermark', ?)", (tip or "",))
        count, words = conn.execute("SELECT count(*), coalesce(sum(size), 0) FROM docs").fetchone()
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('docs', ?)", (str(count),))
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('words', ?)", (str(words),))

    def _changes(self, mark: str | None, tip: str) -> Iterator[gitcmd.Change]:
        """Every file change in mark..tip along the vault's first-parent line, oldest first.
        A rebuild (no mark) reads the items and tombstones of the tip's tree instead, each
        dated by the tip (a note's and a session's own date is in its front matter), and the
        history only for the digest's versions and for what gitvault did not write alone."""
        if mark is not None:
            yield from gitcmd.raw_changes(self.cwd, f"{mark}..{tip}")
            return
        foreign = {
            c.path
            for c in gitcmd.raw_changes(
                self.cwd, tip, commits=gitcmd.not_by_gitvault(self.cwd, tip)
            )
        }
        when = int(gitcmd.run_git(["log", "-1", "--format=%ct", tip, "--"], self.cwd).stdout)
        folders = [f"{layout.NOTES}/", f"{layout.SESSIONS}/", f"{layout.TOMBSTONES}/"]
        for entry in gitcmd.iter_tree(self.cwd, tip, folders, recursive=True):
            if not entry.is_dir:
                yield gitcmd.Change(
                    when, tip, "A", entry.path, entry.oid, entry.path not in foreign
                )
        yield from gitcmd.raw_changes(self.cwd, tip, [layout.DIGEST])

    def _apply(self, conn: sqlite3.Connection, mark: str | None, tip: str, result: Updated) -> None:
        items: dict[str, gitcmd.Change] = {}  # path → its last change
        digests: list[gitcmd.Change] = []  # each version
        tomb_ops: dict[str, str] = {}  # buried citation → last operation on its tombstone
        for change in self._changes(mark, tip):
            path, op = change.path, change.status
            if path == layout.DIGEST:
                if op in "AM":
                    digests.append(change)
                continue
            buried = layout.tombstone_cite(path)
            if buried is not None:
                tomb_ops[buried] = op
                continue
            if layout.is_item(path):
                items[path] = change
        if mark is not None and "D" in tomb_ops.values():
            # A tombstone was taken back: its item may be searchable again. Rare: rebuild.
            raise _Rebuild("a tombstone was removed")
        tombs_added = {cite for cite, op in tomb_ops.items() if op != "D"}
        conn.executemany("INSERT OR IGNORE INTO tombs VALUES (?)", [(t,) for t in tombs_added])
        tombs = {row[0] for row in conn.execute("SELECT cite FROM tombs")}
        if tombs_added:
            result.removed += self._bury(conn, tombs)
        reuse: dict[str, tuple[int, int | None]] = {}  # a changed item keeps its id and merge
        if not self._fresh:
            ops = {_key_of(p): c.status for p, c in items.items()}
            old = self._docs_by_keys(conn, list(ops))
            reuse = {d.key: (d.id, d.grp) for d in old if ops[d.key] != "D"}
            result.removed += self._unindex(conn, old, keep=set(reuse))
        wanted = [c for c in items.values() if c.status != "D"]
        merges: list[tuple[int, int, bytes]] = []  # (time, id, second parent) of new merges
        origins = origin.load(self.loc)
        trusted = origin.solo(self.loc)  # else nothing is taken for this clone's own writing
        for start in range(0, len(wanted), BLOB_BATCH):
            chunk = wanted[start : start + BLOB_BATCH]
            blobs = gitcmd.cat_blobs(self.cwd, [c.blob for c in chunk])
            for change in chunk:
                data = blobs.get(change.blob)
                found = origins.of(change.path) if origins else None
                if found is not None and found.hidden:
                    continue  # held for review, or rejected: never searchable
                if data is not None:
                    own = trusted and found is None and change.by_gitvault
                    result.added += self._put_item(conn, change, data, own, tombs, merges, reuse)
        self._flush(conn)
        self._batch = None  # a digest's lines are deduplicated against those inserted before
        for start in range(0, len(digests), BLOB_BATCH):
            chunk_d = digests[start : start + BLOB_BATCH]
            blobs = gitcmd.cat_blobs(self.cwd, [c.blob for c in chunk_d])
            for change in chunk_d:
                data = blobs.get(change.blob)
                came = origins.of(layout.DIGEST, change.blob) if origins else None
                if came is not None and came.hidden:
                    continue  # another clone's digest, held for review or rejected
                if data is not None:
                    own = trusted and came is None and change.by_gitvault
                    result.added += self._put_digest(
                        conn, change.commit, change.time, data, own, tombs
                    )
        if merges:
            self._group(conn, sorted(merges))

    # -- documents in and out ---------------------------------------------------------------
    def _docs_by_keys(self, conn: sqlite3.Connection, keys: Sequence[str]) -> list[_Doc]:
        out: list[_Doc] = []
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT {_DOC_COLUMNS} FROM docs WHERE key IN ({marks})"
            out += [_Doc(*row) for row in conn.execute(sql, chunk)]
        return out

    def _unindex(
        self, conn: sqlite3.Connection, docs: Sequence[_Doc], keep: set[str] | None = None
    ) -> int:
        """Take documents out of the index. The postings hold no text, so each document's text
        is made again from what it was made of (its blob, or its digest line). A document
        whose key is in `keep` comes back at once (a new version): its merge keeps its
        commits."""
        if not docs:
            return 0
        blobs = gitcmd.cat_blobs(self.cwd, sorted({d.blob.hex() for d in docs if d.blob}))
        for doc in docs:
            if doc.line is not None:
                _, category, line, _ = doc.line.split(_US)
                text = _digest_text(category, line)
            else:
                data = blobs.get(doc.blob.hex()) if doc.blob else None
                if data is None:
                    raise _Rebuild("a version the index holds is no longer in the repository")
                text = _item_text(doc.kind, data, bool(doc.own))[1]
            conn.execute(
                "INSERT INTO words(words, rowid, title, body, files) VALUES ('delete', ?, ?, ?, ?)",
                (doc.id, text.title, text.body, text.files),
            )
            conn.execute(
                "INSERT INTO names(names, rowid, name) VALUES ('delete', ?, ?)",
                (doc.id, text.names),
            )
            conn.execute("DELETE FROM docs WHERE id = ?", (doc.id,))
            if doc.merge and not (keep and doc.key in keep):
                conn.execute("UPDATE docs SET grp = NULL WHERE grp = ?", (doc.id,))
        return len(docs)

    def _bury(self, conn: sqlite3.Connection, tombs: set[str]) -> int:
        """Remove forgotten items and every digest line citing one of them."""
        found: list[_Doc] = []
        for tomb in tombs:
            if tomb.startswith("c:"):
                low, high = f"c:{tomb[2:]}", f"c:{tomb[2:]}~"
                rows = conn.execute(
                    f"SELECT {_DOC_COLUMNS} FROM docs WHERE key >= ? AND key < ?", (low, high)
                )
            else:
                rows = conn.execute(f"SELECT {_DOC_COLUMNS} FROM docs WHERE key = ?", (tomb,))
            found += [_Doc(*row) for row in rows]
        for row in conn.execute(f"SELECT {_DOC_COLUMNS} FROM docs WHERE kind = 'digest'"):
            doc = _Doc(*row)
            cited = (doc.line or "").split(_US)[-1].split()
            if any(cites_mod.is_buried(c, tombs) for c in cited):
                found.append(doc)
        unique = {d.id: d for d in found}
        return self._unindex(conn, list(unique.values()))

    def _insert(
        self,
        conn: sqlite3.Connection,
        key: str,
        kind: str,
        when: int,
        text: _Text,
        *,
        blob: bytes | None = None,
        path: str | None = None,
        parent: bytes | None = None,
        merge: bool = False,
        line: str | None = None,
        reuse: tuple[int, int | None] | None = None,
        own: bool = False,
    ) -> int:
        doc_id, grp = reuse if reuse is not None else (None, None)
        twin = (
            _twin(text.title, merge)
            if kind == "note"
            else _digest_twin(line)
            if kind == "digest" and line
            else None
        )
        batched = self._batch is not None and reuse is None and key not in self._batched
        if batched and self._batch is not None:
            doc_id = self._next_id
            self._next_id += 1
            self._batched.add(key)
        row = (
            *(doc_id, key, kind, when, text.size, blob, path, parent),
            *(int(merge), grp, line, twin, int(own)),
        )
        if batched and self._batch is not None:
            self._batch.append((row, text))
            if len(self._batch) >= INSERT_BATCH:
                self._flush(conn)
            return doc_id or 0
        self._flush(conn)
        try:
            cur = conn.execute(_INSERT_DOC, row)
        except sqlite3.IntegrityError:  # the same item twice (two paths): the last one wins
            self._unindex(conn, self._docs_by_keys(conn, [key]))
            cur = conn.execute(_INSERT_DOC, row)
        doc = cur.lastrowid or 0
        self._next_id = max(self._next_id, doc + 1)
        conn.execute(_INSERT_WORDS, (doc, text.title, text.body, text.files))
        conn.execute(_INSERT_NAMES, (doc, text.names))
        return doc

    def _flush(self, conn: sqlite3.Connection) -> None:
        """Insert what a rebuild has batched: three statements for thousands of rows."""
        if not self._batch:
            return
        conn.executemany(_INSERT_DOC, [row for row, _ in self._batch])
        conn.executemany(_INSERT_WORDS, [(r[0], t.title, t.body, t.files) for r, t in self._batch])
        conn.executemany(_INSERT_NAMES, [(r[0], t.names) for r, t in self._batch])
        self._batch.clear()

    def _put_item(
        self,
        conn: sqlite3.Connection,
        change: gitcmd.Change,
        data: bytes,
        own: bool,
        tombs: set[str],
        merges: list[tuple[int, int, bytes]],
        reuse: dict[str, tuple[int, int | None]],
    ) -> int:
        path, when, blob = change.path, change.time, change.blob
        sha, slug = layout.note_sha(path), layout.session_slug(path)
        if sha is not None:
            key, kind = f"c:{sha}", "note"
        elif slug is not None:
            key, kind = f"s:{slug}", "session"
        else:
            return 0
        if cites_mod.is_buried(key, tombs):
            return 0
        meta, text = _item_text(kind, data, own)
        moment = _timestamp(meta.get("committed" if kind == "note" else "saved_at"), when)
        listed = meta.get("parents") if kind == "note" else None
        parents = [str(p) for p in listed if _is_sha(p)] if isinstance(listed, list) else []
        first = bytes.fromhex(parents[0]) if parents else None
        kept = None if path == _path_of(key, moment) else path
        doc = self._insert(
            conn,
            key,
            kind,
            moment,
            text,
            blob=bytes.fromhex(blob),
            path=kept,
            parent=first,
            merge=len(parents) > 1,
            reuse=reuse.get(key),
            own=own,
        )
        if self._graph is not None and sha is not None:
            self._graph.add(doc, bytes.fromhex(sha), first, len(parents) > 1)
        if len(parents) > 1:
            merges.append((moment, doc, bytes.fromhex(parents[1])))
        return 1

    def _put_digest(
        self,
        conn: sqlite3.Connection,
        commit: str,
        when: int,
        data: bytes,
        own: bool,
        tombs: set[str],
    ) -> int:
        """Each distinct line of a digest version, once: the first fold that wrote it."""
        _, body = frontmatter.parse(_decoded(data, own), frozenset())
        added = 0
        category = ""
        for raw in body.splitlines():
            line = raw.strip()
            if line.startswith("## "):
                category = line[3:].strip()
                continue
            if not line.startswith("- ") or line.startswith("- [… ") or line == "- (none yet)":
                continue
            key = "d:" + hashlib.sha1(" ".join(line.split()).encode()).hexdigest()[:20]
            if conn.execute("SELECT 1 FROM docs WHERE key = ?", (key,)).fetchone():
                continue
            found = cites_mod.cites_in(line)
            if cites_mod.is_forgotten(line, tombs):
                continue  # every past version of a line about a forgotten item stays out
            text = _digest_text(category, line[2:])
            stored = _US.join((commit[:7], category, line[2:], " ".join(found)))
            self._insert(conn, key, "digest", when, text, line=stored)
            added += 1
        return added

    def _group(self, conn: sqlite3.Connection, merges: Sequence[tuple[int, int, bytes]]) -> None:
        """Mark the commits each new merge brought in (oldest merge first: the first merge of a
        commit claims it). From the merge's second parent back along first parents, until a
        commit another line of history also grew from (the fork point), a merge, a commit
        already claimed, or one the vault has no note of."""
        graph = self._graph if self._graph is not None else _StoredGraph(conn)
        claims: list[tuple[int, int]] = []
        for _, merge_id, side in merges:
            sha: bytes | None = side
            for _step in range(WALK_MAX):
                found = graph.commit(sha) if sha is not None else None
                if found is None or found.merge or found.grp is not None:
                    break
                graph.claim(found.sha, merge_id)
                claims.append((merge_id, found.id))
                sha = found.parent
                if sha is not None and graph.children(sha) > 1:
                    break
        conn.executemany("UPDATE docs SET grp = ? WHERE id = ?", claims)

    # -- querying ------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        limit: int = DEFAULT_LIMIT,
        kind: str | None = None,
        since: int | None = None,
    ) -> Answer:
        if kind is not None and kind not in KINDS:
            raise SearchError(f"unknown kind {kind!r}", hint="use note, session or digest")
        terms = searchtext.query_terms(query)
        if not terms:
            raise SearchError(
                f"the query {query!r} has no words to search for",
                hint="search for words, e.g. `gitvault search resolver worktree`",
            )
        limit = max(1, min(limit, MAX_LIMIT))
        for attempt in (1, 2):
            self.update()
            try:
                with closing(self._connect(self.path)) as conn:
                    return _Query(self, conn, query, terms, kind, since).answer(limit)
            except sqlite3.DatabaseError as exc:
                if attempt == 2:
                    raise SearchError(f"the search index cannot be read: {exc}") from exc
                # corrupt in a way only a query shows: rebuild once
                self.path.unlink(missing_ok=True)
        raise AssertionError("unreachable")


class _Term(NamedTuple):
    text: str
    docs: frozenset[int]  # documents holding it
    title: frozenset[int]  # … in their title
    prose: frozenset[int]  # … in their title or body (not only in the paths they touched)
    weight: float  # its inverse document frequency among titles and bodies (names: among names)
    files_weight: float  # … among the paths commits touched

    def cover(self, doc: int) -> float:
        """What holding the term is worth to a document, before its length is known."""
        if doc in self.prose:
            return self.weight
        return self.files_weight * FILES_WEIGHT


class _Query:
    """One query against an open index."""

    def __init__(
        self,
        index: Index,
        conn: sqlite3.Connection,
        query: str,
        terms: Sequence[searchtext.QueryTerm],
        kind: str | None,
        since: int | None,
    ) -> None:
        self.index = index
        self.conn = conn
        self.query = query
        self.asked = terms
        self.kind = kind
        self.since = since
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        self.count = int(meta.get("docs") or 0)
        self.average = int(meta.get("words") or 0) / max(self.count, 1)

    def _rowids(self, table: str, expression: str) -> frozenset[int]:
        sql = f"SELECT rowid FROM {table} WHERE {table} MATCH ?"
        return frozenset(row[0] for row in self.conn.execute(sql, (expression,)))

    def _idf(self, df: int) -> float:
        return math.log(1 + (self.count - df + 0.5) / (df + 0.5))

    def terms(self) -> list[_Term]:
        out = []
        for term in self.asked:
            if term.is_name:
                docs = self._rowids("names", _quoted(term.text))
                weight = self._idf(len(docs))
                out.append(_Term(term.text, docs, frozenset(), docs, weight, weight))
                continue
            forms = " OR ".join(_quoted(f) for f in searchtext.word_forms(term.text))
            title = self._rowids("words", f"title : ({forms})")
            prose = title | self._rowids("words", f"body : ({forms})")
            files = self._rowids("words", f"files : ({forms})")
            weight, files_weight = self._idf(len(prose)), self._idf(len(files))
            out.append(_Term(term.text, prose | files, title, prose, weight, files_weight))
        # A document holding a name whole holds the name's words where the name stands (in
        # its message, or a path it touched): they count for it as prose, never at the
        # discount of a word met only in a path, so a note that merely says `testing` does
        # not outrank the one that touched `test_testing_logging.py`.
        whole: dict[str, frozenset[int]] = {}
        for term, found in zip(self.asked, out, strict=True):
            if term.is_name:
                for part in term.parts:
                    whole[part] = whole.get(part, frozenset()) | found.docs
        return [
            t._replace(docs=t.docs | whole[t.text], prose=t.prose | whole[t.text])
            if not term.is_name and t.text in whole
            else t
            for term, t in zip(self.asked, out, strict=True)
        ]

    def _allowed(self) -> set[int] | None:
        if self.kind is None and self.since is None:
            return None
        sql, args = "SELECT id FROM docs WHERE 1", list[object]()
        if self.kind is not None:
            sql += " AND kind = ?"
            args.append(self.kind)
        if self.since is not None:
            sql += " AND time >= ?"
            args.append(self.since)
        return {row[0] for row in self.conn.execute(sql, args)}

    def _docs(self, ids: Iterable[int]) -> dict[int, _Doc]:
        ids = list(ids)
        out: dict[int, _Doc] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT {_DOC_COLUMNS} FROM docs WHERE id IN ({marks})"
            out.update((row[0], _Doc(*row)) for row in self.conn.execute(sql, chunk))
        return out

    def answer(self, limit: int) -> Answer:
        terms = self.terms()
        names = [t.text for t in terms]
        total = sum(t.weight for t in terms) or 1.0
        allowed = self._allowed()
        cover: dict[int, float] = {}
        for t in terms:
            for held in t.docs:
                if allowed is None or held in allowed:
                    cover[held] = cover.get(held, 0.0) + t.cover(held)
        if not cover:
            return Answer(self.query, names, [], len(terms), self.count)
        first = heapq.nlargest(CANDIDATES, cover, key=cover.__getitem__)
        best = cover[first[0]]
        shown = [d for d in first if cover[d] >= SHOW_SHARE * best]
        docs = self._docs(shown)

        def score(doc: _Doc) -> float:
            ratio = doc.size / self.average if self.average else 1.0
            body = (BM25_K1 + 1) / (1 + BM25_K1 * (1 - BM25_B + BM25_B * ratio))
            got = 0.0
            for t in terms:
                # A merge's subject names a branch, not what changed: its words weigh as the
                # body's (the summary a merge carries is in its body).
                if doc.id in t.title and not doc.merge:
                    got += t.weight * TITLE_WEIGHT
                elif doc.id in t.prose:
                    got += t.weight * body
                elif doc.id in t.docs:
                    got += t.files_weight * FILES_WEIGHT
            return (COVER_WEIGHT * cover[doc.id] + got) / total

        ranked = sorted(docs.values(), key=lambda d: (-score(d), -d.time, d.id))
        groups: dict[int, list[_Doc]] = {}
        twins: dict[int, int] = {}  # a subject's hash → the group its first copy went to
        # One result per pull request whose merge matched (its merge and commits), per branch
        # merged into several lines, and per change copied under the same subject
        # (cherry-picks to a stable branch, a squash beside its commits). A merge's group
        # first, so the commits it brought in follow it wherever its branch's other merges
        # went. A commit whose merge did not match stands alone: under its best sibling, the
        # commit asked for was hidden whenever a sibling held the same words.
        merged = {
            d.id: twins.setdefault(d.twin, d.id) for d in ranked if d.merge and d.twin is not None
        }
        for doc in ranked:
            group = merged.get(doc.id, doc.id)
            if doc.grp is not None and doc.grp in docs:
                group = merged.get(doc.grp, doc.grp)
            if doc.twin is not None and not doc.merge:
                group = twins.setdefault(doc.twin, group)
            if group in groups:
                groups[group].append(doc)
            elif len(groups) < limit:
                groups[group] = [doc]
        texts = self._texts([d for members in groups.values() for d in members])
        snippets = _snippets(texts, [t for t in self.asked if not t.is_name])
        origins = origin.load(self.index.loc)
        hits = []
        for members in groups.values():
            # The merge names the whole pull request (its message sums the topic up): it
            # heads its result whenever it matched, its commits listed under it. Of a digest
            # line's versions the newest is shown, and only it.
            members.sort(
                key=lambda d: (not d.merge, (-d.time, -d.id) if d.kind == "digest" else (0, 0))
            )
            head = members[0]
            holds = tuple(t.text for t in terms if head.id in t.docs)
            related = tuple(
                Related(_cite(d), _clean(texts[d.id][0], 160), _relation(head, d))
                for d in members[1:]
                if d.kind != "digest"
            )
            title, _ = texts[head.id]
            snippet = snippets.get(head.id) or title
            hits.append(
                Hit(
                    cite=_cite(head),
                    kind=head.kind,
                    time=head.time,
                    title=_clean(title, 160),
                    snippet=_clean(snippet, 300),
                    score=float(f"{score(head):.6g}"),
                    partial=len(holds) < len(terms),
                    path=_doc_path(head),
                    matched=holds,
                    related=related,
                    origin=_origin_label(origins, head),
                )
            )
        fewest = min((len(h.matched) for h in hits), default=len(terms))
        return Answer(self.query, names, hits, fewest, self.count)

    def _texts(self, docs: Sequence[_Doc]) -> dict[int, tuple[str, str]]:
        """(title, body) of each document shown, from the vault (the index holds no text)."""
        blobs = gitcmd.cat_blobs(
            self.index.cwd, sorted({d.blob.hex() for d in docs if d.blob is not None})
        )
        out: dict[int, tuple[str, str]] = {}
        for doc in docs:
            if doc.line is not None:
                _, category, line, _ = doc.line.split(_US)
                out[doc.id] = (category, line)
                continue
            data = blobs.get(doc.blob.hex()) if doc.blob else None
            if data is None:
                out[doc.id] = ("", "")
                continue
            text = _item_text(doc.kind, data, bool(doc.own))[1]
            out[doc.id] = (text.title, (text.body + "\n" + text.files).strip())
        return out


def _snippets(
    texts: dict[int, tuple[str, str]], words: Sequence[searchtext.QueryTerm]
) -> dict[int, str]:
    """The passage of each body that best matches the query's words, matched words in
    [brackets]: FTS5's own snippet over a table of just the shown documents, in memory."""
    if not words or not texts:
        return {}
    with closing(sqlite3.connect(":memory:")) as mem:
        mem.execute(_SNIPPET_DDL)
        mem.executemany(
            "INSERT INTO shown(rowid, title, body) VALUES (?, ?, ?)",
            [(doc, title, body) for doc, (title, body) in texts.items()],
        )
        expression = " OR ".join(_quoted(t.text) for t in words)
        rows = mem.execute(
            "SELECT rowid, snippet(shown, 1, '[', ']', '…', ?) FROM shown WHERE shown MATCH ?",
            (SNIPPET_TOKENS, expression),
        )
        return {doc: snip for doc, snip in rows if "[" in snip and snip.strip("…[] ")}


def _relation(head: _Doc, doc: _Doc) -> str:
    if doc.merge:
        return "merge"
    return "copy" if head.twin is not None and doc.twin == head.twin else "commit"


def _key_of(path: str) -> str:
    sha = layout.note_sha(path)
    return f"c:{sha}" if sha is not None else f"s:{layout.session_slug(path)}"


def _path_of(key: str, moment: int) -> str:
    if key.startswith("c:"):
        return layout.note_path(key[2:], moment)
    return layout.session_path(key[2:])


def _origin_label(origins: origin.Origins, doc: _Doc) -> str:
    """The mark of a document from another clone ("" for this clone's own): a note or a
    session by its path, a digest line by the items it rests on (as recall marks it)."""
    if not origins:
        return ""
    if doc.line is not None:
        line = doc.line.split(_US)[2]
        return origin.label(origins.of_line(line, cites_mod.cites_in(line)))
    return origin.label(origins.of(_doc_path(doc)))


def _doc_path(doc: _Doc) -> str:
    if doc.path is not None:
        return doc.path
    if doc.kind == "digest":
        return layout.DIGEST
    return _path_of(doc.key, doc.time)


def _cite(doc: _Doc) -> str:
    if doc.kind == "note":
        return f"c:{doc.key[2:9]}"
    if doc.kind == "digest":
        return f"digest:{(doc.line or '').split(_US)[0]}"
    return doc.key


def _is_sha(value: object) -> bool:
    return isinstance(value, str) and len(value) == 40 and all(c in _HEX for c in value)


_HEX = frozenset("0123456789abcdef")


def _timestamp(value: object, fallback: int) -> int:
    moment = parse_time(value)
    return fallback if moment is None else int(moment)


def drop(loc: Location) -> None:
    """Delete the index (after a redaction: the old text must not linger in the cache)."""
    with file_lock(loc.state_dir / statedir.SEARCH_LOCK, block=True, timeout=LOCK_TIMEOUT):
        for suffix in ("", "-journal", "-wal", "-shm"):
            (loc.state_dir / f"{statedir.SEARCH_INDEX}{suffix}").unlink(missing_ok=True)


# -- the answer as text --------------------------------------------------------------------


def render(answer: Answer, max_chars: int = AGENT_MAX_CHARS) -> str:
    """The answer for a person or an agent: one header line, then each result (a line, the
    passage that matched, what it holds when not everything, and the merge or commits folded
    into it), never over max_chars; says plainly when nothing matched."""
    terms = " ".join(answer.terms)
    if not answer.hits:
        return (
            f"No results for {terms!r}: no note, session or digest line in the vault "
            f"({answer.indexed:,} indexed) holds "
            + ("this word" if len(answer.terms) == 1 else "any of these words")
            + ". Try other words."
        )
    lines = [f"{len(answer.hits)} result(s) for {terms!r} (best first; `gitvault show ID`):"]
    for shown, hit in enumerate(answer.hits):
        entry = f"{hit.cite}  {hit.date}  {hit.kind}  {hit.title}"
        if hit.origin:
            entry += f"  {hit.origin}"
        if hit.snippet != hit.title:
            entry += f"\n    {hit.snippet}"
        if hit.partial:
            entry += f"\n    matched {len(hit.matched)} of {len(answer.terms)}: "
            entry += " ".join(hit.matched)
        for rel in hit.related[:3]:
            entry += f"\n    + {rel.relation} {rel.cite}  {rel.title}"
        if len(hit.related) > 3:
            entry += f"\n    + {len(hit.related) - 3} more of the same merge"
        left = len(answer.hits) - shown
        tail = f"[… {left - 1} more result(s) not shown; narrow the query]" if left > 1 else ""
        if len("\n".join([*lines, entry, tail])) > max_chars:
            lines.append(f"[… {left} more result(s) not shown; narrow the query]")
            break
        lines.append(entry)
    text = "\n".join(lines)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"
