"""One small note per project commit: metadata, message and file stats — never diff content.

Commit metadata is untrusted: any bytes in an author, a message, a file or branch name. Single-line
fields lose every line break and control or format character; secrets are redacted from every
field before the note is rendered; the front matter is written so that what is written is what
is read (gitvault.vault.frontmatter), and every note is validated against the schema before it
is written (`note_write`), by the drainer and by backfill alike.

The body's format: `render` writes it; `gitvault.vault.notebody.parse_body` reads it back (the
fold's items and miner and the search index read notes only through it).

    # <subject>
    [… N parents; the first 8 are listed]          (when cut)
    <message>
    ## Files (<n> changed, +<insertions> -<deletions>)
    - <path> (+<added> -<deleted>)  |  - <path> (binary)
    - [… and <k> more files]                        (when cut)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from gitvault.errors import GitvaultError
from gitvault.notes.commits import CommitInfo, FileStat
from gitvault.scrub.engine import scrub_secrets
from gitvault.vault import frontmatter, layout, schemas
from gitvault.vault.notebody import FILES_HEADING
from gitvault.vault.store import Write

NOTE_MAX_BYTES = 2048
SUBJECT_MAX = 200  # characters of the subject line …
SUBJECT_MAX_BYTES = 400  # … and at most this many bytes of UTF-8
AUTHOR_MAX_BYTES = 200
NAME_MAX_BYTES = 120  # branch and worktree names
META_LIST_MAX = 8  # parents / replaces listed in the front matter
_MARK = " […]"
PATH_MAX = 160

# Line breaks any reader might honour, and every other control or format character.
_BREAKS = re.compile("\r\n|[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_CONTROL = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff]"
)


@dataclass(frozen=True)
class NoteContext:
    branch: str | None = None
    worktree: str | None = None
    replaces: tuple[str, ...] = ()
    source: str = "hook"  # hook | backfill


def note_path(info: CommitInfo) -> str:
    return layout.note_path(info.sha, info.commit_time)


class NoteInvalid(GitvaultError):
    """A commit whose note would not match the schema: set aside, never written."""


class _Redactor:
    """Redacts secrets from each field and counts what it replaced."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, text: str) -> str:
        if not text:
            return text
        out, found = _scrubbed(text) if len(text) <= _REPEATED else _scrub(text)
        self.count += found
        return out


def _scrub(text: str) -> tuple[str, int]:
    out, found = scrub_secrets(text)
    return out, sum(r.count for r in found)


# Short fields repeat from note to note (a file's path, an author, a branch): what the filter
# made of one is remembered (it is a function of the text). A third of a backfill's Python time
# was the filter, most of it on the same paths again.
_REPEATED = 300
_scrubbed = lru_cache(maxsize=16384)(_scrub)


def _clean(text: str) -> str:
    """Multi-line text: every line break becomes `\n`, other controls go."""
    return _CONTROL.sub("", _BREAKS.sub("\n", text))


def _scrubbed_message(message: str, redact: _Redactor) -> tuple[str, str]:
    """The commit message's subject and body, split as CommitInfo splits them, after the whole
    message is redacted at once: scrubbed apart, a secret across the two was missed (``cat
    config/master.key`` / the key on the next line, a table whose header is the subject, a
    token wrapped onto the next line)."""
    message = redact(message)
    parts = message.split("\n", 1)
    return parts[0].strip(), parts[1].strip("\n") if len(parts) > 1 else ""


def _one_line(text: str) -> str:
    """A single-line field: line breaks become spaces, tabs and other controls go."""
    return _CONTROL.sub("", _BREAKS.sub(" ", text).replace("\n", " ").replace("\t", " "))


def _fmt_stat(f: FileStat, redact: _Redactor) -> str:
    # A file name may hold newlines or escape sequences: shown as '?', never as note structure.
    path = redact(_CONTROL.sub("?", _BREAKS.sub("?", f.path).replace("\n", "?").replace("\t", "?")))
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
    return _rendered(info, ctx)[0]


def _rendered(info: CommitInfo, ctx: NoteContext) -> tuple[str, str]:
    """The note's text and its redacted subject line, from one pass of the secret filter over
    each field (the vault commit's message names the subject: scrubbing the message again
    for it cost a second pass of the filter over every message too long to be remembered)."""
    insertions = sum(f.added or 0 for f in info.files)
    deletions = sum(f.deleted or 0 for f in info.files)
    # Every front-matter field is bounded, so the fixed part of a note always fits in 2 KB
    # (a squash of many commits, an octopus merge, a long branch name or a long Unicode
    # author would otherwise push it over); what is left out is counted in the body.
    redact = _Redactor()
    author = _cap_bytes(
        redact(_one_line(f"{info.author_name} <{info.author_email}>")), AUTHOR_MAX_BYTES
    )
    branch = _cap_bytes(redact(_one_line(ctx.branch)), NAME_MAX_BYTES) if ctx.branch else None
    worktree = _cap_bytes(redact(_one_line(ctx.worktree)), NAME_MAX_BYTES) if ctx.worktree else None
    subject, body = _scrubbed_message(info.message, redact)
    subject = _one_line(subject)
    line = subject[:72]
    subject = subject.strip()
    body = _clean(body).strip()
    file_lines = [_fmt_stat(f, redact) for f in info.files]
    meta = {
        "kind": "note",
        "sha": info.sha,
        "parents": list(info.parents[:META_LIST_MAX]),
        "branch": branch or None,
        "worktree": worktree or None,
        "author": author,
        "authored": info.authored,
        "committed": info.committed,
        "replaces": list(ctx.replaces[:META_LIST_MAX]) or None,
        "source": ctx.source,
        "files_changed": len(info.files),
        "insertions": insertions,
        "deletions": deletions,
        "redactions": redact.count or None,
    }
    head = frontmatter.render(meta, "")
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
    files_header = f"\n{FILES_HEADING} ({len(info.files)} changed, +{insertions} -{deletions})\n"

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
        return text, line
    # Over budget: the message gets the room the file list does not need, and at least half
    # of it when the list needs more (a long message beside a short list was cut at half, the
    # rest of the budget left empty: its later words were never searchable); then as many
    # files as fit.
    fixed = len(assemble("", 0).encode())
    room = NOTE_MAX_BYTES - fixed - 120
    listed = len(files_header.encode()) + sum(len(ln.encode()) + 1 for ln in file_lines)
    listed = listed if file_lines else 0
    body_cut = _fit(body, max(0, room // 2, room - listed), "message")
    shown = len(file_lines)
    while shown > 0 and len(assemble(body_cut, shown).encode()) > NOTE_MAX_BYTES:
        shown -= 1
    text = assemble(body_cut, shown)
    if len(text.encode()) > NOTE_MAX_BYTES:  # pathological subject/author: cut the body away
        text = assemble(_fit(body, 0, "message"), 0)
    return text, line


def _fit(text: str, max_bytes: int, what: str) -> str:
    if len(text.encode()) <= max_bytes:
        return text
    cut = text.encode()[:max_bytes].decode("utf-8", "ignore")
    if not cut:
        return f"[… {what} cut: {len(text)} characters]"
    return cut.rstrip() + f"\n[… {what} cut: {len(text) - len(cut)} more characters]"


def note_write(info: CommitInfo, ctx: NoteContext) -> Write:
    """The vault write for a commit's note, rendered and validated: the one path by which the
    drainer and backfill produce notes. Raises NoteInvalid when the note fails the schema."""
    text, subject = _rendered(info, ctx)
    meta, _ = frontmatter.parse(text)
    problems = schemas.errors("note.schema.json", meta)
    if problems or meta.get("sha") != info.sha:
        detail = problems[0] if problems else "the note reads back a different sha"
        raise NoteInvalid(f"the note for {info.sha[:12]} does not match the schema: {detail}")
    return Write({note_path(info): text.encode()}, f"note {info.sha[:7]} {subject}")
