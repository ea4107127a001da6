"""gitvault on real histories, judged by git itself (`just bench-real-record`; optional: it
replays whole public histories, minutes each). The harness is bench/real (`just bench-real`
prints the same table without recording it); this measure runs it and keeps its table in
BENCHMARKS.md, with the figures that have targets as rows judged pass or miss."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from registry import Measure, Measured, Row, Target

_ROOT = Path(__file__).resolve().parents[2]


def history_rows(name: str, h: dict[str, Any]) -> list[Row]:
    """The judged figures of one history's results (bench.real.run.measure)."""
    from bench.real.report import dig as _get

    if h.get("status") != "measured":
        why = f"{h.get('status')}: {h.get('reason', '')}"[:300]
        return [Row(key=f"{name}-history", metric=f"{name}: replay", value=None, skipped=why)]
    rows: list[Row] = []
    rate, checkable = _get(h, "truth", "pass_rate"), _get(h, "truth", "checkable")
    if isinstance(rate, int | float):
        rows.append(
            Row(
                key=f"{name}-truth",
                metric=f"{name}: digest lines that pass git's checks",
                value=round(rate * 100, 1),
                unit="%",
                shown=f"{rate:.0%} of {checkable} checkable",
                target="truth",
                valid=isinstance(checkable, int) and checkable >= 15,
                note="" if isinstance(checkable, int) and checkable >= 15 else "fewer than 15",
            )
        )
    kinds = _get(h, "search", "kinds") or {}
    known = {k: v for k, v in kinds.items() if not k.startswith("question")}
    hits = [_get(v, "gitvault", "hit3") for v in known.values()]
    if hits and all(isinstance(x, int | float) for x in hits):
        worst = min(known, key=lambda k: _get(known[k], "gitvault", "hit3"))
        rows.append(
            Row(
                key=f"{name}-known",
                metric=f"{name}: known-item search, the weakest kind (hit@3)",
                value=round(_get(known[worst], "gitvault", "hit3"), 2),
                shown=f"{_get(known[worst], 'gitvault', 'hit3'):.2f} ({worst}; git log "
                f"{_get(known[worst], 'baseline', 'hit3'):.2f})",
                target="known",
            )
        )
    for kind, v in kinds.items():
        if not kind.startswith("question"):
            continue
        gv, base = _get(v, "gitvault", "hit3"), _get(v, "baseline", "hit3")
        if isinstance(gv, int | float) and isinstance(base, int | float):
            rows.append(
                Row(
                    key=f"{name}-{kind}",
                    metric=f"{name}: {kind} (n={_get(v, 'gitvault', 'n')}), hit@3",
                    value=round(gv, 2),
                    shown=f"{gv:.2f} (git log {base:.2f})",
                    target="question",
                )
            )
    edit = h.get("edit_recall")
    block = _get(edit, "scores", "co-change", "block", "recall")
    log = _get(edit, "scores", "co-change", "log_names", "recall")
    if isinstance(block, int | float) and isinstance(log, int | float) and log > 0:
        rows.append(
            Row(
                key=f"{name}-co-change",
                metric=f"{name}: edit-time block vs `git log --full-diff --name-only`, "
                "co-changed files named",
                value=round(block / log, 2),
                unit="×",
                shown=f"{block / log:.2f}× ({block:.0%} vs {log:.0%})",
                target="co_change",
            )
        )
    reverts = _get(edit, "scores", "reverts")
    applied, named = _get(reverts, "applied"), _get(reverts, "block", "named")
    if isinstance(applied, int) and applied and isinstance(named, int):
        rows.append(
            Row(
                key=f"{name}-reverts",
                metric=f"{name}: earlier reverts of the file named by the edit-time block",
                value=round(100 * named / applied, 1),
                unit="%",
                shown=f"{named} of {applied}",
                target="reverts",
            )
        )
    return rows


def bench_real(ctx: Any) -> Measured:
    if str(_ROOT) not in sys.path:
        sys.path.insert(0, str(_ROOT))
    from bench.real import report
    from bench.real import run as real

    # The sandbox dropped the GITVAULT_* variables that name the histories: read them back.
    names = (real.GIT_GIT_ENV, real.HISTORIES_ENV)
    given = {k: v for k in names if (v := ctx.box.saved_env.get(k))}
    os.environ.update(given)
    try:
        sources, skipped = real.default_histories()
    finally:
        for key in given:
            os.environ.pop(key, None)
    results = real.measure(sources, skipped, say=ctx.say)
    histories: dict[str, Any] = results["histories"]  # type: ignore[assignment]
    rows = [r for name, h in histories.items() for r in history_rows(name, h)]
    return Measured(rows, report.markdown(results))


MEASURES = (
    Measure(
        section="real",
        title="Real histories, judged by git",
        run=bench_real,
        targets={
            "truth": Target(">=", 95, "%"),
            "known": Target(">=", 0.95),
            "question": Target(">=", 0.6),
            "co_change": Target(">=", 1.1, "×"),
            "reverts": Target(">=", 100, "%"),
        },
        about="bench/real replays each history (click from shared/histories/click.bundle; "
        "git/git from $GITVAULT_BENCH_GIT, skipped with the reason when absent) through "
        "gitvault's own commands in a sandbox: clone, install, backfill, gc, fold (builtin), "
        "verify, search, 20 commits through the hooks, an incremental fold; then the edit-time "
        "recall measure (a vault built from the history before its newest 300 commits). Every "
        "score is computed from git (bench/real/README.md says how), next to the baseline a "
        "user would otherwise have (`git log -i --grep` for search; `git log --full-diff "
        "--name-only -- PATH` cut to the block's 3,200 characters for edit time), in the same "
        "run. The question sets were written from git log before any query ran; the held-out "
        "ones were each reported once before this record and never tuned on. "
        "`just bench-real-record`; not part of `just bench`.",
        summary=(
            "click-truth",
            "git-truth",
            "click-question-held-out-4",
            "git-question-held-out-4",
            "click-co-change",
            "git-co-change",
        ),
        order=210,
        optional=True,
    ),
)
