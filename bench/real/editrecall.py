"""Edit-time recall on a real history: for a sample of real commits, what the edit-time block
(`gitvault recall --for PATH`) carries of what applied to the path the commit edits, next to
`git log -- PATH` cut to the same 3,200 characters, in the same run. Every fact the check uses
comes from git; nothing here looks at what the block chose to say.

The rule, fixed before any result was seen (never changed to suit the block):

* Window: the newest WINDOW (300) non-merge commits of `git log HEAD`.
* The cut: the history the vault is built from and the logs are read at, once for the whole
  window (as issue 19 asks: "build the vault from all but the last 300 commits"): the first
  parent of the oldest commit on HEAD's first-parent line that brought a window commit onto it
  (the commit itself when it is on that line, else the merge that brought it in). So neither
  side knows any window commit, nor anything after; both miss the same recent history.
* Eligible: a commit of the window that touches at most MAX_FILES (20) files and modifies
  (git's status M against its parent, renames not followed) at least one file that exists at
  the cut. Its paths: the first PATHS_PER_COMMIT (3) of those files, in git's order.
* Sample: every Nth eligible commit, oldest first, N = eligible // sample; sample = 40, or 12
  on a history of more than 20,000 commits (git/git: its questions cost more to compute).
* At the cut: `git checkout --detach CUT` (hooks off), `gitvault backfill`, `gitvault fold
  --merger builtin`, then for each question `gitvault recall --for PATH --json`,
  `git log --full-diff --name-only CUT -- PATH` and `git log CUT -- PATH`, the logs cut to the
  block's budget (3,200 characters).

What applied to (commit C, path P), from git (S: the cut):

* co-change: every other file C changed that exists at S ("files that change with it"). Named
  when the text holds the path as a whole word.
* reverts: every revert commit (bench.real.history: "This reverts commit <sha>", else a quoted
  `Revert "<subject>"`) among `git rev-list S -- P`. Named when the text holds its 7-digit id.
* referenced: every commit C's message names, by a hex id or as the commit it reverts, that is
  among `git rev-list S -- P`: the earlier change on the path this one fixes, reverts or builds
  on. Named when the text holds its 7-digit id.

Scores per kind: items named / items that applied, pooled over the sample, for the block and
both logs. The issue's targets: co-change ≥ 1.1× `git log --full-diff --name-only`'s, and every
earlier revert of the path named.
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bench.real.history import History
from bench.real.replay import Options, _cost, _drainers, gitvault_command
from bench.real.sandbox import Sandbox, git, load_average, measured

WINDOW = 300
MAX_FILES = 20
PATHS_PER_COMMIT = 3
SAMPLE = 40
SAMPLE_LARGE = 12
LARGE_HISTORY = 20_000
BUDGET = 3200  # the edit-time block's own limit (layout.EDIT_RECALL_MAX_CHARS)
LOG_COMMITS = 200  # more than 3,200 characters of any log
KINDS = ("co-change", "reverts", "referenced")
SIDES = ("block", "log_names", "log")
_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-f]{7,40}(?![0-9A-Za-z])")


def names_path(text: str, path: str) -> bool:
    """Whether `text` names `path` as a whole word (not as part of a longer path)."""
    return re.search(rf"(?<![\w./-]){re.escape(path)}(?![\w/-])", text) is not None


def names_commit(text: str, sha: str) -> bool:
    return sha[:7] in text


@dataclass
class Question:
    commit: str
    path: str
    state: str
    applied: dict[str, list[str]] = field(default_factory=dict)  # kind → items
    named: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # side → kind → items
    block_chars: int = 0
    block_reason: str = ""
    recall_seconds: float = 0.0

    def as_json(self) -> dict[str, object]:
        return {
            "commit": self.commit,
            "path": self.path,
            "state": self.state,
            "applied": self.applied,
            "named": self.named,
            "block_chars": self.block_chars,
            "block_reason": self.block_reason,
            "recall_seconds": round(self.recall_seconds, 3),
        }


class EditRecall:
    def __init__(
        self, name: str, source: Path, box: Sandbox, options: Options, say: Callable[[str], None]
    ) -> None:
        self.name = name
        self.source = source
        self.box = box
        self.say = say
        self.sample = options.edit_sample
        self.repo = box.path(f"edit-{name}")
        self.env: Mapping[str, str] = box.env
        self.gv = options.gitvault or gitvault_command()

    def _git(self, *args: str) -> str:
        return git(list(args), self.repo, self.env).decode("utf-8", "replace")

    def run(self) -> dict[str, object]:
        start = time.perf_counter()
        loads = [load_average()]
        self.say(f"{self.name}: edit-time recall: git clone {self.source}")
        git(["clone", "--quiet", str(self.source), str(self.repo)], self.box.root, self.env)
        history = History.load(self.name, self.repo, self.env)
        sample = self.sample or (SAMPLE_LARGE if len(history.commits) > LARGE_HISTORY else SAMPLE)
        questions, eligible = self.choose(history, sample)
        measured([*self.gv, "install", "--agent", "none"], self.repo, self.env).require()
        by_state: dict[str, list[Question]] = defaultdict(list)
        for q in questions:
            by_state[q.state].append(q)
        order = self._first_parents()
        states = sorted(by_state, key=lambda s: -order.get(s, 0))  # oldest first
        costs: list[dict[str, object]] = []
        for i, state in enumerate(states, start=1):
            self.say(
                f"{self.name}: edit-time recall: state {i} of {len(states)} ({state[:10]}),"
                f" {len(by_state[state])} path(s)"
            )
            costs.append(self.build(state))
            loads.append(load_average())
            present = set(self._git("ls-tree", "-r", "-z", "--name-only", state).split("\0"))
            for q in by_state[state]:
                self.ask(history, q, present)
        self.stop_drainers()
        loads.append(load_average())
        return {
            "rule": {
                "window": WINDOW,
                "max_files": MAX_FILES,
                "paths_per_commit": PATHS_PER_COMMIT,
                "sample": sample,
                "eligible": eligible,
                "budget": BUDGET,
            },
            "commits": len({q.commit for q in questions}),
            "states": len(states),
            "questions": [q.as_json() for q in questions],
            "scores": scores(questions),
            "state_costs": costs,
            "load_average": [round(x, 2) for x in loads],
            "seconds": round(time.perf_counter() - start, 1),
        }

    # ------------------------------------------------------------ the sample

    def _first_parents(self) -> dict[str, int]:
        """First-parent commit → its position on HEAD's first-parent line (0 is HEAD)."""
        out = self._git("rev-list", "--first-parent", "HEAD").split()
        return {sha: i for i, sha in enumerate(out)}

    def arrivals(self, window: set[str]) -> dict[str, str]:
        """Window commit → the first-parent commit that brought it onto HEAD's line."""
        found: dict[str, str] = {}
        for line in self._git("rev-list", "--first-parent", "--parents", "HEAD").splitlines():
            sha, *parents = line.split()
            if len(parents) < 2:
                if sha in window:
                    found[sha] = sha
            else:
                brought = self._git("rev-list", "--no-merges", f"{parents[0]}..{sha}").split()
                for c in brought:
                    if c in window:
                        found[c] = sha
            if len(found) == len(window):
                break
        return found

    def cut(self, history: History, window: list[str]) -> str | None:
        """The first parent of the oldest first-parent commit that brought a window commit."""
        arrived = set(self.arrivals(set(window)).values())
        line = self._git("rev-list", "--first-parent", "--parents", "HEAD").splitlines()
        for entry in reversed(line):  # oldest first
            sha, *parents = entry.split()
            if sha in arrived:
                return parents[0] if parents else None
        return None

    def choose(self, history: History, sample: int) -> tuple[list[Question], int]:
        window = history.non_merges[:WINDOW]
        cut = self.cut(history, [c.sha for c in window])
        if cut is None:
            return [], 0
        at_cut = set(self._git("ls-tree", "-r", "-z", "--name-only", cut).split("\0"))
        eligible: list[tuple[str, list[str]]] = []  # (commit, paths)
        for c in reversed(window):  # oldest first
            if not c.files or len(c.files) > MAX_FILES or not c.parents:
                continue
            status = self._git(
                "diff-tree",
                "-r",
                "--no-commit-id",
                "--no-renames",
                "--name-status",
                "-z",
                c.parents[0],
                c.sha,
            ).split("\0")
            modified = [status[i + 1] for i in range(0, len(status) - 1, 2) if status[i] == "M"]
            paths = [p for p in modified if p in at_cut][:PATHS_PER_COMMIT]
            if paths:
                eligible.append((c.sha, paths))
        step = max(1, len(eligible) // sample) if sample else 1
        picked = eligible[::step][:sample]
        return [Question(c, p, cut) for c, paths in picked for p in paths], len(eligible)

    # ------------------------------------------------------------ one state

    def build(self, state: str) -> dict[str, object]:
        git(
            ["-c", "core.hooksPath=/dev/null", "checkout", "--quiet", "--force", "--detach", state],
            self.repo,
            self.env,
        )
        back = measured([*self.gv, "backfill"], self.repo, self.env).require()
        fold = measured([*self.gv, "fold", "--merger", "builtin", "--json"], self.repo, self.env)
        fold.require()
        return {"state": state, "backfill": _cost(back), "fold": _cost(fold)}

    def ask(self, history: History, q: Question, present: set[str]) -> None:
        commit = history.by_sha[q.commit]
        on_path = set(self._git("rev-list", q.state, "--", q.path).split())
        referenced = []
        for ident in _HEX.findall(commit.message):
            sha = history.resolve(ident)
            if sha and sha in on_path and sha not in referenced:
                referenced.append(sha)
        for sha in history.reverts.get(commit.sha, []):
            if sha in on_path and sha not in referenced:
                referenced.append(sha)
        q.applied = {
            "co-change": [f for f in commit.files if f != q.path and f in present],
            "reverts": sorted(
                (s for s in on_path if s in history.reverts), key=lambda s: history.by_sha[s].order
            ),
            "referenced": referenced,
        }
        recall = measured([*self.gv, "recall", "--for", q.path, "--json"], self.repo, self.env)
        q.recall_seconds = recall.wall
        block = ""
        try:
            data = json.loads(recall.stdout).get("data", {})
            block = str(data.get("text") or "")
            q.block_reason = str(data.get("reason") or "")
        except ValueError:
            q.block_reason = f"recall exited {recall.returncode}"
        q.block_chars = len(block)
        log = self._git("log", f"-n{LOG_COMMITS}", q.state, "--", q.path)[:BUDGET]
        log_names = self._git(
            "-c",
            "core.quotePath=false",
            "log",
            f"-n{LOG_COMMITS}",
            "--full-diff",
            "--name-only",
            "--no-renames",
            q.state,
            "--",
            q.path,
        )[:BUDGET]
        for side, text in (("block", block), ("log_names", log_names), ("log", log)):
            q.named[side] = {
                "co-change": [f for f in q.applied["co-change"] if names_path(text, f)],
                "reverts": [s for s in q.applied["reverts"] if names_commit(text, s)],
                "referenced": [s for s in q.applied["referenced"] if names_commit(text, s)],
            }

    def stop_drainers(self) -> None:
        deadline = time.monotonic() + 30
        while _drainers(self.repo) and time.monotonic() < deadline:
            time.sleep(0.2)


def scores(questions: list[Question]) -> dict[str, object]:
    """Per kind and side: items named, items that applied, their share; the questions where a
    kind applied; and for reverts, the questions where every one was named."""
    out: dict[str, object] = {}
    for kind in KINDS:
        applied = sum(len(q.applied.get(kind, [])) for q in questions)
        with_kind = [q for q in questions if q.applied.get(kind)]
        entry: dict[str, object] = {"applied": applied, "questions": len(with_kind)}
        for side in SIDES:
            named = sum(len(q.named.get(side, {}).get(kind, [])) for q in questions)
            complete = sum(
                1
                for q in with_kind
                if len(q.named.get(side, {}).get(kind, [])) == len(q.applied[kind])
            )
            entry[side] = {
                "named": named,
                "recall": named / applied if applied else None,
                "complete": complete,
            }
        out[kind] = entry
    applied_all = sum(len(v) for q in questions for v in q.applied.values())
    every: dict[str, object] = {"applied": applied_all}
    for side in SIDES:
        named_all = sum(len(v) for q in questions for v in q.named.get(side, {}).values())
        every[side] = {
            "named": named_all,
            "recall": named_all / applied_all if applied_all else None,
        }
    out["all"] = every
    sizes = [q.block_chars for q in questions]
    out["blocks"] = {
        "questions": len(questions),
        "empty": sum(1 for s in sizes if s == 0),
        "max_chars": max(sizes, default=0),
        "mean_chars": round(sum(sizes) / len(sizes)) if sizes else 0,
        "median_recall_seconds": sorted(q.recall_seconds for q in questions)[len(questions) // 2]
        if questions
        else None,
    }
    return out
