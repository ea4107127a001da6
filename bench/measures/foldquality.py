"""Fold quality: the builtin merger on fixed scenarios with known facts, scored by
bench/fold_quality.py (facts kept, facts gone, citations, caps, duplicates, incremental ==
rebuild). A model merger is scored there with `--merger claude` when one is logged in."""

from __future__ import annotations

import sys
from pathlib import Path

from registry import Measure, Row, Target

from measures.common import Context

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def bench_fold_quality(ctx: Context) -> list[Row]:
    import fold_quality

    commits = ctx.sizes.fold_commits
    results = fold_quality.run(commits, ["builtin"], show=False, say=ctx.say)
    rows = []
    for found in results:
        score = float(str(found["score"]))
        scenario = str(found["scenario"])
        shown = f"{score:.2f}"
        how = "bench/fold_quality.py"
        if "kept" in found:
            shown += f" ({found['passed']}/{found['checks']})"
            how += (
                f": {found['lines']} lines, {found['chars']} characters, "
                f"{found['cut_markers']} cut markers, {float(str(found['seconds'])):.1f} s to "
                "fold with --rebuild"
            )
        label = scenario + (f", {commits:,} commits" if scenario == "long-history" else "")
        rows.append(
            Row(
                key=scenario.split(" ")[0].replace("-", "_"),
                metric=f"fold quality: {label} ({found['merger']})",
                value=score,
                shown=shown,
                target="score",
                how=how + ".",
            )
        )
    return rows


MEASURES = (
    Measure(
        section="fold-quality",
        title="Fold quality",
        run=bench_fold_quality,
        targets={"score": Target("==", 1)},
        about="Fixed scenarios with known facts, each a real repository with gitvault installed, "
        "folded with `--rebuild` by the builtin merger and scored as the share of checks passed: "
        "facts that must be kept, facts that must be gone, every citation resolving in the "
        "vault, the digest within its cap, no two lines saying the same thing; and three "
        "incremental folds against one rebuild. The long scenario imitates a mid-size Python "
        "library's history (written with fast-import); the checks were written by the authors "
        "of the merger, so the scores are an upper bound. A model merger is scored by "
        "`just bench-fold --merger claude` where one is logged in.",
        summary=("sessions", "long_history"),
        order=90,
    ),
)
