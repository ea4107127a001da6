"""The drainer's walk: every worktree's HEAD log, read from where the last walk stopped, names
the commits made here that have no note yet — whatever ran no post-commit hook
(`git -c core.hooksPath=/dev/null commit`, an agent's shell that empties core.hooksPath,
`git am`, a hook that could not append to the spool) and whatever a lost spool line would have
left out. And the completeness check `gitvault status` reports.

No `git worktree list`: the worktrees are the common git dir itself and
<common>/worktrees/*/, each with its HEAD and logs/HEAD. A walk reads at most LOG_BYTES of new
log per worktree and proposes at most MAX_COMMITS commits; the rest waits for the next walk.
Only entries that made a commit count (commit, amend, merge, cherry-pick, revert, am, a
rebase's picks); a checkout, reset or fast-forward made none. Entries older than the moment the
walk began (install, or the first drain after an upgrade) are history from before gitvault:
`gitvault backfill` is how that gets notes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

from gitvault.named import NamedTuple
from gitvault.notes.heads import Worktree, worktrees
from gitvault.resolve import Location
from gitvault.vault import gitcmd, layout, statedir
from gitvault.vault.files import read_range
from gitvault.vault.store import Vault

LOG_BYTES = 256 * 1024  # new HEAD log read per worktree and walk (~1,500 entries)
MAX_COMMITS = 500  # commits one walk proposes
UNNOTED_WINDOW = 1000  # newest commits the completeness check looks at

# HEAD log messages of entries that made a commit, and the spool kind each becomes.
_MADE = (
    ("commit (merge)", "merge"),
    ("commit", "commit"),  # commit, commit (initial), commit (amend), commit (cherry-pick)
    ("cherry-pick", "commit"),
    ("revert", "commit"),
    ("am", "commit"),
)
# A sequencer's entries (a rebase, `pull --rebase`, a tool's rebase): "<GIT_REFLOG_ACTION>
# (<command>): …", the action being whatever the caller named it. These commands moved HEAD
# without making a commit; every other one (pick, reword, edit, squash, fixup, merge,
# continue …) made one, noted only if it stayed on HEAD.
_SEQUENCER = re.compile(r"^[^:\n]*? \(([a-z][a-z-]*)\)(?::|$)")
_SEQUENCER_MADE_NONE = frozenset({"start", "finish", "abort", "reset", "label", "update-ref"})


class Made(NamedTuple):
    kind: str  # commit | merge | pending (a rebase's pick: noted only if it stayed on HEAD)
    sha: str
    branch: str | None
    worktree: str
    git_dir: str


def kind_of(message: str) -> str | None:
    """The spool kind of a HEAD log entry that made a commit; None for one that made none."""
    step = _SEQUENCER.match(message)
    if step is not None and not message.startswith("commit"):  # commit (amend) is a commit
        return None if step.group(1) in _SEQUENCER_MADE_NONE else "pending"
    if message.startswith(("merge ", "pull")):
        return "merge" if "Merge made by" in message else None
    for prefix, kind in _MADE:
        if message.startswith(prefix) and message[len(prefix) : len(prefix) + 1] in (":", " "):
            return kind
    return None


class Entry(NamedTuple):
    end: int  # the byte offset just past this entry's line
    new: str  # the commit HEAD moved to ("" for a line that is not an entry)
    time: int
    message: str


def _entries(data: bytes) -> Iterator[Entry]:
    """Each complete line of a HEAD log ("old new ident time tz\tmessage")."""
    start = 0
    while (end := data.find(b"\n", start)) >= 0:
        head, _, message = data[start:end].decode("utf-8", "replace").partition("\t")
        start = end + 1
        parts = head.split(" ")
        when = parts[-2] if len(parts) >= 4 else ""
        if len(parts) >= 4 and layout.is_full_sha(parts[1]) and when.isdigit():
            yield Entry(start, parts[1], int(when), message)
        else:
            yield Entry(start, "", 0, "")


def _moved_from(message: str) -> str | None:
    """The branch a checkout left ("checkout: moving from X to Y" → X), else None."""
    prefix = "checkout: moving from "
    if not message.startswith(prefix):
        return None
    return message[len(prefix) :].rsplit(" to ", 1)[0]


def begin(loc: Location, since: int | None = None) -> statedir.WalkState:
    """Start the walk. At install (since None): now, every HEAD log counted from its current
    end. Without a walk file — the first drain after an upgrade, or one lost or planted — from
    `since` (the vault's last write: whatever was committed after it was committed while
    gitvault was installed), every HEAD log read from its start."""
    state = statedir.WalkState(int(time.time()) if since is None else since, {})
    if since is not None:
        statedir.write_walk_state(loc, state)
        return state
    for tree in worktrees(loc.common_dir):
        try:
            _, info = read_range(tree.git_dir / "logs" / "HEAD", 0, 0)
        except OSError:
            continue
        state.logs[tree.key] = (info.st_ino, info.st_size)
    statedir.write_walk_state(loc, state)
    return state


def read_new(loc: Location, vault: Vault | None = None) -> tuple[list[Made], statedir.WalkState]:
    """The commits made in every worktree since the last walk, oldest first per worktree, and
    the walk's new position (to record once they are noted). A worktree in the middle of a
    rebase is left for later: its picks are settled by post-rewrite when it ends. Without a
    walk file the walk begins again from the last write of `vault` (none: from now)."""
    state = statedir.walk_state(loc)
    # Where the walk knows how far it read a log, what lies past that point is new whatever
    # date its entries carry (git writes the committer's date, which GIT_COMMITTER_DATE sets);
    # dates count only where no position can: a walk begun again from a time, a log git
    # rewrote.
    restarted = state is None
    if state is None:
        last = _last_write(vault)
        state = begin(loc, last)
        if last is None:
            return [], state
    made: list[Made] = []
    logs = dict(state.logs)
    for tree in worktrees(loc.common_dir):
        if len(made) >= MAX_COMMITS:
            break
        if gitcmd.rebase_in_progress(tree.git_dir):
            continue
        known = logs.get(tree.key)
        ino, offset = known or (0, 0)
        path = tree.git_dir / "logs" / "HEAD"
        since = state.since if restarted else 0
        try:
            _, info = read_range(path, 0, 0)
            if known is not None and (info.st_ino != ino or info.st_size < offset):
                # A log git rewrote (expired): read it again. Its entries of the very second
                # the walk began may predate it (git's times are whole seconds): left out, as
                # history from before gitvault. A new worktree's log is read from its start.
                offset, since = 0, state.since + 1
            data, info = read_range(path, offset, LOG_BYTES)
        except OSError:
            continue
        found, used = _made_in(data, tree, since, MAX_COMMITS - len(made))
        made += found
        logs[tree.key] = (info.st_ino, offset + used)
    return made, statedir.WalkState(state.since, logs)


def _last_write(vault: Vault | None) -> int | None:
    tip = vault.tip() if vault is not None else None
    found = vault.git.resolve_commit(tip) if vault is not None and tip else None
    return found.time if found is not None else None


def _made_in(data: bytes, tree: Worktree, since: int, room: int) -> tuple[list[Made], int]:
    """The commits one worktree's new log entries made (at most `room`), and how many bytes of
    data they cover (complete lines only: a line git is still writing waits)."""
    lines = list(_entries(data))
    # The branch each entry was made on: HEAD's branch now, and before each checkout the
    # branch it moved away from (read backwards).
    branch = gitcmd.head_branch(tree.git_dir)
    on: list[str | None] = []
    for line in reversed(lines):
        on.append(branch)
        left = _moved_from(line.message)
        if left is not None:
            branch = None if layout.is_full_sha(left) else left
    on.reverse()
    out: list[Made] = []
    used = 0
    for line, where in zip(lines, on, strict=True):
        kind = kind_of(line.message) if line.new else None
        if kind is not None and line.time >= since:
            if len(out) >= room:
                return out, used
            out.append(Made(kind, line.new, where, tree.name, str(tree.git_dir)))
        used = line.end
    return out, used


def detached_heads(common: Path) -> list[str]:
    """The commits of worktrees whose HEAD is detached (and not mid-rebase)."""
    out = []
    for tree in worktrees(common):
        try:
            head = gitcmd.head_ref(tree.git_dir)
        except OSError:
            continue
        if layout.is_full_sha(head) and not gitcmd.rebase_in_progress(tree.git_dir):
            out.append(head)
    return out


class Unnoted(NamedTuple):
    """Commits without a note, in the completeness check's window: the UNNOTED_WINDOW newest
    commits reachable from a local branch or a detached worktree HEAD, committed since the walk
    began and not reachable from a remote-tracking ref (what came from a remote was noted
    where it was made)."""

    shas: list[str]  # newest first
    since: int | None  # None: the walk has not begun, nothing is checked
    window: int = UNNOTED_WINDOW


def unnoted(loc: Location, vault: Vault, skip: set[str] | frozenset[str] = frozenset()) -> Unnoted:
    state = statedir.walk_state(loc)
    if state is None:
        return Unnoted([], None)
    args = [
        "log",
        "--format=%H %ct",
        f"-n{UNNOTED_WINDOW}",
        f"--since={state.since + 1}",  # a commit of the very second the walk began predates it
        f"--exclude={vault.branch}",
        "--branches",
        *detached_heads(loc.common_dir),
        "--not",
        "--remotes",
        "--",
    ]
    proc = gitcmd.run_git(args, loc.common_dir, check=False)
    missing = []
    for line in proc.stdout.decode("ascii", "replace").split("\n"):
        sha, _, when = line.partition(" ")
        if not layout.is_full_sha(sha) or not when.isdigit() or sha in skip:
            continue
        if not vault.exists(layout.note_path(sha, int(when))):
            missing.append(sha)
    return Unnoted(missing, state.since)
