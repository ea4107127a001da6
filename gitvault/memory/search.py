"""`gitvault search`: ranked full-text search over the notes, the sessions and every version the
digest ever had, with SQLite FTS5 and BM25 (Python's sqlite3; no server, nothing to install).

The index is a cache, never committed and never authoritative: `search.sqlite` in gitvault's
folder of the common git dir (one per repository, shared by its worktrees). It remembers the
vault commit it indexed last (its own watermark) and catches up from `watermark..vault` with one
`git log --raw` and one `git cat-file --batch`, so the cost follows what is new. It is rebuilt
from the vault when it is missing, unreadable, of another schema, or when its watermark is no
longer in the vault's history (after `gitvault redact` rewrote it). Updates are serialised by an
flock (`search.lock`) and each is one SQLite transaction; readers never see half an update.

What is indexed: each note (title = the commit subject; body = message and file list; dated by
the commit), each session (dated by its save), and each distinct line any version of `_master.md`
ever held (dated by the fold that first wrote it, cited `digest:<fold commit>`). Forgotten items
(tombstones) are removed and never indexed again, with the digest lines resting only on them.

Relevance, honestly: a result must contain every term of the query (common English words are
dropped from queries of several words; Porter stemming lets `folds` find `fold`). Only when that
finds too little, results holding at least MIN_MATCH (60 %) of the terms are added after them,
marked partial. This term coverage is the documented minimum score. A raw BM25 value cannot be
the threshold: its IDF depends on the vault's size (in a vault of one note every match scores
about zero), so the same threshold would hide real matches in small vaults and admit noise in
big ones. BM25 (the title weighs 4× the body) orders the results that pass.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from gitvault.errors import GitvaultError
from gitvault.memory import cites as cites_mod
from gitvault.resolve import Location
from gitvault.vault import frontmatter, gitcmd, layout, statedir
from gitvault.vault.locking import file_lock
from gitvault.vault.times import parse_time

SCHEMA_VERSION = "1"
KINDS = ("note", "session", "digest")
MIN_MATCH = 0.6  # a partial result holds at least this share of the query's terms
MAX_TERMS = 8
AGENT_MAX_CHARS = 4000  # the whole text answer, for an agent's context
SNIPPET_TOKENS = 14
TITLE_WEIGHT = 4.0
BLOB_BATCH = 4000
BODY_MAX = 20_000  # characters of one document indexed (a session is ≤ ~200 KB at most)
LOCK_TIMEOUT = 60.0

_DDL = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE docs(
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    cite TEXT NOT NULL,
    time INTEGER NOT NULL,
    path TEXT NOT NULL,
    cites TEXT NOT NULL DEFAULT ''
);
CREATE INDEX docs_path ON docs(path);
CREATE TABLE tombs(cite TEXT PRIMARY KEY);
CREATE VIRTUAL TABLE fts USING fts5(
    title, body, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""

_WORD = re.compile(r"[^\W_]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SPACE = re.compile(r"\s+")
STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "did",
        "do",
        "does",
        "done",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "that",
        "the",
        "their",
        "there",
        "this",
        "to",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
    }
)


class SearchError(GitvaultError):
    pass


@dataclass(frozen=True)
class Hit:
    cite: str  # c:<sha7> | s:<slug> | digest:<fold commit sha7>
    kind: str  # note | session | digest
    time: int  # the commit's date (notes), the save (sessions), the fold (digest lines)
    title: str
    snippet: str  # the best-matching passage, matched terms in [brackets]
    score: float  # BM25, higher is better (comparable within one answer only)
    partial: bool  # holds at least MIN_MATCH of the terms, not all of them
    path: str

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
        }


@dataclass
class Answer:
    query: str
    terms: list[str]
    hits: list[Hit]
    min_terms: int  # the fewest terms a shown result holds
    indexed: int  # documents in the index


@dataclass
class Updated:
    tip: str | None
    added: int = 0
    removed: int = 0
    rebuilt: bool = False
    reasons: list[str] = field(default_factory=list)


# -- the query -----------------------------------------------------------------------------


def terms_of(query: str) -> list[str]:
    """The distinct words of a query, lowercased; stopwords dropped unless nothing else is left.
    Each becomes a quoted FTS5 string, so no query text is ever read as FTS5 syntax."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))
    kept = [w for w in words if w not in STOPWORDS] or words
    return kept[:MAX_TERMS]


def min_terms(n: int) -> int:
    """How many of n terms a result must hold: all of one or two; at least MIN_MATCH of more."""
    return n if n <= 2 else max(2, math.ceil(MIN_MATCH * n))


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _expression(terms: Sequence[str], need: int) -> str:
    if need >= len(terms):
        return " AND ".join(_quoted(t) for t in terms)
    groups = itertools.combinations(terms, need)
    return " OR ".join("(" + " AND ".join(_quoted(t) for t in g) + ")" for g in groups)


def _clean(text: str, limit: int) -> str:
    """One line of display text: no control characters (escape sequences), no line breaks."""
    text = _SPACE.sub(" ", _CONTROL.sub(" ", text)).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# -- the index -----------------------------------------------------------------------------


class Index:
    """The search index of one repository's vault."""

    def __init__(self, loc: Location, branch: str | None = None) -> None:
        self.loc = loc
        self.cwd = loc.common_dir
        self.branch = branch or gitcmd.vault_branch(self.cwd)
        self.ref = layout.branch_ref(self.branch)
        self.path = loc.state_dir / statedir.SEARCH_INDEX
        self._fresh = False  # building a new index (no document to replace)

    # -- opening -------------------------------------------------------------------------
    def _connect(self, path: Path) -> sqlite3.Connection:
        conn = sqlite3.connect(path, timeout=30.0, isolation_level=None)
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def _watermark(self, conn: sqlite3.Connection) -> str | None:
        """The vault commit indexed last; raises sqlite3.DatabaseError for a broken file."""
        rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if rows.get("schema") != SCHEMA_VERSION or rows.get("ref") != self.ref:
            raise sqlite3.DatabaseError("index of another schema or branch")
        return rows.get("watermark") or None

    def tip(self) -> str | None:
        return gitcmd.ref_exists(self.cwd, self.ref)

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
                    if tip is not None and mark is not None and self._is_ancestor(mark, tip):
                        conn.execute("BEGIN IMMEDIATE")
                        try:
                            self._apply(conn, mark, tip, result)
                            self._set_watermark(conn, tip)
                            conn.execute("COMMIT")
                        except BaseException:
                            conn.execute("ROLLBACK")
                            raise
                        return result
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
        tmp = self.path.with_name(f".{statedir.SEARCH_INDEX}.{os.getpid()}.tmp")
        _remove(tmp)
        try:
            with closing(self._connect(tmp)) as conn:
                conn.executescript(_DDL)
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [("schema", SCHEMA_VERSION), ("ref", self.ref), ("watermark", "")],
                )
                if tip is not None:
                    self._fresh = True
                    try:
                        self._apply(conn, None, tip, result)
                    finally:
                        self._fresh = False
                self._set_watermark(conn, tip)
                conn.execute("COMMIT")
            _remove(Path(f"{self.path}-journal"))  # never roll the new file back with the old
            os.replace(tmp, self.path)
        except sqlite3.DatabaseError as exc:
            raise SearchError(f"cannot build the search index: {exc}") from exc
        except OSError as exc:
            raise SearchError(
                f"cannot write the search index {self.path}: {exc.strerror}",
                hint="check the permissions of the repository's .git directory",
            ) from exc
        finally:
            _remove(tmp)

    def _set_watermark(self, conn: sqlite3.Connection, tip: str | None) -> None:
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('watermark', ?)", (tip or "",))

    def _is_ancestor(self, ancestor: str, descendant: str) -> bool:
        proc = gitcmd.run_git(
            ["merge-base", "--is-ancestor", ancestor, descendant], self.cwd, check=False
        )
        return proc.returncode == 0

    def _changes(self, mark: str | None, tip: str) -> Iterator[tuple[int, str, str, str, str]]:
        """(commit time, vault commit, status, path, new blob) for every file change in
        mark..tip, oldest first. Merges show no changes of their own: their sides' commits
        are in the range and carry them."""
        rng = f"{mark}..{tip}" if mark else tip
        proc = gitcmd.run_git(
            [
                "-c",
                "core.quotePath=false",
                "log",
                "--reverse",
                "--topo-order",
                "--raw",
                "-z",
                "--no-abbrev",
                "--no-renames",
                "--format=%x01%H%x00%ct",
                rng,
                "--",
            ],
            self.cwd,
        )
        for record in proc.stdout.split(b"\x01"):
            tokens = record.split(b"\0")
            if len(tokens) < 2 or not tokens[1].strip().isdigit():
                continue
            commit, when = tokens[0].decode(), int(tokens[1].strip())
            index = 2
            while index + 1 < len(tokens):
                head = tokens[index].lstrip(b"\n")
                if not head.startswith(b":"):
                    index += 1
                    continue
                parts = head.split()
                path = tokens[index + 1].decode("utf-8", "replace")
                index += 2
                if len(parts) >= 5:
                    yield when, commit, parts[4][:1].decode(), path, parts[3].decode()

    def _apply(self, conn: sqlite3.Connection, mark: str | None, tip: str, result: Updated) -> None:
        items: dict[str, tuple[int, str, str, str]] = {}  # path → last (time, commit, op, blob)
        digests: list[tuple[int, str, str]] = []  # (time, commit, blob) of each version
        tomb_ops: dict[str, str] = {}  # buried citation → last operation on its tombstone
        for when, commit, op, path, blob in self._changes(mark, tip):
            if path == layout.DIGEST:
                if op in "AM":
                    digests.append((when, commit, blob))
                continue
            buried = layout.tombstone_cite(path)
            if buried is not None:
                tomb_ops[buried] = op
                continue
            if layout.is_item(path):
                items[path] = (when, commit, op, blob)
        if mark is not None and "D" in tomb_ops.values():
            # A tombstone was taken back: its item may be searchable again. Rare: reindex.
            for table in ("docs", "fts", "tombs"):
                conn.execute(f"DELETE FROM {table}")
            result.reasons.append("a tombstone was removed")
            self._apply(conn, None, tip, result)
            return
        tombs_added = {cite for cite, op in tomb_ops.items() if op != "D"}
        conn.executemany("INSERT OR IGNORE INTO tombs VALUES (?)", [(t,) for t in tombs_added])
        tombs = {row[0] for row in conn.execute("SELECT cite FROM tombs")}
        if tombs_added:
            result.removed += self._bury(conn, tombs)
        for path, (_, _, op, _) in items.items():
            if op == "D":
                result.removed += self._delete(conn, "SELECT id FROM docs WHERE path = ?", path)
        wanted = [(p, v) for p, v in items.items() if v[2] != "D"]
        for start in range(0, len(wanted), BLOB_BATCH):
            chunk = wanted[start : start + BLOB_BATCH]
            blobs = gitcmd.cat_blobs(self.cwd, [v[3] for _, v in chunk])
            for path, (when, _commit, _, blob) in chunk:
                data = blobs.get(blob)
                if data is not None:
                    result.added += self._put_item(conn, path, when, data, tombs)
        for start in range(0, len(digests), BLOB_BATCH):
            chunk_d = digests[start : start + BLOB_BATCH]
            blobs = gitcmd.cat_blobs(self.cwd, [b for _, _, b in chunk_d])
            for when, commit, blob in chunk_d:
                data = blobs.get(blob)
                if data is not None:
                    result.added += self._put_digest(conn, commit, when, data, tombs)

    def _delete(self, conn: sqlite3.Connection, select: str, *args: object) -> int:
        ids = [row[0] for row in conn.execute(select, args)]
        for doc in ids:
            conn.execute("DELETE FROM fts WHERE rowid = ?", (doc,))
            conn.execute("DELETE FROM docs WHERE id = ?", (doc,))
        return len(ids)

    def _bury(self, conn: sqlite3.Connection, tombs: set[str]) -> int:
        """Remove forgotten items and the digest lines resting only on them."""
        gone = 0
        for tomb in tombs:
            if tomb.startswith("c:"):
                low, high = f"c:{tomb[2:]}", f"c:{tomb[2:]}~"
                gone += self._delete(
                    conn, "SELECT id FROM docs WHERE key >= ? AND key < ?", low, high
                )
            else:
                gone += self._delete(conn, "SELECT id FROM docs WHERE key = ?", tomb)
        lines = conn.execute("SELECT id, cites FROM docs WHERE kind = 'digest'").fetchall()
        for doc, cited in lines:
            found = cited.split()
            if found and all(cites_mod.is_buried(c, tombs) for c in found):
                gone += self._delete(conn, "SELECT id FROM docs WHERE id = ?", doc)
        return gone

    def _insert(
        self,
        conn: sqlite3.Connection,
        key: str,
        kind: str,
        cite: str,
        when: int,
        path: str,
        title: str,
        body: str,
        cited: str = "",
    ) -> int:
        if not self._fresh:  # a new index has nothing to replace
            self._delete(conn, "SELECT id FROM docs WHERE key = ?", key)
        row = (key, kind, cite, when, path, cited)
        insert = "INSERT INTO docs(key, kind, cite, time, path, cites) VALUES (?, ?, ?, ?, ?, ?)"
        try:
            cur = conn.execute(insert, row)
        except sqlite3.IntegrityError:  # the same item twice (two paths): the last one wins
            self._delete(conn, "SELECT id FROM docs WHERE key = ?", key)
            cur = conn.execute(insert, row)
        conn.execute(
            "INSERT INTO fts(rowid, title, body) VALUES (?, ?, ?)",
            (cur.lastrowid, title[:500], body[:BODY_MAX]),
        )
        return 1

    def _put_item(
        self, conn: sqlite3.Connection, path: str, when: int, data: bytes, tombs: set[str]
    ) -> int:
        meta, body = frontmatter.parse(data.decode("utf-8", "replace"))
        sha, slug = layout.note_sha(path), layout.session_slug(path)
        if sha is not None:
            key, kind, cite = f"c:{sha}", "note", f"c:{sha[:7]}"
            moment = _timestamp(meta.get("committed"), when)
        elif slug is not None:
            key, kind, cite = f"s:{slug}", "session", f"s:{slug}"
            moment = _timestamp(meta.get("saved_at"), when)
        else:
            return 0
        if cites_mod.is_buried(key, tombs):
            return 0
        title, rest = _title_and_rest(body)
        if kind == "session" and isinstance(meta.get("title"), str):
            title = str(meta["title"])
        return self._insert(conn, key, kind, cite, moment, path, title, rest)

    def _put_digest(
        self, conn: sqlite3.Connection, commit: str, when: int, data: bytes, tombs: set[str]
    ) -> int:
        """Each distinct line of a digest version, once: the first fold that wrote it."""
        _, body = frontmatter.parse(data.decode("utf-8", "replace"))
        added = 0
        category = ""
        for raw in body.splitlines():
            line = raw.strip()
            if line.startswith("## "):
                category = line[3:].strip()
                continue
            if not line.startswith("- ") or line.startswith("- [… ") or line == "- (none yet)":
                continue
            key = "d:" + hashlib.sha1(_SPACE.sub(" ", line).encode()).hexdigest()[:20]
            if conn.execute("SELECT 1 FROM docs WHERE key = ?", (key,)).fetchone():
                continue
            found = cites_mod.cites_in(line)
            if found and tombs and all(cites_mod.is_buried(c, tombs) for c in found):
                continue
            added += self._insert(
                conn,
                key,
                "digest",
                f"digest:{commit[:7]}",
                when,
                layout.DIGEST,
                category,
                line[2:],
                " ".join(found),
            )
        return added

    # -- querying ------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        kind: str | None = None,
        since: int | None = None,
    ) -> Answer:
        if kind is not None and kind not in KINDS:
            raise SearchError(f"unknown kind {kind!r}", hint="use note, session or digest")
        terms = terms_of(query)
        if not terms:
            raise SearchError(
                f"the query {query!r} has no words to search for",
                hint="search for words, e.g. `gitvault search resolver worktree`",
            )
        limit = max(1, min(limit, 200))
        for attempt in (1, 2):
            self.update()
            try:
                with closing(self._connect(self.path)) as conn:
                    return self._query(conn, query, terms, limit, kind, since)
            except sqlite3.DatabaseError as exc:
                if attempt == 2:
                    raise SearchError(f"the search index cannot be read: {exc}") from exc
                _remove(self.path)  # corrupt in a way only a query shows: rebuild once
        raise AssertionError("unreachable")

    def _query(
        self,
        conn: sqlite3.Connection,
        query: str,
        terms: list[str],
        limit: int,
        kind: str | None,
        since: int | None,
    ) -> Answer:
        indexed = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
        need = min_terms(len(terms))
        hits: list[Hit] = []
        seen: set[int] = set()
        stages = [(len(terms), False)]
        if need < len(terms):
            stages.append((need, True))
        for required, partial in stages:
            if len(hits) >= limit:
                break
            sql = (
                "SELECT d.id, d.cite, d.kind, d.time, d.path, fts.title, "
                "snippet(fts, 1, '[', ']', '…', ?), bm25(fts, ?, 1.0) "
                "FROM fts JOIN docs d ON d.id = fts.rowid WHERE fts MATCH ?"
            )
            args: list[object] = [SNIPPET_TOKENS, TITLE_WEIGHT, _expression(terms, required)]
            if kind is not None:
                sql += " AND d.kind = ?"
                args.append(kind)
            if since is not None:
                sql += " AND d.time >= ?"
                args.append(since)
            sql += " ORDER BY bm25(fts, ?, 1.0), d.time DESC LIMIT ?"
            args += [TITLE_WEIGHT, limit + len(seen)]
            for doc, cite, k, when, path, title, snip, rank in conn.execute(sql, args):
                if doc in seen or len(hits) >= limit:
                    continue
                seen.add(doc)
                if not _CONTROL.sub("", snip).strip() or "[" not in snip:
                    snip = title  # the match is in the title
                hits.append(
                    Hit(
                        cite=cite,
                        kind=k,
                        time=int(when),
                        title=_clean(title, 160),
                        snippet=_clean(snip, 300),
                        score=float(f"{-float(rank):.6g}"),
                        partial=partial,
                        path=path,
                    )
                )
        return Answer(query=query, terms=terms, hits=hits, min_terms=need, indexed=indexed)


def _title_and_rest(body: str) -> tuple[str, str]:
    lines = body.strip().splitlines()
    if lines and lines[0].startswith("# "):
        return lines[0][2:].strip(), "\n".join(lines[1:]).strip()
    return "", body.strip()


def _timestamp(value: object, fallback: int) -> int:
    moment = parse_time(value)
    return fallback if moment is None else int(moment)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def drop(loc: Location) -> None:
    """Delete the index (after a redaction: the old text must not linger in the cache)."""
    with file_lock(loc.state_dir / statedir.SEARCH_LOCK, block=True, timeout=LOCK_TIMEOUT):
        for suffix in ("", "-journal", "-wal", "-shm"):
            _remove(loc.state_dir / f"{statedir.SEARCH_INDEX}{suffix}")


# -- the answer as text --------------------------------------------------------------------


def render(answer: Answer, max_chars: int = AGENT_MAX_CHARS) -> str:
    """The answer for a person or an agent: one header line, two lines per result, never
    over max_chars; says plainly when nothing matched."""
    terms = " ".join(answer.terms)
    if not answer.hits:
        return (
            f"No results for {terms!r}: no note, session or digest line in the vault "
            f"({answer.indexed:,} indexed) holds "
            + (
                "all of these words"
                if answer.min_terms == len(answer.terms)
                else f"at least {answer.min_terms} of these {len(answer.terms)} words"
            )
            + ". Try other or fewer words."
        )
    lines = [f"{len(answer.hits)} result(s) for {terms!r} (best first; `gitvault show ID`):"]
    for shown, hit in enumerate(answer.hits):
        mark = " (partial match)" if hit.partial else ""
        entry = f"{hit.cite}  {hit.date}  {hit.kind}  {hit.title}{mark}"
        if hit.snippet != hit.title:
            entry += f"\n    {hit.snippet}"
        left = len(answer.hits) - shown
        tail = f"[… {left - 1} more result(s) not shown; narrow the query]" if left > 1 else ""
        if len("\n".join([*lines, entry, tail])) > max_chars:
            lines.append(f"[… {left} more result(s) not shown; narrow the query]")
            break
        lines.append(entry)
    text = "\n".join(lines)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"
