"""The truth model: what a digest line may claim, checked against the repository as it is now.

One model, two users. The fold screens every merger's digest with it before committing (the
builtin merger's, a model's, a fold.command's alike), and `gitvault verify` checks a stored
digest with it. So what verify would flag is never written by a fold, `verify --fix` and the
next fold agree, and the agent files' section, filled from the digest, carries no flagged line.

A line is a claim with evidence. It is flagged:
- dangling: a citation names nothing in the vault (no note, no session);
- repointed: a cited commit is on no branch, but a rewrite or a squash carries its change:
  the line now cites that commit;
- stale, when
  - a cited commit is on no branch and nothing carries it;
  - a cited commit was reverted (a noted commit says "This reverts commit <sha>", or quotes its
    subject in `Revert "…"`), the revert stands (it was not reverted in turn) and the change
    did not land again, unless the line is about that revert (it cites the revert too);
  - a path it names (backticked, or path-like: `a/b.py`, `docs/`, a file name the history
    knows) does not exist at HEAD, unless the line says it is gone, renamed or moved (under
    the next-steps category, a path the history never had is a plan, not a claim);
  - a `symbol` it names appears in none of HEAD's files;
  - it is about a revert (it says so and cites the revert) but does not cite the reverted
    commit, or the revert was itself reverted, or the change re-landed (a later commit with
    the same `git patch-id`), and the line does not say so;
  - it names a "latest release" that is neither the newest tag nor the newest tag that is no
    pre-release.
Quoted text ("…") is history's own words: never checked for paths or symbols.

The repository's side (HEAD's files, tags, branches, patch-ids) comes from git, read once per
process and only when a line needs it; the history's side (reverts, the paths the history
ever had) from the notes, through the mined history's `Record` (gitvault.fold.history).
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path

from gitvault.fold.digest import citations
from gitvault.fold.history import Record, ReleaseMemo, View, dirs_of
from gitvault.named import NamedTuple
from gitvault.vault import gitcmd, layout
from gitvault.vault.store import Vault

SEARCH_COMMITS = 5000  # how far back on the branches a replacement is looked for
FEW_COMMITS = 12  # more commits to place than this: one `git rev-list HEAD` for them all
PATCH_ID_CANDIDATES = 40  # later commits with the same files whose patch-id is compared

_TRAILING_CITES = re.compile(r"\s*\(\s*[cs]:[^()]*\)\s*$")
_CITE = re.compile(r"\b[cs]:[A-Za-z0-9][A-Za-z0-9._-]*")
_QUOTED = re.compile(r'"[^"]*"|“[^”]*”')
_TICKED = re.compile(r"`([^`\s]+)`")
_TOKEN = re.compile(r"[\w./+@*~$-]+")
_VERSION = re.compile(r"v?\d+(?:\.\d+)+(?:[-.]?(?:rc|alpha|beta|pre|dev|a|b)\.?\d*)?")
_NAMED_VERSION = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+)+(?:[-.]?[A-Za-z]+\.?\d*)?)\b")
_PRERELEASE = re.compile(r"(?:rc|alpha|beta|pre|dev|a|b)\.?\d*$", re.I)
_SYMBOL = re.compile(r"[A-Za-z_][\w.]{2,80}(?:\(\))?")
_EXTENSION = re.compile(r"[A-Za-z][A-Za-z0-9+_-]{0,9}")
_PLAIN_WORD = re.compile(r"[a-z]+")
_BARE = re.compile(r"[\w.@+-]+")
_GONE = re.compile(
    r"\b(?:removed|deleted|gone|renamed|moved|no longer exists?|formerly|used to be|dropped"
    r"|was replaced|now lives?|since removed)\b",
    re.I,
)
_REVERT_WORDS = re.compile(r"\brevert(?:ed|ing|s)?\b|\bbacked out\b", re.I)
_CHANGE_IS_BACK = re.compile(
    r"\b(?:reverted back|re-?reverted|revert(?:ed)? again|restored|reinstated|revert was"
    r"(?: itself)? reverted|undone|the change is back)\b",
    re.I,
)
_RELANDED = re.compile(
    r"\b(?:re-?land\w*|landed again|re-?appli\w*|re-?introduc\w*|came back|brought back"
    r"|re-?added|re-?done|re-?committed)\b",
    re.I,
)
_RELEASE_LINE = re.compile(
    r"\b(?:latest|newest|last|most recent|current)\b[^.;]{0,40}\brelease"
    r"|\brelease[sd]?\b[^.;]{0,40}\b(?:latest|newest)\b",
    re.I,
)


# --------------------------------------------------------------------------- the repository


class Tag(NamedTuple):
    name: str
    created: int  # creatordate: an annotated tag's date, else its commit's
    commit: str


def is_prerelease(name: str) -> bool:
    return bool(_PRERELEASE.search(name))


def version_of(name: str) -> str:
    """A tag's version (`v2.55.0` → `2.55.0`, `click-8.1` → `8.1`), or the name itself."""
    match = re.search(r"\d+(?:\.\d+)+.*$", name)
    return match.group(0) if match else name


class Ground:
    """The repository now, read from git on first use: HEAD's files, tags, branch commits,
    patch-ids, symbols. The history's side is the mined history (`mined`, opened on first
    use): what the notes say (`record`), which notes the vault holds, who replaced what."""

    def __init__(
        self,
        vault: Vault,
        cwd: Path,
        mined: View | Callable[[], View],
        exists: Callable[[str, str], bool] | None = None,
    ) -> None:
        self.vault = vault
        self.cwd = cwd
        self._mined = mined
        self._exists = exists
        self._patch_ids: dict[str, str | None] = {}
        self._symbols: dict[str, bool] = {}
        self._on_branch: dict[str, bool] = {}
        self._branch_patch_ids: dict[str, str] | None = None

    @cached_property
    def mined(self) -> View:
        return self._mined if isinstance(self._mined, View) else self._mined()

    @property
    def record(self) -> Record:
        return self.mined.record

    # ------------------------------------------------------------ HEAD

    @cached_property
    def head_files(self) -> frozenset[str]:
        args = ["-c", "core.quotePath=false", "ls-tree", "-r", "--name-only", "-z", "HEAD"]
        proc = gitcmd.run_git(args, self.cwd, check=False)
        if proc.returncode != 0:
            return frozenset()
        return frozenset(p for p in proc.stdout.decode("utf-8", "replace").split("\0") if p)

    @cached_property
    def head_dirs(self) -> frozenset[str]:
        return dirs_of(self.head_files)

    @cached_property
    def head_basenames(self) -> frozenset[str]:
        names = {p.rsplit("/", 1)[-1] for p in self.head_files}
        return frozenset(names | {d.rsplit("/", 1)[-1] for d in self.head_dirs})

    @cached_property
    def extensions(self) -> frozenset[str]:
        out = set()
        for path in self.head_files | self.record.ever_paths:
            base = path.rsplit("/", 1)[-1]
            if "." in base.strip("."):
                ext = base.rsplit(".", 1)[-1]
                if _EXTENSION.fullmatch(ext):
                    out.add(ext.lower())
        return frozenset(out)

    def exists_now(self, path: str) -> bool:
        """A file or a folder of HEAD."""
        path = path.rstrip("/")
        return path in self.head_files or path in self.head_dirs

    # ------------------------------------------------------------ tags

    @cached_property
    def tags(self) -> list[Tag]:
        """Tags that name commits, newest first by creatordate."""
        fields = "refname:strip=2 creatordate:unix objecttype objectname *objecttype *objectname"
        fmt = "%00".join(f"%({f})" for f in fields.split(" "))
        args = ["for-each-ref", "--sort=-creatordate", f"--format={fmt}", "refs/tags"]
        proc = gitcmd.run_git(args, self.cwd, check=False)
        out = []
        for line in proc.stdout.decode("utf-8", "replace").splitlines():
            parts = line.split("\0")
            if len(parts) != 6:
                continue
            name, created, kind, obj, peeled_kind, peeled = parts
            commit = obj if kind == "commit" else (peeled if peeled_kind == "commit" else "")
            if name and commit:
                out.append(Tag(name, int(created or 0), commit))
        return out

    def release_tags(self) -> tuple[Tag | None, Tag | None]:
        """(the newest tag, the newest tag that is no pre-release)."""
        tags = self.tags
        newest = tags[0] if tags else None
        stable = next((t for t in tags if not is_prerelease(t.name)), None)
        return newest, stable

    # ------------------------------------------------------------ patch-ids, re-lands

    def patch_id(self, sha: str) -> str | None:
        if sha not in self._patch_ids:
            known = self.mined.patch_id(sha)
            if known is not None:
                self._patch_ids[sha] = known or None
                return self._patch_ids[sha]
            show = gitcmd.run_git(
                ["show", "--format=", "--no-color", "--no-ext-diff", sha, "--"],
                self.cwd,
                check=False,
            )
            found = None
            if show.returncode == 0 and show.stdout:
                out = gitcmd.run_git(
                    ["patch-id", "--stable"], self.cwd, input=show.stdout, check=False
                )
                parts = out.stdout.decode().split()
                found = parts[0] if parts else None
            if show.returncode == 0:  # a commit this clone has: its patch-id never changes
                self.mined.learn_patch_id(sha, found or "")
            self._patch_ids[sha] = found
        return self._patch_ids[sha]

    def relanded(self, original: str, revert: str) -> list[str]:
        """Commits after `revert` carrying `original`'s change again (same patch-id; only
        commits touching exactly the same files can have it). A revert of the revert brings
        the change back too, but is no re-land."""
        record = self.record
        first = record.by_sha.get(original)
        undo = record.by_sha.get(revert)
        if first is None or undo is None or not first.files:
            return []
        later = [
            c
            for c in record.later_with_files(first.files, undo)
            if c.sha not in record.reverts and c.sha != original
        ][:PATCH_ID_CANDIDATES]
        if not later:
            return []
        want = self.patch_id(original)
        return [c.sha for c in later if want is not None and self.patch_id(c.sha) == want]

    def standing_reverts(self, sha: str) -> list[str]:
        """The reverts of `sha` that stand: not reverted in turn, the change not re-landed."""
        record = self.record
        out = []
        for revert in record.reverted_by.get(sha, ()):
            if record.reverted_by.get(revert):
                continue
            if self.relanded(sha, revert):
                continue
            out.append(revert)
        return out

    # ------------------------------------------------------------ branches, rewrites

    @cached_property
    def _branch_log(self) -> list[tuple[str, str]]:
        """(sha, full message) of recent commits on every local branch but the vault."""
        args = ["log", f"-n{SEARCH_COMMITS}", "--format=%H%x00%B%x01"]
        args += [f"--exclude={self.vault.branch}", "--branches", "--"]
        out = gitcmd.run_git(args, self.cwd, check=False).stdout.decode("utf-8", "replace")
        found = []
        for entry in out.split("\x01"):
            sha, _, message = entry.strip("\n").partition("\x00")
            if len(sha) == 40:
                found.append((sha, message))
        return found

    @cached_property
    def _branch_tips(self) -> list[str]:
        args = ["for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/"]
        proc = gitcmd.run_git(args, self.cwd, check=False)
        mine = layout.branch_ref(self.vault.branch)
        pairs = [ln.split(" ", 1) for ln in proc.stdout.decode().splitlines() if " " in ln]
        return [tip for tip, name in pairs if name != mine]

    def on_a_branch(self, sha: str) -> bool:
        if sha not in self._on_branch:
            self._on_branch[sha] = self._reachable(sha)
        return self._on_branch[sha]

    @cached_property
    def _head(self) -> str | None:
        proc = gitcmd.run_git(
            ["rev-parse", "-q", "--verify", "HEAD^{commit}"], self.cwd, check=False
        )
        out = proc.stdout.decode().strip()
        return out if proc.returncode == 0 and out else None

    def since_release(self, commit: str) -> tuple[str, int | None] | None:
        """Where a release's tagged commit meets HEAD's history (the commit itself when HEAD
        contains it), with the non-merge commits HEAD has since (None when git cannot say);
        None when the two share no commit. When HEAD only moved forward since the last fold
        asked, and none of the new commits is in the release's history (so where they meet
        is unchanged), only the new commits are counted; otherwise git is asked afresh."""
        head = self._head
        if head is None:
            return None
        memo = self.mined.release()
        if memo is not None and memo.commit == commit:
            if memo.head == head:
                return memo.base, memo.since
            new = self._new_outside(commit, memo.head, head)
            if new is not None:
                self.mined.learn_release(memo._replace(head=head, since=memo.since + new))
                return memo.base, memo.since + new
        proc = gitcmd.run_git(["merge-base", commit, head], self.cwd, check=False)
        base = proc.stdout.decode().strip().lower()
        if proc.returncode != 0 or len(base) != 40:
            return None
        count = gitcmd.run_git(
            ["rev-list", "--count", "--no-merges", f"{base}..{head}", "--"], self.cwd, check=False
        )
        out = count.stdout.decode().strip()
        if count.returncode != 0 or not out.isdigit():
            return base, None
        self.mined.learn_release(ReleaseMemo(commit, head, base, int(out)))
        return base, int(out)

    def _new_outside(self, commit: str, then: str, head: str) -> int | None:
        """The non-merge commits in then..head when `then` is an ancestor of head and none of
        them is in `commit`'s history; None otherwise (where they meet may have moved)."""
        if not gitcmd.is_ancestor(self.cwd, then, head):
            return None
        listed = gitcmd.run_git(
            ["rev-list", "--parents", head, f"^{then}", "--"], self.cwd, check=False
        )
        rows = listed.stdout.decode().splitlines()
        outside = gitcmd.run_git(
            ["rev-list", "--count", head, f"^{then}", f"^{commit}", "--"], self.cwd, check=False
        )
        counted = outside.stdout.decode().strip()
        if listed.returncode != 0 or outside.returncode != 0 or counted != str(len(rows)):
            return None
        return sum(1 for row in rows if len(row.split()) <= 2)  # sha and at most one parent

    def look_up_branches(self, shas: Iterable[str]) -> None:
        """Place many commits on or off HEAD's history at once (`on_a_branch` then asks only
        about the others): those the mined history remembers on HEAD's history (or an earlier
        HEAD's it descends from), then one `git rev-list HEAD` when many are left."""
        todo = {s for s in shas if s not in self._on_branch}
        head = self._head
        if not todo or head is None:
            return
        known = self.mined.on_head(head, lambda a, b: gitcmd.is_ancestor(self.cwd, a, b))
        for sha in todo & known:
            self._on_branch[sha] = True
        todo -= known
        if len(todo) <= FEW_COMMITS:
            return
        proc = gitcmd.run_git(["rev-list", "HEAD", "--"], self.cwd, check=False)
        if proc.returncode != 0:
            return
        found = todo & set(proc.stdout.decode().split())
        for sha in found:
            self._on_branch[sha] = True
        self.mined.learn_on_head(head, found)

    def _reachable(self, sha: str) -> bool:
        for tip in self._branch_tips:
            if tip == sha:
                return True
        proc = gitcmd.run_git(["merge-base", "--is-ancestor", sha, "HEAD"], self.cwd, check=False)
        if proc.returncode == 0:
            if self._head is not None:
                self.mined.learn_on_head(self._head, [sha])
            return True
        known = gitcmd.run_git(["cat-file", "-e", f"{sha}^{{commit}}"], self.cwd, check=False)
        if known.returncode != 0:
            # A teammate's commit whose code this clone has not fetched (its note came by
            # sync): nothing here says it was rewritten away, so it is not called stale.
            return True
        args = ["for-each-ref", "--format=%(refname)", f"--contains={sha}", "refs/heads/"]
        args.append("refs/remotes/")
        proc = gitcmd.run_git(args, self.cwd, check=False)
        mine = layout.branch_ref(self.vault.branch)
        theirs = layout.branch_ref(self.vault.branch).removeprefix("refs/heads/")
        return proc.returncode == 0 and any(
            n != mine and not n.endswith("/" + theirs) for n in proc.stdout.decode().split()
        )

    def replaced_by(self, sha: str) -> str | None:
        """The commit that now carries a rewritten commit's change: its rewrite record (a note
        whose `replaces` names it), else the same patch-id on a branch, else a branch commit
        whose message quotes its subject (a squash merge)."""
        recorded = self.mined.replaced_by(sha)
        if recorded is not None:
            return recorded
        patch = self.patch_id(sha)
        if patch:
            for candidate, candidate_patch in self._recent_patch_ids().items():
                if candidate_patch == patch and candidate != sha:
                    return candidate
        subject = self._subject(sha)
        if subject and len(subject) >= 12:
            for candidate, message in self._branch_log:
                if candidate != sha and subject in message:
                    return candidate
        return None

    def _subject(self, sha: str) -> str | None:
        proc = gitcmd.run_git(["log", "-1", "--format=%s", sha, "--"], self.cwd, check=False)
        if proc.returncode != 0:
            return None
        return proc.stdout.decode("utf-8", "replace").strip() or None

    def _recent_patch_ids(self) -> dict[str, str]:
        if self._branch_patch_ids is None:
            shas = [s for s, _ in self._branch_log[:1000]]
            args = ["log", "-p", "--format=commit %H", "--no-walk=unsorted", "--stdin"]
            log = gitcmd.run_git(args, self.cwd, input="\n".join(shas).encode(), check=False)
            out = gitcmd.run_git(["patch-id", "--stable"], self.cwd, input=log.stdout, check=False)
            self._branch_patch_ids = {}
            for line in out.stdout.decode().splitlines():
                parts = line.split()
                if len(parts) == 2:
                    self._branch_patch_ids[parts[1]] = parts[0]
        return self._branch_patch_ids

    # ------------------------------------------------------------ the vault's side

    def cited_note(self, ident: str) -> str | None:
        """The full sha of the noted commit a citation names (unique prefix), else None."""
        if self._exists is not None and not self._exists("c", ident):
            return None
        return self.record.resolve(ident) or self.mined.note_named(ident)

    def session_exists(self, slug: str) -> bool:
        if self._exists is not None:
            return self._exists("s", slug)
        return layout.is_slug(slug) and self.vault.exists(layout.session_path(slug))

    def symbol_exists(self, symbol: str) -> bool:
        name = symbol.removesuffix("()").rsplit(".", 1)[-1]
        if name not in self._symbols:
            proc = gitcmd.run_git(
                ["grep", "-q", "-w", "-F", "-e", name, "HEAD", "--"], self.cwd, check=False
            )
            self._symbols[name] = proc.returncode == 0
        return self._symbols[name]


# --------------------------------------------------------------------------- a line's claims


@dataclass
class LineCheck:
    category: str
    line: str
    status: str  # ok | stale | dangling | repointed
    reasons: list[str] = field(default_factory=list)
    new_line: str | None = None

    def flag(self, status: str, reason: str) -> None:
        """Record a reason; the status is the worst one found (dangling > stale > repointed)."""
        if _RANK[status] > _RANK[self.status]:
            self.status = status
        self.reasons.append(reason)


_RANK = {"ok": 0, "repointed": 1, "stale": 2, "dangling": 3}


def claim_text(line: str) -> str:
    """The line without its bullet and its citations."""
    text = line[2:] if line.startswith("- ") else line
    while _TRAILING_CITES.search(text):
        text = _TRAILING_CITES.sub("", text)
    return _CITE.sub(" ", text).strip()


class Named(NamedTuple):
    kind: str  # file | dir | bare | glob
    path: str


def named_paths(text: str, ground: Ground) -> list[Named]:
    """The paths a claim names: backticked ones, and words that look like paths of this
    repository (a folder path with a file extension or that the history had, `dir/`, a file
    name the history or HEAD has). Quotations are history's words: left out."""
    plain = _QUOTED.sub(" ", text)
    ticked = [m.group(1) for m in _TICKED.finditer(plain)]
    words = ticked + _TOKEN.findall(_TICKED.sub(" ", plain))
    found: dict[str, str] = {}
    for index, raw in enumerate(words):
        token = raw.strip(",;:()[]'!?").rstrip(".")
        kind = _path_kind(token, index < len(ticked), ground)
        if kind:
            found.setdefault(token.rstrip("/") if kind == "dir" else token, kind)
    return [Named(k, p) for p, k in found.items()]


def _path_kind(token: str, ticked: bool, ground: Ground) -> str | None:
    if not token or len(token) > 300 or "://" in token or token.startswith(("-", "@", "~", "$")):
        return None
    if token.startswith(("/", "./../", "../")) or _VERSION.fullmatch(token):
        return None
    base = token.rstrip("/").rsplit("/", 1)[-1]
    ext = base.rsplit(".", 1)[-1].lower() if "." in base.strip(".") else ""
    has_ext = bool(ext) and ext in ground.extensions
    record = ground.record
    if "*" in token:
        return "glob" if ("." in base or "/" in token) else None
    if "/" in token.strip("/"):
        bare = token.rstrip("/")
        if token.endswith("/"):
            return "dir"
        if has_ext or bare in record.ever_paths or bare in ground.head_files:
            return "file"
        if bare in record.ever_dirs or bare in ground.head_dirs:
            return "dir"
        return None
    if token.endswith("/") and len(token) > 1:
        return "dir" if _BARE.fullmatch(token[:-1]) else None
    if not _BARE.fullmatch(token) or token.isdigit():
        return None
    known = token in record.ever_basenames or token in ground.head_basenames
    if ticked and (has_ext or known):
        return "bare"
    if known and (has_ext or not _PLAIN_WORD.fullmatch(token)):
        return "bare"
    return None


def _path_exists(named: Named, ground: Ground) -> bool:
    if named.kind == "glob":
        pool = ground.head_files if "/" in named.path else ground.head_basenames
        return any(fnmatch.fnmatchcase(p, named.path) for p in pool)
    if named.kind == "bare":
        return named.path in ground.head_basenames
    if named.kind == "dir":
        return named.path in ground.head_dirs
    return ground.exists_now(named.path)


def _ever_existed(named: Named, ground: Ground) -> bool:
    record = ground.record
    if named.kind == "bare":
        return named.path in record.ever_basenames
    if named.kind == "dir":
        return named.path in record.ever_dirs
    if named.kind == "glob":
        return True
    return named.path in record.ever_paths or named.path in record.ever_dirs


def says_gone(text: str, paths: list[Named]) -> bool:
    """The line says in its own words that a path is gone, renamed or moved: a word of a name
    (src/gone.py, `removed_helper`) says nothing."""
    words = _TICKED.sub(" ", text)
    for named in sorted(paths, key=lambda n: -len(n.path)):
        words = words.replace(named.path, " ")
    return bool(_GONE.search(words))


def is_revert_line(text: str) -> bool:
    """The claim is about a revert (in its own words: a quoted subject saying "Revert" is
    history's, not the line's)."""
    return bool(_REVERT_WORDS.search(_QUOTED.sub(" ", text)))


def is_release_line(text: str) -> bool:
    return bool(_RELEASE_LINE.search(text))


def says_change_is_back(text: str) -> bool:
    return bool(_CHANGE_IS_BACK.search(text))


def says_relanded(text: str) -> bool:
    return bool(_RELANDED.search(text))


def check_line(category: str, line: str, ground: Ground, *, plans: bool = False) -> LineCheck:
    """One line against the truth model. `plans`: the line is a next step (a path the
    history never had may be one to create)."""
    result = LineCheck(category, line, "ok")
    text = claim_text(line)
    cited: dict[str, str] = {}  # full sha → the id the line wrote
    new_line = line
    for kind, ident in citations(line):
        if kind == "s":
            if not ground.session_exists(ident):
                result.flag("dangling", f"s:{ident} is not in the vault")
            continue
        sha = ground.cited_note(ident)
        if sha is None:
            result.flag("dangling", f"c:{ident} is not in the vault")
            continue
        cited[sha] = ident
        if not ground.on_a_branch(sha):
            replacement = ground.replaced_by(sha)
            if replacement is None:
                result.flag("stale", f"c:{ident} is on no branch and nothing carries it")
                continue
            new_line = new_line.replace(f"c:{ident}", f"c:{replacement[: len(ident)]}")
            result.flag("repointed", f"c:{ident} now lives in {replacement[:7]}")
    _check_reverts(result, text, cited, ground)
    _check_paths(result, text, ground, plans=plans)
    _check_symbols(result, text, ground)
    if is_release_line(text):
        _check_release(result, text, ground)
    if result.status == "repointed":
        result.new_line = new_line
    return result


def _check_reverts(result: LineCheck, text: str, cited: Mapping[str, str], ground: Ground) -> None:
    record = ground.record
    about_revert = is_revert_line(text)
    reverts_cited = [sha for sha in cited if sha in record.reverts] if about_revert else []
    covered = {t for r in reverts_cited for t in record.reverts[r]}
    for sha, ident in cited.items():
        if sha in covered or sha in reverts_cited:
            continue
        standing = ground.standing_reverts(sha)
        if standing:
            result.flag("stale", f"c:{ident} was reverted by {standing[-1][:7]}")
    for revert in reverts_cited:
        ident = cited[revert]
        for target in record.reverts[revert]:
            if target not in record.by_sha:
                continue  # reverts a commit the notes do not have: nothing to cite
            if target not in cited:
                result.flag(
                    "stale", f"c:{ident} reverts {target[:7]}, which the line does not cite"
                )
            landed = ground.relanded(target, revert)
            if landed and not says_relanded(text):
                result.flag(
                    "stale",
                    f"the change c:{ident} reverted re-landed in {landed[0][:7]}"
                    " and the line does not say so",
                )
        again = record.reverted_by.get(revert)
        if again and not says_change_is_back(text):
            result.flag("stale", f"the revert c:{ident} was itself reverted by {again[0][:7]}")


def _check_paths(result: LineCheck, text: str, ground: Ground, *, plans: bool) -> None:
    paths = named_paths(text, ground)
    gone_said = says_gone(text, paths)
    for named in paths:
        if _path_exists(named, ground):
            continue
        ever = _ever_existed(named, ground)
        if gone_said and ever:
            continue
        if plans and not ever:
            continue
        shown = named.path + ("/" if named.kind == "dir" else "")
        result.flag("stale", f"{shown} no longer exists")


def _check_symbols(result: LineCheck, text: str, ground: Ground) -> None:
    plain = _QUOTED.sub(" ", text)
    for symbol in (m.group(1) for m in _TICKED.finditer(plain)):
        if not _SYMBOL.fullmatch(symbol) or "/" in symbol:
            continue
        if _path_kind(symbol, True, ground) is not None:
            continue  # a file name: checked as a path
        if "." in symbol and symbol.rsplit(".", 1)[-1].lower() in ground.extensions:
            continue  # a file name the history does not know: not a symbol either
        if not ground.symbol_exists(symbol):
            result.flag("stale", f"`{symbol}` no longer appears in the code")


def _check_release(result: LineCheck, text: str, ground: Ground) -> None:
    newest, stable = ground.release_tags()
    if newest is None:
        return  # no tags to check against (none made, or none fetched)
    accepted = {t.name for t in (newest, stable) if t is not None}
    accepted |= {version_of(name) for name in accepted}
    named = [m.group(1) for m in _NAMED_VERSION.finditer(text)]
    named_tags = [
        t.name
        for t in ground.tags[:200]
        if re.search(rf"(?<![\w.]){re.escape(t.name)}(?![\w.])", text)
    ]
    if any(n in accepted for n in named) or any(t in accepted for t in named_tags):
        return
    want = newest.name + (f" (newest release {stable.name})" if stable and stable != newest else "")
    result.flag("stale", f"the latest release is {want}")


# --------------------------------------------------------------------------- a digest


def check_digest(
    categories: Mapping[str, list[str]], ground: Ground, plans_category: str | None = None
) -> list[LineCheck]:
    """Every fact line of a digest's categories (placeholders and cut markers aside)."""
    _place_cited(categories, ground)
    out = []
    for name, lines in categories.items():
        for line in lines:
            if not _is_fact(line):
                continue
            out.append(check_line(name, line, ground, plans=name == plans_category))
    return out


def _is_fact(line: str) -> bool:
    return line.startswith("- ") and not line.startswith(("- (none yet)", "- [… "))


def _place_cited(categories: Mapping[str, list[str]], ground: Ground) -> None:
    """Every commit the digest's lines cite, placed on or off HEAD's history at once."""
    shas = []
    for lines in categories.values():
        for line in lines:
            if _is_fact(line):
                for kind, ident in citations(line):
                    sha = ground.cited_note(ident) if kind == "c" else None
                    if sha is not None:
                        shas.append(sha)
    ground.look_up_branches(shas)


def screen(
    categories: dict[str, list[str]], ground: Ground, plans_category: str | None = None
) -> tuple[list[LineCheck], list[str]]:
    """What a fold does before it commits: stale and dangling lines leave, re-pointed ones are
    rewritten. Returns the checks of the lines kept (as kept) and one "category: line [why]"
    per line dropped."""
    kept_checks: list[LineCheck] = []
    dropped: list[str] = []
    _place_cited(categories, ground)
    for name in list(categories):
        kept = []
        for line in categories[name]:
            if not line.startswith("- ") or line.startswith(("- (none yet)", "- [… ")):
                kept.append(line)
                continue
            check = check_line(name, line, ground, plans=name == plans_category)
            if check.status in ("stale", "dangling"):
                dropped.append(f"{name}: {line} [{check.status}: {'; '.join(check.reasons)}]")
                continue
            if check.status == "repointed" and check.new_line:
                line = check.new_line
                check = LineCheck(name, line, "ok")
            kept.append(line)
            kept_checks.append(check)
        categories[name] = kept
    return kept_checks, dropped


def blob_id(data: bytes) -> str:
    """The git blob id of these bytes (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def results_json(digest_blob: str | None, checks: Iterable[LineCheck]) -> dict[str, object]:
    """The checks of one digest as verify.json records them (gitvault.memory.staleness reads
    them back)."""
    return {"digest_blob": digest_blob, "lines": [asdict(c) for c in checks]}
