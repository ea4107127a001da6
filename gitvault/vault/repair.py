"""Hand-made vault commits that undo gitvault's work: found below the tip, repaired on top.

gitvault writes the vault branch through the object database, as the `gitvault` committer. A
person can still commit on it from a worktree (`git worktree add ../v vault`). That worktree's
index is the tree it was checked out at, and gitvault moving the branch on does not update it,
so a commit made there later puts the old tree back along with the edit the person meant: an
older _master.md (its watermark moves back, and the next fold reads thousands of items again)
and none of the notes and sessions written since the checkout.

The first gitvault write on top of such a commit (the store's compare-and-swap loop, a fold, a
`gitvault config`) adds one repair commit first: every change the hand-made commits made to a
file gitvault had changed since the worktree's checkout is undone, and so is every removed
note, session, tombstone or redaction record and a digest whose watermark moved back; whatever
the person changed on purpose (vault.toml, a pattern file) is kept. What was repaired is said
and logged (`gitvault status` shows it).
"""

from __future__ import annotations

from pathlib import Path

from gitvault.named import TYPE_CHECKING, NamedTuple
from gitvault.vault import frontmatter, gitcmd, layout

if TYPE_CHECKING:
    from gitvault.vault.objects import Repo

MAX_HAND_MADE = 100  # hand-made commits looked at below the tip
MAX_BACK = 200_000  # gitvault commits searched for the state the worktree was checked out at
COUNT_LIMIT = 100_000


ADVICE = (
    "A worktree of the vault branch goes stale as soon as gitvault writes: change settings "
    "with `gitvault config KEY VALUE`, pins with `gitvault pin`"
)


class Repair(NamedTuple):
    changes: dict[str, bytes | None]
    message: str  # the repair commit's message
    found: str  # what the hand-made commits did, for a person
    said: str  # what the repair did about it, for a person


def _append_only(path: str) -> bool:
    return (
        layout.is_item(path) or layout.tombstone_cite(path) is not None or layout.is_redaction(path)
    )


def _watermark(data: bytes | None) -> str | None:
    if data is None:
        return None
    meta, _ = frontmatter.parse(data.decode("utf-8", "replace"))
    mark = meta.get("watermark")
    return mark if isinstance(mark, str) and layout.is_full_sha(mark) else None


def _hand_made(git: Repo, tip: str) -> tuple[list[str], str | None]:
    """The hand-made commits at the tip (newest first, along first parents) and the gitvault
    commit below them (None: none within reach, or a branch gitvault never wrote)."""
    chain: list[str] = []
    sha = tip
    while git.committer_email(sha) != gitcmd.VAULT_EMAIL:
        chain.append(sha)
        parents = next(iter(git.walk(sha)), None)
        if parents is None or not parents.parents or len(chain) > MAX_HAND_MADE:
            return chain, None
        sha = parents.parents[0]
    return chain, sha


def _checkout_state(git: Repo, common_dir: Path, base: str, tip: str) -> str | None:
    """The gitvault commit the worktree was most likely checked out at: the newest one at or
    below base whose notes and sessions are exactly the tip's (a person edits neither)."""
    want = (git.entry_id(tip, layout.NOTES), git.entry_id(tip, layout.SESSIONS))
    for sha, _ in gitcmd.first_parent_chain(common_dir, base, MAX_BACK):
        if (git.entry_id(sha, layout.NOTES), git.entry_id(sha, layout.SESSIONS)) == want:
            return sha
    return None


def _items_between(git: Repo, old: str, new: str) -> int:
    """Notes and sessions committed after old up to new (what a rewound watermark refolds)."""
    count = 0
    for commit in git.walk(new, old):
        count += commit.message.startswith(("note ", "session "))
        if count >= COUNT_LIMIT:
            break
    return count


def find(git: Repo, common_dir: Path, tip: str) -> Repair | None:
    """The repair the vault needs at tip, or None when no hand-made commit undid anything."""
    chain, base = _hand_made(git, tip)
    if not chain or base is None:
        return None
    diffs = git.diff_files(base, tip)
    if not diffs:
        return None
    checkout = _checkout_state(git, common_dir, base, tip)
    changes: dict[str, bytes | None] = {}
    removed: dict[str, int] = {}
    reverted: list[str] = []
    kept: list[str] = []
    rewound = ""
    for path, ours, theirs in diffs:
        at_checkout = git.entry_id(checkout, path) if checkout else None
        if path == layout.DIGEST and ours is not None:
            mine = git.read_object(ours)
            back = _rewound(git, theirs, mine)
            if back is not None:
                changes[path] = mine
                rewound = back
                continue
        if checkout is not None and theirs == at_checkout and ours != at_checkout:
            changes[path] = git.read_object(ours) if ours else None  # a stale copy put back
            if ours is not None and theirs is None and _append_only(path):
                kind = "notes" if layout.note_sha(path) else "other items"
                kind = "sessions" if layout.session_slug(path) else kind
                removed[kind] = removed.get(kind, 0) + 1
            elif path != layout.DIGEST:
                reverted.append(path)
            continue
        if ours is not None and theirs is None and _append_only(path):
            changes[path] = git.read_object(ours)  # append-only: `gitvault forget` buries one
            kind = "notes" if layout.note_sha(path) else "other items"
            kind = "sessions" if layout.session_slug(path) else kind
            removed[kind] = removed.get(kind, 0) + 1
            continue
        kept.append(path)
    if not changes:
        return None
    first = chain[-1]
    subject = next(iter(git.walk(first)), None)
    title = (subject.message.splitlines() or [""])[0][:60] if subject else ""
    what: list[str] = []
    if rewound:
        what.append(rewound)
    if removed:
        what.append("removed " + ", ".join(f"{n:,} {kind}" for kind, n in sorted(removed.items())))
    if reverted:
        shown = ", ".join(reverted[:3]) + (" …" if len(reverted) > 3 else "")
        what.append(f"put back older copies of {shown}")
    made_by = f"{len(chain)} hand-made commits" if len(chain) > 1 else "a hand-made commit"
    keeps = f"; kept its changes to {', '.join(kept[:5])}" if kept else ""
    found = f"{made_by} ({first[:7]} {title!r}) on the vault branch {'; '.join(what)}"
    said = (
        f"repaired the vault: {found}: gitvault's versions are restored on top of it{keeps}. "
        f"{ADVICE}"
    )
    message = f"repair: restore what {made_by} ({first[:7]}) undid: {'; '.join(what)}"
    return Repair(changes, message, found, said)


def _rewound(git: Repo, theirs: str | None, mine: bytes) -> str | None:
    """How the hand-made digest moved the watermark back, or None when it did not."""
    mark = _watermark(mine)
    if mark is None:
        return None
    data = git.read_object(theirs) if theirs else None
    back = _watermark(data)
    if back == mark:
        return None
    if back is not None and not git.is_ancestor(back, mark):
        return None  # not an older digest of this vault: an edit, kept
    old = back[:7] if back else "none"
    count = _items_between(git, back, mark) if back else 0
    again = f", {count:,} items would have been folded again" if count else ""
    return f"put back an older _master.md (watermark {mark[:7]} → {old}{again})"
