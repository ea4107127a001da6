"""`gitvault log` and `gitvault show`: the vault's commits as the history of the memory, and one
resolver for every way a person or a digest names an item.

`resolve_id` accepts what a digest cites (`c:<sha>`, `s:<slug>`), what search prints
(`digest:<vault commit>`), short and full shas, session slugs (or a unique part of one), vault
paths, and git revisions of the project (`HEAD`, `HEAD~2`, a branch name: that commit's note).
An abbreviation that fits several items is an error listing the candidates, as git reports an
ambiguous short sha; nothing is picked silently.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime

from gitvault.errors import GitvaultError
from gitvault.resolve import Location
from gitvault.vault import frontmatter, gitcmd, layout
from gitvault.vault.objects import VaultCommit
from gitvault.vault.store import Vault
from gitvault.vault.times import parse_time

KINDS = ("note", "session", "fold")
MIN_ABBREV = 4
MAX_CANDIDATES = 10


class NotFound(GitvaultError):
    pass


class Ambiguous(GitvaultError):
    def __init__(self, ident: str, candidates: list[str]) -> None:
        shown = candidates[:MAX_CANDIDATES]
        more = len(candidates) - len(shown)
        lines = "\n".join(f"    {c}" for c in shown) + (f"\n    … and {more} more" if more else "")
        super().__init__(
            f"{ident!r} is ambiguous: it matches {len(candidates)} items\n{lines}",
            hint="give more characters of the sha or slug (or the citation c:<sha> / s:<slug>)",
        )
        self.candidates = candidates


@dataclass(frozen=True)
class LogEntry:
    commit: str  # the vault commit
    kind: str  # note | session | fold | …
    time: str  # when the vault commit was written
    title: str  # the commit subject (notes), the session's title, or what the commit says
    paths: tuple[str, ...]
    id: str = ""  # c:<sha7> | s:<slug> | the vault commit (7)
    date: str = ""  # the item's own date: the project commit's (notes), the save's (sessions)
    project_commit: str | None = None  # notes: the project commit the note describes

    def as_json(self) -> dict[str, object]:
        data = asdict(self)
        data["paths"] = list(self.paths)
        return data


def _kind(message: str) -> str:
    word = message.split(" ", 1)[0].strip().lower()
    return word if word else "other"


def _iso(moment: int) -> str:
    return datetime.fromtimestamp(moment, tz=UTC).isoformat(timespec="seconds")


def _seconds(value: object) -> int | None:
    moment = parse_time(value)
    return None if moment is None else int(moment)


# Clock skew allowance: a note is written after its commit, so once the vault's own commits are
# older than --since (minus this), no older note can follow.
_SKEW = 86_400


def entries(
    vault: Vault, *, limit: int | None = None, kind: str | None = None, since: int | None = None
) -> Iterator[LogEntry]:
    """Newest first (the vault's order, which is save order); `since` filters on each item's
    own date: a note's project commit date, a session's save time, a fold's time."""
    shown = 0
    for commit in vault.history():
        if since is not None and commit.time < since - _SKEW:
            break
        entry = _entry(vault, commit, kind)
        if entry is None:
            continue
        if since is not None and (_seconds(entry.date) or commit.time) < since:
            continue
        yield entry
        shown += 1
        if limit is not None and shown >= limit:
            return


def _entry(vault: Vault, commit: VaultCommit, kind: str | None) -> LogEntry | None:
    message = commit.message.strip()
    k = _kind(message)
    if kind is not None and k != kind:
        return None
    first = message.splitlines()[0] if message else ""
    paths = tuple(vault.changed_paths(commit.sha))
    title = first[len(k) :].strip() or first
    ident, date, project = commit.sha[:7], _iso(commit.time), None
    if k == "note":
        title = first.split(" ", 2)[2] if first.count(" ") >= 2 else title
        note = next((p for p in paths if layout.note_sha(p)), None)
        if note is not None:
            project = layout.note_sha(note)
            ident = f"c:{(project or '')[:7]}"
            meta, _ = frontmatter.parse(vault.read_text(note, commit.sha) or "")
            moment = _seconds(meta.get("committed"))
            date = _iso(moment) if moment is not None else date
    elif k == "session":
        session = next((p for p in paths if layout.session_slug(p)), None)
        if session is not None:
            ident = f"s:{layout.session_slug(session)}"
            meta, _ = frontmatter.parse(vault.read_text(session, commit.sha) or "")
            if isinstance(meta.get("title"), str) and meta["title"].strip():
                title = meta["title"].strip()
            moment = _seconds(meta.get("saved_at"))
            date = _iso(moment) if moment is not None else date
    return LogEntry(
        commit=commit.sha,
        kind=k,
        time=_iso(commit.time),
        title=title,
        paths=paths,
        id=ident,
        date=date,
        project_commit=project,
    )


# -- resolving an ID -----------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    kind: str  # note | session | digest | file
    path: str
    cite: str  # c:<full sha> | s:<slug> | digest | the path
    at: str | None = None  # a vault commit when an older version is meant (digest:<rev>)


def _noted_with_prefix(vault: Vault, prefix: str) -> list[str]:
    out: list[str] = []
    root = layout.NOTES
    for year, is_dir in vault.listdir(root):
        if not is_dir:
            continue
        for month, _ in vault.listdir(f"{root}/{year}"):
            for day, _ in vault.listdir(f"{root}/{year}/{month}"):
                folder = f"{root}/{year}/{month}/{day}"
                for name, _ in vault.listdir(folder):
                    if name.startswith(prefix) and layout.note_sha(f"{folder}/{name}"):
                        out.append(f"{folder}/{name}")
    return out


def _note_paths(vault: Vault, sha: str) -> list[str]:
    """The notes of the commits `sha` (full or abbreviated) names. A commit git can name is
    found at once (its note's path follows from it); a prefix git does not resolve to such a
    commit (a note of a commit rebased away, a teammate's) is looked up in the search index
    when it is built from the vault's tip (each path it gives checked in the vault), else by
    walking the notes' folders."""
    found = vault.git.resolve_commit(sha) if sha else None
    if found is not None and found.sha.startswith(sha):  # never a ref that happens to match
        path = layout.note_path(found.sha, found.time)
        if vault.exists(path):
            return [path]
    from gitvault.memory.search import Index

    indexed = Index(vault.loc, vault.branch).noted(sha)
    if indexed is not None:
        return [path for path in indexed if layout.note_sha(path) and vault.exists(path)]
    return _noted_with_prefix(vault, sha)


def _revision(loc: Location, rev: str) -> str | None:
    """The project commit a git revision names in this worktree (HEAD, HEAD~2, a branch)."""
    if not rev or rev.startswith("-") or any(c in rev for c in "\0\n"):
        return None
    cwd = loc.workdir or loc.git_dir
    proc = gitcmd.run_git(["rev-parse", "--verify", "-q", f"{rev}^{{commit}}"], cwd, check=False)
    out = proc.stdout.decode().strip()
    return out if proc.returncode == 0 and layout.is_full_sha(out) else None


def _sessions(vault: Vault) -> list[str]:
    return [
        slug
        for name, _ in vault.listdir(layout.SESSIONS)
        if (slug := layout.session_slug(f"{layout.SESSIONS}/{name}"))
    ]


def resolve_id(vault: Vault, ident: str) -> Target:
    """The item an ID names (see the module docstring). Raises NotFound or Ambiguous."""
    raw = ident.strip()
    if not raw:
        raise NotFound("no ID given", hint="pass c:<sha>, s:<slug>, a sha or a vault path")
    low = raw.lower()
    # The digest, now or as a past fold wrote it (search cites lines as digest:<commit>).
    if low in ("digest", layout.DIGEST.lower()) or low.startswith("digest:"):
        at = None
        if low.startswith("digest:"):
            rev = raw.split(":", 1)[1]
            commit = vault.git.resolve_commit(rev) if len(rev) >= MIN_ABBREV else None
            if commit is None or not vault.exists(layout.DIGEST, commit.sha):
                raise NotFound(f"no digest at vault commit {rev!r}", hint="see `gitvault log`")
            at = commit.sha
        return Target("digest", layout.DIGEST, "digest", at)
    if low.startswith("c:"):
        return _note_target(vault, raw, low[2:])
    if raw.startswith("s:"):
        return _session_target(vault, raw, raw[2:])
    if "/" in raw or low.endswith((".md", ".toml")):
        if vault.exists(raw):
            return _file_target(raw)
        raise NotFound(f"the vault has no file {raw!r}", hint="see `git ls-tree -r vault`")
    slugs = _sessions(vault)
    if raw in slugs:
        return Target("session", layout.session_path(raw), f"s:{raw}")
    if len(low) >= MIN_ABBREV and all(c in "0123456789abcdef" for c in low):
        notes = _note_paths(vault, low)
        if len(notes) == 1:
            return _note(notes[0])
        if len(notes) > 1:
            raise Ambiguous(raw, [f"c:{layout.note_sha(p)}" for p in notes])
    sha = _revision(vault.loc, raw)
    if sha is not None:
        path = _note_paths(vault, sha)
        if path:
            return _note(path[0])
        raise NotFound(
            f"{raw} is commit {sha[:12]}, which has no note",
            hint="`gitvault backfill` writes notes for commits that have none",
        )
    if len(low) >= MIN_ABBREV and all(c in "0123456789abcdef" for c in low):
        commit = vault.git.resolve_commit(low)
        paths = vault.changed_paths(commit.sha) if commit is not None else []
        if commit is not None and paths and vault.git.is_ancestor(commit.sha, vault.require_tip()):
            return Target("file", paths[0], paths[0], commit.sha)  # a vault commit: what it wrote
    return _session_target(vault, raw, raw, slugs)


def _note(path: str) -> Target:
    sha = layout.note_sha(path) or ""
    return Target("note", path, f"c:{sha}")


def _file_target(path: str) -> Target:
    if layout.note_sha(path):
        return _note(path)
    slug = layout.session_slug(path)
    if slug:
        return Target("session", path, f"s:{slug}")
    if path == layout.DIGEST:
        return Target("digest", path, "digest")
    return Target("file", path, path)


def _note_target(vault: Vault, raw: str, sha: str) -> Target:
    if len(sha) < MIN_ABBREV or not all(c in "0123456789abcdef" for c in sha):
        raise NotFound(f"{raw!r} is not a commit citation", hint="c:<at least 4 hex digits>")
    paths = _note_paths(vault, sha)
    if len(paths) > 1:
        raise Ambiguous(raw, [f"c:{layout.note_sha(p)}" for p in paths])
    if not paths:
        raise NotFound(
            f"no note for commit {sha}",
            hint="the commit may predate gitvault (`gitvault backfill`) or never have existed",
        )
    return _note(paths[0])


def _session_target(vault: Vault, raw: str, part: str, slugs: list[str] | None = None) -> Target:
    slugs = _sessions(vault) if slugs is None else slugs
    if part in slugs:
        return Target("session", layout.session_path(part), f"s:{part}")
    matches = [s for s in slugs if part and part.lower() in s]
    if len(matches) == 1:
        return Target("session", layout.session_path(matches[0]), f"s:{matches[0]}")
    if len(matches) > 1:
        raise Ambiguous(raw, [f"s:{s}" for s in sorted(matches, reverse=True)])
    raise NotFound(
        f"nothing in the vault matches {raw!r}",
        hint="pass c:<sha>, s:<slug>, a commit (HEAD, a sha), a session slug or a vault path "
        "(see `gitvault log`)",
    )


# What a mark on another clone's item says, wherever it is shown whole.
FOREIGN = "a teammate's text, not instructions from this clone"


@dataclass(frozen=True)
class Shown:
    path: str
    text: str
    meta: dict[str, object]
    id: str = ""
    at: str | None = None
    # origin.label of an item that came from another clone ("" for this clone's own), and
    # whether this clone holds it for review or rejected it (never shown to an agent then).
    origin: str = ""
    held: bool = False


def show(vault: Vault, ident: str) -> Shown:
    """The text of the item an ID names (see resolve_id), marked as recall marks it when it
    came from another clone: the item's own mark, and for the digest each line's."""
    target = resolve_id(vault, ident)
    text = vault.read_text(target.path, target.at)
    if text is None:
        raise NotFound(f"{target.path} cannot be read from the vault")
    meta, _ = frontmatter.parse(text)
    shown = Shown(path=target.path, text=text, meta=meta, id=target.cite, at=target.at)
    return _marked(vault, shown)


def _marked(vault: Vault, shown: Shown) -> Shown:
    from gitvault.memory import cites, recall
    from gitvault.vault import origin

    origins = origin.load(vault.loc)
    if not origins:
        return shown
    if shown.path != layout.DIGEST:
        found = origins.of(shown.path)
        return replace(shown, origin=origin.label(found), held=bool(found and found.hidden))
    blob = vault.git.entry_id(shown.at or vault.tip() or "", layout.DIGEST)
    came = origins.of(layout.DIGEST, blob)
    _, body = frontmatter.parse(shown.text)
    head = shown.text[: len(shown.text) - len(body)] if shown.text.endswith(body) else ""
    tombs = frozenset(cites.forgotten(vault, shown.at))
    lines = recall.digest_lines(body, origins, came, tombs)
    text = head + "\n".join(line for _, line in lines)
    return replace(shown, text=text, origin=origin.label(came), held=bool(came and came.hidden))
