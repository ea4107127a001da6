"""`just bench-real` / `python -m bench.real` / `python bench/real/run.py`.

    python -m bench.real                        every history found, full run
    python -m bench.real --history NAME=PATH    add a history (a bundle, a bare mirror or a
                                                checkout; repeatable)
    python -m bench.real --only click           only that history (repeatable)
    python -m bench.real --quick                10 queries per kind, 5 latency runs (smoke)
    python -m bench.real --only-edit            only the edit-time recall measure
    python -m bench.real --edit-sample N        its sample: N commits (-1: skip it)

Histories: every `*.bundle` in the histories folder ($GITVAULT_BENCH_HISTORIES, else the first
`shared/histories` folder found beside or above this checkout), plus git/git from
$GITVAULT_BENCH_GIT (a clone or a bare mirror of https://github.com/git/git); a history that
is not there is skipped with the reason printed. The JSON results go to --json (default
.cache/bench-real/results.json under the checkout). Exit status 0 when every history ran,
2 when the harness failed on one.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench.real` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.real import report  # noqa: E402
from bench.real.editrecall import EditRecall  # noqa: E402
from bench.real.replay import Options, Replay, gitvault_command  # noqa: E402
from bench.real.sandbox import Sandbox, sandbox  # noqa: E402

CHECKOUT = Path(__file__).resolve().parents[2]
HISTORIES_ENV = "GITVAULT_BENCH_HISTORIES"
GIT_GIT_ENV = "GITVAULT_BENCH_GIT"


def histories_dir() -> Path | None:
    configured = os.environ.get(HISTORIES_ENV)
    if configured:
        return Path(configured)
    for parent in [CHECKOUT, *CHECKOUT.parents]:
        candidate = parent / "shared" / "histories"
        if candidate.is_dir():
            return candidate
    return None


def default_histories() -> tuple[dict[str, Path], dict[str, str]]:
    """(name → source) of the histories found, and (name → reason) of those skipped."""
    found: dict[str, Path] = {}
    skipped: dict[str, str] = {}
    where = histories_dir()
    if where is None:
        skipped["click"] = (
            f"no histories folder: set {HISTORIES_ENV} to a folder of git bundles "
            "(click.bundle), or pass --history click=PATH"
        )
    else:
        for bundle in sorted(where.glob("*.bundle")):
            found[bundle.stem] = bundle
        if not found:
            skipped["click"] = f"no *.bundle in {where}"
    git_git = os.environ.get(GIT_GIT_ENV)
    if not git_git:
        skipped["git"] = (
            f"git/git is not here: set {GIT_GIT_ENV} to a clone or bare mirror of "
            "https://github.com/git/git (or pass --history git=PATH) to measure it"
        )
    elif not Path(git_git).exists():
        skipped["git"] = f"{GIT_GIT_ENV}={git_git} does not exist"
    else:
        found["git"] = Path(git_git)
    return found, skipped


def _checkout_version() -> str:
    proc = subprocess.run(
        ["git", "-C", str(CHECKOUT), "describe", "--always", "--dirty"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip()


def measure(
    sources: dict[str, Path],
    skipped: dict[str, str] | None = None,
    options: Options | None = None,
    say: Callable[[str], None] = print,
    workdir: Path | None = None,
    keep: bool = False,
) -> dict[str, object]:
    """Replay every history and return the results (the dict the JSON file holds)."""
    options = options or Options()
    gv = options.gitvault or gitvault_command()
    version = subprocess.run([*gv, "--version"], capture_output=True, text=True, check=False)
    results: dict[str, object] = {
        "harness": "bench/real 1",
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "gitvault": version.stdout.strip(),
        "checkout": _checkout_version(),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "git": subprocess.run(
                ["git", "--version"], capture_output=True, text=True, check=False
            ).stdout.strip(),
        },
        "seed": options.seed,
        "per_kind": options.per_kind,
    }
    histories: dict[str, object] = {}
    results["histories"] = histories
    for name, reason in (skipped or {}).items():
        if name not in sources:
            say(f"{name}: skipped: {reason}")
            histories[name] = {"status": "skipped", "reason": reason}
    for name, source in sources.items():
        start = time.perf_counter()
        try:
            with sandbox(workdir, keep) as box:
                out = {} if options.only_edit else Replay(name, source, box, options, say).run()
                out["edit_recall"] = _edit_recall(name, source, box, options, say)
            out["status"] = "measured"
        except Exception as exc:  # one history failing must not lose the others' figures
            say(f"{name}: the harness failed: {exc}")
            out = {"status": "error", "reason": str(exc), "traceback": traceback.format_exc()}
        out["seconds"] = round(time.perf_counter() - start, 1)
        histories[name] = out
    return results


def _edit_recall(
    name: str, source: Path, box: Sandbox, options: Options, say: Callable[[str], None]
) -> dict[str, object]:
    """The edit-time recall measure; its failure keeps the replay's figures."""
    if options.edit_sample < 0:
        return {"status": "skipped", "reason": "--edit-sample below 0"}
    try:
        return EditRecall(name, source, box, options, say).run() | {"status": "measured"}
    except Exception as exc:
        say(f"{name}: the edit-time recall measure failed: {exc}")
        return {"status": "error", "reason": str(exc), "traceback": traceback.format_exc()}


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.real", description=__doc__.split("\n\n")[0])
    p.add_argument("--history", action="append", default=[], metavar="NAME=PATH")
    p.add_argument("--only", action="append", default=[], metavar="NAME")
    p.add_argument("--seed", type=int, default=Options.seed)
    p.add_argument("--per-kind", type=int, default=Options.per_kind, metavar="N")
    p.add_argument("--latency-runs", type=int, default=Options.latency_runs, metavar="N")
    p.add_argument("--quick", action="store_true", help="10 queries per kind, 5 latency runs")
    p.add_argument(
        "--edit-sample",
        type=int,
        default=0,
        metavar="N",
        help="commits in the edit-time recall sample (default: 40, 12 above 20,000 commits;"
        " below 0: skip it)",
    )
    p.add_argument("--only-edit", action="store_true", help="only the edit-time recall measure")
    p.add_argument("--json", type=Path, default=CHECKOUT / ".cache" / "bench-real" / "results.json")
    p.add_argument("--markdown", type=Path, help="also write the markdown table here")
    p.add_argument(
        "--gitvault", help="the gitvault command to replay through (default: this venv's)"
    )
    p.add_argument("--workdir", type=Path, help="where the sandbox goes (default: the temp dir)")
    p.add_argument("--keep", action="store_true", help="keep the sandbox (debugging)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    # A terminated run still removes its sandbox (the `finally` blocks run on SystemExit).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sources, skipped = default_histories()
    for spec in args.history:
        name, sep, path = spec.partition("=")
        if not sep or not name:
            print(f"--history wants NAME=PATH, not {spec!r}", file=sys.stderr)
            return 2
        if Path(path).exists():
            sources[name] = Path(path).resolve()
            skipped.pop(name, None)
        else:
            skipped[name] = f"{path} does not exist"
    if args.only:
        sources = {k: v for k, v in sources.items() if k in args.only}
        skipped = {k: v for k, v in skipped.items() if k in args.only}
    options = Options(
        seed=args.seed,
        per_kind=10 if args.quick else args.per_kind,
        latency_runs=5 if args.quick else args.latency_runs,
        gitvault=args.gitvault.split() if args.gitvault else [],
        edit_sample=args.edit_sample,
        only_edit=args.only_edit,
    )
    results = measure(sources, skipped, options, workdir=args.workdir, keep=args.keep)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
    print()
    print(report.table(results))
    print()
    failing = report.failing_lines(results)
    if failing:
        print("Digest lines that fail or cannot be checked:")
        print(failing)
    if args.markdown:
        args.markdown.write_text(report.markdown(results) + "\n", encoding="utf-8")
    print(f"\nresults: {args.json}")
    histories = results["histories"]
    assert isinstance(histories, dict)
    return 2 if any(h.get("status") == "error" for h in histories.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
