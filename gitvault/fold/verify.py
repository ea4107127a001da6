"""`gitvault verify`: the digest checked against the code, before an agent acts on it.

For every digest line:
- dangling: a citation names nothing in the vault (no note, no session);
- repointed: a cited commit is no longer on any branch but was rewritten (a note `replaces` it)
  or squash-merged / cherry-picked (same patch-id, or its subject quoted in a commit on a
  branch): the line now cites the commit that carries the change;
- stale: a cited commit was later reverted (a commit on a branch says "This reverts commit
  <sha>"), or the line names a file path or a `symbol` that no longer exists at HEAD.

`--fix` removes stale and dangling lines and re-points the others in one vault commit; the next
fold re-evaluates them. The results are also recorded (verify.json, gitvault.vault.statedir),
keyed by the digest blob, so recall can mark stale lines without computing anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gitvault.fold.digest import citations
from gitvault.resolve import Location
from gitvault.vault import frontmatter, gitcmd, layout, statedir
from gitvault.vault.store import Vault

SEARCH_COMMITS = 5000  # how far back on the branches a replacement or a revert is looked for
# A path with a folder in it (src/app/main.py): a bare name ("vault.toml") may well be about
# something outside the code, so only a `backticked` bare file name is checked.
_PATH = re.compile(r"(?<![\w./:-])((?:[\w.-]+/)+[\w.-]+\.\w{1,8})(?![\w/])")
_FILE_NAME = re.compile(r"[\w.-]+\.\w{1,8}")
_SYMBOL = re.compile(r"`([A-Za-z_][\w.]{2,80})(?:\(\))?`")
_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,40})")


@dataclass
class LineCheck:
    category: str
    line: str
    status: str  # ok | stale | dangling | repointed
    reasons: list[str] = field(default_factory=list)
    new_line: str | None = None


@dataclass
class Report:
    digest_blob: str | None
    lines: list[LineCheck] = field(default_factory=list)

    @property
    def problems(self) -> list[LineCheck]:
        return [c for c in self.lines if c.status != "ok"]

    @property
    def failing(self) -> bool:
        return any(c.status in ("stale", "dangling") for c in self.lines)

    def as_json(self) -> dict[str, object]:
        return {"digest_blob": self.digest_blob, "lines": [asdict(c) for c in self.lines]}


class _Project:
    """What the code looks like now: branch commits, HEAD's files, reverts, rewrites."""

    def __init__(self, vault: Vault, cwd: Path) -> None:
        self.vault = vault
        self.cwd = cwd
        self._branch_shas: set[str] | None = None
        self._files: set[str] | None = None
        self._reverted: set[str] | None = None
        self._log: list[tuple[str, str]] | None = None
        self._replaced_by: dict[str, str] | None = None
        self._patch_ids: dict[str, str] | None = None

    def log(self) -> list[tuple[str, str]]:
        """(sha, full message) of recent commits on every local branch but the vault."""
        if self._log is None:
            args = ["log", f"-n{SEARCH_COMMITS}", "--format=%H%x00%B%x01"]
            args += [f"--exclude={self.vault.branch}", "--branches", "--"]
            out = gitcmd.run_git(args, self.cwd, check=False).stdout.decode("utf-8", "replace")
            self._log = []
            for record in out.split("\x01"):
                sha, _, message = record.strip("\n").partition("\x00")
                if len(sha) == 40:
                    self._log.append((sha, message))
        return self._log

    def on_a_branch(self, sha: str) -> bool:
        if self._branch_shas is None:
            self._branch_shas = {s for s, _ in self.log()}
        if sha in self._branch_shas:
            return True
        args = ["branch", "--format=%(refname:short)", "--contains", sha]
        proc = gitcmd.run_git(args, self.cwd, check=False)
        names = [n for n in proc.stdout.decode().split() if n != self.vault.branch]
        return proc.returncode == 0 and bool(names)

    def files(self) -> set[str]:
        if self._files is None:
            args = ["ls-tree", "-r", "--name-only", "-z", "HEAD"]
            proc = gitcmd.run_git(args, self.cwd, check=False)
            self._files = set(proc.stdout.decode("utf-8", "replace").split("\0")) - {""}
        return self._files

    def reverted(self) -> set[str]:
        if self._reverted is None:
            self._reverted = {m for _, msg in self.log() for m in _REVERTS.findall(msg)}
        return self._reverted

    def is_reverted(self, sha: str) -> bool:
        return any(sha.startswith(r) or r.startswith(sha) for r in self.reverted())

    def symbol_exists(self, symbol: str) -> bool:
        name = symbol.rsplit(".", 1)[-1]
        proc = gitcmd.run_git(["grep", "-q", "-w", "-F", name, "HEAD", "--"], self.cwd, check=False)
        return proc.returncode == 0

    def replaced_by(self, sha: str) -> str | None:
        """The commit that now carries a rewritten commit's change: its rewrite record (a note
        whose `replaces` names it), else the same patch-id on a branch, else a branch commit
        whose message quotes its subject (a squash merge)."""
        if self._replaced_by is None:
            self._replaced_by = {}
            for path in self._note_paths():
                text = self.vault.read_text(path) or ""
                meta, _ = frontmatter.parse(text)
                for old in meta.get("replaces") or []:
                    if isinstance(old, str) and isinstance(meta.get("sha"), str):
                        self._replaced_by[old] = str(meta["sha"])
        if sha in self._replaced_by:
            return self._replaced_by[sha]
        patch = self._patch_id(sha)
        if patch:
            for candidate, candidate_patch in self._branch_patch_ids().items():
                if candidate_patch == patch and candidate != sha:
                    return candidate
        subject = self._subject(sha)
        if subject and len(subject) >= 12:
            for candidate, message in self.log():
                if candidate != sha and subject in message:
                    return candidate
        return None

    def _note_paths(self) -> list[str]:
        tip = self.vault.tip()
        if tip is None:
            return []
        entries = gitcmd.ls_tree(self.cwd, tip, [layout.NOTES + "/"], recursive=True)
        return [e.path for e in entries if layout.note_sha(e.path)]

    def _subject(self, sha: str) -> str | None:
        proc = gitcmd.run_git(["log", "-1", "--format=%s", sha, "--"], self.cwd, check=False)
        return (
            proc.stdout.decode("utf-8", "replace").strip() or None if proc.returncode == 0 else None
        )

    def _patch_id(self, sha: str) -> str | None:
        show = gitcmd.run_git(["show", "--format=", sha], self.cwd, check=False)
        if show.returncode != 0 or not show.stdout:
            return None
        out = gitcmd.run_git(["patch-id", "--stable"], self.cwd, input=show.stdout, check=False)
        parts = out.stdout.decode().split()
        return parts[0] if parts else None

    def _branch_patch_ids(self) -> dict[str, str]:
        if self._patch_ids is None:
            shas = [s for s, _ in self.log()[:1000]]
            args = ["log", "-p", "--format=commit %H", "--no-walk=unsorted", "--stdin"]
            log = gitcmd.run_git(args, self.cwd, input="\n".join(shas).encode(), check=False)
            out = gitcmd.run_git(["patch-id", "--stable"], self.cwd, input=log.stdout, check=False)
            self._patch_ids = {}
            for line in out.stdout.decode().splitlines():
                parts = line.split()
                if len(parts) == 2:
                    self._patch_ids[parts[1]] = parts[0]
        return self._patch_ids


def _note_sha(vault: Vault, short: str, notes: dict[str, str]) -> str | None:
    matches = [sha for sha in notes if sha.startswith(short.lower())]
    return matches[0] if len(matches) == 1 else None


def check(loc: Location) -> Report:
    vault = Vault(loc)
    tip = vault.check_format()
    cwd = loc.workdir or loc.common_dir
    entry = {e.path: e for e in gitcmd.ls_tree(cwd, tip, [layout.DIGEST])}.get(layout.DIGEST)
    report = Report(entry.oid if entry else None)
    text = vault.read_text(layout.DIGEST, tip)
    if text is None:
        return report
    project = _Project(vault, cwd)
    notes = {sha: "" for sha in (layout.note_sha(p) for p in project._note_paths()) if sha}
    category = ""
    _, body = frontmatter.parse(text)
    for line in body.split("\n"):
        if line.startswith("## "):
            category = line[3:].strip()
            continue
        if not line.startswith("- ") or line.startswith(("- (none yet)", "- [… ")):
            continue
        report.lines.append(_check_line(vault, project, notes, category, line))
    return report


def _check_line(
    vault: Vault, project: _Project, notes: dict[str, str], category: str, line: str
) -> LineCheck:
    result = LineCheck(category, line, "ok")
    new_line = line
    for kind, ident in citations(line):
        if kind == "s":
            if not (layout.is_slug(ident) and vault.exists(layout.session_path(ident))):
                result.status = "dangling"
                result.reasons.append(f"s:{ident} is not in the vault")
            continue
        sha = _note_sha(vault, ident, notes)
        if sha is None:
            result.status = "dangling"
            result.reasons.append(f"c:{ident} is not in the vault")
            continue
        if project.is_reverted(sha):
            result.status = "stale"
            result.reasons.append(f"c:{ident} was reverted")
            continue
        if not project.on_a_branch(sha):
            replacement = project.replaced_by(sha)
            if replacement is None:
                result.status = "stale"
                result.reasons.append(f"c:{ident} is on no branch and nothing carries it")
                continue
            new_line = new_line.replace(f"c:{ident}", f"c:{replacement[: len(ident)]}")
            result.reasons.append(f"c:{ident} now lives in {replacement[:7]}")
            if result.status == "ok":
                result.status = "repointed"
    text = re.sub(r"\s*\([cs]:[^)]*\)\s*$", "", line[2:])
    files = project.files()
    for path in _PATH.findall(text):
        if path not in files and not any(f.endswith("/" + path) for f in files):
            result.status = "stale"
            result.reasons.append(f"{path} no longer exists")
    for symbol in _SYMBOL.findall(text):
        if "/" in symbol:
            continue
        if _FILE_NAME.fullmatch(symbol) and symbol.rsplit(".", 1)[-1].isalpha():
            if symbol not in files and not any(f.endswith("/" + symbol) for f in files):
                result.status = "stale"
                result.reasons.append(f"{symbol} no longer exists")
            continue
        if not project.symbol_exists(symbol):
            result.status = "stale"
            result.reasons.append(f"`{symbol}` no longer appears in the code")
    if result.status == "repointed":
        result.new_line = new_line
    return result


def run(loc: Location, *, fix: bool = False) -> Report:
    """Check the digest, record the results for recall, and with fix rewrite it in one commit."""
    report = check(loc)
    save_results(loc, report)
    if fix and report.problems:
        _fix(loc, report)
        report = check(loc)
        save_results(loc, report)
    return report


def _fix(loc: Location, report: Report) -> None:
    vault = Vault(loc)
    text = vault.read_text(layout.DIGEST) or ""
    meta, body = frontmatter.parse(text)
    changed = {c.line: c for c in report.problems}
    out: list[str] = []
    removed = repointed = 0
    for line in body.split("\n"):
        found = changed.get(line)
        if found is None:
            out.append(line)
        elif found.status == "repointed" and found.new_line:
            out.append(found.new_line)
            repointed += 1
        else:
            removed += 1
    new_text = frontmatter.render(meta, "\n".join(out))
    message = f"verify: removed {removed} stale line(s), re-pointed {repointed}"
    vault.commit({layout.DIGEST: new_text.encode()}, message)


def save_results(loc: Location, report: Report) -> None:
    statedir.save_verify(loc, report.as_json())


def summary(report: Report) -> Iterable[str]:
    for c in report.problems:
        yield f"{c.status}: [{c.category}] {c.line}  — {'; '.join(c.reasons)}"
