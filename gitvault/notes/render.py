"""One small note per project commit: metadata, message and file stats — never diff content."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gitvault.notes.commits import CommitInfo, FileStat
from gitvault.vault import frontmatter, layout

NOTE_MAX_BYTES = 2048
SUBJECT_MAX = 200  # characters of the subject line …
SUBJECT_MAX_BYTES = 400  # … and at most this many bytes of UTF-8
AUTHOR_MAX_BYTES = 200
NAME_MAX_BYTES = 120  # branch and worktree names
META_LIST_MAX = 8  # parents / replaces listed in the front matter
_MARK = " […]"
PATH_MAX = 160

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_PATH_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class NoteContext:
    branch: str | None = None
    worktree: str | None = None
    replaces: tuple[str, ...] = ()
    source: str = "hook"  # hook | backfill


def note_path(info: CommitInfo) -> str:
    return layout.note_path(info.sha, info.commit_time)


def _clean(text: str) -> str:
    return _CONTROL.sub("", text.replace("\r\n", "\n"))


def _cut(text: str, limit: int, what: str) -> str:
    if len(text) <= limit:
        return text
    more = len(text) - limit
    return text[:limit].rstrip() + f"\n[… {what} cut: {more} more characters]"


def _fmt_stat(f: FileStat) -> str:
    # A file name may hold newlines or escape sequences: shown as '?', never as note structure.
    path = _PATH_CONTROL.sub("?", f.path)
    path = path if len(path) <= PATH_MAX else "…" + path[-PATH_MAX:]
    if f.added is None or f.deleted is None:
        return f"- {path} (binary)"
    return f"- {path} (+{f.added} -{f.deleted})"


def _cap_bytes(text: str, max_bytes: int) -> str:
    """text cut to at most max_bytes of UTF-8 (at a character boundary), marked when cut."""
    data = text.encode()
    if len(data) <= max_bytes:
        return text
    return data[: max_bytes - len(_MARK.encode())].decode("utf-8", "ignore").rstrip() + _MARK


def render(info: CommitInfo, ctx: NoteContext) -> str:
    """The note's text: deterministic for a commit and context, at most NOTE_MAX_BYTES."""
    insertions = sum(f.added or 0 for f in info.files)
    deletions = sum(f.deleted or 0 for f in info.files)
    # Every front-matter field is bounded, so the fixed part of a note always fits in 2 KB
    # (a squash of many commits, an octopus merge, a long branch name or a long Unicode
    # author would otherwise push it over); what is left out is counted in the body.
    author = _cap_bytes(_clean(f"{info.author_name} <{info.author_email}>"), AUTHOR_MAX_BYTES)
    meta = {
        "kind": "note",
        "sha": info.sha,
        "parents": list(info.parents[:META_LIST_MAX]),
        "branch": _cap_bytes(_clean(ctx.branch), NAME_MAX_BYTES) if ctx.branch else None,
        "worktree": _cap_bytes(_clean(ctx.worktree), NAME_MAX_BYTES) if ctx.worktree else None,
        "author": author,
        "authored": info.authored,
        "committed": info.committed,
        "replaces": list(ctx.replaces[:META_LIST_MAX]) or None,
        "source": ctx.source,
        "files_changed": len(info.files),
        "insertions": insertions,
        "deletions": deletions,
    }
    head = frontmatter.render(meta, "")
    subject = _clean(info.subject)
    if len(subject) > SUBJECT_MAX:
        subject = subject[:SUBJECT_MAX].rstrip() + _MARK
    subject = _cap_bytes(subject, SUBJECT_MAX_BYTES)
    title = f"# {subject or '(no subject)'}\n"
    if len(info.parents) > META_LIST_MAX:
        title += f"\n[… {len(info.parents)} parents; the first {META_LIST_MAX} are listed]\n"
    if len(ctx.replaces) > META_LIST_MAX:
        title += (
            f"\n[… replaces {len(ctx.replaces)} commits; the first {META_LIST_MAX} are listed]\n"
        )
    body = _clean(info.body).strip()
    file_lines = [_fmt_stat(f) for f in info.files]
    files_header = f"\n## Files ({len(info.files)} changed, +{insertions} -{deletions})\n"

    def assemble(body_text: str, shown: int) -> str:
        text = head + title
        if body_text:
            text += "\n" + body_text + "\n"
        if file_lines:
            text += files_header + "\n".join(file_lines[:shown]) + "\n"
            if shown < len(file_lines):
                text += f"- [… and {len(file_lines) - shown} more files]\n"
        return text

    text = assemble(body, len(file_lines))
    if len(text.encode()) <= NOTE_MAX_BYTES:
        return text
    # Over budget: give the message up to ~half of what is left, then fit as many files as fit.
    fixed = len(assemble("", 0).encode())
    room = NOTE_MAX_BYTES - fixed - 120
    body_cut = _fit(body, max(0, room // 2 if file_lines else room), "message")
    shown = len(file_lines)
    while shown > 0 and len(assemble(body_cut, shown).encode()) > NOTE_MAX_BYTES:
        shown -= 1
    text = assemble(body_cut, shown)
    if len(text.encode()) > NOTE_MAX_BYTES:  # pathological subject/author: cut the body away
        text = assemble(_fit(body, 0, "message"), 0)
    return text


def _fit(text: str, max_bytes: int, what: str) -> str:
    if len(text.encode()) <= max_bytes:
        return text
    cut = text.encode()[:max_bytes].decode("utf-8", "ignore")
    if not cut:
        return f"[… {what} cut: {len(text)} characters]"
    return cut.rstrip() + f"\n[… {what} cut: {len(text) - len(cut)} more characters]"
