"""Fold quality (issue 10): the builtin merger on fixed scenarios with known facts, scored by
bench/fold_quality.py (facts kept, facts gone, citations, caps, duplicates, incremental ==
rebuild). A model merger is scored there with `--merger claude` when one is logged in."""

from __future__ import annotations

import sys
from pathlib import Path

from measures.common import Context, Row

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def bench_fold_quality(ctx: Context) -> list[Row]:
    import fold_quality

    commits = 600 if ctx.sizes.vault_large < 100_000 else 3000
    results = fold_quality.run(commits, ["builtin"], show=False, say=ctx.say)
    rows = []
    for found in results:
        score = float(str(found["score"]))
        how = "bench/fold_quality.py"
        if "kept" in found:
            how += (
                f"; {found['lines']} lines, {found['chars']} chars, "
                f"{found['cut_markers']} cut markers, {found['seconds']:.1f}s to fold"
            )
        rows.append(
            Row(
                key="fold-quality",
                metric=f"fold quality: {found['scenario']} ({found['merger']}"
                + (f", {commits} commits)" if found["scenario"] == "long-history" else ")"),
                measured=f"{score:.2f}",
                target="1.00",
                passed=score == 1.0,
                how=how,
            )
        )
    return rows
