"""gitvault's benchmark harness: `just bench [--quick] [--no-write] [--only NAME]...`.

Measures, side by side in one run and on real scratch repositories in a temp dir, the
performance targets of issue 2 (and a slot for issue 4's SessionStart bound), prints a table
and records it with a description of the machine in BENCHMARKS.md at the top of the checkout.

    python bench/run.py                 full sizes, writes BENCHMARKS.md
    python bench/run.py --quick         small sizes (smoke run); never writes BENCHMARKS.md
    python bench/run.py --only drain    one benchmark (repeatable); does not write either
    python bench/run.py --output F.md   write the report to F.md instead

Git is isolated as in the test suite (HOME → temp dir, GIT_CONFIG_GLOBAL → temp file,
GIT_CONFIG_NOSYSTEM=1); the temp dir is removed and no background process is left behind.
Exit status: 0 when the run completed (targets missed or not; --check makes a miss exit 1),
2 when the harness itself failed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import (  # noqa: E402
    REPO_ROOT,
    load_average,
    machine,
    sandbox,
    small_file_cost,
    wait_for_quiet,
)
from measures import BENCHMARKS, FULL, QUICK, Context, Row  # noqa: E402

DEFAULT_OUTPUT = REPO_ROOT / "BENCHMARKS.md"


def _load_note(loads: list[float]) -> str:
    cores = os.cpu_count() or 1
    text = (
        f"1-minute load average {min(loads):.1f}–{max(loads):.1f} during the run "
        f"(sampled between benchmarks; {cores} cores)"
    )
    if max(loads) > cores * 0.75:
        text += (
            ". The machine was busy with other work while this ran: wall-clock figures "
            "are inflated; the CPU-time figures in the notes are less affected"
        )
    return text


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/run.py", description="Measure gitvault's performance targets."
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small sizes for a smoke run (never writes BENCHMARKS.md)",
    )
    parser.add_argument("--no-write", action="store_true", help="do not touch BENCHMARKS.md")
    parser.add_argument(
        "--only",
        action="append",
        choices=sorted(BENCHMARKS),
        metavar="NAME",
        help=f"run only this benchmark (repeatable): {', '.join(BENCHMARKS)}",
    )
    parser.add_argument(
        "--output", type=Path, help="write the report here (also for --quick / --only runs)"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument(
        "--wait-quiet",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="before each benchmark, wait up to SECONDS for other processes to "
        "leave the CPUs mostly idle (≤ 15%% busy); the load is recorded either way",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp dir (debugging)")
    return parser.parse_args(argv)


def _status(row: Row) -> str:
    if row.passed is None:
        return "skipped" if row.measured.startswith("skipped") else "—"
    return "pass" if row.passed else "FAIL"


def print_table(rows: list[Row], facts: list[tuple[str, str]]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    info = Table(title="machine", show_header=False, box=None)
    for key, value in facts:
        info.add_row(key, value)
    console.print(info)
    table = Table(title="gitvault benchmarks")
    table.add_column("metric")
    table.add_column("measured", justify="right")
    table.add_column("target", justify="right")
    table.add_column("result")
    colors = {"pass": "green", "FAIL": "bold red", "skipped": "yellow", "—": "dim"}
    for row in rows:
        status = _status(row)
        table.add_row(
            escape(row.metric),
            escape(row.measured),
            escape(row.target),
            f"[{colors[status]}]{status}[/]",
        )
    console.print(table)
    for row in rows:
        if row.passed is False:
            console.print(f"[bold red]{escape(row.metric)}[/]: {escape(row.how)}", highlight=False)


def render_markdown(
    rows: list[Row], facts: list[tuple[str, str]], command: str, seconds: float
) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [
        "# Benchmarks",
        "",
        "Recorded by the benchmark harness (`bench/run.py`); do not edit by hand, run it again.",
        "Every figure is measured on real scratch repositories in a temp dir, through gitvault's",
        "real paths, in one run; targets are those of issue 2 (and issue 4 for SessionStart).",
        "",
        "## Machine",
        "",
        *(f"- **{key}:** {value}" for key, value in facts),
        "",
        "## Results",
        "",
        "| metric | measured | target | result |",
        "|---|---:|---:|---|",
        *(
            f"| {cell(r.metric)} | {cell(r.measured)} | {cell(r.target)} | {_status(r)} |"
            for r in rows
        ),
        "",
        "## How each row was measured",
        "",
    ]
    for row in rows:
        lines += [f"- **{row.metric}.** {row.how}", ""]
    lines += [
        "## Command",
        "",
        "```",
        "just bench",
        f"# = {command}",
        "```",
        "",
        f"The whole run took {seconds / 60:.1f} minutes. Git was isolated as in the test suite "
        "(`HOME` and `GIT_CONFIG_GLOBAL` in a temp dir, `GIT_CONFIG_NOSYSTEM=1`); the temp dir "
        "was removed and no drainer was left running.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if importlib.util.find_spec("gitvault") is None or importlib.util.find_spec("pygit2") is None:
        print(
            f"bench: gitvault is not importable by {sys.executable}; run with the project's "
            "venv, e.g. PYTHON=.venv/bin/python just bench",
            file=sys.stderr,
        )
        return 2
    sizes = QUICK if args.quick else FULL
    names = args.only or list(BENCHMARKS)
    command = shlex.join(
        [Path(sys.executable).name, "bench/run.py", *(sys.argv[1:] if argv is None else argv)]
    )
    began = time.perf_counter()
    rows: list[Row] = []
    try:
        with sandbox(keep=args.keep) as box:
            facts = machine(box.root)
            ctx = Context(
                box=box,
                sizes=sizes,
                say=lambda msg: print(
                    f"[{time.perf_counter() - began:6.1f}s] {msg}", file=sys.stderr, flush=True
                ),
            )
            loads = [load_average()]
            for name in names:
                busy = (
                    wait_for_quiet(0.15, args.wait_quiet, ctx.say)
                    if args.wait_quiet
                    else float("nan")
                )
                disk = small_file_cost(box.root, 100)
                before = load_average()
                made = BENCHMARKS[name](ctx)
                after = load_average()
                loads += [before, after]
                for row in made:
                    row.how += (
                        f" (Machine load during this benchmark: 1-minute load average "
                        f"{before:.1f} → {after:.1f}"
                        + ("" if busy != busy else f"; CPUs {busy:.0%} busy at its start")
                        + f"; one small-file create on the scratch disk {disk * 1e6:,.0f} µs.)"
                    )
                rows += made
            facts.append(("Load", _load_note(loads)))
    except Exception:  # noqa: BLE001 - report the harness failure, leave the table untouched
        traceback.print_exc()
        print("bench: the harness failed; BENCHMARKS.md was not written", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - began
    print_table(rows, facts)
    output = args.output
    if output is None and not (args.no_write or args.quick or args.only):
        output = DEFAULT_OUTPUT
    if output is not None and not args.no_write:
        output.write_text(render_markdown(rows, facts, command, seconds), encoding="utf-8")
        print(f"wrote {output}", file=sys.stderr)
    else:
        print("BENCHMARKS.md not written (--quick, --only or --no-write)", file=sys.stderr)
    missed = [r for r in rows if r.passed is False]
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
