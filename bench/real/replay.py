"""One history replayed through gitvault's own commands, in this order:

    git clone SOURCE             a bundle, a bare mirror or a checkout (its packs kept as is)
    gitvault install --agent none
    gitvault backfill            the whole of HEAD's history          → rate, peak RSS
    git gc                       only what gitvault wrote is repacked → bytes per note
    gitvault fold --merger builtin --json   (the first fold)          → time, peak RSS
    git show vault:_master.md    judged line by line (bench.real.truth)
    gitvault verify --json       what verify says of the same lines
    gitvault search --json …     first (builds the index), then every query; the baseline
    gitvault search …  × N       warm latency through the CLI
    20 × git commit              through the installed hooks, drained
    gitvault fold --merger builtin --json   (incremental)             → time, peak RSS

Each measured child is measured alone (wall, CPU, peak RSS from wait4, started by a small
probe: bench/real/sandbox.measured); the load average is
sampled around every phase.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bench.real import queries as queries_mod
from bench.real.history import History
from bench.real.sandbox import Measured, Sandbox, git, load_average, measured
from bench.real.searcheval import evaluate
from bench.real.truth import Judge
from gitvault.vault import layout

NEW_COMMITS = 20


@dataclass
class Options:
    seed: int = 18
    per_kind: int = 40
    latency_runs: int = 15
    edit_sample: int = 0  # commits of the edit-time recall sample; 0: its rule's default
    only_edit: bool = False  # only the edit-time recall measure (bench.real.editrecall)
    gitvault: list[str] = field(default_factory=list)  # the command, e.g. [".../bin/gitvault"]
    questions_dir: Path = queries_mod.QUESTIONS_DIR


def gitvault_command() -> list[str]:
    """The `gitvault` a user of this checkout runs: next to this Python, else on PATH."""
    beside = Path(sys.executable).with_name("gitvault")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("gitvault")
    return [found] if found else [sys.executable, "-m", "gitvault"]


class Replay:
    def __init__(
        self, name: str, source: Path, box: Sandbox, options: Options, say: Callable[[str], None]
    ) -> None:
        self.name = name
        self.source = source
        self.box = box
        self.options = options
        self.say = say
        self.repo = box.path(f"repo-{name}")
        self.env: Mapping[str, str] = box.env
        self.gv = options.gitvault or gitvault_command()
        self.loads: dict[str, float] = {}
        self.out: dict[str, object] = {"name": name, "source": str(source)}

    # ------------------------------------------------------------ helpers

    def _git(self, *args: str) -> str:
        return git(list(args), self.repo, self.env).decode("utf-8", "replace")

    def _gv(self, *args: str) -> Measured:
        return measured([*self.gv, *args], self.repo, self.env)

    def _gv_plain(self, args: list[str]) -> tuple[int, bytes, bytes, float]:
        start = time.perf_counter()
        proc = subprocess.run(
            [*self.gv, *args],
            cwd=self.repo,
            env=dict(self.env),
            capture_output=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start

    def _load(self, phase: str) -> None:
        self.loads[phase] = round(load_average(), 2)

    @property
    def branch(self) -> str:
        configured = self._git_config(layout.BRANCH_KEY)
        return layout.branch_name(configured)

    def _git_config(self, key: str) -> str | None:
        proc = subprocess.run(
            ["git", "config", "--get", key],
            cwd=self.repo,
            env=dict(self.env),
            capture_output=True,
            check=False,
        )
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def _notes(self) -> int:
        listing = self._git("ls-tree", "-r", "--name-only", self.branch, layout.NOTES + "/")
        return sum(1 for p in listing.splitlines() if layout.note_sha(p))

    # ------------------------------------------------------------ phases

    def run(self) -> dict[str, object]:
        self._load("start")
        self.clone()
        history = History.load(self.name, self.repo, self.env)
        self.out["commits"] = len(history.commits)
        self.out["non_merge_commits"] = len(history.non_merges)
        self.out["head"] = history.commits[0].sha if history.commits else None
        self.out["tags"] = len(history.tags)
        self.out["newest_tag"] = history.tags[0].name if history.tags else None
        cost: dict[str, object] = {}
        self.out["cost"] = cost
        self._gv("install", "--agent", "none").require()
        self._load("backfill")
        self.say(f"{self.name}: gitvault backfill ({len(history.commits):,} commits on HEAD)")
        back = self._gv("backfill").require()
        notes = self._notes()
        cost["backfill"] = _cost(back) | {
            "notes": notes,
            "commits_per_s": notes / back.wall if back.wall else None,
        }
        if notes < len(history.commits):
            self.say(
                f"{self.name}: backfill wrote {notes} notes for {len(history.commits)} commits"
            )
        self.say(f"{self.name}: git gc, then the vault's own bytes")
        cost["gc"] = self.bytes_per_note(notes)
        self._load("fold")
        self.say(f"{self.name}: gitvault fold --merger builtin (first fold)")
        fold = self._gv("fold", "--merger", "builtin", "--json").require()
        cost["first_fold"] = _cost(fold) | _fold_counts(fold)
        digest = self._git("show", f"{self.branch}:{layout.DIGEST}")
        self.out["digest"] = digest
        self.say(f"{self.name}: judging the digest")
        judge = Judge(history, self._session_exists)
        truth = judge.report(digest)
        self.out["truth"] = truth.as_json()
        self._load("verify")
        verify = self._gv("verify", "--json")
        cost["verify"] = _cost(verify)
        self.out["verify"] = _verify_agreement(verify, truth.as_json())
        self.search(history, cost)
        self.incremental(history, cost)
        self._load("end")
        self.out["load_average"] = self.loads
        self.stop_drainers()
        return self.out

    def clone(self) -> None:
        self.say(f"{self.name}: git clone {self.source}")
        start = time.perf_counter()
        git(["clone", "--quiet", str(self.source), str(self.repo)], self.box.root, self.env)
        # The clone's own packs stay as they came, so `git gc` repacks only what gitvault adds.
        packs = Path(self._git("rev-parse", "--git-path", "objects/pack").strip())
        pack_dir = packs if packs.is_absolute() else self.repo / packs
        for pack in pack_dir.glob("*.pack"):
            pack.with_suffix(".keep").touch()
        self.out["clone_seconds"] = round(time.perf_counter() - start, 2)

    def _session_exists(self, slug: str) -> bool:
        if not layout.is_slug(slug):
            return False
        proc = subprocess.run(
            ["git", "cat-file", "-e", f"{self.branch}:{layout.session_path(slug)}"],
            cwd=self.repo,
            env=dict(self.env),
            capture_output=True,
            check=False,
        )
        return proc.returncode == 0

    def bytes_per_note(self, notes: int) -> dict[str, object]:
        gc = measured(["git", "gc", "--quiet"], self.repo, self.env)
        ref = layout.branch_ref(self.branch)
        objects = self._git(
            "rev-list",
            "--objects",
            "--no-object-names",
            ref,
            "--not",
            f"--exclude={ref}",
            f"--exclude={layout.PRIVATE_REF}",
            f"--exclude={layout.BACKUP_REFS}*",
            f"--exclude={layout.TRACKING_PREFIX}*",
            "--all",
        )
        sizes = git(
            ["cat-file", "--batch-check=%(objectsize:disk)"],
            self.repo,
            self.env,
            input=objects.encode(),
        ).decode()
        total = sum(int(s) for s in sizes.split())
        return {
            "gc_seconds": round(gc.wall, 2),
            "vault_bytes": total,
            "bytes_per_note": total / notes if notes else None,
        }

    def search(self, history: History, cost: dict[str, object]) -> None:
        opts = self.options
        known = queries_mod.known_item(history, opts.seed, opts.per_kind)
        questions, problems = queries_mod.questions_for(history, opts.questions_dir)
        self.out["question_problems"] = problems
        before = _state_files(self.repo, self.env)
        probe = known[0].words if known else ["fix"]
        self._load("search")
        self.say(f"{self.name}: first gitvault search (builds the index)")
        first = self._gv("search", "--json", *probe)
        after = _state_files(self.repo, self.env)
        grown = {p: s for p, s in after.items() if s != before.get(p)}
        cost["first_search"] = _cost(first) | {
            "state_files_written": grown,
            "index_bytes": sum(grown.values()),
        }
        self.say(f"{self.name}: {len(known)} known-item queries, {len(questions)} questions")
        result = evaluate(history, known + questions, self._gv_plain, self.say)
        self.out["search"] = result.as_json()
        warm = [q.words for q in known if q.kind == "rare-subject"][:5] or [probe]
        runs = []
        for i in range(opts.latency_runs):
            code, _, _, seconds = self._gv_plain(["search", "--json", *warm[i % len(warm)]])
            if code == 0:
                runs.append(seconds)
        floor = [self._gv_plain(["--version"])[3] for _ in range(5)]
        cost["warm_search"] = {
            "runs": len(runs),
            "median_seconds": statistics.median(runs) if runs else None,
            "cli_floor_seconds": statistics.median(floor),
            "through": " ".join(self.gv) + " search --json WORDS",
        }

    def incremental(self, history: History, cost: dict[str, object]) -> None:
        self._load("incremental")
        paths = _recent_text_files(history, self.repo, NEW_COMMITS)
        self.say(
            f"{self.name}: {len(paths)} new commits through the hooks, then an incremental fold"
        )
        start = time.perf_counter()
        for i, path in enumerate(paths, start=1):
            with (self.repo / path).open("a", encoding="utf-8") as fh:
                fh.write(f"\nbench-real change {i}\n")
            self._git("add", "--", path)
            self._git(
                "commit", "--quiet", "-m", f"Touch {path.rsplit('/', 1)[-1]} ({i} of {len(paths)})"
            )
        commit_seconds = time.perf_counter() - start
        drained = self.wait_drained(120.0)
        fold = self._gv("fold", "--merger", "builtin", "--json").require()
        cost["incremental_fold"] = (
            _cost(fold)
            | _fold_counts(fold)
            | {
                "new_commits": len(paths),
                "commit_seconds": round(commit_seconds, 2),
                "drained_before_fold": drained,
            }
        )

    def wait_drained(self, timeout: float) -> bool:
        """Until the spool is empty and no drainer of this repository runs."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            code, out, _, _ = self._gv_plain(["status", "--json"])
            backlog = json.loads(out).get("data", {}).get("backlog") if code == 0 else None
            if backlog == 0 and not _drainers(self.repo):
                return True
            time.sleep(0.2)
        return False

    def stop_drainers(self) -> None:
        deadline = time.monotonic() + 30
        while _drainers(self.box.root) and time.monotonic() < deadline:
            time.sleep(0.2)
        for pid in _drainers(self.box.root):  # only processes started inside this sandbox
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


def _cost(m: Measured) -> dict[str, object]:
    return {
        "seconds": round(m.wall, 3),
        "cpu_seconds": round(m.cpu, 3),
        "peak_rss_mb": round(m.max_rss / 1e6, 1),
        "exit": m.returncode,
    }


def _fold_counts(m: Measured) -> dict[str, object]:
    try:
        data = json.loads(m.stdout).get("data", {})
    except ValueError:
        return {}
    folded = data.get("folded") or data.get("new_items")
    out: dict[str, object] = {"items": folded}
    if isinstance(folded, int) and m.wall:
        out["items_per_s"] = round(folded / m.wall, 1)
    return out


def _state_files(repo: Path, env: Mapping[str, str]) -> dict[str, int]:
    """Sizes of the files in the common git dir, objects and refs aside: where gitvault keeps
    its caches (the search index among them)."""
    common = Path(git(["rev-parse", "--git-common-dir"], repo, env).decode().strip())
    common = common if common.is_absolute() else repo / common
    out = {}
    for path in common.rglob("*"):
        rel = path.relative_to(common).as_posix()
        if rel.startswith(("objects/", "refs/", "logs/")) or not path.is_file():
            continue
        out[rel] = path.stat().st_size
    return out


def _verify_agreement(m: Measured, truth: dict[str, object]) -> dict[str, object]:
    """verify's verdict next to the judge's, line by line."""
    try:
        lines = json.loads(m.stdout)["data"]["lines"]
    except (ValueError, KeyError, TypeError):
        return {"error": m.stderr.decode("utf-8", "replace")[-500:], "exit": m.returncode}
    says = {str(item["line"]): str(item["status"]) for item in lines}
    judged = {str(v["line"]): str(v["status"]) for v in truth["lines"]}  # type: ignore[attr-defined]
    both = [ln for ln in judged if ln in says]
    flagged = {"stale", "dangling"}
    reasons = {str(item["line"]): item.get("reasons", []) for item in lines}
    differ = [
        {"line": ln, "judge": judged[ln], "verify": says[ln], "verify_reasons": reasons[ln]}
        for ln in both
        if (judged[ln] == "fail") != (says[ln] in flagged)
    ]
    return {
        "exit": m.returncode,
        "disagreements": differ,
        "lines": len(says),
        "flagged": sum(1 for s in says.values() if s in flagged),
        "judge_fail_verify_ok": sum(
            1 for ln in both if judged[ln] == "fail" and says[ln] not in flagged
        ),
        "judge_pass_verify_flags": sum(
            1 for ln in both if judged[ln] == "pass" and says[ln] in flagged
        ),
        "agree": sum(1 for ln in both if (judged[ln] == "fail") == (says[ln] in flagged)),
    }


def _recent_text_files(history: History, repo: Path, n: int) -> list[str]:
    """The n files at HEAD most recently changed, text and small: what the new commits touch."""
    out: list[str] = []
    for c in history.non_merges:
        for f in c.files:
            if f in out or f not in history.head_files:
                continue
            path = repo / f
            try:
                if path.is_symlink() or path.stat().st_size > 200_000:
                    continue
                if b"\0" in path.read_bytes()[:8192]:
                    continue
            except OSError:
                continue
            out.append(f)
            if len(out) >= n:
                return out
    return out


def _drainers(under: Path) -> list[int]:
    """Pids of processes this replay left running: a gitvault drainer naming a path under
    `under` on its command line, or any process whose working directory is under it (the
    sandbox is a fresh temp dir, so nothing else can be there)."""
    needle = str(under).encode()
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                cmdline = fh.read()
            cwd = os.readlink(f"/proc/{entry.name}/cwd")
        except OSError:
            continue
        inside = cwd == str(under) or cwd.startswith(str(under) + os.sep)
        if inside or (b"drain" in cmdline and needle in cmdline):
            pids.append(int(entry.name))
    return pids
