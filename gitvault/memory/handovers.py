"""Handovers: the session record `gitvault checkpoint` writes before an agent's context runs
out, and which of them this clone's next session has already been given.

A handover is a session (sessions/…md, front matter `handover: true`) whose body holds, besides
the three sections every session has, what was asked, what the session committed (from its
worktree's HEAD reflog, gitvault.memory.attribution, never from what the agent typed), its open
threads and its next step. The text the agent gives is split into those sections here; a heading
inside one of them is demoted, so no given text can open a section of its own.

Consumed is LOCAL state (statedir.HANDOVERS), never a vault commit. A handover is one person's
note to their own next session in the same worktree and branch: a vault commit at every session
start would write shared history from a read-only moment, reach teammates by sync, and let one
clone's session start decide for another's. So recall offers first only a handover saved from
this clone (no origin from a remote), from this worktree and branch, that this clone has not
consumed; offering it consumes it and every older one of the same place. Another clone, a
teammate, or the same person's other worktree still sees it as an ordinary session.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence

from gitvault import lazyre
from gitvault.errors import GitvaultError
from gitvault.memory import sections
from gitvault.memory.fences import strip_private, strip_recall
from gitvault.resolve import Location
from gitvault.vault import statedir

FIELD = "handover"  # the front-matter flag (session.schema.json)
ASKED, COMMITTED, OPEN, NEXT = "Asked", "Committed", "Open Threads", "Next Step"
# The sections a handover shows, in order (the given text's names, lower-cased, and the
# names an agent may use for them).
GIVEN: dict[str, tuple[str, ...]] = {
    ASKED: ("asked", "what was asked", "task", "request"),
    OPEN: ("open threads", "open thread", "open", "open questions"),
    NEXT: ("next step", "next steps", "next"),
    "Summary": ("summary", "state", "where it stands"),
    "Key Decisions": ("key decisions", "decisions"),
}
SHOWN = (ASKED, COMMITTED, OPEN, NEXT)
SECTION_MAX = 1_200  # characters of one section in the recall block
PART_MAX = 3_000  # the whole handover part of the recall block
KEEP = 500  # consumed entries kept
NONE_OPEN = "None named."
NONE_DECIDED = "None recorded at the checkpoint."
_HEADING = lazyre.compile(r"^(#{1,2})(\s)", re.M)


class HandoverRefused(GitvaultError):
    """What the agent gave lacks what a handover needs."""


def _demoted(text: str) -> str:
    """Given text with its level-1/2 headings made level 3: it cannot start a section."""
    return _HEADING.sub(lambda m: "###" + m.group(2), text.strip())


def given_sections(raw: str, overrides: Mapping[str, str | None]) -> dict[str, str]:
    """The handover's parts from the agent's text (## Asked / ## Open Threads / ## Next Step,
    optionally ## Summary, ## Key Decisions) and from options, which win. Refused without
    what was asked or the next step."""
    found = sections.split_sections(raw) if raw.strip() else {}
    out: dict[str, str] = {}
    for name, aliases in GIVEN.items():
        value = overrides.get(name)
        if value is None:
            value = next((found[a] for a in aliases if found.get(a, "").strip()), "")
        # Each part on its own: a fence inside one (recalled memory) takes only that part's
        # text with it, never the sections around it.
        value = strip_private(strip_recall(value))
        if value.strip():
            out[name] = _demoted(value)
    missing = [n for n in (ASKED, NEXT) if n not in out]
    if missing:
        raise HandoverRefused(
            "the handover lacks " + ", ".join(f"## {m}" for m in missing),
            hint="give ## Asked (what the user asked) and ## Next Step (what to do first), "
            "and ## Open Threads if any, on stdin; or --asked/--next/--open",
        )
    return out


UNKNOWN_COMMITS = (
    "Not known: no agent session id (run it inside the agent, or pass --session-id); "
    "check `git log`."
)


def commit_lines(commits: Sequence[tuple[str, str]] | None) -> str:
    if commits is None:
        return UNKNOWN_COMMITS
    if not commits:
        return "Nothing committed during this session."
    return "\n".join(
        f"- {sha[:7]} {' '.join(subject.split())[:120]}" for sha, subject in commits[:50]
    )


def compose(given: Mapping[str, str], commits: Sequence[tuple[str, str]] | None, title: str) -> str:
    """The session text of a handover (then saved like any session: cleaned, redacted).
    commits None: not known (no agent session)."""
    summary = given.get("Summary") or given[ASKED].split("\n", 1)[0]
    body = [
        f"# {title}",
        "",
        "## Summary",
        f"Handover at a checkpoint (the context window was nearly full). {summary}",
        "",
        f"## {ASKED}",
        given[ASKED],
        "",
        f"## {COMMITTED}",
        commit_lines(commits),
        "",
        f"## {OPEN}",
        given.get(OPEN) or NONE_OPEN,
        "",
        "## Key Decisions",
        given.get("Key Decisions") or NONE_DECIDED,
        "",
        "## Next Steps",
        given[NEXT],
        "",
    ]
    return "\n".join(body)


def title_for(given: Mapping[str, str], title: str | None) -> str:
    what = (title or "").strip() or given[ASKED].strip().split("\n", 1)[0].lstrip("#-* ")
    return f"Handover: {what[:100]}".rstrip()


def part_text(slug: str, meta: Mapping[str, object], body: str) -> str:
    """The recall block's first part: the handover to continue from."""
    found = sections.split_sections(body)
    where = meta.get("branch")
    saved = str(meta.get("saved_at", ""))[:16].replace("T", " ")
    head = (
        f"Handover from an earlier session, s:{slug} (saved {saved}"
        + (f", branch {where}" if isinstance(where, str) and where else "")
        + "): it ran out of context; continue from here, checking its claims with git:"
    )
    lines = [head]
    for name in SHOWN:
        key = NEXT.lower() if name == NEXT else name.lower()
        text = found.get(key) or (found.get("next steps", "") if name == NEXT else "")
        if text.strip():
            if len(text) > SECTION_MAX:
                text = text[: SECTION_MAX - 20].rsplit("\n", 1)[0] + f"\n[… {name} cut]"
            lines.append(f"{name}:\n{text.strip()}")
    out = "\n".join(lines)
    return out if len(out) <= PART_MAX else out[: PART_MAX - 20] + "\n[… handover cut]"


# -- which handover is offered, and consumed -----------------------------------------------


def is_handover(meta: Mapping[str, object]) -> bool:
    return meta.get(FIELD) is True


def belongs_here(meta: Mapping[str, object], branch: str, worktree: str | None) -> bool:
    """Saved from this worktree (when both name one) and this branch (when it had one)."""
    saved_tree, saved_branch = meta.get("worktree"), meta.get("branch")
    if worktree and isinstance(saved_tree, str) and saved_tree != worktree:
        return False
    if isinstance(saved_branch, str) and saved_branch:
        return saved_branch == branch
    return True


def consumed(loc: Location | None) -> set[str]:
    """The handovers this clone already offered (slugs)."""
    data = statedir.HANDOVERS_FILE.read(loc) if loc is not None else None
    entries = data.get("consumed") if data else None
    return {str(k) for k in entries} if isinstance(entries, dict) else set()


def consume(loc: Location, slugs: Iterable[str], session_id: str | None = None) -> None:
    """Mark handovers offered (to the session named), the newest KEEP entries kept. Never
    raises: recall is fail-open, and a handover offered twice is the lesser harm."""
    wanted = [s for s in slugs if s]
    if not wanted:
        return
    data = statedir.HANDOVERS_FILE.read(loc) or {}
    entries = data.get("consumed")
    table: dict[str, object] = dict(entries) if isinstance(entries, dict) else {}
    now = round(time.time(), 3)
    for slug in wanted:
        table.setdefault(slug, {"at": now, "session": session_id})
    kept = dict(list(table.items())[-KEEP:])
    try:
        statedir.HANDOVERS_FILE.write(loc, {"consumed": kept})
    except OSError:
        pass
