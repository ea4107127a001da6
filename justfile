# gitvault's dev loop. `just --list` shows the recipes.

python := env_var_or_default("PYTHON", "python3")

# Run the whole test suite (what CI runs).
test *args:
    {{python}} -m pytest -n auto {{args}}

# ruff (lint + format check), mypy --strict on the package, README's command reference,
# BENCHMARKS.md and README's benchmark summary against bench/results.json.
lint:
    {{python}} -m ruff check gitvault tests bench
    {{python}} -m ruff format --check gitvault tests bench
    {{python}} -m mypy
    {{python}} -m gitvault.commands.reference --check
    {{python}} bench/report.py --check

# Regenerate README's command reference from the CLI's own help, and BENCHMARKS.md and README's
# benchmark summary from bench/results.json (measures nothing).
docs:
    {{python}} -m gitvault.commands.reference
    {{python}} bench/report.py

# Format the code.
fmt:
    {{python}} -m ruff format gitvault tests bench
    {{python}} -m ruff check --fix gitvault tests bench

# Measure every section of BENCHMARKS.md (or --only NAME ...; --set SIZE=N; --list) and
# record it there, in bench/results.json and in README's summary.
bench *args:
    {{python}} bench/run.py {{args}}

# gitvault next to its peers on one repository (the click history), whole processes, interleaved:
# claude-mem 13.25.3's hooks and agentlore 0.9.1's recall (installed pinned into .cache/peers/ from
# the npm registry and PyPI on the first run, offline after). Not part of `just bench`.
bench-peers *args:
    {{python}} bench/run.py --only peers {{args}}

# Score the digest mergers on the fold-quality scenarios (builtin; add --merger claude).
bench-fold *args:
    {{python}} bench/fold_quality.py {{args}}

# Replay real histories (shared/histories/*.bundle; git/git from $GITVAULT_BENCH_GIT) through
# gitvault's commands and score digest truth, search and cost against git itself (not a test).
bench-real *args:
    {{python}} -m bench.real {{args}}

# The same replay, recorded: its table and judged rows into BENCHMARKS.md (section "real").
bench-real-record *args:
    {{python}} bench/run.py --only real {{args}}

# The whole loop on a scratch repository, offline.
demo:
    {{python}} -m gitvault demo

# Many writers at once: every concurrency test of the suite and the large run (8 worktrees x 50
# commits beside two CPU-bound processes), ten rounds in a row; then every test marked stress
# (tests/stress/: kill points, 1,000 inputs per hook, the whole secrets corpora).
stress:
    for i in 1 2 3 4 5 6 7 8 9 10; do echo "concurrency round $i"; {{python}} -m pytest -q -n 2 -k "at_once or concurrent" tests || exit 1; {{python}} -m pytest -q -m stress tests/stress/test_concurrency.py || exit 1; done
    {{python}} -m pytest -q -m stress
