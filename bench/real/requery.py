"""Search re-scored on a sandbox `python -m bench.real --keep` left (or any repository that
already has a vault): the same queries, scoring and `git log` baseline as the full run, but
each query answered in this process through the CLI's own fast path (`search_fast`), so a
change to ranking is measured in seconds, not in a new backfill.

    python -m bench.real.requery REPO [--name NAME] [--seed N] [--per-kind N] [--kind KIND …]
                                      [--skip KIND …] [--show KIND …] [--why KIND …] [--json PATH]
    python -m bench.real.requery REPO --rebuild [N]     time N rebuilds of the index, nothing else
    python -m bench.real.requery REPO --set TITLE_WEIGHT=4 [--set …]   a ranking constant changed

`--set NAME=VALUE` scores a ranking lever without editing the code: NAME is one of
gitvault.memory.search's numeric constants (TITLE_WEIGHT, COVER_WEIGHT, FILES_WEIGHT, BM25_B, …),
set in this process only; anything else is refused.

REPO: the replayed clone (the sandbox's `repo-<name>`). Its sandbox's private HOME and git
config are used when REPO sits in one (`<sandbox>/repo-<name>`, or `<root>/repo` beside a
`gitconfig`). Prints hit@3 and MRR@10 per kind for gitvault and for the baseline, the CPU
seconds of the queries (median and total, in this process: no start-up), and the load average.
Git's side of the score (the baseline's answers, which commits a merge brought in) does not
change with gitvault's ranking: it is kept in `<sandbox>/requery-cache.json` (per HEAD) and read
back by the next run, so a re-score costs only gitvault's queries (`--no-cache`: recompute).
`--show KIND` lists each query of that kind with its rank; `--why KIND`, for each query of that
kind gitvault does not answer in its first 3, what ranked above the gold (score, the query's
terms each result holds, the matching passage), where the gold stood among the first 200 and
what it held, next to the baseline's first 3. Both refuse the held-out kinds (their per-query
results are not for tuning: README's held-out rule).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.real import queries as queries_mod  # noqa: E402
from bench.real.history import History  # noqa: E402
from bench.real.sandbox import isolated_env, load_average  # noqa: E402
from bench.real.searcheval import Baseline, evaluate, result_sha  # noqa: E402
from gitvault.commands import search_fast  # noqa: E402
from gitvault.memory import search  # noqa: E402
from gitvault.resolve import resolve  # noqa: E402


def sandbox_env(repo: Path) -> dict[str, str]:
    """The environment the sandbox's commands ran with (private HOME and git config)."""
    root = repo.parent
    if (root / "gitconfig").exists() or repo.name.startswith("repo"):
        return isolated_env(root)
    return dict(os.environ)


class InProcess:
    """`gitvault search …` answered by the CLI's fast path in this process; what it leaves to
    the full CLI is counted as refused (the full run would start typer for it)."""

    def __init__(self) -> None:
        self.cpu: list[float] = []

    def __call__(self, args: list[str]) -> tuple[int, bytes, bytes, float]:
        out = io.StringIO()
        start, cpu = time.perf_counter(), time.process_time()
        with contextlib.redirect_stdout(out):
            code = search_fast.fast_search(args)
        self.cpu.append(time.process_time() - cpu)
        seconds = time.perf_counter() - start
        if code is None:
            return 2, b"", b"left to the full CLI (an option it reads, or an error)", seconds
        return code, out.getvalue().encode(), b"", seconds


WHY_DEPTH = 200  # results looked through for the gold when explaining a miss


def explain(
    history: History,
    words: list[str],
    gold: list[str],
    baseline: list[str],
    run: InProcess,
    top: int = 3,
) -> list[str]:
    """Why gitvault misses a query: its first `top` results (score, the query's terms each
    holds, the matching passage), the gold's rank among the first WHY_DEPTH and what it held,
    and the baseline's first `top` (full or short SHAs) — all from the CLI's own JSON answer."""
    code, out, err, _ = run(["search", "--json", "-n", str(WHY_DEPTH), *words])
    lines = [f"? {' '.join(words)}"]
    if code != 0:
        lines.append(f"    refused: {err.decode('utf-8', 'replace')}")
        return lines
    data = json.loads(out)["data"]
    lines.append(f"    terms: {' '.join(data['terms'])}")

    def subject(sha: str | None) -> str:
        commit = history.by_sha.get(sha or "")
        return commit.subject[:90] if commit else "(not a commit)"

    def described(rank: int, result: dict[str, object], sha: str | None) -> str:
        mark = "GOLD" if sha in gold else "    "
        matched = " ".join(str(t) for t in result["matched"])  # type: ignore[attr-defined]
        title = subject(sha) if sha else str(result["title"])[:90]
        return (
            f"    {rank:>3} {mark} {result['score']:>7} [{matched}] {title}\n"
            f"                 {str(result['snippet'])[:150]}"
        )

    results: list[dict[str, object]] = data["results"]
    shas = [result_sha(history, r) for r in results]
    for rank, (result, sha) in enumerate(zip(results[:top], shas[:top], strict=True), start=1):
        lines.append(described(rank, result, sha))
    found = [
        (rank, result, sha)
        for rank, (result, sha) in enumerate(zip(results, shas, strict=True), start=1)
        if sha in gold or any(history.merged(sha, g) for g in gold if sha)
    ]
    if found:
        lines.extend(described(rank, result, sha) for rank, result, sha in found[:2] if rank > top)
    else:
        lines.append(f"    gold not among the first {WHY_DEPTH} shown: {subject(gold[0])}")
    for ident in baseline[:top]:
        sha = history.resolve(ident)
        lines.append(f"    git log: {'GOLD' if sha in gold else '    '} {subject(sha)}")
    return lines


def apply_settings(pairs: list[str]) -> dict[str, float]:
    """Set gitvault.memory.search's numeric constants from NAME=VALUE pairs, in this process;
    returns the values they replaced. Raises ValueError for a name that is not such a constant,
    or a value that is not a number."""
    old: dict[str, float] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        current = getattr(search, name, None)
        if not sep or not name.isupper() or type(current) not in (int, float):
            raise ValueError(f"{name!r} is not a numeric constant of gitvault.memory.search")
        value = type(current)(float(text)) if isinstance(current, int) else float(text)
        old.setdefault(name, current)
        setattr(search, name, value)
    return old


CACHE_NAME = "requery-cache.json"


def load_cache(path: Path, history: History, base: Baseline) -> None:
    """Git's answers a previous run kept for this HEAD, into the history and the baseline."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(data, dict) or data.get("head") != history.commits[0].sha:
        return
    for older, newer, known in data.get("ancestry", []):
        history._ancestry[(older, newer)] = bool(known)
    for words, found in data.get("baseline", []):
        base._cache[tuple(words)] = list(found)


def save_cache(path: Path, history: History, base: Baseline) -> None:
    data = {
        "head": history.commits[0].sha,
        "ancestry": [[o, n, k] for (o, n), k in history._ancestry.items()],
        "baseline": [[list(words), found] for words, found in base._cache.items()],
    }
    path.write_text(json.dumps(data), encoding="utf-8")


def rebuild() -> None:
    """One rebuild of the search index of the repository in the current directory, measured:
    this process's CPU, git's (the children it waited for), wall time, size, peak RSS."""
    index = search.Index(resolve(None))
    index.path.unlink(missing_ok=True)
    before = load_average()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    start, cpu = time.perf_counter(), time.process_time()
    done = index.update()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    git_cpu = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(
        f"rebuild: {done.added:,} documents, {cpu:.1f} s CPU + {git_cpu:.1f} s git "
        f"({done.added / (cpu + git_cpu):,.0f} documents per CPU second), {wall:.1f} s wall, "
        f"{index.path.stat().st_size / 2**20:.1f} MB, peak RSS {peak} MB, "
        f"load {before:.2f} → {load_average():.2f}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.real.requery", description=__doc__)
    p.add_argument("repo", type=Path)
    p.add_argument("--name", help="the history's name (default: from the folder)")
    p.add_argument("--seed", type=int, default=18)
    p.add_argument("--per-kind", type=int, default=40)
    p.add_argument("--kind", action="append", default=[], help="only these kinds (repeatable)")
    p.add_argument("--skip", action="append", default=[], help="leave these kinds out")
    p.add_argument("--show", action="append", default=[], help="list this kind's queries")
    p.add_argument("--why", action="append", default=[], help="explain this kind's misses")
    p.add_argument("--json", type=Path, help="write every kind's scores here")
    p.add_argument("--no-cache", action="store_true", help="recompute git's side, keep nothing")
    p.add_argument("--rebuild", type=int, nargs="?", const=1, default=0, metavar="N")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    args = p.parse_args(argv)
    try:
        apply_settings(args.set)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    held = [k for k in args.show + args.why if "held-out" in k]
    if held:
        print(f"{held[0]}: held-out results are reported in aggregate only", file=sys.stderr)
        return 2
    repo = args.repo.resolve()
    env = sandbox_env(repo)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(repo)
    name = args.name or repo.name.removeprefix("repo-")
    if args.rebuild:
        for _ in range(args.rebuild):
            rebuild()
        return 0
    history = History.load(name, repo, env)
    known = queries_mod.known_item(history, args.seed, args.per_kind)
    questions, problems = queries_mod.questions_for(history)
    for problem in problems:
        print("question problem:", problem)
    every = known + questions
    if args.kind:
        every = [q for q in every if q.kind in args.kind]
    every = [q for q in every if q.kind not in args.skip]
    baseline = Baseline(history)
    cache = repo.parent / CACHE_NAME
    if not args.no_cache:
        load_cache(cache, history, baseline)
    runner = InProcess()
    runner(["search", "--json", "warm", "up"])  # the index is caught up before timing
    runner.cpu.clear()
    before = load_average()
    result = evaluate(history, every, runner, say=lambda _: None, baseline=baseline)
    after = load_average()
    table = result.as_json()["kinds"]
    assert isinstance(table, dict)
    settings = f" (set: {' '.join(args.set)})" if args.set else ""
    print(f"{name}: {len(every)} queries, load {before:.2f} → {after:.2f}{settings}")
    print(
        f"{'kind':<22} {'n':>3}  {'gv hit@3':>8} {'gv MRR':>6}  {'git hit@3':>9} {'git MRR':>7}"
        f"  {'gv named@3':>10}"
    )
    for kind, scores in table.items():
        mine, theirs = scores["gitvault"], scores["baseline"]
        errors = f"  ({mine['errors']} refused)" if mine["errors"] else ""
        print(
            f"{kind:<22} {mine['n']:>3}  {mine['hit3']:>8.2f} {mine['mrr']:>6.2f}  "
            f"{theirs['hit3']:>9.2f} {theirs['mrr']:>7.2f}  {mine['named3']:>10.2f}{errors}"
        )
    cpu = runner.cpu
    if cpu:
        print(
            f"query CPU in-process: median {statistics.median(cpu) * 1000:.0f} ms, "
            f"p90 {sorted(cpu)[int(len(cpu) * 0.9)] * 1000:.0f} ms, total {sum(cpu):.1f} s"
        )
    for row in result.queries:
        if row["kind"] in args.show:
            print(
                f"  {row['gitvault_rank'] or '-':>2} {row['baseline_rank'] or '-':>2}  "
                f"{' '.join(row['words'])}"  # type: ignore[arg-type]
            )
    for row in result.queries:
        rank = row["gitvault_rank"]
        if row["kind"] in args.why and (rank is None or rank > 3):  # type: ignore[operator]
            words, gold = row["words"], row["gold"]
            base = row["baseline_top"]
            assert isinstance(words, list) and isinstance(gold, list) and isinstance(base, list)
            print("\n".join(explain(history, words, gold, base, runner)))
    if args.json:
        args.json.write_text(json.dumps(result.as_json(), indent=1), encoding="utf-8")
    if not args.no_cache:
        save_cache(cache, history, baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
