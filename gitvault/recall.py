"""The recall block SessionStart injects (READ ONLY): fast, fail-open, bounded in code.

Priority: fence + digest (≤ 6,000) → the two newest sessions' Summary / Key Decisions /
Next Steps (≤ 600 characters each) → patterns (≤ 25 lines). The whole block is ≤ 9,500
characters because Claude Code moves hook output over 10,000 characters into a file the model
never reads. Whatever does not fit is dropped by priority and named in one `[omitted: …]` line.

This module reads the vault's tip with plain git (ls-tree + one cat-file --batch) and never
imports pygit2 or jsonschema: the SessionStart hook must answer in well under 150 ms.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from gitvault import frontmatter, git, sections
from gitvault.textclean import RECALL_BEGIN, RECALL_END

BLOCK_MAX = 9500
DIGEST_MAX = 6000
SECTION_MAX = 600
SESSION_SECTIONS = ("Summary", "Key Decisions", "Next Steps")
PATTERN_LINES = 25
USER_PATTERNS_ENV = "GITVAULT_PATTERNS_DIR"


@dataclass
class Recall:
    text: str
    omitted: list[str] = field(default_factory=list)
    has_digest: bool = False
    sessions: list[str] = field(default_factory=list)


def _cut(text: str, limit: int, what: str) -> str:
    if len(text) <= limit:
        return text
    marker = f"\n[… {what} cut at {limit} characters]"
    room = limit - len(marker)
    cut = text[:room]
    if "\n" in cut:
        cut = cut[: cut.rfind("\n")]
    return cut + marker


def user_patterns_dir() -> Path:
    explicit = os.environ.get(USER_PATTERNS_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "gitvault" / "patterns"


def _pattern_lines(texts: list[str]) -> list[str]:
    lines = []
    for text in texts:
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith(("- ", "* ")):
                lines.append("- " + stripped[2:].strip())
    return lines


def build(cwd: Path, branch: str | None = None) -> Recall:
    """The recall block for the repository at cwd."""
    branch = branch or git.config_get(cwd, "gitvault.branch") or "vault"
    rev = f"refs/heads/{branch}"
    entries = git.ls_tree(cwd, rev, ["_master.md", "vault.toml", "sessions/", "patterns/"])
    if not entries:
        return Recall(text="")  # no vault here: say nothing
    by_path = {e.path: e for e in entries}
    session_paths = sorted(
        (e.path for e in entries if e.path.startswith("sessions/") and e.path.endswith(".md")),
        reverse=True,
    )
    pattern_paths = sorted(
        e.path for e in entries if e.path.startswith("patterns/") and e.path.endswith(".md")
        and not e.path.endswith("/README.md")
    )
    wanted = [p for p in ("_master.md", "vault.toml") if p in by_path]
    wanted += session_paths[:2] + pattern_paths
    blobs = git.cat_blobs(cwd, [by_path[p].oid for p in wanted])

    def read(path: str) -> str:
        entry = by_path.get(path)
        data = blobs.get(entry.oid, b"") if entry else b""
        return data.decode("utf-8", "replace")

    settings = _recall_settings(read("vault.toml"))
    block_max = min(int(settings.get("max_chars", BLOCK_MAX)), BLOCK_MAX)
    section_max = int(settings.get("section_chars", SECTION_MAX))
    max_patterns = int(settings.get("pattern_lines", PATTERN_LINES))
    n_sessions = int(settings.get("sessions", 2))

    recall = Recall(text="")
    parts: list[str] = []
    digest_text = read("_master.md")
    if digest_text:
        meta, body = frontmatter.parse(digest_text)
        recall.has_digest = True
        when = str(meta.get("folded_at", ""))[:16]
        merger = meta.get("merger", "?")
        body = _strip_fences(body).strip()
        parts.append(
            f"Project memory digest (folded {when} by {merger}; cite-check with `git show <sha>`):\n"
            + _cut(body, DIGEST_MAX, "digest")
        )
    else:
        notes = len(git.ls_tree(cwd, rev, ["notes/"], recursive=True))
        parts.append(
            f"No digest yet: {notes} commit notes and {len(session_paths)} sessions are waiting "
            "for a fold (`gitvault fold`)."
        )
    optional: list[tuple[str, str]] = []  # (name for [omitted], text), in priority order
    for path in session_paths[:n_sessions]:
        meta, body = frontmatter.parse(read(path))
        found = sections.split_sections(_strip_fences(body))
        slug = path[len("sessions/") : -3]
        recall.sessions.append(slug)
        lines = [f"Session s:{slug} — {meta.get('title', '')} ({meta.get('mode', 'manual')})"]
        for name in SESSION_SECTIONS:
            text = found.get(name.lower(), "").strip()
            if text:
                lines.append(f"{name}:\n{_cut(text, section_max, name)}")
        optional.append((f"session {slug}", "\n".join(lines)))
    patterns = _pattern_lines([read(p) for p in pattern_paths] + _user_patterns())
    if patterns:
        shown = patterns[:max_patterns]
        text = "Standing patterns:\n" + "\n".join(shown)
        if len(patterns) > max_patterns:
            recall.omitted.append(f"{len(patterns) - max_patterns} pattern lines")
        optional.append(("patterns", text))
    recall.text = _assemble(parts, optional, block_max, recall.omitted)
    return recall


def _assemble(required: list[str], optional: list[tuple[str, str]], limit: int,
              omitted: list[str]) -> str:
    head, tail = RECALL_BEGIN, RECALL_END
    reserve = 200  # room for the [omitted: …] line

    def render(bodies: list[str], omitted_now: list[str]) -> str:
        lines = [head, *bodies]
        if omitted_now:
            lines.append(f"[omitted: {'; '.join(omitted_now)}]")
        lines.append(tail)
        return "\n\n".join(lines)

    bodies = list(required)
    if len(render(bodies, omitted)) > limit:  # the digest alone is too big: cut it harder
        room = limit - len(render([], omitted)) - reserve
        bodies = [_cut("\n\n".join(bodies), max(room, 0), "digest")]
    for name, text in optional:
        if len(render([*bodies, text], omitted)) + reserve <= limit:
            bodies.append(text)
        else:
            omitted.append(name)
    text = render(bodies, omitted)
    if len(text) > limit:  # belt and braces: never over the limit
        text = text[: limit - len(tail) - 2] + "\n\n" + tail
    return text


def _strip_fences(text: str) -> str:
    # Stored text never carries a recall block; strip any anyway so recall cannot nest.
    while RECALL_BEGIN in text:
        start = text.find(RECALL_BEGIN)
        end = text.find(RECALL_END, start)
        text = text[:start] + (text[end + len(RECALL_END) :] if end >= 0 else "")
    return text


def _recall_settings(vault_toml: str) -> dict[str, object]:
    try:
        data = tomllib.loads(vault_toml) if vault_toml else {}
    except tomllib.TOMLDecodeError:
        return {}
    recall = data.get("recall", {})
    return recall if isinstance(recall, dict) else {}


def _user_patterns() -> list[str]:
    folder = user_patterns_dir()
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix == ".md")
    except OSError:
        return []
    out = []
    for path in files[:50]:
        try:
            out.append(path.read_text(encoding="utf-8", errors="replace")[:20_000])
        except OSError:
            continue
    return out
