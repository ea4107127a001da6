"""`gitvault log` and `gitvault show`: the vault's commits as the history of the memory."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

import pygit2

from gitvault import frontmatter, notes
from gitvault.errors import GitvaultError
from gitvault.store import Vault

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


def _iso(commit: pygit2.Commit) -> str:
    return datetime.fromtimestamp(commit.commit_time, tz=UTC).isoformat(timespec="seconds")


def entries(
    vault: Vault, *, limit: int | None = None, kind: str | None = None, since: int | None = None
) -> Iterator[LogEntry]:
    """Newest first; reads only as many commits as it yields (plus skipped kinds)."""
    shown = 0
    for commit in vault.history():
        if since is not None and commit.commit_time < since:
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
            commit=str(commit.id),
            kind=k,
            time=_iso(commit),
            title=title,
            paths=tuple(vault.changed_paths(commit)),
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
    repo = vault.repo
    try:
        obj = repo.revparse_single(sha)
        commit = obj.peel(pygit2.Commit)
        path = notes.note_path_at(str(commit.id), commit.commit_time)
        if vault.exists(path):
            return path
    except (KeyError, ValueError, pygit2.GitError):
        pass
    # The commit is gone (rebased away, gc'd) or abbreviated: walk the date folders.
    for year, _ in reversed(vault.listdir("notes")):
        for month, _ in reversed(vault.listdir(f"notes/{year}")):
            for day, _ in reversed(vault.listdir(f"notes/{year}/{month}")):
                folder = f"notes/{year}/{month}/{day}"
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
        candidates += [f"sessions/{ident}.md", ident]
    for path in candidates:
        text = vault.read_text(path)
        if text is not None:
            return _shown(path, text)
    if ident and all(c in "0123456789abcdef" for c in ident.lower()) and len(ident) >= 4:
        note = find_note_path(vault, ident.lower())
        if note is not None:
            return _shown(note, vault.read_text(note) or "")
        # A vault commit: show what it wrote.
        try:
            commit = vault.repo.revparse_single(ident).peel(pygit2.Commit)
            paths = vault.changed_paths(commit)
            if paths:
                text = vault.read_text(paths[0], str(commit.id)) or ""
                return _shown(paths[0], text)
        except (KeyError, ValueError, pygit2.GitError):
            pass
    for name, _ in vault.listdir("sessions"):
        if ident and ident in name:
            path = f"sessions/{name}"
            return _shown(path, vault.read_text(path) or "")
    raise GitvaultError(
        f"nothing in the vault matches {ident!r}",
        hint="pass a commit sha, a session slug or a vault path (see `gitvault log`)",
    )


def _shown(path: str, text: str) -> Shown:
    meta, _ = frontmatter.parse(text)
    return Shown(path=path, text=text, meta=meta)
