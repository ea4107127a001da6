"""Search, scored: every query through `gitvault search --json` (as a user types it: one
argument per word) and through the baseline a user would otherwise use, in the same run:

    git log -i -F --grep=<word1> --grep=<word2> … HEAD

(git ORs the patterns), ranked by how many of the query's words a commit's message contains,
then by recency (git log's order). A single-word query is plain `git log -i -F --grep`.

A query scores at the rank of the first result that is a gold commit, or a merge commit that
brought a gold commit in (reachable from the merge, not from its first parent); such hits are
counted apart. hit@3: that rank is 1–3; MRR: the mean of 1/rank over the first 10 results.

Beside it, for gitvault only, named@3: a gold commit is one of the first 3 results or is named
in one (gitvault folds a pull request's commits into one result, headed by its merge when the
merge matched, else by its best commit: a gold commit folded under a sibling is shown, by its
citation, but not at the head). A diagnostic: hit@3 stays the score.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.real.history import History
from bench.real.queries import Query, content_words
from bench.real.sandbox import git
from gitvault.vault import layout

DEPTH = 10  # results looked at per query (MRR@10)


@dataclass
class Answer:
    ranked: list[str | None]  # full SHAs of the results in order (None: not a commit)
    error: str = ""  # the CLI refused the query or failed
    seconds: float = 0.0
    folded: list[list[str]] = field(default_factory=list)  # each result's related commits


@dataclass
class Scored:
    rank: int | None  # 1-based, None: not in the first DEPTH
    via_merge: bool = False


@dataclass
class KindScore:
    n: int = 0
    hits3: int = 0
    rr: float = 0.0
    via_merge: int = 0
    named3: int = 0  # gitvault: a gold commit heads or is folded into one of the first 3
    errors: int = 0
    error_examples: list[str] = field(default_factory=list)

    def add(self, s: Scored, error: str = "", named: bool = False) -> None:
        self.n += 1
        self.named3 += named or (s.rank is not None and s.rank <= 3)
        if s.rank is not None:
            self.rr += 1 / s.rank
            self.hits3 += s.rank <= 3
            self.via_merge += s.via_merge
        if error:
            self.errors += 1
            if len(self.error_examples) < 3:
                self.error_examples.append(error)

    def as_json(self) -> dict[str, object]:
        return {
            "n": self.n,
            "hit3": self.hits3 / self.n if self.n else None,
            "mrr": self.rr / self.n if self.n else None,
            "hits_via_merge": self.via_merge,
            "named3": self.named3 / self.n if self.n else None,
            "errors": self.errors,
            "error_examples": self.error_examples,
        }


def score(history: History, ranked: Sequence[str | None], gold: Sequence[str]) -> Scored:
    for i, sha in enumerate(ranked[:DEPTH], start=1):
        if sha is None:
            continue
        if sha in gold:
            return Scored(i)
        if any(history.merged(sha, g) for g in gold):
            return Scored(i, via_merge=True)
    return Scored(None)


def gitvault_answer(
    run: Callable[[list[str]], tuple[int, bytes, bytes, float]], history: History, words: list[str]
) -> Answer:
    """`gitvault search --json -n DEPTH WORDS…` through the CLI. A usage error (the CLI
    rejecting a word that looks like an option) is a miss, reported as such."""
    code, out, err, seconds = run(["search", "--json", "-n", str(DEPTH), *words])
    if code != 0:
        text = (err or out).decode("utf-8", "replace").strip().splitlines()
        return Answer([], f"exit {code}: {text[-1] if text else ''}"[:200], seconds)
    try:
        data = json.loads(out)
    except ValueError:  # e.g. a query word that is one of its own options (--help)
        first = out.decode("utf-8", "replace").strip().splitlines()[:1]
        return Answer([], f"no JSON answer: {first[0] if first else '(empty)'}"[:200], seconds)
    ranked: list[str | None] = []
    folded: list[list[str]] = []
    for result in data.get("data", {}).get("results", []):
        ranked.append(result_sha(history, result))
        related = [r.get("id") for r in result.get("related", []) if isinstance(r, dict)]
        shas = (history.resolve(i[2:]) for i in related if isinstance(i, str) and i[:2] == "c:")
        folded.append([sha for sha in shas if sha])
    return Answer(ranked, "", seconds, folded)


def named(answer: Answer, gold: Sequence[str], top: int = 3) -> bool:
    """Whether a gold commit heads one of the first `top` results or is folded into one."""
    shown = [*answer.ranked[:top], *(s for f in answer.folded[:top] for s in f)]
    return any(sha in gold for sha in shown if sha)


def result_sha(history: History, result: dict[str, object]) -> str | None:
    path = result.get("path")
    if isinstance(path, str):
        sha = layout.note_sha(path)
        if sha:
            return sha
    ident = result.get("id")
    if isinstance(ident, str) and ident.startswith("c:"):
        return history.resolve(ident[2:])
    return None


class Baseline:
    """`git log -i -F --grep` over the query's words, OR-ed, ranked by coverage then recency."""

    def __init__(self, history: History) -> None:
        self.h = history
        self._cache: dict[tuple[str, ...], list[str]] = {}

    def answer(self, words: Sequence[str]) -> Answer:
        key = tuple(dict.fromkeys(w.lower() for w in words if w))
        if not key:
            return Answer([])
        if key not in self._cache:
            args = ["log", "-i", "-F", *[f"--grep={w}" for w in key], "--format=%H", "HEAD", "--"]
            if len(key) == 1:
                args.insert(1, f"-n{DEPTH}")
            found = git(args, self.h.path, self.h.env).decode().split()
            if len(key) > 1:

                def coverage(sha: str) -> int:
                    c = self.h.by_sha.get(sha)
                    message = c.message.lower() if c else ""
                    return sum(1 for w in key if w in message)

                order = {sha: i for i, sha in enumerate(found)}
                found = sorted(found, key=lambda s: (-coverage(s), order[s]))[:DEPTH]
            self._cache[key] = found
        return Answer(list(self._cache[key]))


def baseline_words(q: Query) -> list[str]:
    """What the baseline greps for: a question's content words; a known-item query's words."""
    if q.kind.startswith("question"):
        return content_words(" ".join(q.words))
    return q.words


@dataclass
class SearchResult:
    per_kind: dict[str, dict[str, KindScore]]  # kind → {"gitvault": …, "baseline": …}
    queries: list[dict[str, object]]
    latencies: list[float]

    def as_json(self) -> dict[str, object]:
        kinds = {
            kind: {who: s.as_json() for who, s in scores.items()}
            for kind, scores in self.per_kind.items()
        }
        return {
            "kinds": kinds,
            "queries": self.queries,
            "query_seconds_median": statistics.median(self.latencies) if self.latencies else None,
        }


def evaluate(
    history: History,
    queries: list[Query],
    run: Callable[[list[str]], tuple[int, bytes, bytes, float]],
    say: Callable[[str], None] = print,
    baseline: Baseline | None = None,
) -> SearchResult:
    base = baseline or Baseline(history)
    per_kind: dict[str, dict[str, KindScore]] = {}
    rows: list[dict[str, object]] = []
    latencies: list[float] = []
    for i, q in enumerate(queries):
        if i and i % 50 == 0:
            say(f"  search: {i}/{len(queries)} queries")
        mine = gitvault_answer(run, history, q.words)
        latencies.append(mine.seconds)
        theirs = base.answer(baseline_words(q))
        s_mine = score(history, mine.ranked, q.gold)
        s_base = score(history, theirs.ranked, q.gold)
        scores = per_kind.setdefault(q.kind, {"gitvault": KindScore(), "baseline": KindScore()})
        scores["gitvault"].add(s_mine, mine.error, named(mine, q.gold))
        scores["baseline"].add(s_base)
        rows.append(
            {
                **q.as_json(),
                "gitvault_rank": s_mine.rank,
                "gitvault_via_merge": s_mine.via_merge,
                "gitvault_named3": named(mine, q.gold),
                "gitvault_error": mine.error,
                "gitvault_top": [s[:10] if s else None for s in mine.ranked[:3]],
                "baseline_rank": s_base.rank,
                "baseline_via_merge": s_base.via_merge,
                "baseline_top": [s[:10] for s in theirs.ranked[:3] if s],
            }
        )
    return SearchResult(per_kind, rows, latencies)


def write_queries(path: Path, queries: list[Query]) -> None:
    path.write_text(json.dumps([q.as_json() for q in queries], indent=1), encoding="utf-8")
