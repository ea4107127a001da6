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
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from gitvault.memory import cites, sections
from gitvault.memory.fences import RECALL_BEGIN, RECALL_END, strip_recall
from gitvault.vault import frontmatter, gitcmd, layout

DIGEST_MAX: int = layout.DEFAULTS["digest"]["max_chars"]
SESSION_SECTIONS = ("Summary", "Key Decisions", "Next Steps")
USER_PATTERNS_ENV = "GITVAULT_PATTERNS_DIR"


class Recall:
    """The block and what went into it. A plain class: dataclasses would pull `inspect` (~15 ms)
    into the SessionStart hook's imports."""

    def __init__(self, text: str = "") -> None:
        self.text = text
        self.omitted: list[str] = []
        self.has_digest = False
        self.sessions: list[str] = []
        # What could not be read (the hook logs these; the block says what it could).
        self.problems: list[str] = []


def _cut(text: str, limit: int, what: str) -> str:
    if len(text) <= limit:
        return text
    marker = f"\n[… {what} cut at {limit} characters]"
    if limit <= len(marker):
        return text[: max(limit, 0)]
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
    branch = branch or layout.branch_name(gitcmd.config_get(cwd, layout.BRANCH_KEY))
    rev = layout.branch_ref(branch)
    folders = [layout.SESSIONS + "/", layout.PATTERNS + "/", layout.TOMBSTONES + "/"]
    entries = gitcmd.ls_tree(cwd, rev, [layout.DIGEST, layout.CONFIG, *folders])
    if not entries:
        _check_readable(cwd, rev)  # a vault that exists but cannot be read is an error
        return Recall(text="")  # no vault here: say nothing
    by_path = {e.path: e for e in entries}
    # `gitvault forget`: forgotten sessions, and digest lines resting only on forgotten items.
    tombs = {c for e in entries if (c := layout.tombstone_cite(e.path))}
    session_paths = sorted((e.path for e in entries if layout.session_slug(e.path)), reverse=True)
    session_paths = [p for p in session_paths if not cites.path_is_buried(p, tombs)]
    pattern_paths = sorted(e.path for e in entries if layout.is_pattern(e.path))
    wanted: list[str] = [p for p in (layout.DIGEST, layout.CONFIG) if p in by_path]
    wanted += _candidates(session_paths, 2) + pattern_paths
    blobs = gitcmd.cat_blobs(cwd, [by_path[p].oid for p in wanted])

    def read(path: str) -> str:
        entry = by_path.get(path)
        data = blobs.get(entry.oid, b"") if entry else b""
        return data.decode("utf-8", "replace")

    def unreadable(path: str) -> bool:
        return path in by_path and by_path[path].oid not in blobs

    settings = layout.read_settings(read(layout.CONFIG), "recall")
    block_max = max(0, min(settings["max_chars"], layout.RECALL_MAX_CHARS))
    section_max = max(0, settings["section_chars"])
    max_patterns = max(0, settings["pattern_lines"])
    n_sessions = max(0, min(settings["sessions"], 10))
    candidates = _candidates(session_paths, n_sessions)
    more = [by_path[p].oid for p in candidates if p not in wanted]
    if more:  # the first batch fetched the candidates for two sessions only
        blobs.update(gitcmd.cat_blobs(cwd, more))
    newest = _newest(candidates, read)[:n_sessions]

    recall = Recall(text="")
    recall.problems = [
        f"cannot read {p} from the vault branch '{branch}' (object {by_path[p].oid[:12]} missing)"
        for p in [layout.DIGEST, *candidates, *pattern_paths]
        if unreadable(p)
    ]
    parts: list[str] = []
    digest_text = read(layout.DIGEST)
    if unreadable(layout.DIGEST):
        parts.append("The digest exists but could not be read (logged; see `gitvault status`).")
    elif digest_text:
        meta, body = frontmatter.parse(digest_text)
        recall.has_digest = True
        when = str(meta.get("folded_at", ""))[:16]
        merger = meta.get("merger", "?")
        body = strip_recall(body).strip()
        if tombs:
            body = "\n".join(
                ln for ln in body.split("\n") if not cites.rests_only_on_buried(ln, tombs)
            )
        if len(body) > DIGEST_MAX:
            recall.omitted.append(
                f"digest beyond {DIGEST_MAX:,} of {len(body):,} characters "
                f"(`gitvault show {layout.DIGEST}`)"
            )
        behind = fold_line(cwd, read(layout.CONFIG))
        parts.append(
            f"Project memory digest (folded {when} by {merger}; "
            "cite-check with `git show <sha>`):\n"
            + (f"[{behind}]\n" if behind else "")
            + _cut(body, DIGEST_MAX, "digest")
        )
    else:
        notes = gitcmd.count_files(cwd, rev, layout.NOTES + "/", ".md")  # .keep is no note
        waiting = f"{_count(notes, 'commit note')} and {_count(len(session_paths), 'session')}"
        parts.append(
            f"No digest yet: {waiting} are waiting for a fold (`gitvault fold`); "
            "nothing has been folded into a digest so far."
        )
    optional: list[tuple[str, str]] = []  # (name for [omitted], text), in priority order
    for path in newest:
        if unreadable(path):
            continue
        meta, body = frontmatter.parse(read(path))
        found = sections.split_sections(strip_recall(body))
        slug = layout.session_slug(path) or path
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


def fold_line(cwd: Path, vault_toml: str) -> str:
    """One short line while the digest is behind for a reason or the last fold failed, from
    the state file the fold writes (plain json: no git object is read); "" otherwise."""
    import json

    from gitvault.resolve import resolve

    try:
        path = resolve(cwd).state_dir / layout.FOLD_STATE
        state = json.loads(path.read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001 - recall is fail-open; no state file: nothing to say
        return ""
    if not isinstance(state, dict):
        return ""
    pending = state.get("pending") if isinstance(state.get("pending"), int) else 0
    failure = state.get("failure") if isinstance(state.get("failure"), dict) else None
    configured = layout.read_settings(vault_toml, "fold").get("merger")
    if failure and failure.get("merger") == configured:
        message = str(failure.get("message", ""))[:160]
        fix = str(failure.get("fix", ""))[:200]
        if state.get("fallback"):
            return (
                f"digest kept current by the builtin fallback; the {configured} fold failed: "
                f"{message}; fix: {fix}"
            )
        return f"digest {pending} items behind; last fold failed: {message}; fix: {fix}"
    reason = state.get("reason")
    if pending and isinstance(reason, str) and reason:
        return f"digest {pending} items behind: {reason[:200]}"
    return ""


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def _minute(path: str) -> str:
    return (layout.session_slug(path) or "")[: len("YYYY-MM-DD-HHMM")]


def _candidates(paths: list[str], n: int, cap: int = 50) -> list[str]:
    """The newest n sessions by name, plus every other session saved in the same minutes
    (names have minute resolution, so within a minute only saved_at tells the order)."""
    if len(paths) <= n or n <= 0:
        return paths[: max(n, 0)]
    cutoff = _minute(paths[n - 1])
    return [p for p in paths if _minute(p) >= cutoff][: max(cap, n)]


def _newest(paths: list[str], read: Callable[[str], str]) -> list[str]:
    """Newest first by the saved_at in each session's front matter, then by name."""

    def key(path: str) -> tuple[float, str]:
        meta, _ = frontmatter.parse(read(path))
        try:
            moment = datetime.fromisoformat(str(meta.get("saved_at"))).timestamp()
        except (TypeError, ValueError):
            moment = 0.0
        return moment, path

    return sorted(paths, key=key, reverse=True)


def _assemble(
    required: list[str], optional: list[tuple[str, str]], limit: int, omitted: list[str]
) -> str:
    """Fence + required parts, then optional parts in priority order while they fit. Each fit
    is checked as if every later part were omitted too (the longest [omitted: …] line that can
    still occur), so the final block, whatever is left out, is never over the limit."""
    head, tail = RECALL_BEGIN, RECALL_END

    def render(bodies: list[str], omitted_now: list[str]) -> str:
        lines = [head, *bodies]
        if omitted_now:
            lines.append(f"[omitted: {'; '.join(omitted_now)}]")
        lines.append(tail)
        return "\n\n".join(lines)

    names = [name for name, _ in optional]
    bodies = list(required)
    worst = omitted + names
    if len(render(bodies, worst)) > limit:  # the required part alone is too big: cut it harder
        room = limit - len(render([""], worst))
        bodies = [_cut("\n\n".join(bodies), max(room, 0), "digest")]
    for index, (name, text) in enumerate(optional):
        if len(render([*bodies, text], omitted + names[index + 1 :])) <= limit:
            bodies.append(text)
        else:
            omitted.append(name)
    text = render(bodies, omitted)
    if len(text) > limit:  # belt and braces: never over the limit
        text = text[: limit - len(tail) - 2] + "\n\n" + tail
    return text


def _check_readable(cwd: Path, rev: str) -> None:
    """Raise when the vault ref exists but its tree cannot be read (a broken or partial
    clone): say nothing about a missing vault, but never hide a broken one."""
    target = gitcmd.ref_exists(cwd, rev)
    if target is None:
        return
    if not gitcmd.tree_readable(cwd, rev):
        raise gitcmd.GitError(
            f"the vault branch {rev} ({target[:12]}) cannot be read",
            hint="run `git fsck`, or fetch the vault branch again",
        )


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
