"""Backfill rate, and the vault's bytes per note after `git gc`."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from harness import (
    cpu_seconds,
    git,
    median,
)
from registry import Measure, Row, Target
from repogen import HistorySpec, build_history, count_notes

from measures.common import Context, install, vault_ref


def _backfilled(ctx: Context) -> Path:
    if "backfill" not in ctx.cache:
        bench_backfill(ctx)
    return ctx.cache["backfill"]


def bench_backfill(ctx: Context) -> list[Row]:
    from gitvault.notes.backfill import backfill
    from gitvault.resolve import resolve

    n = ctx.sizes.backfill_commits
    ctx.say(f"backfill: generating a {n:,}-commit history with fast-import")
    base = ctx.box.repo_dir("backfill-base")
    build_history(base, HistorySpec(commits=n, seed=31, start=1_650_000_000, step=4 * 3600))
    git(["checkout", "-q", "main"], base)
    install(base)
    runs: list[tuple[float, float]] = []
    for i in range(ctx.sizes.repeats):
        repo = ctx.box.repo_dir(f"backfill-{i}")
        shutil.copytree(base, repo, symlinks=True)
        ctx.say(f"backfill: running gitvault.backfill.backfill ({i + 1}/{ctx.sizes.repeats})")
        cpu0 = cpu_seconds()
        start = time.perf_counter()
        result = backfill(resolve(repo))
        runs.append((time.perf_counter() - start, cpu_seconds() - cpu0))
        notes_now = count_notes(repo)
        if result.written != n or notes_now != n:
            raise RuntimeError(
                f"backfill wrote {result.written} notes ({notes_now} in the vault), expected {n}"
            )
        if i == 0:
            ctx.cache["backfill"] = repo
        else:
            shutil.rmtree(repo)
    elapsed = median([wall for wall, _ in runs])
    cpu = median([c for _, c in runs])
    rate = n / elapsed
    how = (
        f"A {n:,}-commit history (1-3 files per commit in a 400-file tree, generated with "
        f"`git fast-import`), `gitvault install`, then `gitvault.notes.backfill.backfill(loc)` "
        f"(what `gitvault backfill` runs, without the progress bar) timed in-process from call to "
        f"return, everything it does included. Median of {len(runs)} runs on identical copies: "
        f"{n:,} notes in {elapsed:.2f} s wall (runs: "
        f"{', '.join(f'{w:.2f}' for w, _ in runs)} s), {cpu:.2f} s CPU (gitvault + its git "
        f"children)."
    )
    return [
        Row(
            "rate",
            f"Backfill rate ({n:,} commits)",
            rate,
            "commits/s",
            target="rate",
            how=how,
            details={"seconds": elapsed, "runs_s": [w for w, _ in runs]},
        )
    ]


def vault_only_bytes(repo: Path) -> tuple[int, dict[str, tuple[int, int]]]:
    """On-disk bytes of objects reachable from the vault branch and from no other branch,
    with a per-type breakdown {type: (objects, bytes)}."""
    ref = vault_ref(repo)
    # --exclude patterns for --branches are matched without the refs/heads/ prefix.
    rev = git(
        [
            "rev-list",
            "--objects",
            "--no-object-names",
            ref,
            "--not",
            f"--exclude={ref.removeprefix('refs/heads/')}",
            "--branches",
        ],
        repo,
    ).stdout
    out = git(
        ["cat-file", "--batch-check=%(objecttype) %(objectsize:disk)"], repo, input=rev
    ).stdout.decode()
    total = 0
    kinds: dict[str, tuple[int, int]] = {}
    for line in out.splitlines():
        kind, size = line.split()
        count, sum_ = kinds.get(kind, (0, 0))
        kinds[kind] = (count + 1, sum_ + int(size))
        total += int(size)
    return total, kinds


def bench_gc(ctx: Context) -> list[Row]:
    repo = _backfilled(ctx)
    n = count_notes(repo)
    after_backfill, _ = vault_only_bytes(repo)
    ctx.say("gc: git gc")
    git(["gc", "-q"], repo)
    plain, kinds = vault_only_bytes(repo)
    ctx.say("gc: git gc --aggressive")
    git(["gc", "-q", "--aggressive"], repo)
    aggressive, akinds = vault_only_bytes(repo)
    per = plain / n
    per_aggr = aggressive / n

    def breakdown(k: dict[str, tuple[int, int]]) -> str:
        return ", ".join(
            f"{kind}s {b / n:,.0f} B/note ({c:,} objects)" for kind, (c, b) in sorted(k.items())
        )

    how = (
        f"After the backfill above ({n:,} notes), plain `git gc`; then the on-disk size "
        f"(`%(objectsize:disk)`, deltas counted as stored) of every object reachable from the "
        f"vault branch and from no other branch (`git rev-list --objects vault --not "
        f"--exclude=vault --branches | git cat-file --batch-check`), summed and "
        f"divided by the note count. Breakdown: {breakdown(kinds)}. As backfill left it, before "
        f"gc: {after_backfill / n:,.0f} B/note."
    )
    ahow = f"The same after `git gc --aggressive`. Breakdown: {breakdown(akinds)}."
    return [
        Row(
            "bytes_per_note",
            "Bytes per note after `git gc`",
            per,
            "B",
            target="bytes_per_note",
            how=how,
            details={"bytes": plain, "notes": n},
        ),
        Row(
            "bytes_per_note_aggressive",
            "Bytes per note after `git gc --aggressive`",
            per_aggr,
            "B",
            how=ahow,
            details={"bytes": aggressive},
        ),
    ]


MEASURES = (
    Measure(
        section="backfill",
        title="Backfill rate",
        run=bench_backfill,
        targets={"rate": Target(">=", 1000, "commits/s")},
        about="`gitvault backfill` writes a note for every commit of an existing history, in "
        "one fast-import pass.",
        summary=("rate",),
        order=70,
    ),
    Measure(
        section="gc",
        title="Vault size on disk",
        run=bench_gc,
        targets={"bytes_per_note": Target("<=", 1536, "B")},
        about="What the vault adds to the repository, per note, once git has packed it.",
        summary=("bytes_per_note",),
        order=71,
    ),
)
