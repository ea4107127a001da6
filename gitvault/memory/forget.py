"""`gitvault forget` (append-only) and `gitvault redact` (the one rewrite of history).

forget ID: one commit adds `tombstones/<c|s>-<id>.md` and drops every digest line that cites
the item (its other items are re-read by the next fold). From then on the item is not recalled,
searched or folded, and no reader shows a line citing it (memory/cites.is_forgotten: recall,
search and its index of past digests, the agent files, the fold's input), in this clone and in
every clone its tombstone reaches by sync. The item stays in the history (that is what
append-only means): `git log vault` shows the forget, and deleting the tombstone would bring
the item back.

redact ID --pattern TEXT: the text is replaced by `[REDACTED]` in every version of every file
and in every commit message of the vault branch and of the private sessions' local-only ref,
through `git fast-export | git fast-import`. The old history is kept under
`refs/gitvault/backup/<time>` until `gitvault gc`; a commit after the rewrite records what was
redacted (never the text); the search and path indexes are dropped, state files quoting the
text rewritten, and every remote-tracking copy of the old history (git fetch's, sync's)
dropped. gc deletes the backups, drops such copies again (a plain `git fetch` brings them
back while a remote holds the old history), clears the reflogs that name old commits and
prunes. Clones and remotes that already have the old vault keep the text: only they can delete
it (sync refuses them, and says what to run, by the redaction record).
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from gitvault.errors import GitvaultError, Refused
from gitvault.memory import cites, history, search
from gitvault.resolve import Location
from gitvault.scrub.engine import scrub_secrets
from gitvault.vault import frontmatter, gitcmd, layout, schemas, statedir
from gitvault.vault.store import Vault, Write
from gitvault.vault.times import utc_iso

REPLACEMENT = b"[REDACTED]"
MIN_PATTERN = 4
MAX_PATTERN = 1000
ATTEMPTS = 5
_CITE_ONLY = re.compile(r"c:[0-9a-f]{7,40}")


class ForgetError(GitvaultError):
    pass


# -- forget ----------------------------------------------------------------------------------


forgotten = cites.forgotten
REFOLD_MAX = 200  # citations a digest keeps for the next fold to re-read


@dataclass(frozen=True)
class Forgot:
    cite: str
    path: str | None  # the item's path (None: a citation without a note)
    commit: str | None  # None: it was already forgotten and the digest held nothing about it
    digest_lines: int  # lines of the digest that cited it: dropped by that commit


def _target(vault: Vault, ident: str) -> tuple[str, str | None]:
    try:
        target = history.resolve_id(vault, ident)
    except history.NotFound:
        raw = ident.strip().lower()
        if _CITE_ONLY.fullmatch(raw):
            return raw, None  # a digest cites a commit that has no note: bury the citation
        raise
    if target.kind == "note":
        return target.cite, target.path
    if target.kind == "session":
        return target.cite, target.path
    raise ForgetError(
        f"{ident!r} is {target.path}, not a note or a session",
        hint="forget takes c:<sha>, s:<slug> or what a digest line cites; to remove text "
        "from the history use `gitvault redact ID --pattern TEXT`",
    )


def forget(loc: Location, ident: str, *, reason: str | None = None) -> Forgot:
    """One commit: the tombstone, and the digest without every line that cites the item (the
    line's other items are listed for the next fold to re-read, so what they said comes back
    without the forgotten item's words)."""
    vault = Vault(loc)
    vault.check_format()
    cite, path = _target(vault, ident)
    meta: dict[str, object] = {
        "kind": "tombstone",
        "cite": cite,
        "path": path,
        "forgotten_at": utc_iso(),
        "reason": _one_line(scrub_secrets(reason)[0], 300) if reason else None,
    }
    meta = {k: v for k, v in meta.items() if v is not None}
    schemas.validate("tombstone.schema.json", meta, "tombstone front matter")
    body = (
        f"# forgotten: {cite}\n\nNot recalled, searched or folded since {meta['forgotten_at']}. "
        "The item stays in the vault's history; deleting this file brings it back.\n"
    )
    tomb = layout.tombstone_path(cite)
    dropped = 0

    def build(tip: str) -> Write | None:
        nonlocal dropped
        tombs = forgotten(vault, tip) | {cite}
        changes: dict[str, bytes | None] = {}
        if not vault.exists(tomb, tip):
            changes[tomb] = frontmatter.render(meta, body).encode()
        digest, dropped = digest_without_forgotten(vault.read_text(layout.DIGEST, tip), tombs)
        if digest is not None:
            changes[layout.DIGEST] = digest.encode()
        if not changes:
            return None
        message = f"forget {cite}" if tomb in changes else f"forget: digest lines about {cite}"
        if dropped:
            message += f"\n\n{dropped} digest line(s) citing it dropped; the next fold re-reads "
            message += "their other items"
        return Write(changes, message)

    commit = vault.commit_built(build)
    return Forgot(cite, path, commit, dropped)


def bury_forgotten(vault: Vault) -> str | None:
    """Drop the digest's lines that cite a forgotten item (one commit), e.g. after `sync`
    brought a teammate's tombstones; None when the digest holds none."""

    def build(tip: str) -> Write | None:
        text, dropped = digest_without_forgotten(
            vault.read_text(layout.DIGEST, tip), forgotten(vault, tip)
        )
        if text is None:
            return None
        return Write({layout.DIGEST: text.encode()}, f"forget: {dropped} digest line(s) dropped")

    return vault.commit_built(build)


def digest_without_forgotten(text: str | None, tombs: set[str]) -> tuple[str | None, int]:
    """The digest text without the lines citing a forgotten item (None: nothing to drop), and
    how many were dropped. The other citations of a dropped line go to the front matter's
    `refold` list: the next fold re-reads those items, so their facts come back without the
    forgotten item's words. Category line counts follow."""
    if text is None or not tombs:
        return None, 0
    meta, body = frontmatter.parse(text)
    kept: list[str] = []
    again: list[str] = []
    counts = meta.get("items") if isinstance(meta.get("items"), dict) else None
    category = ""
    dropped = 0
    for line in body.split("\n"):
        if line.startswith("## "):
            category = line[3:].strip()
        elif line.lstrip().startswith("- ") and cites.is_forgotten(line, tombs):
            dropped += 1
            again += [c for c in cites.cites_in(line) if not cites.is_buried(c, tombs)]
            if counts is not None and isinstance(counts.get(category), int):
                counts[category] = max(0, counts[category] - 1)
            continue
        kept.append(line)
    if not dropped:
        return None, 0
    earlier = meta.get("refold")
    listed = [str(c) for c in earlier] if isinstance(earlier, list) else []
    refold = [c for c in dict.fromkeys(listed + again) if not cites.is_buried(c, tombs)]
    if refold:
        meta["refold"] = refold[:REFOLD_MAX]
    else:
        meta.pop("refold", None)
    if meta.get("kind") == "digest":
        schemas.validate("digest.schema.json", meta, "digest front matter")
    return frontmatter.render(meta, "\n".join(kept)), dropped


def _one_line(text: str, limit: int) -> str:
    text = re.sub(r"[\x00-\x1f\x7f]", " ", text)
    return re.sub(r"\s+", " ", text).strip()[:limit]


# -- redact ----------------------------------------------------------------------------------


@dataclass
class RedactPlan:
    target: str  # the citation or path the user named
    target_path: str
    versions: int = 0  # file versions (blobs) holding the text
    messages: int = 0  # commit messages holding the text
    commits: int = 0  # vault commits in the history
    paths: list[str] = field(default_factory=list)  # files with at least one version changed
    # The private sessions' local-only ref (layout.PRIVATE_REF): versions and messages, files.
    private_versions: int = 0
    private_paths: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Copies:
    """What drop_copies did with the other refs that held the old history."""

    dropped: list[str] = field(default_factory=list)  # remote-tracking copies: deleted
    kept: list[str] = field(default_factory=list)  # the user's own refs: named, left alone


@dataclass(frozen=True)
class Redacted:
    plan: RedactPlan
    shared: Rewritten | None  # the vault branch (None: only private sessions held the text)
    private: Rewritten | None  # the private sessions' ref (None: it held none)
    record_commit: str | None
    copies: Copies
    state_files: list[str]  # state files the text was replaced in


class _Rewrite:
    """One pass of fast-export → text replaced → fast-import (not yet published)."""

    def __init__(self, loc: Location, tip: str, needle: bytes) -> None:
        self.loc = loc
        self.cwd = loc.common_dir
        self.tip = tip
        self.needle = needle
        self.changed_marks: set[bytes] = set()
        self.paths: set[str] = set()
        self.versions = 0
        self.messages = 0
        self.commits = 0
        self.stream = b""

    def export(self, marks: Path, temp_ref: str) -> None:
        proc = gitcmd.run_git(
            [
                "fast-export",
                "--reencode=no",
                "--signed-tags=strip",
                f"--export-marks={marks}",
                self.tip,
            ],
            self.cwd,
        )
        self.stream = self._filter(proc.stdout, temp_ref.encode())

    def _filter(self, data: bytes, temp_ref: bytes) -> bytes:
        out = bytearray()
        pos = 0
        mark = b""
        in_commit = False
        size = len(data)
        while pos < size:
            end = data.find(b"\n", pos)
            if end < 0:
                end = size
            line = data[pos:end]
            pos = end + 1
            if line.startswith(b"data "):
                length = int(line[5:])
                body = bytes(data[pos : pos + length])
                pos += length
                new = body.replace(self.needle, REPLACEMENT)
                if new != body:
                    if in_commit:
                        self.messages += 1
                    else:
                        self.versions += 1
                        self.changed_marks.add(mark)
                        _check_structure(body, new)
                out += b"data %d\n" % len(new) + new
                continue
            if line == b"blob":
                in_commit, mark = False, b""
            elif line.startswith(b"mark "):
                mark = line[5:]
            elif line.startswith(b"commit "):
                in_commit = True
                self.commits += 1
                line = b"commit " + temp_ref
            elif line.startswith(b"reset "):
                line = b"reset " + temp_ref
            elif line.startswith(b"M ") and in_commit:
                parts = line.split(b" ", 3)
                if len(parts) == 4 and parts[2] in self.changed_marks:
                    self.paths.add(parts[3].decode("utf-8", "replace"))
            out += line + b"\n"
        return bytes(out)

    def import_(self, marks: Path, temp_ref: str) -> str:
        gitcmd.run_git(
            ["fast-import", "--quiet", f"--export-marks={marks}"], self.cwd, input=self.stream
        )
        new_tip = gitcmd.ref_exists(self.cwd, temp_ref)
        gitcmd.run_git(["update-ref", "-d", temp_ref], self.cwd, check=False)
        if new_tip is None:
            raise GitvaultError("git fast-import wrote no rewritten history; nothing changed")
        return new_tip


def _check_structure(old: bytes, new: bytes) -> None:
    """Refuse a replacement that would change a file's structure (front matter keys, headings)."""
    before, after = old.decode("utf-8", "replace"), new.decode("utf-8", "replace")
    meta_a, body_a = frontmatter.parse(before)
    meta_b, body_b = frontmatter.parse(after)
    headings_a = [ln for ln in body_a.splitlines() if ln.startswith("#")]
    headings_b = [ln for ln in body_b.splitlines() if ln.startswith("#")]
    if (
        set(meta_a) != set(meta_b)
        or meta_a.get("kind") != meta_b.get("kind")
        or len(headings_a) != len(headings_b)
    ):
        raise Refused(
            "the text also occurs in the structure of a vault file (front matter or headings); "
            "replacing it would break that file, so nothing was changed",
            hint="pass the secret itself, not a word gitvault uses in its files",
        )


def _marks(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return out
    for line in text.splitlines():
        mark, _, sha = line.partition(" ")
        if mark.startswith(":") and layout.is_full_sha(sha):
            out[mark] = sha
    return out


def check_pattern(pattern: str) -> bytes:
    if "\n" in pattern or "\r" in pattern:
        raise ForgetError("the pattern is one line of text", hint="redact each line on its own")
    if len(pattern) < MIN_PATTERN:
        raise ForgetError(
            f"the pattern must be at least {MIN_PATTERN} characters",
            hint="a short pattern would rewrite unrelated text everywhere",
        )
    if len(pattern) > MAX_PATTERN or REPLACEMENT.decode() in pattern:
        raise ForgetError("that pattern cannot be redacted", hint="pass the secret itself")
    return pattern.encode("utf-8")


def redact(
    loc: Location,
    ident: str,
    pattern: str,
    *,
    confirm: Callable[[RedactPlan], bool],
    say: Callable[[str], None] = lambda _: None,
) -> Redacted | None:
    """Rewrite without pattern every ref gitvault writes with the vault's layout: the vault
    branch and the local-only ref of private sessions. Then every other copy this repository
    holds of the old history goes (remote-tracking refs: drop_copies), and so do the caches and
    state files that quote it. confirm(plan) decides (False: nothing changed, None returned)."""
    needle = check_pattern(pattern)
    vault = Vault(loc)
    vault.check_format()
    private = Vault(loc, ref=layout.PRIVATE_REF)
    mine = private if private.tip() is not None and private.is_gitvault() else None
    target = _redact_target(vault, mine, ident)
    with tempfile.TemporaryDirectory(prefix="gitvault-redact-") as scratch:
        shared = _Pass(loc, vault, needle, Path(scratch) / "vault")
        local = _Pass(loc, mine, needle, Path(scratch) / "private") if mine else None
        plan = _plan(ident, target.path, shared, local)
        if target.path not in plan.paths + plan.private_paths:
            raise ForgetError(
                f"{target.path} holds no such text in any version",
                hint="check the ID and the exact text (case matters)",
            )
        if not confirm(plan):
            return None
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        done_private = local.publish(stamp, "-private", say) if local and local.changed else None
        done = shared.publish(stamp, "", say) if shared.changed else None
        plan = _plan(ident, target.path, shared, local)  # what the last attempts rewrote
        record = None
        roots: list[str] = []
        if done is not None:
            roots = _first_rewritten(loc, done.old_tip, done.renamed)
            record = _record(vault, plan, stamp, done.backup_ref, done.old_tip, done.renamed, roots)
        if done_private is not None:
            roots += _first_rewritten(loc, done_private.old_tip, done_private.renamed)
        search.drop(loc)
        copies = drop_copies(loc, set(roots))
        scrubbed = scrub_state_files(loc, needle)
        return Redacted(plan, done, done_private, record, copies, scrubbed)


def scrub_state_files(loc: Location, needle: bytes) -> list[str]:
    """statedir.replace_text under the lock a sync records what it took under: a record
    appended between the rewrite's read and its rename would otherwise be lost (an item a
    teammate's vault brought would then look local)."""
    from gitvault.vault import origin

    with origin.locked(loc):
        return statedir.replace_text(loc, needle, REPLACEMENT)


def _redact_target(vault: Vault, private: Vault | None, ident: str) -> history.Target:
    """The item named, in the vault or else among the private sessions."""
    try:
        return history.resolve_id(vault, ident)
    except history.NotFound:
        if private is None:
            raise
        return history.resolve_id(private, ident)


def _plan(ident: str, path: str, shared: _Pass, local: _Pass | None) -> RedactPlan:
    plan = RedactPlan(
        target=ident.strip(),
        target_path=path,
        versions=shared.rewrite.versions,
        messages=shared.rewrite.messages,
        commits=shared.rewrite.commits,
        paths=sorted(shared.rewrite.paths),
    )
    if local is not None:
        plan.private_versions = local.rewrite.versions + local.rewrite.messages
        plan.private_paths = sorted(local.rewrite.paths)
    return plan


@dataclass(frozen=True)
class Rewritten:
    """One ref's history, rewritten and published."""

    ref: str
    backup_ref: str  # the old history, until `gitvault gc`
    old_tip: str
    new_tip: str
    renamed: dict[str, str]  # old commit → new commit


class _Pass:
    """The rewrite of one ref: exported once to plan, then imported and published by
    compare-and-swap (exported again when another writer moved the ref meanwhile)."""

    def __init__(self, loc: Location, vault: Vault, needle: bytes, scratch: Path) -> None:
        self.loc, self.vault, self.needle = loc, vault, needle
        scratch.mkdir()
        self.scratch = scratch
        self.attempt = 0
        self._export()

    def _export(self) -> None:
        self.old = self.vault.check_format()
        self.temp_ref = f"refs/gitvault/redacting-{time.time_ns()}"
        self.rewrite = _Rewrite(self.loc, self.old, self.needle)
        self.exported = self.scratch / f"a{self.attempt}"
        self.imported = self.scratch / f"b{self.attempt}"
        self.rewrite.export(self.exported, self.temp_ref)

    @property
    def changed(self) -> bool:
        return bool(self.rewrite.versions or self.rewrite.messages)

    def publish(self, stamp: str, suffix: str, say: Callable[[str], None]) -> Rewritten:
        while True:
            new_tip = self.rewrite.import_(self.imported, self.temp_ref)
            backup = f"{layout.BACKUP_REFS}{stamp}-{self.attempt}{suffix}"
            if self.vault.replace_history(new_tip, self.old, backup, f"redact in {self.vault.ref}"):
                renamed = _renamed(_marks(self.exported), _marks(self.imported))
                return Rewritten(self.vault.ref, backup, self.old, new_tip, renamed)
            self.attempt += 1
            if self.attempt >= ATTEMPTS:
                raise GitvaultError(
                    f"{self.vault.ref} kept moving: gave up after {ATTEMPTS} rewrites",
                    hint="stop other gitvault processes (agents, drains) and try again",
                )
            say(f"{self.vault.ref} moved during the rewrite; rewriting again")
            self._export()


def _renamed(before: dict[str, str], after: dict[str, str]) -> dict[str, str]:
    """old commit sha → new commit sha, through the marks both sides share."""
    return {sha: after[mark] for mark, sha in before.items() if mark in after}


def _first_rewritten(loc: Location, old_tip: str, renamed: dict[str, str]) -> list[str]:
    """The old commits the rewrite changed whose parents it did not: every changed commit is
    one of them or descends from one, so a history that holds none of them holds no commit
    the text was removed from (the record names them: the refusal needs no backup ref)."""
    changed = {old for old, new in renamed.items() if old != new}
    proc = gitcmd.run_git(["rev-list", "--parents", old_tip], loc.common_dir)
    roots = []
    for line in proc.stdout.decode().splitlines():
        sha, *parents = line.split()
        if sha in changed and not any(p in changed for p in parents):
            roots.append(sha)
    return sorted(roots)[:ROOTS_MAX]


ROOTS_MAX = 100


def _record(
    vault: Vault,
    plan: RedactPlan,
    stamp: str,
    backup: str,
    old_tip: str,
    renamed: dict[str, str],
    roots: list[str],
) -> str:
    """The commit after the rewrite: what was redacted (never the text), and the digest's
    watermark re-pointed at the rewritten commit, so the next fold does not start over."""
    meta: dict[str, object] = {
        "kind": "redaction",
        "target": plan.target[:300],
        "redacted_at": f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}T"
        f"{stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}Z",
        "versions": plan.versions,
        "messages": plan.messages,
        "commits": plan.commits,
        "backup_ref": backup,
        "old_tip": old_tip,
        "rewritten_from": roots,
    }
    schemas.validate("redaction.schema.json", meta, "redaction record")
    body = (
        f"# redacted from {plan.target}\n\n"
        f"Text was replaced by {REPLACEMENT.decode()} in {plan.versions} file version(s) and "
        f"{plan.messages} commit message(s) across {plan.commits} vault commits.\n"
        f"Files: {', '.join(plan.paths[:20])}{' …' if len(plan.paths) > 20 else ''}\n\n"
        f"The history before the rewrite is kept under {backup} until `gitvault gc`.\n"
        "Clones and remotes that fetched the vault before keep the old text.\n"
    )
    changes: dict[str, bytes | None] = {
        layout.redaction_path(stamp): frontmatter.render(meta, body).encode()
    }
    digest = vault.read_text(layout.DIGEST)
    if digest is not None:
        dmeta, dbody = frontmatter.parse(digest)
        mark = dmeta.get("watermark")
        if isinstance(mark, str) and mark in renamed:
            dmeta["watermark"] = renamed[mark]
            changes[layout.DIGEST] = frontmatter.render(dmeta, dbody).encode()
    return vault.commit(
        changes, f"redact {plan.target}: {plan.versions} version(s) rewritten (text not kept)"
    )


def redacted_commits(vault: Vault, at: str) -> set[str]:
    """The old commits the redactions recorded at `at` rewrote (their first changed commits and
    old tips): a history holding one of them still holds redacted text."""
    out: set[str] = set()
    for name, is_dir in vault.listdir(layout.REDACTIONS, at):
        path = f"{layout.REDACTIONS}/{name}"
        if is_dir or not layout.is_redaction(path):
            continue
        meta, _ = frontmatter.parse(vault.read_text(path, at) or "")
        listed = meta.get("rewritten_from")
        found = [*(listed if isinstance(listed, list) else []), meta.get("old_tip")]
        out |= {str(s) for s in found if layout.is_full_sha(str(s))}
    return out


# -- every other copy ------------------------------------------------------------------------


_COPY_PREFIXES = ("refs/remotes/", "refs/gitvault/")  # what gitvault or git fetch made: dropped


def drop_copies(loc: Location, roots: set[str]) -> Copies:
    """Every ref but the vault's own that still reaches a commit the rewrite changed (roots:
    the first changed commits, see _first_rewritten): remote-tracking copies (`git fetch`'s
    refs/remotes/<r>/vault, sync's refs/gitvault/remotes/<r>/vault) and gitvault's leftovers
    are deleted, as their reflogs with them (the next fetch of a remote still holding the old
    history is refused by sync before anything enters the repository; a plain `git fetch`
    brings it back, and the next `gitvault gc` drops it again); the user's own refs (a branch,
    a tag) are named and left alone."""
    cwd = loc.common_dir
    present = gitcmd.existing_commits(cwd, sorted(roots))
    if not present:
        return Copies()
    args = ["for-each-ref", "--format=%(refname)"]
    for root in present:
        args += ["--contains", root]
    proc = gitcmd.run_git(args, cwd, check=False)
    own = {Vault(loc).ref, layout.PRIVATE_REF}
    dropped, kept = [], []
    for ref in proc.stdout.decode("utf-8", "replace").splitlines():
        if not ref or ref in own or ref.startswith(layout.BACKUP_REFS):
            continue
        if ref.startswith(_COPY_PREFIXES):
            gitcmd.run_git(["update-ref", "-d", ref], cwd, check=False)
            dropped.append(ref)
        else:
            kept.append(ref)
    return Copies(dropped, kept)


# -- gc --------------------------------------------------------------------------------------


def backups(loc: Location) -> list[str]:
    proc = gitcmd.run_git(
        ["for-each-ref", "--format=%(refname)", layout.BACKUP_REFS], loc.common_dir
    )
    return [ln for ln in proc.stdout.decode().splitlines() if ln.strip()]


def has_redactions(loc: Location) -> bool:
    vault = Vault(loc)
    tip = vault.tip()
    return tip is not None and any(
        layout.is_redaction(f"{layout.REDACTIONS}/{name}")
        for name, is_dir in vault.listdir(layout.REDACTIONS, tip)
        if not is_dir
    )


@dataclass(frozen=True)
class Collected:
    backups: list[str]  # the backup refs deleted
    copies: Copies  # other refs that held the old history
    reflog_entries: int  # entries of other reflogs (a worktree's HEAD, a branch) deleted
    checkouts: list[str]  # worktrees with the vault checked out: their index holds old files


def gc(loc: Location) -> Collected:
    """Delete the redaction backups and every copy of the old history gitvault or git fetch
    made (drop_copies), expire the reflogs of the vault's refs, delete the entries of other
    reflogs that name an old commit, prune what only they kept (`git gc --prune=now`)."""
    cwd = loc.common_dir
    vault = Vault(loc)
    gone = backups(loc)
    old = _old_commits(loc, gone, [vault.ref, layout.PRIVATE_REF])
    roots = {sha for sha, parents in old.items() if not any(p in old for p in parents)}
    tip = vault.tip()
    if tip is not None:
        roots |= redacted_commits(vault, tip)
    copies = drop_copies(loc, roots)
    for ref in gone:
        gitcmd.run_git(["update-ref", "-d", ref], cwd)
    # The reflogs of the vault's own refs and of its remote-tracking copies go whole (an entry's
    # old value keeps a commit too, and `git reflog show` does not print it); other reflogs lose
    # only the entries that name an old commit.
    for ref in [vault.ref, layout.PRIVATE_REF, *_tracking_copies(loc, vault.branch)]:
        gitcmd.run_git(
            ["reflog", "expire", "--expire=now", "--expire-unreachable=now", ref], cwd, check=False
        )
    entries = _drop_reflog_entries(loc, set(old))
    checkouts = _vault_checkouts(loc, vault.ref, set(old))
    gitcmd.run_git(["gc", "--prune=now", "--quiet"], cwd)
    return Collected(gone, copies, entries, checkouts)


def _old_commits(loc: Location, old_tips: list[str], live: list[str]) -> dict[str, list[str]]:
    """The commits only the old histories hold (not the live refs): sha → parents."""
    if not old_tips:
        return {}
    keep = [ref for ref in live if gitcmd.ref_exists(loc.common_dir, ref)]
    proc = gitcmd.run_git(
        ["rev-list", "--parents", *old_tips, "--not", *keep], loc.common_dir, check=False
    )
    out: dict[str, list[str]] = {}
    for line in proc.stdout.decode().splitlines():
        sha, *parents = line.split()
        out[sha] = parents
    return out


def _worktrees(loc: Location) -> list[tuple[Path, str]]:
    """(path, branch ref or '') of every worktree of the repository."""
    proc = gitcmd.run_git(["worktree", "list", "--porcelain", "-z"], loc.common_dir, check=False)
    found: list[tuple[Path, str]] = []
    path: Path | None = None
    branch = ""
    for field_ in [*proc.stdout.decode("utf-8", "replace").split("\0"), ""]:
        if field_.startswith("worktree "):
            path, branch = Path(field_[9:]), ""
        elif field_.startswith("branch "):
            branch = field_[7:]
        elif not field_ and path is not None:
            found.append((path, branch))
            path = None
    return found


def _tracking_copies(loc: Location, branch: str) -> list[str]:
    """The remote-tracking refs of the vault: git fetch's refs/remotes/<r>/<branch> and
    sync's refs/gitvault/remotes/<r>/vault."""
    proc = gitcmd.run_git(
        ["for-each-ref", "--format=%(refname)", "refs/remotes/", layout.TRACKING_PREFIX],
        loc.common_dir,
        check=False,
    )
    refs = proc.stdout.decode("utf-8", "replace").splitlines()
    return [
        ref
        for ref in refs
        if ref.startswith(layout.TRACKING_PREFIX)
        or (ref.startswith("refs/remotes/") and ref.split("/", 3)[-1] == branch)
    ]


def _drop_reflog_entries(loc: Location, old: set[str]) -> int:
    """Delete the entries of every reflog (each worktree's HEAD included: in the common dir,
    `--all` names them HEAD and worktrees/<name>/HEAD) that name one of the old commits (a
    `git checkout vault`, a branch reset onto it)."""
    if not old:
        return 0
    cwd = loc.common_dir
    proc = gitcmd.run_git(["reflog", "show", "--all", "--format=%gD %H"], cwd, check=False)
    doomed = []
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        selector, _, sha = line.rpartition(" ")
        if sha in old:
            doomed.append(selector)
    count = 0
    for selector in reversed(doomed):  # each reflog's oldest first: its newer indexes hold
        done = gitcmd.run_git(["reflog", "delete", "--rewrite", selector], cwd, check=False)
        count += done.returncode == 0
    return count


def _vault_checkouts(loc: Location, ref: str, old: set[str]) -> list[str]:
    """Worktrees that have the vault (or an old commit of it) checked out."""
    out = []
    for path, branch in _worktrees(loc):
        head = gitcmd.run_git(["rev-parse", "-q", "--verify", "HEAD"], path, check=False)
        if branch == ref or head.stdout.decode().strip() in old:
            out.append(str(path))
    return out
