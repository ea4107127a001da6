"""What a fold reads: the notes and sessions the vault gained in a git range (APPEND log)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from gitvault.memory import sections
from gitvault.vault import frontmatter, layout
from gitvault.vault.objects import VaultCommit
from gitvault.vault.store import Vault

NOTE_CHARS = 600
SESSION_CHARS = 3000


@dataclass(frozen=True)
class Item:
    kind: str  # note | session
    cite: str  # c:<sha7> | s:<slug>
    path: str
    commit: str  # the vault commit that added it
    time: int
    text: str  # compact text for the merger (already bounded)
    meta: dict[str, object]

    @property
    def size(self) -> int:
        return len(self.text) + 80


def _item(vault: Vault, path: str, commit: VaultCommit) -> Item | None:
    raw = vault.read_text(path, commit.sha)
    if raw is None:
        return None
    meta, body = frontmatter.parse(raw)
    sha, slug = layout.note_sha(path), layout.session_slug(path)
    if sha and meta.get("kind") == "note":
        text = _compact_note(meta, body)
        return Item("note", f"c:{sha[:7]}", path, commit.sha, commit.time, text, meta)
    if slug and meta.get("kind") == "session":
        text = _compact_session(meta, body)
        return Item("session", f"s:{slug}", path, commit.sha, commit.time, text, meta)
    return None


def _compact_note(meta: dict[str, object], body: str) -> str:
    lines = [ln for ln in body.splitlines() if ln.strip()]
    title = lines[0].lstrip("# ").strip() if lines else ""
    rest = " ".join(ln.strip() for ln in lines[1:] if not ln.startswith("## Files"))
    text = f"{title}\n{rest}".strip()
    date = str(meta.get("committed", ""))[:10]
    return f"[{date} on {meta.get('branch') or 'detached'}] {text}"[:NOTE_CHARS]


def _compact_session(meta: dict[str, object], body: str) -> str:
    stamp = str(meta.get("saved_at", ""))[:16]
    parts = [f"[{stamp}] {meta.get('title', '')} ({meta.get('mode', 'manual')})"]
    for name, text in sections.split_sections(body).items():
        if text:
            parts.append(f"## {name}\n{text}")
    return "\n".join(parts)[:SESSION_CHARS]


def new_items(vault: Vault, watermark: str | None, tip: str | None = None) -> list[Item]:
    """Items added in watermark..tip, oldest first (parents before children).

    Merge commits (from `gitvault sync`) are skipped: their items are read from the commits
    that first added them, which the range also contains. Each path is one item: a note that
    two clones both added (both sides of a merge) counts once, and a path the vault already
    held at the watermark was folded then and is not read again.
    """
    tip = tip or vault.tip()
    if tip is None:
        return []
    out: list[Item] = []
    seen: set[str] = set()
    for commit in vault.git.walk(tip, watermark, oldest_first=True):
        if len(commit.parents) > 1:
            continue
        kind = commit.message.split(" ", 1)[0]
        if kind not in ("note", "session", "init"):
            continue
        for path in vault.changed_paths(commit.sha):
            if layout.is_item(path):
                if path in seen or (watermark and vault.exists(path, watermark)):
                    continue
                seen.add(path)
                item = _item(vault, path, commit)
                if item is not None:
                    out.append(item)
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
