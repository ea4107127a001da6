"""The fold-quality harness: fixed scenarios with known facts, folded by a merger, scored.

    python bench/fold_quality.py                     the builtin merger on every scenario
    python bench/fold_quality.py --merger claude     a model merger too (needs a login)
    python bench/fold_quality.py --show              print each digest
    python bench/run.py --only fold-quality          the same rows in the bench report

Scenarios are real git repositories with gitvault installed: a long noisy history written with
git fast-import (pull-request merges repeating their branch's commits, reverts, a fix-after-fix
hot spot, a changelog convention, tests next to the code they test, an amended commit, a
feature branch in a second worktree) and saved sessions whose facts are known: a decision later
reversed, a next step later done, a gotcha stated twice in other words, an open task in a
parallel worktree. The scorer checks facts that must be kept, facts that must be gone, that
every citation resolves, the caps, duplicates, and that an incremental fold equals a rebuild.

There is no internet here, so no real open-source history: the long scenario imitates one
(3,000 commits over five years, shaped like a mid-size Python library).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

DAY = 86_400
START = 1_560_000_000  # 2019-06
PKG = "src/clack"
MODULES = ["core", "parser", "types", "termui", "utils", "shell", "testing", "formatting"]


@dataclass
class Scenario:
    name: str
    repo: Path
    # (label, regex[, category]): must match / must not match (in that category only)
    keep: list[tuple[str, ...]] = field(default_factory=list)
    gone: list[tuple[str, ...]] = field(default_factory=list)


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, input=input, capture_output=True, check=True)
    return proc.stdout.decode()


def gv(repo: Path, *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "gitvault.cli", *args],
        cwd=repo,
        input=stdin.encode() if stdin is not None else None,
        capture_output=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"gitvault {' '.join(args)}: {proc.stderr.decode()[-800:]}")
    return proc.stdout.decode()


def session(
    title: str, summary: str, decisions: list[str], steps: list[str], **more: list[str]
) -> str:
    parts = [f"# {title}", "", "## Summary", summary, "", "## Key Decisions"]
    parts += [f"- {d}" for d in decisions] or ["- none"]
    parts += ["", "## Next Steps"] + ([f"- {s}" for s in steps] or ["- none"])
    for name, bullets in more.items():
        parts += ["", f"## {name.replace('_', ' ').title()}"] + [f"- {b}" for b in bullets]
    return "\n".join(parts) + "\n"


# --------------------------------------------------------------------------- history


def _history(commits: int, seed: int = 11) -> bytes:
    """A fast-import stream: a library's history on main with PR branches merged back."""
    rng = random.Random(seed)
    out: list[bytes] = []
    mark = 0
    t = START
    files: dict[str, int] = {}

    def commit(
        ref: str,
        subject: str,
        body: str,
        changes: list[str],
        parents: list[str],
        *,
        brought: Sequence[str] = (),
    ) -> str:
        """A commit changing `changes`; a merge lists what its branch `brought` as it is there
        (fast-import builds a commit's tree from its first parent only)."""
        nonlocal mark, t
        mark += 1
        t += rng.randint(600, int(5 * 365 * DAY / max(commits, 1)))
        msg = f"{subject}\n\n{body}\n".encode() if body else f"{subject}\n".encode()
        chunk = (
            (
                f"commit {ref}\nmark :{mark}\n"
                f"author Dev {mark % 7} <dev{mark % 7}@example.com> {t} +0000\n"
                f"committer Dev {mark % 7} <dev{mark % 7}@example.com> {t} +0000\n"
            ).encode()
            + f"data {len(msg)}\n".encode()
            + msg
        )
        if parents:
            chunk += f"from {parents[0]}\n".encode()
            for p in parents[1:]:
                chunk += f"merge {p}\n".encode()
        for path in [*changes, *brought]:
            if path in changes:
                files[path] = files.get(path, 0) + 1
            content = f"{path} v{files[path]}\n".encode()
            chunk += f"M 100644 inline {path}\ndata {len(content)}\n".encode() + content
        out.append(chunk + b"\n")
        return f":{mark}"

    head = commit("refs/heads/main", "Initial import", "", ["README.rst", f"{PKG}/__init__.py"], [])
    pr = 100
    verbs = ["Add", "Fix", "Improve", "Update", "Refactor", "Document", "Support", "Remove"]
    reverted_subject = ""
    made = 1
    next_release = 400
    while made < commits:
        pr += 1
        mod = rng.choice(MODULES)
        kind = rng.random()
        branch = f"refs/heads/pr-{pr}"
        n = 1 if kind < 0.6 else rng.randint(2, 3)
        tip = head
        subjects = []
        touched: list[str] = []  # what the pull request changed, in order
        for k in range(n):
            verb = rng.choice(verbs)
            if mod == "parser" and rng.random() < 0.5:
                verb = "Fix"
            subject = f"{verb} {mod} handling of case {pr}.{k} (#{pr})"
            changes = [f"{PKG}/{mod}.py"]
            if rng.random() < 0.7:
                changes.append(f"tests/test_{mod}.py")
            if verb in ("Add", "Fix", "Support", "Remove") and rng.random() < 0.8:
                changes.append("CHANGES.rst")
            if verb == "Document":
                changes = [f"docs/{mod}.rst"]
            if mod == "shell":
                changes.append(f"{PKG}/_compat.py")  # always together
            tip = commit(branch, subject, f"Closes #{pr}." if k == 0 else "", changes, [tip])
            touched += [c for c in changes if c not in touched]
            subjects.append(subject)
            made += 1
        if n > 1 or rng.random() < 0.5:
            head = commit(
                "refs/heads/main",
                f"Merge pull request #{pr} from dev/pr-{pr}",
                subjects[-1],
                [],
                [head, tip],
                brought=touched,
            )
            made += 1
        else:  # squashed onto main: the pull request's whole change in one commit
            head = commit("refs/heads/main", subjects[0], "", touched, [head])
        if made >= next_release:
            next_release += 400
            version = f"8.{made // 400}.0"
            head = commit(
                "refs/heads/main",
                f"Release version {version}",
                "",
                ["CHANGES.rst", f"{PKG}/__init__.py"],
                [head],
            )
            tag = f"Release {version}\n".encode()
            out.append(
                f"tag {version}\nfrom {head}\ntagger Dev 0 <dev0@example.com> {t} +0000\n".encode()
                + f"data {len(tag)}\n".encode()
                + tag
                + b"\n"
            )
            made += 1
        if made >= 0.8 * commits and not reverted_subject:
            reverted_subject = f"Add lazy plugin loading to core (#{pr + 1})"
            pr += 1
            orig = commit("refs/heads/main", reverted_subject, "", [f"{PKG}/core.py"], [head])
            head = commit(
                "refs/heads/main",
                f'Revert "{reverted_subject}"',
                "Plugins imported at startup broke Windows paths.",
                [f"{PKG}/core.py"],
                [orig],
            )
            made += 2
    out.append(b"reset refs/heads/main\nfrom " + head.encode() + b"\n\n")
    return b"".join(out)


@contextmanager
def isolated() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="gitvault-foldq-"))
    saved = {k: os.environ.get(k) for k in ("HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")}
    try:
        (root / "home").mkdir()
        cfg = root / "gitconfig"
        cfg.write_text(
            "[user]\n\tname = Bench\n\temail = bench@example.com\n"
            "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"
        )
        os.environ.update(
            HOME=str(root / "home"), GIT_CONFIG_GLOBAL=str(cfg), GIT_CONFIG_NOSYSTEM="1"
        )
        yield root
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(root, ignore_errors=True)


def _commit(repo: Path, path: str, subject: str) -> str:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a") as fh:
        fh.write(f"{subject}\n")
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", subject)
    return git(repo, "rev-parse", "HEAD").strip()


def long_history(root: Path, commits: int) -> Scenario:
    """A library's long history, then a week of work in two worktrees with three sessions."""
    repo = root / "long"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "fast-import", "--quiet", input=_history(commits))
    git(repo, "reset", "-q", "--hard", "main")
    for ref in git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/pr-*").split():
        git(repo, "update-ref", "-d", ref)  # merged PR branches are deleted, as on GitHub
    gv(repo, "install", "--no-claude")
    gv(repo, "backfill", "--all")
    gv(
        repo,
        "save",
        "--title",
        "Cache design",
        stdin=session(
            "Cache design",
            "Added a result cache to the parser.",
            ["Cache parse results in an LRU dict — parsing dominates startup"],
            ["Measure the cache hit rate on the docs build"],
            gotchas=["The parser mutates its token list; copy it before caching"],
        ),
    )
    # a week of real commits (hooks on): main and a feature worktree
    _commit(repo, f"{PKG}/parser.py", "Fix parser crash on empty option names (#3301)")
    wt = root / "long-completion"
    git(repo, "worktree", "add", "-q", "-b", "shell-completion", str(wt))
    _commit(wt, f"{PKG}/shell.py", "Add fish completion for nested groups")
    _commit(wt, f"{PKG}/shell.py", "Complete file paths for nargs=-1")
    gv(
        wt,
        "save",
        "--title",
        "Fish completion",
        stdin=session(
            "Fish completion",
            "Fish completion for nested groups works; paths still complete wrongly.",
            ["Generate fish completion from the same tree as bash — one walker"],
            ["Escape spaces in completed paths for fish"],
        ),
    )
    _commit(repo, f"{PKG}/core.py", "Measure the cache hit rate on the docs build")
    _commit(repo, f"{PKG}/core.py", "Typo in comment")
    git(repo, "commit", "-q", "--amend", "-m", "Fix typo in core comment")
    gv(
        repo,
        "save",
        "--title",
        "Cache rework",
        stdin=session(
            "Cache rework",
            "The LRU cache leaked memory on long-running apps; replaced it.",
            ["Cache parse results per context instead of an LRU dict — the LRU dict leaked memory"],
            ["Document the per-context cache in docs/parser.rst"],
            gotchas=["Copy the parser's token list before you cache it: the parser mutates it"],
        ),
    )
    gv(repo, "status")  # drains the spool
    return Scenario(
        "long-history",
        repo,
        keep=[
            ("decision: per-context cache (the reversal)", r"per context instead of an LRU"),
            ("decision: fish from the bash tree", r"fish completion from the same tree"),
            ("open step of the parallel worktree", r"Escape spaces in completed paths"),
            ("open step on main", r"Document the per-context cache"),
            ("gotcha from the sessions", r"token list"),
            ("convention: changelog with code", r"come with a changelog entry in CHANGES\.rst"),
            ("convention: where tests live", r"Tests live in tests/"),
            ("convention: module → test file", r"test_\w+\.py \(\d+ commits change both"),
            (
                "convention: files that change together",
                r"(?:shell|_compat)\.py and .*(?:shell|_compat)\.py change together",
            ),
            (
                "convention: subject style",
                r"end with the pull-request number|capitalised imperative",
            ),
            ("gotcha: the revert", r"Reverted on .*lazy plugin loading"),
            ("gotcha: fix hot spot", r"parser\.py needed \d+ fixes"),
            ("state: the feature branch", r"shell-completion"),
            ("state: latest release", r"Latest release: 8\.\d+\.0"),
        ],
        gone=[
            ("superseded decision (LRU dict)", r"Cache parse results in an LRU dict"),
            (
                "gotcha restated in other words, once",
                r"token list[^\n]*\n[^\n]*token list",
                "Gotchas",
            ),
            ("done next step", r"Measure the cache hit rate", "Next steps"),
            ("merge commit subjects", r"Merge pull request"),
            ("amended-away commit", r"Typo in comment"),
            ("raw conventional subjects", r"^- (?:feat|fix|docs)(?:\(|:)"),
        ],
    )


def sessions_only(root: Path) -> Scenario:
    """Five sessions over two worktrees: reversals, done steps, restated gotchas, order."""
    repo = root / "sessions"
    repo.mkdir()
    git(repo, "init", "-q")
    _commit(repo, "app.py", "Initial commit")
    gv(repo, "install", "--no-claude")
    gv(
        repo,
        "save",
        "--title",
        "Storage",
        stdin=session(
            "Storage",
            "Chose storage.",
            ["Store settings in SQLite — one file, transactions", "Use tabs in every source file"],
            ["Write the migration script", "Add an index on settings.key"],
            gotchas=["SQLite locks the whole file during a write"],
        ),
    )
    wt = root / "sessions-ui"
    git(repo, "worktree", "add", "-q", "-b", "ui", str(wt))
    gv(
        wt,
        "save",
        "--title",
        "UI shell",
        stdin=session(
            "UI shell",
            "Started the UI.",
            ["Render with plain HTML templates — no build step"],
            ["Wire the settings page to the API"],
        ),
    )
    _commit(repo, "migrate.py", "Write the migration script for settings")
    gv(
        repo,
        "save",
        "--title",
        "Storage rework",
        stdin=session(
            "Storage rework",
            "Moved off SQLite.",
            ["Store settings in Postgres instead of SQLite — concurrent writers"],
            ["Add an index on settings.key", "Load-test the settings API"],
            gotchas=["A write to SQLite locks the entire database file"],
        ),
    )
    return Scenario(
        "sessions",
        repo,
        keep=[
            ("reversed decision, new side", r"Postgres instead of SQLite"),
            ("older decision not superseded", r"Use tabs in every source file"),
            ("parallel worktree decision", r"plain HTML templates"),
            ("parallel worktree open step", r"Wire the settings page"),
            ("open step kept", r"Add an index on settings\.key"),
            ("new step", r"Load-test the settings API"),
            ("gotcha once", r"locks the (?:whole|entire)"),
        ],
        gone=[
            ("reversed decision, old side", r"Store settings in SQLite"),
            ("done next step", r"Write the migration script", "Next steps"),
            ("gotcha restated in other words, once", r"lock[^\n]*\n[^\n]*lock", "Gotchas"),
        ],
    )


# --------------------------------------------------------------------------- scoring


def score(scenario: Scenario, merger: str) -> dict[str, object]:
    from gitvault.fold.builtin import tokens
    from gitvault.fold.digest import citations, is_marker, parse
    from gitvault.fold.run import Mined, load_config
    from gitvault.resolve import resolve
    from gitvault.vault import layout
    from gitvault.vault.store import Vault

    repo = scenario.repo
    started = time.perf_counter()
    gv(repo, "fold", "--merger", merger, "--rebuild")
    seconds = time.perf_counter() - started
    vault = Vault(resolve(repo))
    config = load_config(vault)
    text = vault.read_text(layout.DIGEST) or ""
    digest = parse(text, config, strict=False)
    lines = [ln for ls in digest.categories.values() for ln in ls if not is_marker(ln)]
    body = "\n".join(lines)

    def where(spec: tuple[str, ...]) -> str:
        if len(spec) < 3:
            return body
        return "\n".join(digest.categories.get(spec[2], []))

    kept = [(spec[0], bool(re.search(spec[1], where(spec), re.M))) for spec in scenario.keep]
    gone = [(spec[0], not re.search(spec[1], where(spec), re.M)) for spec in scenario.gone]
    with Mined(vault.loc, vault, config) as index:  # which citations exist, as the fold asks
        bad_cites = [
            ln
            for ln in lines
            if not citations(ln) or not all(index.exists(k, v) for k, v in citations(ln))
        ]
    words = [tokens(re.sub(r"\([cs]:[^)]*\)\s*$", "", ln)) for ln in lines]
    # a duplicate: two lines saying the same (most words shared; templated lines about
    # different files or branches differ in those words)
    dupes = sum(
        1
        for i, a in enumerate(words)
        for b in words[i + 1 :]
        if a and b and len(a & b) / len(a | b) >= 0.7
    )
    over = len(digest.body()) > config.digest_max_chars
    markers = sum(1 for ls in digest.categories.values() for ln in ls if is_marker(ln))
    checks = [ok for _, ok in kept + gone] + [not bad_cites, not dupes, not over]
    return {
        "scenario": scenario.name,
        "merger": merger,
        "score": sum(checks) / len(checks),
        "passed": sum(checks),
        "checks": len(checks),
        "kept": kept,
        "gone": gone,
        "bad_citations": bad_cites,
        "duplicates": dupes,
        "chars": len(digest.body()),
        "cut_markers": markers,
        "lines": len(lines),
        "seconds": seconds,
        "digest": digest.body(),
    }


def incremental_equals_rebuild(root: Path) -> bool:
    """Three builtin folds of 30, 3 and 2 `docs:` commits equal one rebuild (issue 10)."""
    repo = root / "incremental"
    repo.mkdir()
    git(repo, "init", "-q")
    _commit(repo, "README.md", "Initial commit")
    gv(repo, "install", "--no-claude")
    for count in (30, 3, 2):
        for i in range(count):
            _commit(repo, f"docs/page{i % 5}.md", f"docs: page update {count}-{i}")
        gv(repo, "fold", "--merger", "builtin")
    incremental = _body(repo)
    gv(repo, "fold", "--merger", "builtin", "--rebuild")
    return incremental == _body(repo)


def _body(repo: Path) -> str:
    from gitvault.resolve import resolve
    from gitvault.vault import frontmatter, layout
    from gitvault.vault.store import Vault

    return frontmatter.parse(Vault(resolve(repo)).read_text(layout.DIGEST) or "")[1]


def claude_login_reason() -> str | None:
    """Why a real claude merger cannot be scored here, or None when it can."""
    if shutil.which("claude") is None:
        return "the `claude` CLI is not on PATH"
    probe = subprocess.run(
        ["claude", "-p", "--output-format", "text", "--tools", ""],
        input=b"Answer with the word ok.",
        capture_output=True,
        timeout=60,
    )
    said = (probe.stdout + probe.stderr).decode("utf-8", "replace")
    if probe.returncode != 0:
        return f"`claude -p` failed: {said.strip()[:120]}"
    return None


def run(
    commits: int, mergers: list[str], show: bool, say: Callable[[str], None] = print
) -> list[dict[str, object]]:
    results: list[dict[str, object]] = []
    with isolated() as root:
        built = time.perf_counter()
        scenarios = [sessions_only(root), long_history(root, commits)]
        say(f"scenarios built in {time.perf_counter() - built:.1f}s")
        for merger in mergers:
            if merger == "claude":
                reason = claude_login_reason()
                if reason:
                    say(f"skipped the claude merger: {reason}")
                    continue
            for scenario in scenarios:
                found = score(scenario, merger)
                results.append(found)
                if show:
                    say(f"--- {scenario.name} / {merger}\n{found['digest']}")
        same = incremental_equals_rebuild(root)
        results.append(
            {
                "scenario": "incremental == rebuild (30+3+2 docs)",
                "merger": "builtin",
                "score": 1.0 if same else 0.0,
            }
        )
        if show:
            long = scenarios[1].repo
            say(
                "--- git log --oneline --no-merges -40\n"
                + git(long, "log", "--oneline", "--no-merges", "-40")
            )
    return results


def report(results: list[dict[str, object]]) -> str:
    out = []
    for r in results:
        line = f"{r['scenario']:<40} {r['merger']:<8} score {float(r['score']):.2f}"  # type: ignore[arg-type]
        if "kept" in r:
            missing = [label for label, ok in r["kept"] if not ok]  # type: ignore[attr-defined]
            present = [label for label, ok in r["gone"] if not ok]  # type: ignore[attr-defined]
            line += (
                f"  lines {r['lines']}, {r['chars']} chars, {r['cut_markers']} cut markers, "
                f"{len(r['bad_citations'])} bad citations, {r['duplicates']} duplicates, "  # type: ignore[arg-type]
                f"{float(r['seconds']):.1f}s"  # type: ignore[arg-type]
            )
            if missing:
                line += f"\n    missing: {'; '.join(missing)}"
            if present:
                line += f"\n    should be gone: {'; '.join(present)}"
        out.append(line)
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--merger", action="append", default=None, help="builtin (default), claude, command"
    )
    parser.add_argument("--commits", type=int, default=3000)
    parser.add_argument("--show", action="store_true", help="print each digest")
    args = parser.parse_args()
    results = run(args.commits, args.merger or ["builtin"], args.show)
    print(report(results))
    return 0 if all(float(r["score"]) == 1.0 for r in results) else 1  # type: ignore[arg-type]


if __name__ == "__main__":
    sys.exit(main())
