"""What a run gives back: the plain-text table printed to stdout, markdown rows for
BENCHMARKS.md (`markdown_rows`, `markdown`), and the JSON results (the dict itself)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bench.real.queries import KINDS

TARGETS = {
    "truth": "≥ 95 % of ≥ 15 checkable lines",
    "known": "hit@3 ≥ 0.95",
    "question": "hit@3 ≥ 0.60 and above git log",
    "incremental_fold": "≤ 1 s, ≤ 200 MB (git/git)",
    "first_fold": "≤ 15 s, ≤ 400 MB (git/git)",
    "backfill": "≥ 1,500 commits/s, ≤ 200 MB (git/git)",
    "index": "≤ 40 MB, built in ≤ 5 s (git/git)",
    "warm_search": "≤ 100 ms median",
    "co-change": "≥ 1.1× `git log --full-diff --name-only`",
    "reverts": "every one named",
}


def _f(value: object, fmt: str = "{:.2f}", none: str = "—") -> str:
    if value is None:
        return none
    if isinstance(value, int | float):
        return fmt.format(value)
    return str(value)


def dig(d: object, *keys: str) -> Any:
    """The value at keys in nested dicts (None where one is missing)."""
    for key in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(key)
    return d


def search_kinds(h: dict[str, object]) -> list[str]:
    kinds = dig(h, "search", "kinds")
    if not isinstance(kinds, dict):
        return []
    order = [*KINDS, "question", "question-held-out", "question-held-out-2"]
    return [k for k in order if k in kinds] + sorted(k for k in kinds if k not in order)


def rows(results: dict[str, object]) -> list[tuple[str, str, str, str, str]]:
    """(history, metric, gitvault, baseline, target) for every figure of the run."""
    out: list[tuple[str, str, str, str, str]] = []
    histories = results.get("histories", {})
    assert isinstance(histories, dict)
    for name, h in histories.items():
        if not isinstance(h, dict):
            continue
        if h.get("status") != "measured":
            out.append((name, str(h.get("status")), str(h.get("reason", ""))[:200], "", ""))
            continue
        if "truth" in h:
            out += _replay_rows(name, h)
        out += edit_recall_rows(name, h.get("edit_recall"))
    return out


def _share(side: object) -> str:
    return f"{_f(dig(side, 'recall'), '{:.0%}')} ({dig(side, 'named')})"


def _complete(k: object, side: str) -> str:
    done = dig(k, side, "complete")
    return f", all of them in {done} of {dig(k, 'questions')} paths" if done is not None else ""


def edit_recall_rows(name: str, e: object) -> list[tuple[str, str, str, str, str]]:
    """The edit-time block against `git log --full-diff --name-only -- PATH` (and plain
    `git log -- PATH`) cut to the same 3,200 characters (bench.real.editrecall)."""
    if not isinstance(e, dict):
        return []
    if e.get("status") != "measured":
        return [(name, "edit-time recall", f"{e.get('status')}: {e.get('reason', '')}", "", "")]
    rule = e.get("rule", {})
    blocks = dig(e, "scores", "blocks")
    out = [
        (
            name,
            "edit-time recall: sample",
            f"{e.get('commits')} of {dig(rule, 'eligible')} eligible commits of the newest"
            f" {dig(rule, 'window')}, {dig(blocks, 'questions')} paths;"
            f" {dig(blocks, 'empty')} empty blocks, mean {dig(blocks, 'mean_chars')} chars",
            "`git log --full-diff --name-only CUT -- PATH`, 3,200 chars",
            "",
        )
    ]
    for kind in ("co-change", "reverts", "referenced", "all"):
        k = dig(e, "scores", kind)
        out.append(
            (
                name,
                f"edit-time recall: {kind} named (of {dig(k, 'applied')} that applied)",
                _share(dig(k, "block")) + _complete(k, "block"),
                f"{_share(dig(k, 'log_names'))}{_complete(k, 'log_names')};"
                f" plain log {_share(dig(k, 'log'))}",
                TARGETS.get(kind, ""),
            )
        )
    return out


def _replay_rows(name: str, h: dict[str, object]) -> list[tuple[str, str, str, str, str]]:
    out: list[tuple[str, str, str, str, str]] = []
    t = h.get("truth", {})
    out.append(
        (
            name,
            "digest truth: pass rate (checkable lines)",
            f"{_f(dig(t, 'pass_rate'), '{:.0%}')} of {dig(t, 'checkable')}"
            f" ({dig(t, 'unverified')} unverified)",
            "",
            TARGETS["truth"],
        )
    )
    classes = dig(t, "failure_classes")
    if isinstance(classes, dict) and classes:
        listing = ", ".join(f"{k} {v}" for k, v in classes.items())
        out.append((name, "digest truth: failing lines by rule", listing, "", ""))
    verify = h.get("verify", {})
    if isinstance(verify, dict) and "lines" in verify:
        out.append(
            (
                name,
                "verify vs the judge (lines agreeing)",
                f"{verify.get('agree')} of {verify.get('lines')}; verify flags "
                f"{verify.get('flagged')}, misses {verify.get('judge_fail_verify_ok')}",
                "",
                "",
            )
        )
    for kind in search_kinds(h):
        k = dig(h, "search", "kinds", kind)
        gv, base = dig(k, "gitvault"), dig(k, "baseline")
        note = ""
        if dig(gv, "errors"):
            note = f"; {dig(gv, 'errors')} refused by the CLI"
        if dig(gv, "hits_via_merge"):
            note += f"; {dig(gv, 'hits_via_merge')} via a merge"
        target = TARGETS["question"] if kind.startswith("question") else TARGETS["known"]
        out.append(
            (
                name,
                f"search {kind} (n={dig(gv, 'n')}): hit@3 / MRR",
                f"{_f(dig(gv, 'hit3'))} / {_f(dig(gv, 'mrr'))}{note}",
                f"{_f(dig(base, 'hit3'))} / {_f(dig(base, 'mrr'))}",
                target,
            )
        )
    c = h.get("cost", {})
    b = dig(c, "backfill")
    out.append(
        (
            name,
            "backfill: commits/s, peak RSS",
            f"{_f(dig(b, 'commits_per_s'), '{:,.0f}')} /s,"
            f" {_f(dig(b, 'peak_rss_mb'), '{:.0f}')} MB"
            f" ({_f(dig(b, 'notes'), '{:,}')} notes in {_f(dig(b, 'seconds'), '{:.1f}')} s)",
            "",
            TARGETS["backfill"],
        )
    )
    for key, label in (
        ("first_fold", "first fold"),
        ("incremental_fold", "incremental fold (20 commits)"),
    ):
        f = dig(c, key)
        out.append(
            (
                name,
                f"{label}: time, peak RSS",
                f"{_f(dig(f, 'seconds'))} s, {_f(dig(f, 'peak_rss_mb'), '{:.0f}')} MB"
                f" ({_f(dig(f, 'items'), '{:,}')} items)",
                "",
                TARGETS[key],
            )
        )
    s = dig(c, "first_search")
    w = dig(c, "warm_search")
    out.append(
        (
            name,
            "index: size, first search (builds it)",
            f"{_f(dig(s, 'index_bytes'), '{:,}')} B, {_f(dig(s, 'seconds'))} s,"
            f" {_f(dig(s, 'peak_rss_mb'), '{:.0f}')} MB",
            "",
            TARGETS["index"],
        )
    )
    out.append(
        (
            name,
            "bytes per note after git gc",
            _f(dig(c, "gc", "bytes_per_note"), "{:,.0f} B"),
            "",
            "",
        )
    )
    median = dig(w, "median_seconds")
    floor = dig(w, "cli_floor_seconds")
    median_ms = median * 1000 if isinstance(median, float) else None
    floor_ms = floor * 1000 if isinstance(floor, float) else None
    out.append(
        (
            name,
            f"warm search through the CLI (median of {dig(w, 'runs')})",
            f"{_f(median_ms, '{:.0f}')} ms (`gitvault --version`: {_f(floor_ms, '{:.0f}')} ms)",
            "",
            TARGETS["warm_search"],
        )
    )
    loads = h.get("load_average", {})
    if isinstance(loads, dict) and loads:
        out.append(
            (
                name,
                "1-min load average during the run",
                f"{min(loads.values()):.1f}–{max(loads.values()):.1f}",
                "",
                "",
            )
        )
    return out


def table(results: dict[str, object]) -> str:
    header = ("history", "metric", "gitvault", "git log baseline", "target")
    body = rows(results)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(5)]
    widths = [min(w, 70) for w in widths]

    def line(r: Iterable[str]) -> str:
        return "  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()

    out = [line(header), line("-" * w for w in widths)]
    out += [line(r) for r in body]
    return "\n".join(out)


def failing_lines(results: dict[str, object]) -> str:
    """Every failing (and unverified) digest line with its reasons."""
    out = []
    histories = results.get("histories", {})
    assert isinstance(histories, dict)
    for name, h in histories.items():
        lines = dig(h, "truth", "lines")
        if not isinstance(lines, list):
            continue
        for v in lines:
            if v["status"] == "pass":
                continue
            why = "; ".join(v["reasons"]) or "; ".join(v["unverified"])
            out.append(f"{name} {v['status'].upper()} [{v['category']} / {v['kind']}] {v['line']}")
            out.append(f"    {why}")
    return "\n".join(out)


def markdown_rows(results: dict[str, object]) -> list[str]:
    """The table as markdown rows (| history | metric | gitvault | git log | target |)."""
    return ["| " + " | ".join(cell.replace("|", "\\|") for cell in r) + " |" for r in rows(results)]


def markdown(results: dict[str, object]) -> str:
    head = [
        "| history | metric | gitvault | `git log -i --grep` baseline | target |",
        "| --- | --- | --- | --- | --- |",
    ]
    return "\n".join(head + markdown_rows(results))
