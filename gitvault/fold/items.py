"""What a fold reads: the notes and sessions the vault gained in a git range (APPEND log)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from gitvault.errors import GitvaultError
from gitvault.memory import cites, sections
from gitvault.vault import frontmatter, gitcmd, layout
from gitvault.vault.notebody import parse_body
from gitvault.vault.objects import VaultCommit
from gitvault.vault.store import Vault
from gitvault.vault.times import parse_time

NOTE_CHARS = 600
SESSION_CHARS = 3000
BODY_CHARS = 20_000  # the full text kept for mining (notes are <= 2 KB anyway)


@dataclass(frozen=True, slots=True)
class Item:
    kind: str  # note | session
    cite: str  # c:<sha7> | s:<slug>
    path: str
    commit: str  # the vault commit that added it
    time: int
    text: str  # compact text for the merger (already bounded)
    meta: dict[str, object]
    body: str = field(default="", repr=False, compare=False)  # the full body, for mining

    @property
    def size(self) -> int:
        return len(self.text) + 80

    @property
    def when(self) -> int:
        """When the work happened (Unix seconds): a note's commit date, a session's saved_at;
        the vault commit's time when those are missing or unreadable. A backfilled note is
        added to the vault years after its commit, so the vault time says little."""
        raw = self.meta.get("committed" if self.kind == "note" else "saved_at")
        moment = parse_time(raw)
        return self.time if moment is None else int(moment)


def _read_item(vault: Vault, path: str, at: str, time: int) -> Item | None:
    """The item at path in the vault's tree at commit `at` (time: when that commit was made,
    0 when unknown)."""
    raw = vault.read_text(path, at)
    return _parse_item(path, raw, at, time) if raw is not None else None


def read_item(vault: Vault, path: str, at: str) -> Item | None:
    """One item as the tree at commit `at` holds it (an accepted item the fold passed by)."""
    return _read_item(vault, path, at, 0)


def _parse_item(path: str, raw: str, commit: str, time: int) -> Item | None:
    meta, body = frontmatter.parse(raw)
    sha, slug = layout.note_sha(path), layout.session_slug(path)
    body = body[:BODY_CHARS]
    if sha and meta.get("kind") == "note":
        text = _compact_note(meta, body)
        return Item("note", f"c:{sha[:7]}", path, commit, time, text, meta, body)
    if slug and meta.get("kind") == "session":
        text = _compact_session(meta, body)
        return Item("session", f"s:{slug}", path, commit, time, text, meta, body)
    return None


def sessions_at(vault: Vault, at: str) -> list[Item]:
    """Every session in the vault's tree at commit `at` (forgotten ones aside), as listed."""
    out: list[Item] = []
    tombs = cites.forgotten(vault, at)  # `gitvault forget`: never mined again
    for name, is_dir in vault.listdir(layout.SESSIONS, at):
        path = f"{layout.SESSIONS}/{name}"
        if not is_dir and layout.session_slug(path) and not cites.path_is_buried(path, tombs):
            item = _read_item(vault, path, at, 0)
            if item is not None:
                out.append(item)
    return out


def unread_items(
    vault: Vault,
    since: str | None,
    tip: str,
    dates: Callable[[list[str]], Mapping[str, int]],
) -> list[Item]:
    """The items at `tip` that were not at `since` (None: every item at `tip`), forgotten
    ones aside, for a merger that reads the mined history instead of the notes (the builtin
    one): notes are not read — an item says only its path and, when `dates` (the mined
    history's) knows it, its commit's date; else its date folder's. Sessions are read."""
    if since is None:
        # Streamed: a whole vault's entries (100,000: ~25 MB, and git's output as much
        # again) are never held while the items are made.
        listed = gitcmd.iter_tree(
            vault.loc.workdir or vault.loc.common_dir,
            tip,
            [layout.NOTES + "/", layout.SESSIONS + "/"],
            recursive=True,
        )
        paths = [e.path for e in listed if not e.is_dir]
    else:
        paths = [p for p, old, new in vault.git.diff_files(since, tip) if old is None and new]
    tombs = cites.forgotten(vault, tip)
    paths = [p for p in paths if layout.is_item(p) and not cites.path_is_buried(p, tombs)]
    known = dates([p for p in paths if layout.note_sha(p)])
    out: list[Item] = []
    for path in paths:
        sha = layout.note_sha(path)
        if sha is None:
            item = _read_item(vault, path, tip, 0)
            if item is not None:
                out.append(item)
            continue
        # Its commit's date, when known, as its time (what `when` falls back to), and one
        # meta shared by all (never written to): 100,000 of them were 40 MB of a first fold.
        when = known.get(path)
        time = folder_time(path) if when is None else when
        out.append(Item("note", f"c:{sha[:7]}", path, tip, time, "", _UNREAD_NOTE))
    return out


_UNREAD_NOTE: dict[str, object] = {"kind": "note"}


def folder_time(path: str) -> int:
    """The start of a note's date folder (notes/YYYY/MM/DD/…), Unix seconds; 0 if none."""
    parts = path.split("/")
    try:
        moment = datetime(int(parts[1]), int(parts[2]), int(parts[3]), tzinfo=UTC)
    except (IndexError, ValueError):
        return 0
    return int(moment.timestamp())


def _compact_note(meta: dict[str, object], body: str) -> str:
    note = parse_body(body)
    lines = [*note.message.splitlines(), *note.file_lines]
    rest = " ".join(ln.strip() for ln in lines if ln.strip())
    text = f"{note.subject}\n{rest}".strip()
    date = str(meta.get("committed", ""))[:10]
    return f"[{date} on {meta.get('branch') or 'detached'}] {text}"[:NOTE_CHARS]


def _compact_session(meta: dict[str, object], body: str) -> str:
    stamp = str(meta.get("saved_at", ""))[:16]
    parts = [f"[{stamp}] {meta.get('title', '')} ({meta.get('mode', 'manual')})"]
    for name, text in sections.split_sections(body).items():
        if text:
            parts.append(f"## {name}\n{text}")
    return "\n".join(parts)[:SESSION_CHARS]


def new_paths(
    vault: Vault, watermark: str | None, tip: str | None = None
) -> list[tuple[str, VaultCommit]]:
    """(path, adding commit) of every item added in watermark..tip, oldest first (parents
    before children), without reading a blob: what counting needs.

    Merge commits (from `gitvault sync`) are skipped: their items are read from the commits
    that first added them, which the range also contains. Each path is one item: a note that
    two clones both added (both sides of a merge) counts once, and a path the vault already
    held at the watermark was folded then and is not read again.
    """
    tip = tip or vault.tip()
    if tip is None:
        return []
    out: list[tuple[str, VaultCommit]] = []
    seen: set[str] = set()
    tombs = cites.forgotten(vault, tip)  # `gitvault forget`: never folded again
    for commit in vault.git.walk(tip, watermark, oldest_first=True):
        if len(commit.parents) > 1:
            continue
        kind = commit.message.split(" ", 1)[0]
        if kind not in ("note", "session", "init", "share"):  # share: a projected sync push
            continue
        for path in vault.changed_paths(commit.sha):
            if layout.is_item(path):
                if path in seen or (watermark and vault.exists(path, watermark)):
                    continue
                if cites.path_is_buried(path, tombs):
                    continue
                seen.add(path)
                out.append((path, commit))
    return out


def new_items(vault: Vault, watermark: str | None, tip: str | None = None) -> list[Item]:
    """Items added in watermark..tip, oldest first (see new_paths)."""
    out: list[Item] = []
    for path, commit in new_paths(vault, watermark, tip):
        item = _read_item(vault, path, commit.sha, commit.time)
        if item is not None:
            out.append(item)
    return out


def refold_items(
    vault: Vault, meta: dict[str, object], tip: str, mark: str | None, skip: set[str]
) -> list[Item]:
    """The items a digest's `refold` list names (the other citations of lines `gitvault
    forget` dropped), read at tip and counted as read at the watermark: they are old, so a
    batch of them never moves the watermark back. Forgotten ones and paths in skip are left
    out."""
    from gitvault.memory import history

    listed = meta.get("refold")
    if not isinstance(listed, list):
        return []
    tombs = cites.forgotten(vault, tip)
    out: list[Item] = []
    for cite in dict.fromkeys(str(c) for c in listed):
        try:
            target = history.resolve_id(vault, cite)
        except GitvaultError:
            continue  # gone or ambiguous: nothing to re-read
        if target.kind not in ("note", "session") or target.path in skip:
            continue
        if cites.path_is_buried(target.path, tombs):
            continue
        item = _read_item(vault, target.path, tip, 0)
        if item is not None:
            skip.add(target.path)
            out.append(replace(item, commit=mark or tip))
    return out


def batches(items: list[Item], budget: int) -> Iterator[list[Item]]:
    """Split items into batches of at most `budget` characters (at least one item each)."""
    batch: list[Item] = []
    size = 0
    for item in items:
        if batch and size + item.size > budget:
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += item.size
    if batch:
        yield batch
