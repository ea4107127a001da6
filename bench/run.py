"""gitvault's benchmark harness: `just bench [--only NAME]... [--set NAME=VALUE]... [--quick]`.

Every measure in bench/measures/ (registry.discover) owns one section of BENCHMARKS.md: its
title, its targets, and a function returning rows. The harness runs them on real scratch
repositories in a temp dir, judges each row against its measure's target, records the section
(command, commit, machine, load average before and after, date, rows) in bench/results.json,
and re-renders that section of BENCHMARKS.md and README's summary (bench/report.py) as soon as
the measure is done, so a run cut short keeps what it measured.

    just bench                          every section; BENCHMARKS.md rewritten whole
    just bench --only hook --only drain those sections only; every other byte of the file kept
    just bench --set vault_large=20000  a smaller size (the sections say so in their command)
    just bench --quick                  small sizes, a smoke run: writes nothing unless --output
    just bench --list                   the sections and their targets
    just bench-peers                    the optional peers section (`--only peers`)

Git is isolated as in the test suite (HOME → temp dir, GIT_CONFIG_GLOBAL → temp file,
GIT_CONFIG_NOSYSTEM=1); the temp dir is removed and no background process is left behind.
Exit status: 0 when the run completed (targets missed or not; --check makes a miss exit 1),
2 when a measure itself failed (the other sections are still recorded).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import shlex
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import installed  # noqa: E402
import report  # noqa: E402
from harness import (  # noqa: E402
    checkout,
    load_average,
    machine,
    sandbox,
    utc_now,
    wait_for_quiet,
)
from measures.common import FULL, QUICK, Context, differences, with_overrides  # noqa: E402
from registry import Measure, Measured, Row, check_rows, discover, show, verdict  # noqa: E402


def parse_args(argv: list[str], measures: Sequence[Measure]) -> argparse.Namespace:
    names = [m.section for m in measures]
    parser = argparse.ArgumentParser(
        prog="just bench", description="Measure gitvault's performance targets."
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=names,
        metavar="NAME",
        help=f"measure only this section (repeatable): {', '.join(names)}",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override one size (measures/common.py Sizes), e.g. vault_large=20000",
    )
    parser.add_argument(
        "--quick", action="store_true", help="small sizes for a smoke run (writes only to --output)"
    )
    parser.add_argument("--no-write", action="store_true", help="write no file")
    parser.add_argument("--list", action="store_true", help="list the sections and their targets")
    parser.add_argument("--output", type=Path, help=f"the document (default {report.DOCUMENT})")
    parser.add_argument("--results", type=Path, help=f"the record (default {report.RESULTS})")
    parser.add_argument("--readme", type=Path, help=f"the README (default {report.README})")
    parser.add_argument("--check", action="store_true", help="exit 1 when a row misses or fails")
    parser.add_argument(
        "--wait-quiet",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="before each section, wait up to SECONDS for other processes to leave the CPUs "
        "mostly idle (≤ 15%% busy); the load average is recorded either way",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (debugging)")
    parser.add_argument(
        "--editable",
        action="store_true",
        help="measure this checkout's own install (default: a wheel of it in a throw-away venv, "
        "as users install it; bench/installed.py)",
    )
    return parser.parse_args(argv)


def _plain(value: Any) -> Any:
    """details made JSON-friendly: floats to 6 significant digits, tuples and sets to lists."""
    if isinstance(value, float):
        return value if math.isnan(value) or math.isinf(value) else float(f"{value:.6g}")
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        items = sorted(value) if isinstance(value, set) else value
        return [_plain(v) for v in items]
    if isinstance(value, Path):
        return str(value)
    return value


def row_record(measure: Measure, row: Row) -> dict[str, Any]:
    target = measure.targets.get(row.target) if row.target else None
    shown = row.shown or (
        show(row.value, row.unit) if row.value is not None else (row.skipped or "—")
    )
    return {
        "key": row.key,
        "metric": row.metric,
        "value": _plain(row.value),
        "unit": row.unit,
        "shown": shown,
        "target": {**target.as_json(), "text": target.text()} if target else None,
        "result": verdict(row, measure.targets),
        "note": row.skipped or row.note,
        "how": row.how,
        "details": _plain(row.details),
    }


def section_record(
    measure: Measure,
    made: list[Row] | Measured,
    *,
    command: str,
    facts: dict[str, object],
    loads: tuple[float, float],
    date: str,
    seconds: float,
    sizes: dict[str, int],
) -> dict[str, Any]:
    """What results.json keeps of one section: everything its text is rendered from."""
    measured = made if isinstance(made, Measured) else Measured(list(made))
    check_rows(measure, measured.rows)
    commit, dirty = checkout()
    return {
        "title": measure.title,
        "about": measure.about,
        "command": command,
        "commit": commit,
        "dirty": dirty,
        "date": date,
        "seconds": round(seconds, 1),
        "machine": facts,
        "load": {"before": _plain(loads[0]), "after": _plain(loads[1])},
        "sizes": sizes,
        "rows": [row_record(measure, row) for row in measured.rows],
        "markdown": measured.markdown,
    }


def record(
    measures: Sequence[Measure],
    fresh: dict[str, dict[str, Any]],
    *,
    document: Path,
    results_path: Path,
    readme: Path | None,
) -> None:
    """Put the fresh section records into results.json and their sections into the document
    (every other section kept byte for byte), then README's summary."""
    results = report.load_results(results_path)
    wanted = {m.section for m in measures}
    results["sections"] = {
        name: rec for name, rec in {**results["sections"], **fresh}.items() if name in wanted
    }
    results_path.write_text(report.dump_results(results), encoding="utf-8")
    current = document.read_text(encoding="utf-8") if document.exists() else None
    by_name = {m.section: m for m in measures}
    text = report.splice(
        current,
        report.TEMPLATE.read_text(encoding="utf-8"),
        [m.section for m in measures],
        {name: report.render_section(name, rec) for name, rec in fresh.items()},
        lambda name: report.section_text(by_name[name], results),
    )
    document.write_text(text, encoding="utf-8")
    if readme is not None:
        readme.write_text(
            report.with_summary(
                readme.read_text(encoding="utf-8"), report.render_summary(measures, results)
            ),
            encoding="utf-8",
        )


def print_rows(rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    colors = {"pass": "green", "miss": "bold red", "failed": "bold red", "skipped": "yellow"}
    table = Table(title="gitvault benchmarks")
    for name, justify in (("metric", "left"), ("measured", "right"), ("target", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    table.add_column("result")
    for row in rows:
        color = colors.get(row["result"], "dim")
        table.add_row(
            escape(row["metric"]),
            escape(row["shown"]),
            escape(row["target"]["text"] if row["target"] else "—"),
            f"[{color}]{row['result']}[/]",
        )
    Console().print(table)


def main(argv: list[str] | None = None, measures: Sequence[Measure] | None = None) -> int:
    raw = sys.argv[1:] if argv is None else argv
    measures = list(discover() if measures is None else measures)
    args = parse_args(raw, measures)
    if args.list:
        for m in measures:
            targets = "; ".join(f"{k} {t.text()}" for k, t in m.targets.items()) or "(report)"
            extra = " (optional: only with --only)" if m.optional else ""
            print(f"{m.section:<16} {m.title}{extra} — {targets}")
        return 0
    if importlib.util.find_spec("gitvault") is None or importlib.util.find_spec("pygit2") is None:
        print(
            f"bench: gitvault is not importable by {sys.executable}; run with the project's "
            "venv, e.g. PYTHON=.venv/bin/python just bench",
            file=sys.stderr,
        )
        return 2
    if argv is None and not args.editable:
        installed.reexec(raw, Path(__file__).resolve(), lambda msg: print(msg, file=sys.stderr))
    try:
        sizes = with_overrides(QUICK if args.quick else FULL, args.set)
    except ValueError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    chosen = (
        [m for m in measures if m.section in args.only]
        if args.only
        else [m for m in measures if not m.optional]
    )
    writes = not args.no_write and (not args.quick or args.output is not None)
    document: Path = args.output or report.DOCUMENT
    results_path: Path = args.results or report.RESULTS
    readme: Path | None = args.readme or (None if args.output else report.README)
    command = shlex.join(["just", "bench", *raw])
    began = time.perf_counter()
    failed: list[str] = []
    printed: list[dict[str, Any]] = []

    def say(msg: str) -> None:
        print(f"[{time.perf_counter() - began:6.1f}s] {msg}", file=sys.stderr, flush=True)

    with sandbox(keep=args.keep) as box:
        facts = machine(box.root)
        ctx = Context(box=box, sizes=sizes, say=say)
        for measure in chosen:
            if args.wait_quiet:
                wait_for_quiet(0.15, args.wait_quiet, say)
            say(f"{measure.section}: {measure.title}")
            date, before, start = utc_now(), load_average(), time.perf_counter()
            try:
                made = measure.run(ctx)
                rec = section_record(
                    measure,
                    made,
                    command=command,
                    facts=facts,
                    loads=(before, load_average()),
                    date=date,
                    seconds=time.perf_counter() - start,
                    sizes=dict(differences(sizes)),
                )
            except Exception:  # noqa: BLE001 - one failed measure must not lose the others
                traceback.print_exc()
                say(f"{measure.section}: the measure failed; its section was left as it was")
                failed.append(measure.section)
                continue
            printed += rec["rows"]
            if writes:
                fresh = {measure.section: rec}
                record(measures, fresh, document=document, results_path=results_path, readme=readme)
                say(f"{measure.section}: recorded in {document}")
    print_rows(printed)
    if not writes:
        print("bench: nothing written (--no-write, or --quick without --output)", file=sys.stderr)
    if failed:
        print(f"bench: these measures failed: {', '.join(failed)}", file=sys.stderr)
        return 2
    missed = [r for r in printed if r["result"] in ("miss", "failed")]
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
