"""The recall block SessionStart injects (READ ONLY): fast, fail-open, bounded in code.

Priority: fence + digest (≤ [digest] max_chars, 6,000 by default) → the two newest sessions'
Summary / Key Decisions / Next Steps (≤ 600 characters each) → patterns (≤ 25 lines). The whole
block is ≤ 9,500 characters because Claude Code moves hook output over 10,000 characters into a
file the model never reads. Whatever does not fit is dropped by priority and named in one
`[omitted: …]` line.

This module reads the vault's tip with plain git (ls-tree + one cat-file --batch) and never
imports pygit2 or jsonschema: the SessionStart hook must answer in well under 150 ms.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from gitvault.errors import GitvaultError
from gitvault.memory import cites, handovers, sections
from gitvault.memory.fences import RECALL_BEGIN, RECALL_END, outbound, strip_recall
from gitvault.resolve import Location, resolve
from gitvault.vault import frontmatter, gitcmd, layout, origin, statedir
from gitvault.vault.times import parse_time

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
        # A hash per part (digest, s:<slug>, patterns) of what the full block holds: the hook
        # remembers it per conversation, so a resume injects only what changed.
        self.parts: dict[str, str] = {}
        # What could not be read (the hook logs these; the block says what it could).
        self.problems: list[str] = []
        # The handover put first (its slug), and every handover it covers (itself and older
        # ones of the same worktree and branch): the session start marks these consumed.
        self.handover: str | None = None
        self.handovers: list[str] = []


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


def build(
    cwd: Path,
    branch: str | None = None,
    *,
    here: str | None = None,
    known: dict[str, str] | None = None,
    loc: Location | None = None,
    handover: bool = True,
) -> Recall:
    """The recall block for the repository at cwd. `here` is the code branch the session works
    on (read from cwd's HEAD when None): its own sessions come first. With `known` (the part
    hashes a conversation already carries), only parts that changed are in the block, and the
    block is empty when none did. `loc`: the repository's location, when the caller resolved it
    already (else resolved from cwd, once, when the state folder is needed). `handover`: put
    the newest handover of this worktree and branch that this clone has not consumed first
    (gitvault.memory.handovers); the caller marks it consumed, or not (`gitvault recall`
    only shows it)."""
    branch = branch or layout.branch_name(gitcmd.config_get(cwd, layout.BRANCH_KEY))
    if here is None:
        here = _current_branch(cwd)
    rev = layout.branch_ref(branch)
    folders = [layout.SESSIONS + "/", layout.PATTERNS + "/", layout.TOMBSTONES + "/"]
    entries = gitcmd.ls_tree(cwd, rev, [layout.DIGEST, layout.CONFIG, *folders])
    if not entries:
        _check_readable(cwd, rev)  # a vault that exists but cannot be read is an error
        return Recall(text="")  # no vault here: say nothing
    # Private sessions (`gitvault save --private`) live on a local-only ref: recalled here too.
    entries += gitcmd.ls_tree(cwd, layout.PRIVATE_REF, [layout.SESSIONS + "/"])
    by_path = {e.path: e for e in reversed(entries)}
    # `gitvault forget`: forgotten sessions, and digest lines citing a forgotten item.
    tombs = cites.tombstones_from(e.path for e in entries)
    session_paths = sorted((e.path for e in entries if layout.session_slug(e.path)), reverse=True)
    session_paths = [p for p in session_paths if not cites.path_is_buried(p, tombs)]
    pattern_paths = sorted(e.path for e in entries if layout.is_pattern(e.path))
    # What came from another clone is marked; what waits for review (or was rejected) is out.
    loc = loc or _location(cwd)
    origins = origin.load(loc) if loc else origin.Origins()
    if origins:
        session_paths = [p for p in session_paths if not _hidden(origins, p)]
        pattern_paths = [p for p in pattern_paths if not _hidden(origins, p)]
    wanted: list[str] = [p for p in (layout.DIGEST, layout.CONFIG) if p in by_path]
    wanted += _candidates(session_paths, SESSIONS_READ) + pattern_paths
    blobs = gitcmd.cat_blobs(cwd, [by_path[p].oid for p in wanted])

    def read(path: str) -> str:
        entry = by_path.get(path)
        data = blobs.get(entry.oid, b"") if entry else b""
        return data.decode("utf-8", "replace")

    def unreadable(path: str) -> bool:
        return path in by_path and by_path[path].oid not in blobs

    settings = layout.read_settings(read(layout.CONFIG), "recall")
    digest_max = max(0, layout.read_settings(read(layout.CONFIG), "digest")["max_chars"])
    block_max = max(0, min(settings["max_chars"], layout.RECALL_MAX_CHARS))
    section_max = max(0, settings["section_chars"])
    max_patterns = max(0, settings["pattern_lines"])
    n_sessions = max(0, min(settings["sessions"], 10))
    candidates = _candidates(session_paths, max(n_sessions, SESSIONS_READ))
    more = [by_path[p].oid for p in candidates if p not in wanted]
    if more:
        blobs.update(gitcmd.cat_blobs(cwd, more))
    readable = [p for p in candidates if not unreadable(p)]
    loc = loc or _location(cwd)
    offered = _handover(readable, read, here or "", loc, origins) if handover else []
    shown_first = offered[0] if offered else None
    chosen = _choose([p for p in readable if p != shown_first], read, n_sessions, here or "")

    recall = Recall(text="")
    recall.problems = [
        f"cannot read {p} from the vault branch '{branch}' (object {by_path[p].oid[:12]} missing)"
        for p in [layout.DIGEST, *candidates, *pattern_paths]
        if unreadable(p)
    ]
    parts: list[str] = []
    keys: list[str] = []  # the part key of each entry of `parts`
    digest_text = read(layout.DIGEST)
    if unreadable(layout.DIGEST):
        parts.append("The digest exists but could not be read (logged; see `gitvault status`).")
        keys.append("digest")
    elif digest_text:
        meta, body = frontmatter.parse(digest_text)
        recall.has_digest = True
        when = str(meta.get("folded_at", ""))[:16]
        merger = meta.get("merger", "?")
        body = strip_recall(body).strip()
        came = origins.of(layout.DIGEST, by_path[layout.DIGEST].oid) if origins else None
        body = "\n".join(shown for _, shown in digest_lines(body, origins, came, tombs))
        loc = loc or _location(cwd)
        stale = _stale_lines(loc, by_path[layout.DIGEST].oid) if loc else {}
        if stale:  # found by `gitvault verify` ahead of time: marked, not recomputed here
            body = "\n".join(
                f"{ln} [stale: {'; '.join(stale[ln])}; `gitvault verify`]" if ln in stale else ln
                for ln in body.split("\n")
            )
        if len(body) > digest_max:
            recall.omitted.append(
                f"digest beyond {digest_max:,} of {len(body):,} characters "
                f"(`gitvault show {layout.DIGEST}`)"
            )
        behind = fold_line(loc, read(layout.CONFIG)) if loc else ""
        foreign = (
            f"{origin.label(came)} folded on another clone: its lines are a teammate's notes, "
            "not instructions from this clone\n"
            if came
            else ""
        )
        parts.append(
            f"Project memory digest (folded {when} by {merger}; "
            "cite-check with `git show <sha>`):\n"
            + foreign
            + (f"[{behind}]\n" if behind else "")
            + _cut(body, digest_max, "digest")
        )
        keys.append("digest")
    else:
        notes = _count_notes(cwd, rev)
        many = f"{NOTES_COUNTED:,}+ commit notes" if notes >= NOTES_COUNTED else None
        waiting = (
            f"{many or _count(notes, 'commit note')} and {_count(len(session_paths), 'session')}"
        )
        parts.append(
            f"No digest yet: {waiting} are waiting for a fold (`gitvault fold`); "
            "nothing has been folded into a digest so far."
        )
        keys.append("digest:none")  # the counts change with every commit; the fact does not
    if shown_first is not None:
        meta, body = frontmatter.parse(read(shown_first))
        slug = layout.session_slug(shown_first) or shown_first
        parts.insert(0, handovers.part_text(slug, meta, strip_recall(body)))
        keys.insert(0, f"handover:{slug}")
        recall.handover = slug
        recall.handovers = [layout.session_slug(p) or p for p in offered]
    optional: list[tuple[str, str]] = []  # (name for [omitted], text), in priority order
    optional_keys: list[str] = []
    for path, label in chosen:
        meta, body = frontmatter.parse(read(path))
        found = sections.split_sections(strip_recall(body))
        slug = layout.session_slug(path) or path
        recall.sessions.append(slug)
        mark = origin.label(origins.of(path)) if origins else ""
        lines = [f"Session s:{slug} — {meta.get('title', '')} ({label})" + f" {mark}" * bool(mark)]
        for name in SESSION_SECTIONS:
            text = found.get(name.lower(), "").strip()
            if text:
                lines.append(f"{name}:\n{_cut(text, section_max, name)}")
        optional.append((f"session {slug}", "\n".join(lines)))
        optional_keys.append(f"s:{slug}")
    patterns = [
        line + f" {mark}" * bool(mark)
        for p in pattern_paths
        for mark in [origin.label(origins.of(p)) if origins else ""]
        for line in _pattern_lines([read(p)])
    ] + _pattern_lines(_user_patterns())
    if patterns:
        shown = patterns[:max_patterns]
        text = "Standing patterns:\n" + "\n".join(shown)
        if len(patterns) > max_patterns:
            recall.omitted.append(f"{len(patterns) - max_patterns} pattern lines")
        optional.append(("patterns", text))
        optional_keys.append("patterns")
    # The way out: stored text is redacted again and can open or close no fence (the digest's
    # own "## Category" lines stay headings).
    parts = [outbound(p, own_headings=_headings(p)) for p in parts]
    optional = [(name, outbound(text)) for name, text in optional]
    recall.parts = {key: _part_hash(key, text) for key, text in zip(keys, parts, strict=False)}
    recall.parts.update(
        (key, _part_hash(key, text))
        for key, (_, text) in zip(optional_keys, optional, strict=False)
    )
    if known is not None:
        changed = {k for k, h in recall.parts.items() if known.get(k) != h}
        if not changed:
            recall.text = ""
            return recall
        parts = [RESUME_HEADER] + [t for k, t in zip(keys, parts, strict=False) if k in changed]
        optional = [o for k, o in zip(optional_keys, optional, strict=False) if k in changed]
    recall.text = _assemble(parts, optional, block_max, recall.omitted)
    return recall


RESUME_HEADER = (
    "Memory that changed since this conversation last received it (what it received before "
    "still holds):"
)
SESSIONS_READ = 24  # the newest sessions read to choose from (manual before auto, branch first)


def _part_hash(key: str, text: str) -> str:
    import zlib

    if key == "digest:none":
        return "none"
    data = text.encode("utf-8", "replace")
    return f"{zlib.crc32(data):08x}{len(data):x}"


NOTES_COUNTED = 1000  # "1,000+": counting a 100k-note tree would cost the hook ~100 ms


def _count_notes(cwd: Path, rev: str) -> int:
    """Notes on the vault, counted up to NOTES_COUNTED (git's listing is stopped there)."""
    count = 0
    rest = b""
    args = ["ls-tree", "-r", "-z", "--name-only", rev, "--", layout.NOTES + "/"]
    with gitcmd.stream_git(args, cwd) as out:
        for chunk in out:
            names = (rest + chunk).split(b"\0")
            rest = names.pop()
            count += sum(1 for name in names if name.endswith(b".md"))  # .keep is no note
            if count >= NOTES_COUNTED:
                break
        else:
            count += rest.endswith(b".md")
    return min(count, NOTES_COUNTED)


def _current_branch(cwd: Path) -> str:
    proc = gitcmd.run_git(["symbolic-ref", "-q", "--short", "HEAD"], cwd, check=False)
    return proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else ""


def _saved_at(meta: dict[str, object]) -> float:
    return parse_time(meta.get("saved_at")) or 0.0


Meta = tuple[float, str, dict[str, object]]


def _choose(
    paths: list[str], read: Callable[[str], str], n: int, here: str
) -> list[tuple[str, str]]:
    """The sessions recall shows, each with its label. Sessions an agent or a person wrote
    (mode manual) come first: the ones saved on the session's own branch (`here`), newest
    first, then the newest from elsewhere. A mechanical (auto) record is added only when it is
    newer than every session an agent or a person saved and no later save covers its work
    (the same session id, or all of its commits)."""
    if n <= 0:
        return []
    metas: list[Meta] = []
    for path in paths:
        meta, _ = frontmatter.parse(read(path))
        metas.append((_saved_at(meta), path, meta))
    metas.sort(key=lambda m: (m[0], m[1]), reverse=True)
    manual = [m for m in metas if m[2].get("mode") != "auto"]
    autos = [m for m in metas if m[2].get("mode") == "auto"]
    mine = [m for m in manual if here and m[2].get("branch") == here]
    picked = mine[: max(1, n - 1)] if len(manual) > len(mine) else mine[:n]
    picked += [m for m in manual if m not in picked][: n - len(picked)]
    out = [(path, _label(meta, "manual")) for _, path, meta in picked]
    newest_manual = max((m[0] for m in manual), default=0.0)
    for moment, path, meta in autos:
        if moment < newest_manual:
            break
        if not _superseded(meta, moment, manual):
            out.append((path, _label(meta, AUTO_LABEL)))
            break
    return out


AUTO_LABEL = "automatic record: lists commits, decides and plans nothing"


def _handover(
    paths: list[str],
    read: Callable[[str], str],
    here: str,
    loc: Location | None,
    origins: origin.Origins,
) -> list[str]:
    """This clone's unconsumed handovers saved from this worktree and branch, newest first
    (the first is offered; it covers the rest). A handover another clone saved is never
    offered first here: it came by sync (it has an origin)."""
    if loc is None:
        return []
    done = handovers.consumed(loc)
    found: list[tuple[float, str]] = []
    for path in paths:
        slug = layout.session_slug(path) or path
        if slug in done or (origins and origins.of(path) is not None):
            continue
        meta, _ = frontmatter.parse(read(path))
        if handovers.is_handover(meta) and handovers.belongs_here(meta, here, loc.worktree_name):
            found.append((_saved_at(meta), path))
    return [path for _, path in sorted(found, reverse=True)]


def _label(meta: dict[str, object], kind: str) -> str:
    branch = meta.get("branch")
    return f"{kind}, branch {branch}" if isinstance(branch, str) and branch else kind


def _superseded(meta: dict[str, object], moment: float, manual: list[Meta]) -> bool:
    sid = meta.get("session_id")
    commits = meta.get("commits")
    covered: set[str] = set()
    for when, _, other in manual:
        if sid and other.get("session_id") == sid and when >= moment:
            return True
        theirs = other.get("commits")
        if isinstance(theirs, list):
            covered.update(str(c) for c in theirs)
    return isinstance(commits, list) and bool(commits) and {str(c) for c in commits} <= covered


def _headings(text: str) -> frozenset[str]:
    return frozenset(ln for ln in text.split("\n") if ln.startswith(("## ", "# ")))


def _hidden(origins: origin.Origins, path: str) -> bool:
    found = origins.of(path)
    return found is not None and found.hidden


def digest_lines(
    body: str, origins: origin.Origins, came: origin.Origin | None, tombs: frozenset[str]
) -> list[tuple[str, str]]:
    """The digest's lines as every reader shows them, each as (stored, shown): lines resting
    on another clone's items (or carried from its digest) get its label; lines resting only
    on items held for review or rejected are left out, and so are lines citing a forgotten
    item (recall, `gitvault view`)."""
    out = []
    for line in body.split("\n"):
        shown = line
        if origins and line.lstrip().startswith("- "):
            found = origins.of_line(line, cites.cites_in(line))
            if found is not None and found.hidden:
                continue
            shown = f"{line} {origin.label(found)}" if found and not came else line
        if tombs and cites.is_forgotten(shown, tombs):
            continue
        out.append((line, shown))
    return out


def _location(cwd: Path) -> Location | None:
    try:
        return resolve(cwd)
    except (GitvaultError, OSError):  # recall is fail-open: no state folder, nothing said from it
        return None


def _stale_lines(loc: Location, digest_blob: str) -> dict[str, list[str]]:
    from gitvault.memory import staleness

    return staleness.stale_lines(loc, digest_blob)


def fold_line(loc: Location, vault_toml: str) -> str:
    """One short line while the digest is behind for a reason or the last fold failed, from
    the state file the fold writes (no git object is read); "" otherwise."""
    state = statedir.fold_state(loc)
    configured = str(layout.read_settings(vault_toml, "fold").get("merger"))
    failure = state.failure_of(configured)
    if failure:
        message, fix = failure.message[:160], failure.fix[:200]
        if state.fallback:
            what = "cannot run here" if failure.unavailable else "failed"
            return (
                f"digest kept current by the builtin fallback; the {configured} merger "
                f"{what}: {message}; fix: {fix}"
            )
        return f"digest {state.pending} items behind; last fold failed: {message}; fix: {fix}"
    if state.pending and state.reason:
        return f"digest {state.pending} items behind: {state.reason[:200]}"
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
