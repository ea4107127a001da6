"""One small note per project commit: metadata, message and file stats — never diff content."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from gitvault import frontmatter, git

NOTE_MAX_BYTES = 2048
SUBJECT_MAX = 200  # characters of the subject line …
SUBJECT_MAX_BYTES = 400  # … and at most this many bytes of UTF-8
AUTHOR_MAX_BYTES = 200
NAME_MAX_BYTES = 120  # branch and worktree names
META_LIST_MAX = 8  # parents / replaces listed in the front matter
_MARK = " […]"
PATH_MAX = 160
NOTES_DIR = "notes"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_PATH_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# One record per commit: \x01 header fields (NUL-separated) \x02 then -z numstat entries.
_FORMAT = "%x01%H%x00%P%x00%an%x00%ae%x00%aI%x00%cI%x00%ct%x00%B%x02"
_LOG_ARGS = [
    "-c",
    "core.quotePath=false",
    "log",
    "-z",
    "--numstat",
    "-M",
    "--diff-merges=first-parent",
    f"--format={_FORMAT}",
]


@dataclass(frozen=True)
class FileStat:
    path: str
    added: int | None  # None for binary files
    deleted: int | None


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    authored: str
    committed: str
    commit_time: int
    message: str
    files: tuple[FileStat, ...] = field(default=())

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()

    @property
    def body(self) -> str:
        parts = self.message.split("\n", 1)
        return parts[1].strip("\n") if len(parts) > 1 else ""


@dataclass(frozen=True)
class NoteContext:
    branch: str | None = None
    worktree: str | None = None
    replaces: tuple[str, ...] = ()
    source: str = "hook"  # hook | backfill


def note_path(info: CommitInfo) -> str:
    return note_path_at(info.sha, info.commit_time)


def note_path_at(sha: str, commit_time: int) -> str:
    """Where a commit's note lives: sharded by its committer date (UTC)."""
    day = datetime.fromtimestamp(commit_time, tz=UTC)
    return f"{NOTES_DIR}/{day:%Y/%m/%d}/{sha}.md"


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


# -- reading commits from git --------------------------------------------------------------


def _parse_records(data: bytes) -> Iterator[CommitInfo]:
    for record in data.split(b"\x01"):
        if not record:
            continue
        header, _, stats = record.partition(b"\x02")
        fields = header.split(b"\x00", 7)
        if len(fields) < 8:
            continue
        sha, parents, an, ae, ad, cd, ct, msg = (f.decode("utf-8", "replace") for f in fields)
        yield CommitInfo(
            sha=sha,
            parents=tuple(parents.split()),
            author_name=an,
            author_email=ae,
            authored=ad,
            committed=cd,
            commit_time=int(ct or 0),
            message=msg.rstrip("\n"),
            files=tuple(_parse_numstat(stats)),
        )


def _parse_numstat(data: bytes) -> Iterator[FileStat]:
    items = data.lstrip(b"\n\x00").split(b"\x00")
    i = 0
    while i < len(items):
        item = items[i].lstrip(b"\n")
        i += 1
        if not item:
            continue
        parts = item.split(b"\t", 2)
        if len(parts) < 3:
            continue
        added, deleted, path = parts
        if not path and i + 1 < len(items) + 1:  # rename: "a\td\t" NUL old NUL new
            old = items[i] if i < len(items) else b""
            new = items[i + 1] if i + 1 < len(items) else b""
            i += 2
            path = old + b" => " + new
        yield FileStat(
            path=path.decode("utf-8", "replace"),
            added=int(added) if added.isdigit() else None,
            deleted=int(deleted) if deleted.isdigit() else None,
        )


def read_commits(repo_dir: Path, shas: Iterable[str]) -> dict[str, CommitInfo]:
    """Metadata and file stats for the given commits (one git process for the batch)."""
    wanted = list(dict.fromkeys(shas))
    if not wanted:
        return {}
    proc = git.run_git(
        [*_LOG_ARGS, "--no-walk=unsorted", "--stdin"],
        repo_dir,
        input=("\n".join(wanted) + "\n").encode(),
    )
    return {c.sha: c for c in _parse_records(proc.stdout)}


def stream_commits(repo_dir: Path, rev_args: list[str]) -> Iterator[CommitInfo]:
    """Commits of a rev range, oldest first, parsed as git streams them (for backfill)."""
    cmd = ["git", *_LOG_ARGS, "--reverse", *rev_args, "--"]
    with subprocess.Popen(
        cmd, cwd=repo_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=git.clean_env()
    ) as proc:
        assert proc.stdout is not None
        buffer = b""
        while True:
            chunk = proc.stdout.read(1 << 20)
            if not chunk:
                break
            buffer += chunk
            cut = buffer.rfind(b"\x01")
            if cut > 0:
                yield from _parse_records(buffer[:cut])
                buffer = buffer[cut:]
        yield from _parse_records(buffer)
        stderr = proc.stderr.read() if proc.stderr else b""
        if proc.wait() != 0:
            raise git.GitError(f"`git log` failed: {stderr.decode('utf-8', 'replace').strip()}")
