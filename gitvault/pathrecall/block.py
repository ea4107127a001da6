"""The edit-time block: what the vault knows about one file, shown next to the result of the
tool that read it or is about to change it (every agent's hook), by `gitvault recall --for
PATH`, and by the MCP server's `file_memory` tool: the same text in all three.

At most EDIT_RECALL_MAX_CHARS (3,200 characters, ~800 tokens), fenced like the session-start
recall (so `gitvault save` never stores it back), redacted and neutralised on the way out, and
empty when the vault knows nothing about the path. Sections, in this order, each within its
share of the budget (what one leaves unused goes to the co-change list, then to the latest
commits):

    Memory of <path> (<n> commits, <first> to <last>; earlier names …); cite-check …
    Decisions and gotchas citing its commits:      digest lines and session bullets
    Reverted attempts on it:                       every revert, the newest with its reason
    Changes with it: "when you change X, Y changed with it in 18 of 22 commits" …
    Recent fixes:                                  its hot-spot history
    Newest session touching it: s:<slug> "title" and its next steps
    Latest commits:
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from gitvault.memory.cites import cites_in
from gitvault.memory.fences import RECALL_BEGIN, RECALL_END, outbound
from gitvault.named import NamedTuple
from gitvault.pathrecall import gate
from gitvault.pathrecall.index import CommitRow, PathFacts, PathIndex, knows
from gitvault.resolve import Location
from gitvault.vault import layout, origin

LIMIT = layout.EDIT_RECALL_MAX_CHARS
SHARES = {"facts": 1000, "reverts": 700, "partners": 700, "fixes": 360, "session": 440, "latest": 0}
DETAILED_REVERTS = 3
SUBJECT_CHARS = 72


class Block(NamedTuple):
    """The block for one path, or why there is none (text "" and a reason)."""

    path: str | None  # the repository-relative path, when the name was one
    text: str
    reason: str  # "" when there is a block; else why not (for the CLI and logs)
    facts: PathFacts | None = None


def _day(moment: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(moment))


def _subject(text: str, limit: int = SUBJECT_CHARS) -> str:
    text = text.replace('"', "'")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _commit(row: CommitRow) -> str:
    return f'c:{row.sha[:7]} {_day(row.time)} "{_subject(row.subject)}"'


def _fit(lines: list[str], room: int) -> list[str]:
    """As many whole lines as fit in `room` characters (a line counts its newline)."""
    out: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > room:
            break
        out.append(line)
        used += len(line) + 1
    return out


def _facts_lines(found: PathFacts) -> list[str]:
    lines = []
    seen: set[str] = set()
    order = {"digest": 0}
    ranked = sorted(found.facts, key=lambda f: (order.get(f.source, 1), f.kind == "next", -f.time))
    for fact in ranked:
        if fact.kind == "next" or fact.text in seen:
            continue  # next steps belong to the session section
        seen.add(fact.text)
        where = fact.kind if fact.source == "digest" else f"{fact.kind}, {fact.source}"
        lines.append(f"- [{where}] {fact.text}")
    return ["Decisions and gotchas citing its commits or naming it:", *lines] if lines else []


def _revert_lines(found: PathFacts, room: int) -> list[str]:
    """Every revert on the path: the newest in full, the rest by citation, so none is left
    out while the block has room for its citation."""
    entries: list[tuple[int, str, str]] = []  # (time, full line, citation)
    for revert, target in found.reverts:
        what = (
            f"reverted {_commit(target)}"
            if target is not None
            else f"reverted {revert.target or 'an earlier change'}"
        )
        if target is not None and target.kind == "revert":
            what += " (a revert itself: the change came back)"
        reason = f" — {_subject(revert.reason, 140)}" if revert.reason else ""
        title = _subject(revert.subject, 60)
        line = f'- c:{revert.sha[:7]} {_day(revert.time)} "{title}" {what}{reason}'
        entries.append((revert.time, line, f"c:{revert.sha[:7]}"))
    for commit, undo in found.reverted:
        line = f"- {_commit(commit)} was reverted by c:{undo.sha[:7]} {_day(undo.time)}"
        entries.append((undo.time, line, f"c:{commit.sha[:7]}→c:{undo.sha[:7]}"))
    if not entries:
        return []
    entries.sort(key=lambda e: -e[0])
    head = f"Reverted attempts on it ({len(entries)}):"
    lines = [head]
    used = len(head) + 1
    for index, (_, line, _cite) in enumerate(entries):
        rest = [c for _, _, c in entries[index + 1 :]]
        tail = f"Also reverted: {', '.join(rest)}" if rest else ""
        if index < DETAILED_REVERTS and used + len(line) + 1 + len(tail) + 1 <= room:
            lines.append(line)
            used += len(line) + 1
            continue
        lines.append(f"Also reverted: {', '.join(c for _, _, c in entries[index:])}")
        break
    return lines


# Beyond the two named first, a partner is listed when it changed with the file more than
# once (one shared commit is coincidence, not coupling), most frequent first, as far as the
# budget goes. A share cap (1 in 10 of the file's commits, at most 12) was tried: on click's
# replay (bench/real editrecall) it named 44 % of the files that then changed with the file,
# against 62 % for `git log --full-diff --name-only` cut to the same budget; with no cap 78 %,
# with this one 73 %.
PARTNER_MIN = 2


def _partner_lines(found: PathFacts, room: int, exists: set[str] | None) -> list[str]:
    partners = [(p, n) for p, n in found.partners if exists is None or p in exists]
    if not partners or not found.paired:
        return []
    total = found.paired
    name = found.path.rsplit("/", 1)[-1]
    first = partners[:2]
    lead = f"When you change {name}, " + ", ".join(
        f"{p} changed with it in {n} of {total} commits" if i == 0 else f"{p} in {n}"
        for i, (p, n) in enumerate(first)
    )
    lines = [lead + ("." if len(partners) <= 2 else ";")]
    used = len(lines[0]) + 1
    rest: list[str] = []
    for p, n in partners[2:]:
        if n < PARTNER_MIN:
            break  # partners come most frequent first: the rest changed with it once
        item = f"{p} {n}"
        extra = len(item) + 2 + (len("Also: ") if not rest else 0)
        if used + extra + 1 > room:
            break
        rest.append(item)
        used += extra
    if rest:
        lines.append("Also: " + ", ".join(rest))
    return lines


def _fix_lines(found: PathFacts) -> list[str]:
    if not found.fixes:
        return []
    return [f"Recent fixes ({len(found.fixes)}{'+' if len(found.fixes) >= 8 else ''}):"] + [
        f"- {_commit(c)}" for c in found.fixes
    ]


def _session_lines(found: PathFacts, mark: str = "") -> list[str]:
    session = found.session
    if session is None:
        return []
    branch = f", branch {session.branch}" if session.branch else ""
    auto = ", automatic record" if session.mode == "auto" else ""
    head = (
        f'Newest session touching it: s:{session.slug} "{_subject(session.title, 80)}" '
        f"({_day(session.time)}{branch}{auto})" + f" {mark}" * bool(mark)
    )
    steps = [f"- {s}" for s in found.next_steps]
    return [head, "Its next steps:", *steps] if steps else [head]


def _latest_lines(found: PathFacts, shown: str) -> list[str]:
    rows = [c for c in found.recent if f"c:{c.sha[:7]}" not in shown]
    # The newer ones may be cited above already: what is left is then not "the latest".
    head = "Latest commits:" if len(rows) == len(found.recent) else "Other recent commits:"
    return [head, *(f"- {_commit(c)}" for c in rows)] if rows else []


def with_origins(found: PathFacts, origins: origin.Origins) -> tuple[PathFacts, str]:
    """What came from another clone marked (vault/origin), what waits for review or was
    rejected left out; the newest session's mark."""
    if not origins:
        return found, ""
    facts = []
    for fact in found.facts:
        if fact.source.startswith("s:"):
            came = origins.of(layout.session_path(fact.source[2:]))
        else:
            came = origins.of_line(fact.text, cites_in(fact.text))
        if came is not None and came.hidden:
            continue
        facts.append(fact._replace(text=f"{fact.text} {origin.label(came)}") if came else fact)
    found = found._replace(facts=tuple(facts))
    mark = ""
    if found.session is not None:
        came = origins.of(layout.session_path(found.session.slug))
        if came is not None and came.hidden:
            found = found._replace(session=None, next_steps=())
        mark = origin.label(came)
    return found, mark


def render(
    found: PathFacts,
    workdir: Path | None = None,
    limit: int = LIMIT,
    origins: origin.Origins | None = None,
) -> str:
    """The fenced block for what the index found (never over `limit` characters), with what
    came from another clone marked when `origins` is given."""
    found, session_mark = with_origins(found, origins) if origins else (found, "")
    names = f"; earlier names: {', '.join(found.names[:4])}" if found.names else ""
    header = (
        f"Memory of {found.path} ({found.commits} commit{'s' * (found.commits != 1)}, "
        f"{_day(found.first)} to {_day(found.last)}{names}); cite-check with `git show <sha>`:"
    )
    exists: set[str] | None = None
    if workdir is not None:
        exists = {p for p, _ in found.partners if os.path.lexists(workdir / p)}
    frame = len(RECALL_BEGIN) + len(RECALL_END) + len(header) + 6
    budget = limit - frame
    parts: dict[str, list[str]] = {
        "facts": _fit(_facts_lines(found), SHARES["facts"]),
        "reverts": _revert_lines(found, SHARES["reverts"]),
        "fixes": _fit(_fix_lines(found), SHARES["fixes"]),
        "session": _fit(_session_lines(found, session_mark), SHARES["session"]),
    }

    def size(lines: list[str]) -> int:
        return sum(len(line) + 1 for line in lines) + (1 if lines else 0)

    fixed = sum(size(v) for v in parts.values())
    parts["partners"] = _partner_lines(found, max(budget - fixed - 200, SHARES["partners"]), exists)
    used = fixed + size(parts["partners"])
    so_far = "\n".join(line for v in parts.values() for line in v)
    parts["latest"] = _fit(_latest_lines(found, so_far), max(budget - used - 1, 0))
    order = ("facts", "reverts", "partners", "fixes", "session", "latest")
    body = "\n".join([header, *("\n".join(parts[k]) for k in order if parts[k])])
    body = outbound(body)
    text = f"{RECALL_BEGIN}\n{body}\n{RECALL_END}"
    if len(text) > limit:  # outbound may lengthen a line (&lt;): cut whole lines from the end
        lines = body.split("\n")
        while lines and len(RECALL_BEGIN) + len(RECALL_END) + len("\n".join(lines)) + 2 > limit:
            lines.pop()
        text = f"{RECALL_BEGIN}\n" + "\n".join(lines) + f"\n{RECALL_END}"
    return text


def edit_time_on(loc: Location, branch: str) -> bool:
    """Whether the vault's vault.toml (at BRANCH's tip) leaves edit-time recall on."""
    from gitvault.vault import gitcmd

    rev = f"{layout.branch_ref(branch)}:{layout.CONFIG}"
    proc = gitcmd.run_git(["cat-file", "blob", rev], loc.common_dir, check=False)
    text = proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None
    return bool(layout.read_settings(text, "recall")["edit_time"])


def edit_block(
    loc: Location,
    name: object,
    *,
    cwd: Path | None = None,
    branch: str | None = None,
    enabled: bool | None = None,
    update: bool = False,
    limit: int = LIMIT,
) -> Block:
    """The block for a file an agent (or a person) names, or why there is none. Cheapest
    questions first: the path itself, the path list, vault.toml, git's ignore rules, then the
    index. `update`: bring the index to the vault's tip first (the command line; hooks never
    wait for it)."""
    workdir = loc.workdir
    if workdir is None:
        return Block(None, "", "a bare repository has no files")
    rel = gate.project_path(name, workdir, cwd)
    if rel is None:
        return Block(None, "", "not a file inside this worktree")
    from gitvault.vault import gitcmd

    index = PathIndex(loc, branch or gitcmd.vault_branch(loc.common_dir))
    if update:
        index.update()
    if knows(loc, rel) is False:
        return Block(rel, "", "the vault knows nothing about it")
    if not (enabled if enabled is not None else edit_time_on(loc, index.branch)):
        return Block(rel, "", "edit-time recall is off ([recall] edit_time = false)")
    if gate.ignored(workdir, rel):
        return Block(rel, "", "git ignores it")
    found = index.facts(rel)
    if found is None:
        return Block(rel, "", "the vault knows nothing about it")
    return Block(rel, render(found, workdir, limit, origin.load(loc)), "", found)
