"""`gitvault log` and `gitvault show`: the vault's commits as the history of the memory."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from gitvault.errors import GitvaultError
from gitvault.vault import frontmatter, layout
from gitvault.vault.objects import VaultCommit
from gitvault.vault.store import Vault

KINDS = ("note", "session", "fold")


@dataclass(frozen=True)
class LogEntry:
    commit: str
    kind: str
    time: str
    title: str
    paths: tuple[str, ...]

    def as_json(self) -> dict[str, object]:
        data = asdict(self)
        data["paths"] = list(self.paths)
        return data


def _kind(message: str) -> str:
    word = message.split(" ", 1)[0].strip().lower()
    return word if word else "other"


def _iso(commit: VaultCommit) -> str:
    return datetime.fromtimestamp(commit.time, tz=UTC).isoformat(timespec="seconds")


def entries(
    vault: Vault, *, limit: int | None = None, kind: str | None = None, since: int | None = None
) -> Iterator[LogEntry]:
    """Newest first; reads only as many commits as it yields (plus skipped kinds)."""
    shown = 0
    for commit in vault.history():
        if since is not None and commit.time < since:
            break
        message = commit.message.strip()
        k = _kind(message)
        if kind is not None and k != kind:
            continue
        first = message.splitlines()[0] if message else ""
        title = first.split(" ", 2)[2] if k == "note" and first.count(" ") >= 2 else first
        if k != "note":
            title = first[len(k) :].strip() or first
        yield LogEntry(
            commit=commit.sha,
            kind=k,
            time=_iso(commit),
            title=title,
            paths=tuple(vault.changed_paths(commit.sha)),
        )
        shown += 1
        if limit is not None and shown >= limit:
            return


@dataclass(frozen=True)
class Shown:
    path: str
    text: str
    meta: dict[str, object]


def find_note_path(vault: Vault, sha: str) -> str | None:
    """A project commit's note path: from its date when the commit exists, else by search."""
    found = vault.git.resolve_commit(sha)
    if found is not None:
        path = layout.note_path(found.sha, found.time)
        if vault.exists(path):
            return path
    # The commit is gone (rebased away, gc'd) or abbreviated: walk the date folders.
    root = layout.NOTES
    for year, _ in reversed(vault.listdir(root)):
        for month, _ in reversed(vault.listdir(f"{root}/{year}")):
            for day, _ in reversed(vault.listdir(f"{root}/{year}/{month}")):
                folder = f"{root}/{year}/{month}/{day}"
                for name, _ in vault.listdir(folder):
                    if name.startswith(sha):
                        return f"{folder}/{name}"
    return None


def show(vault: Vault, ident: str) -> Shown:
    """A note (project commit sha, full or short), a session (slug), or any vault path."""
    ident = ident.strip()
    candidates: list[str] = []
    if "/" in ident or ident.endswith(".md") or ident.endswith(".toml"):
        candidates.append(ident)
    else:
        candidates += [layout.session_path(ident), ident]
    for path in candidates:
        text = vault.read_text(path)
        if text is not None:
            return _shown(path, text)
    if ident and all(c in "0123456789abcdef" for c in ident.lower()) and len(ident) >= 4:
        note = find_note_path(vault, ident.lower())
        if note is not None:
            return _shown(note, vault.read_text(note) or "")
        # A vault commit: show what it wrote.
        commit = vault.git.resolve_commit(ident)
        paths = vault.changed_paths(commit.sha) if commit is not None else []
        if commit is not None and paths:
            return _shown(paths[0], vault.read_text(paths[0], commit.sha) or "")
    for name, _ in vault.listdir(layout.SESSIONS):
        if ident and ident in name:
            path = f"{layout.SESSIONS}/{name}"
            return _shown(path, vault.read_text(path) or "")
    raise GitvaultError(
        f"nothing in the vault matches {ident!r}",
        hint="pass a commit sha, a session slug or a vault path (see `gitvault log`)",
    )


def _shown(path: str, text: str) -> Shown:
    meta, _ = frontmatter.parse(text)
    return Shown(path=path, text=text, meta=meta)
