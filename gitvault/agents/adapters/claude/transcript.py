"""Tolerant reader of Claude Code transcript JSONL (``~/.claude/projects/<enc>/<sid>.jsonl``).

The format is internal to Claude Code and changes between versions, so this reader never fails
on what it does not know: lines that are not JSON, unknown entry types and odd shapes are counted
in ``TranscriptSummary.skipped`` and otherwise ignored. Only the main chain counts: subagent
(``isSidechain``) lines, meta lines, compaction summaries and attachments (where hook output,
including gitvault's own recall, is stored) are left out, and any text fenced as gitvault recall
is cut out wherever it appears, so old memory is never read back as new work.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from gitvault import lazyre
from gitvault.memory.fences import strip_recall
from gitvault.vault.times import parse_time

ASSISTANT_TEXTS_KEPT = 10
# The most any hook reads of a transcript in one call (the documented cap): the tail, or the
# part not read before (PromptScan). Past it, the middle of a transcript is skipped.
MAX_READ_BYTES = 2_000_000
HEAD_BYTES = 262_144  # read for the first prompt when the scan starts past the beginning
MAX_TEXT_CHARS = 4_000

# User text that Claude Code generates itself (slash-command echoes, local command output,
# reminders). Typed prompts never start with these.
_GENERATED_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<system-reminder>",
    "Caveat:",
    "[Request interrupted by user",
)
_REMINDER = lazyre.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.DOTALL)
_HEX_TOKEN = lazyre.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{7,64}(?![0-9A-Za-z])")
_MIN_ABBREV = 7

# Keys of ``skipped`` that are reasons rather than entry types.
INVALID_JSON = "<invalid-json>"
TRUNCATED = "<truncated>"
SIDECHAIN = "<sidechain>"
META = "<meta>"
COMPACT_SUMMARY = "<compact-summary>"
DUPLICATE = "<duplicate>"
SYNTHETIC = "<synthetic>"
GENERATED = "<generated-text>"
UNREADABLE = "<unreadable>"


class TranscriptSummary:
    """What the main chain of a transcript holds. A plain class: `dataclasses` would cost a
    hook `inspect` too."""

    def __init__(
        self,
        prompt_count: int = 0,
        first_prompt: str | None = None,
        last_prompt: str | None = None,
        tool_outputs: list[str] | None = None,
        bash_commands: list[str] | None = None,
        assistant_texts: list[str] | None = None,
        skipped: dict[str, int] | None = None,
    ) -> None:
        self.prompt_count = prompt_count
        self.first_prompt = first_prompt
        self.last_prompt = last_prompt
        # Text of every tool_result / toolUseResult stdout in the main chain, oldest first.
        self.tool_outputs: list[str] = tool_outputs if tool_outputs is not None else []
        # Commands of Bash tool_use blocks, oldest first.
        self.bash_commands: list[str] = bash_commands if bash_commands is not None else []
        # The last ASSISTANT_TEXTS_KEPT assistant text blocks, each at most MAX_TEXT_CHARS.
        self.assistant_texts: list[str] = assistant_texts if assistant_texts is not None else []
        # Entry type (or a "<reason>") → how many lines were not used.
        self.skipped: dict[str, int] = skipped if skipped is not None else {}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TranscriptSummary) and vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TranscriptSummary({vars(self)!r})"


def _clean(text: str) -> str:
    return _REMINDER.sub("", strip_recall(text)).strip()


def _cap(text: str) -> str:
    return text if len(text) <= MAX_TEXT_CHARS else text[:MAX_TEXT_CHARS] + "…"


def _texts(content: Any) -> Iterator[str]:
    """Raw text of a string or of the text blocks of a block list (tool_result content too)."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                yield block
            elif isinstance(block, dict) and block.get("type") == "text":
                value = block.get("text")
                if isinstance(value, str):
                    yield value


def open_regular(path: str | os.PathLike[str]) -> int | None:
    """A read-only descriptor of path when it is a regular file, else None. Opened without
    blocking, so a FIFO, a device or a socket named as a transcript can never hang a hook."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError):
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _read_range(fd: int, start: int, end: int) -> bytes:
    chunks = []
    pos = start
    while pos < end:
        data = os.pread(fd, min(1 << 20, end - pos), pos)
        if not data:
            break
        chunks.append(data)
        pos += len(data)
    return b"".join(chunks)


def _read_lines(path: Path, max_bytes: int, skipped: dict[str, int]) -> list[bytes]:
    fd = open_regular(path)
    if fd is None:
        if os.path.lexists(path):
            raise OSError(f"{path} is not a regular file")
        raise FileNotFoundError(path)
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - max(0, max_bytes))
        data = _read_range(fd, start, size)
    finally:
        os.close(fd)
    lines = data.split(b"\n")
    if start > 0 and lines:
        # We began mid-file: the first piece is the tail of a line we cannot parse.
        lines = lines[1:]
        skipped[TRUNCATED] = skipped.get(TRUNCATED, 0) + 1
    return lines


class _Reader:
    def __init__(self) -> None:
        self.summary = TranscriptSummary()
        self.assistant_texts: deque[str] = deque(maxlen=ASSISTANT_TEXTS_KEPT)
        self.seen_uuids: set[str] = set()

    def skip(self, key: str) -> None:
        skipped = self.summary.skipped
        skipped[key] = skipped.get(key, 0) + 1

    def line(self, raw: bytes) -> None:
        if not raw.strip():
            return
        try:
            entry = json.loads(raw.decode("utf-8", errors="replace"))
        except ValueError:
            self.skip(INVALID_JSON)
            return
        if not isinstance(entry, dict):
            self.skip(INVALID_JSON)
            return
        kind = entry.get("type")
        if kind not in ("user", "assistant"):
            self.skip(kind if isinstance(kind, str) and kind else "<untyped>")
            return
        if entry.get("isSidechain") is True:
            self.skip(SIDECHAIN)
            return
        if entry.get("isMeta") is True:
            self.skip(META)
            return
        if entry.get("isCompactSummary") is True:
            self.skip(COMPACT_SUMMARY)
            return
        uuid = entry.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.seen_uuids:
                self.skip(DUPLICATE)
                return
            self.seen_uuids.add(uuid)
        message = entry.get("message")
        if not isinstance(message, dict):
            self.skip(f"{kind}:no-message")
            return
        if kind == "user":
            self.user(entry, message.get("content"))
        else:
            self.assistant(message)

    def user(self, entry: dict[str, Any], content: Any) -> None:
        blocks = content if isinstance(content, list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        if results:
            self.tool_results(results, entry.get("toolUseResult"))
            return
        texts = [t for t in _texts(content) if not t.lstrip().startswith(_GENERATED_PREFIXES)]
        prompt = _clean("\n".join(texts))
        if not prompt:
            self.skip(GENERATED)
            return
        prompt = _cap(prompt)
        summary = self.summary
        summary.prompt_count += 1
        if summary.first_prompt is None:
            summary.first_prompt = prompt
        summary.last_prompt = prompt

    def tool_results(self, results: list[dict[str, Any]], structured: Any) -> None:
        outputs = self.summary.tool_outputs
        added: list[str] = []
        for block in results:
            text = _clean("\n".join(_texts(block.get("content"))))
            if text:
                added.append(text)
        # toolUseResult repeats Bash stdout in structured form; keep it only when it adds text
        # (e.g. a tool_result that was truncated or replaced by a file reference).
        stdout = structured.get("stdout") if isinstance(structured, dict) else None
        if isinstance(stdout, str):
            text = _clean(stdout)
            if text and not any(text in seen for seen in added):
                added.append(text)
        outputs.extend(added)

    def assistant(self, message: dict[str, Any]) -> None:
        if message.get("model") == "<synthetic>":
            self.skip(SYNTHETIC)  # written by Claude Code itself, not by the model
            return
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                text = block.get("text")
                cleaned = _clean(text) if isinstance(text, str) else ""
                if cleaned:
                    self.assistant_texts.append(_cap(cleaned))
            elif kind == "tool_use" and block.get("name") == "Bash":
                tool_input = block.get("input")
                command = tool_input.get("command") if isinstance(tool_input, dict) else None
                if isinstance(command, str) and command.strip():
                    self.summary.bash_commands.append(command)


def read_transcript(path: Path, *, max_bytes: int = MAX_READ_BYTES) -> TranscriptSummary:
    """Summarise a transcript; a missing, unreadable or non-regular file (a FIFO, a device, a
    directory) gives an empty summary. Only the last ``max_bytes`` of a larger file are read."""
    reader = _Reader()
    try:
        lines = _read_lines(Path(path), max_bytes, reader.summary.skipped)
    except FileNotFoundError:
        return reader.summary
    except OSError:
        reader.skip(UNREADABLE)
        return reader.summary
    for raw in lines:
        reader.line(raw)
    reader.summary.assistant_texts = list(reader.assistant_texts)
    return reader.summary


def commits_in(summary: TranscriptSummary, candidates: Iterable[str]) -> list[str]:
    """The candidate commit SHAs (in the given order, once each) whose full hash or an
    abbreviation of at least 7 hex digits appears as a word in this session's tool output."""
    tokens: set[str] = set()
    for output in summary.tool_outputs:
        tokens.update(match.lower() for match in _HEX_TOKEN.findall(output))
    found: list[str] = []
    seen: set[str] = set()
    for candidate in candidates:
        sha = candidate.strip().lower()
        if sha in seen or len(sha) < _MIN_ABBREV:
            continue
        if any(sha[:n] in tokens for n in range(_MIN_ABBREV, len(sha) + 1)):
            seen.add(sha)
            found.append(candidate)
    return found


def first_timestamp(path: str | os.PathLike[str]) -> float | None:
    """When the transcript's first entry was written (the session's start), or None."""

    fd = open_regular(path)
    if fd is None:
        return None
    try:
        head = os.pread(fd, 16_384, 0)
    finally:
        os.close(fd)
    for raw in head.split(b"\n")[:20]:
        match = _TIMESTAMP.search(raw)
        moment = parse_time(match.group(1).decode()) if match else None
        if moment is not None:
            return moment
    return None


_TIMESTAMP = lazyre.compile(rb'"timestamp"\s*:\s*"(\d{4}-\d\d-\d\dT[0-9:.]+(?:Z|[+-]\d\d:\d\d))"')


def scan_prompts(path: str | os.PathLike[str], seen: dict[str, Any]) -> dict[str, Any]:
    """The typed prompts of a transcript, read incrementally: `seen` is what an earlier call
    returned (offset, prompts, first, last); only what was appended since is read, at most
    MAX_READ_BYTES of it (then the newest part). Only lines that can be user prompts are
    parsed. A file that is not regular, or shrank (a new file), starts over."""
    given = seen.get("offset")
    offset: int = given if isinstance(given, int) and given >= 0 else 0
    out: dict[str, Any] = {
        "offset": offset,
        "prompts": seen.get("prompts") if isinstance(seen.get("prompts"), int) else 0,
        "first": seen.get("first") if isinstance(seen.get("first"), str) else None,
        "last": seen.get("last") if isinstance(seen.get("last"), str) else None,
    }
    fd = open_regular(path)
    if fd is None:
        return out
    try:
        size = os.fstat(fd).st_size
        if size < offset:
            out.update(offset=0, prompts=0, first=None, last=None)
            offset = 0
        start = max(offset, size - MAX_READ_BYTES)
        data = _read_range(fd, start, size)
        head = b""
        if out["first"] is None and start > 0:
            head = _read_range(fd, 0, min(HEAD_BYTES, start))
    finally:
        os.close(fd)
    cut = data.rfind(b"\n")
    if cut < 0:
        return out  # no complete line yet
    lines = data[:cut].split(b"\n")
    if start > offset and lines:
        lines = lines[1:]  # began mid-line
    if head:
        _scan(head.rsplit(b"\n", 1)[0].split(b"\n"), out, count=False)
    _scan(lines, out, count=True)
    out["offset"] = start + cut + 1
    return out


def _scan(lines: list[bytes], out: dict[str, Any], *, count: bool) -> None:
    reader = _Reader()
    for raw in lines:
        if b'"user"' in raw and b"tool_result" not in raw:
            reader.line(raw)
    summary = reader.summary
    if out["first"] is None and summary.first_prompt:
        out["first"] = _kept(summary.first_prompt)
    if count:
        out["prompts"] += summary.prompt_count
        if summary.last_prompt:
            out["last"] = _kept(summary.last_prompt)


def _kept(prompt: str) -> str:
    """A prompt as the session's ledger keeps it (and the mechanical record quotes it): secrets
    redacted before it is cut, so no fragment of a key typed in a prompt is kept."""
    from gitvault.scrub.engine import scrub_secrets  # only session-end reads prompts

    return scrub_secrets(prompt[: MAX_PROMPT_KEPT * 4])[0][:MAX_PROMPT_KEPT]


MAX_PROMPT_KEPT = 500
