"""One history, read once from git: the commits on HEAD (newest first, as `git log` lists
them) with their messages and the files they touched, the files at HEAD, the tags by date,
reverts by the SHA their message names, and patch-ids on demand. Every fact the judge uses
comes from here, that is from git, never from gitvault."""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path

from bench.real.sandbox import git, git_ok

REVERTS = re.compile(r"This reverts commit ([0-9a-fA-F]{7,40})")
_REVERT_SUBJECT = re.compile(r'^Revert "(.+)"(?:\s*\((?:#|!)\d+\))?\s*$')
_PR_SUFFIX = re.compile(r"\s*\((?:#|!)\d+\)\s*$")
_TRAILER = re.compile(r"^[A-Z][A-Za-z0-9-]*(?:-by|-[Ii][Dd]|-[Tt]o):\s", re.M)


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    authored: str  # ISO 8601 with the author's offset
    committed: str
    message: str
    files: tuple[str, ...]
    order: int  # position in `git log HEAD`: 0 is the newest

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0].strip()

    @property
    def body(self) -> str:
        parts = self.message.split("\n", 1)
        return parts[1].strip() if len(parts) > 1 else ""

    @property
    def prose(self) -> str:
        """The body without trailer lines (Signed-off-by, Change-Id, …)."""
        return "\n".join(ln for ln in self.body.splitlines() if not _TRAILER.match(ln)).strip()

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1

    @property
    def when(self) -> int:
        return int(datetime.fromisoformat(self.committed).timestamp())

    @property
    def authored_at(self) -> int:
        return int(datetime.fromisoformat(self.authored).timestamp())

    def days(self) -> set[str]:
        """The calendar days this commit can be said to be from: author or committer date, in
        the committer's own offset or in UTC."""
        out = set()
        for stamp in (self.authored, self.committed):
            moment = datetime.fromisoformat(stamp)
            out.add(moment.strftime("%Y-%m-%d"))
            out.add(moment.astimezone(UTC).strftime("%Y-%m-%d"))
        return out


@dataclass(frozen=True)
class Tag:
    name: str
    created: int  # creatordate: the tagger date of an annotated tag, else the commit's
    commit: str


@dataclass
class History:
    name: str
    path: Path
    env: Mapping[str, str]
    commits: list[Commit]
    head_files: frozenset[str]
    tags: list[Tag]  # newest first by creatordate
    roots: frozenset[str]
    _patch_ids: dict[str, str | None] = field(default_factory=dict)
    _ancestry: dict[tuple[str, str], bool] = field(default_factory=dict)
    _resolved: dict[str, str | None] = field(default_factory=dict)

    # ------------------------------------------------------------------ loading

    @classmethod
    def load(cls, name: str, path: Path, env: Mapping[str, str]) -> History:
        fmt = "%x01%H%x1f%P%x1f%aI%x1f%cI%x1f%B%x1e"
        raw = git(
            ["-c", "core.quotePath=false", "log", "HEAD", "--no-renames", "--name-only"]
            + [f"--format={fmt}", "--"],
            path,
            env,
        ).decode("utf-8", "replace")
        commits: list[Commit] = []
        for record in raw.split("\x01")[1:]:
            head, _, names = record.partition("\x1e")
            sha, parents, authored, committed, message = head.split("\x1f", 4)
            files = tuple(ln for ln in names.split("\n") if ln.strip())
            commits.append(
                Commit(
                    sha, tuple(parents.split()), authored, committed, message, files, len(commits)
                )
            )
        listing = git(["ls-tree", "-r", "-z", "--name-only", "HEAD"], path, env)
        head_files = frozenset(p for p in listing.decode("utf-8", "replace").split("\0") if p)
        fmt_tag = "%(refname:strip=2)%1f%(creatordate:unix)%1f%(objectname)%1f%(*objectname)"
        tags_out = git(
            ["for-each-ref", "--sort=-creatordate", f"--format={fmt_tag}", "refs/tags"], path, env
        ).decode("utf-8", "replace")
        tags = []
        for line in tags_out.splitlines():
            tag_name, created, obj, peeled = (line.split("\x1f") + ["", "", "", ""])[:4]
            if tag_name:
                tags.append(Tag(tag_name, int(created or 0), peeled or obj))
        roots = frozenset(c.sha for c in commits if not c.parents)
        return cls(name, path, env, commits, head_files, tags, roots)

    # ------------------------------------------------------------------ lookups

    @cached_property
    def by_sha(self) -> dict[str, Commit]:
        return {c.sha: c for c in self.commits}

    @cached_property
    def _sorted(self) -> list[str]:
        return sorted(self.by_sha)

    def resolve(self, ident: str) -> str | None:
        """The full SHA of a commit named by a (possibly short) hex id: unique among HEAD's
        history, else any commit object in the repository; None when none or ambiguous."""
        ident = ident.lower()
        if ident in self._resolved:
            return self._resolved[ident]
        found: str | None = None
        if re.fullmatch(r"[0-9a-f]{4,40}", ident):
            i = bisect.bisect_left(self._sorted, ident)
            hits: list[str] = []
            while i < len(self._sorted) and self._sorted[i].startswith(ident) and len(hits) < 2:
                hits.append(self._sorted[i])
                i += 1
            if len(hits) == 1:
                found = hits[0]
            elif not hits:
                out = git(
                    ["rev-parse", "--verify", "-q", "--end-of-options", f"{ident}^{{commit}}"],
                    self.path,
                    self.env,
                    check=False,
                )
                found = out.decode().strip() or None
        self._resolved[ident] = found
        return found

    @cached_property
    def non_merges(self) -> list[Commit]:
        return [c for c in self.commits if not c.is_merge]

    @cached_property
    def head_dirs(self) -> frozenset[str]:
        return _dirs(self.head_files)

    @cached_property
    def ever_files(self) -> frozenset[str]:
        return frozenset(f for c in self.commits for f in c.files) | self.head_files

    @cached_property
    def ever_dirs(self) -> frozenset[str]:
        return _dirs(self.ever_files)

    @cached_property
    def head_basenames(self) -> frozenset[str]:
        return frozenset(p.rsplit("/", 1)[-1] for p in self.head_files)

    @cached_property
    def ever_basenames(self) -> frozenset[str]:
        return frozenset(p.rsplit("/", 1)[-1] for p in self.ever_files)

    @cached_property
    def extensions(self) -> frozenset[str]:
        """File extensions seen in the history (lower case, letters required)."""
        out = set()
        for path in self.ever_files:
            base = path.rsplit("/", 1)[-1]
            if "." in base.strip("."):
                ext = base.rsplit(".", 1)[-1].lower()
                if re.fullmatch(r"[a-z][a-z0-9+_-]{0,9}", ext):
                    out.add(ext)
        return frozenset(out)

    # ------------------------------------------------------------------ reverts

    @cached_property
    def reverts(self) -> dict[str, list[str]]:
        """Revert commit → the commits it reverts: the SHAs its message names ("This reverts
        commit <sha>", full SHA when the history has it, else as written), or, when it names
        none, the newest older commit whose subject its `Revert "<subject>"` quotes (a pull
        request's "(#123)" suffix ignored)."""
        by_subject: dict[str, list[Commit]] = defaultdict(list)
        for c in self.commits:
            by_subject[_PR_SUFFIX.sub("", c.subject)].append(c)  # newest first
        out: dict[str, list[str]] = {}
        for c in self.commits:
            named = REVERTS.findall(c.message)
            if named:
                out[c.sha] = list(dict.fromkeys(self.resolve(n) or n.lower() for n in named))
                continue
            quoted = _REVERT_SUBJECT.match(c.subject)
            if quoted:
                want = _PR_SUFFIX.sub("", quoted.group(1))
                older = [o for o in by_subject.get(want, []) if o.order > c.order]
                out[c.sha] = [older[0].sha] if older else []
        return out

    @cached_property
    def reverted_by(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for revert, targets in self.reverts.items():
            for target in targets:
                out[target].append(revert)
        return dict(out)

    # ------------------------------------------------------------------ patch-ids, ancestry

    def patch_id(self, sha: str) -> str | None:
        if sha not in self._patch_ids:
            diff = git(
                ["show", "--format=", "--no-color", "--no-ext-diff", sha], self.path, self.env
            )
            out = git(["patch-id", "--stable"], self.path, self.env, input=diff)
            parts = out.decode().split()
            self._patch_ids[sha] = parts[0] if parts else None
        return self._patch_ids[sha]

    def relanded(self, original: str, after: Commit) -> list[Commit]:
        """Commits newer than `after` (a revert) that carry the same change as `original`: the
        same patch-id. Only commits touching exactly the same files can share a patch-id, so
        only those are diffed."""
        first = self.by_sha.get(original)
        if first is None or not first.files:
            return []
        files = sorted(first.files)
        want = self.patch_id(original)
        if want is None:
            return []
        out = []
        for c in self.commits[: after.order]:
            if c.is_merge or c.sha == original or sorted(c.files) != files:
                continue
            if c.sha in self.reverts:
                continue  # a revert of the revert brings the change back too, but is no re-land
            if self.patch_id(c.sha) == want:
                out.append(c)
        return out

    def is_ancestor(self, older: str, newer: str) -> bool:
        key = (older, newer)
        if key not in self._ancestry:
            args = ["merge-base", "--is-ancestor", older, newer]
            self._ancestry[key] = git_ok(args, self.path, self.env)
        return self._ancestry[key]

    def merged(self, merge: str, commit: str) -> bool:
        """Whether `merge` is a merge commit that brought `commit` in: reachable from the
        merge, not from its first parent."""
        m = self.by_sha.get(merge)
        if m is None or not m.is_merge or commit == merge:
            return False
        return self.is_ancestor(commit, merge) and not self.is_ancestor(commit, m.parents[0])

    def count_since(self, commit: str) -> tuple[int, int]:
        """Commits on HEAD after `commit` (`rev-list commit..HEAD`): without merges, and all."""
        out = []
        for extra in (["--no-merges"], []):
            args = ["rev-list", "--count", *extra, f"{commit}..HEAD", "--"]
            out.append(int(git(args, self.path, self.env).decode().strip() or 0))
        return out[0], out[1]

    # ------------------------------------------------------------------ windows

    def last_non_merges(self, n: int) -> list[Commit]:
        return self.non_merges[:n]

    def by_day_range(self, first: str, last: str) -> list[Commit]:
        """Non-merge commits from a calendar day span (either of a commit's days counts)."""
        return [c for c in self.non_merges if any(first <= d <= last for d in c.days())]


def _dirs(files: Iterable[str]) -> frozenset[str]:
    out = set()
    for path in files:
        parts = path.split("/")
        for i in range(1, len(parts)):
            out.add("/".join(parts[:i]))
    return frozenset(out)
