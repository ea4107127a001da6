"""bench.real.sandbox.measured: the figures are the measured child's, never the harness's.

A child the harness starts itself replaces the harness's memory at exec, and Linux keeps that
memory's high-water mark in the child's ru_maxrss: on git/git, where the harness grows to
~400 MB, every command (and `/bin/true`) read as ~400 MB. The probe that starts each child
keeps the harness out of the figure."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.real.sandbox import measured  # noqa: E402

BLOAT = 256 * 2**20


def test_a_small_child_of_a_large_harness_is_measured_small(tmp_path: Path) -> None:
    bloat = bytearray(BLOAT)
    for i in range(0, BLOAT, 4096):  # touched: resident, as a harness's data is
        bloat[i] = 1
    got = measured(["true"], tmp_path, dict(os.environ))
    del bloat
    assert got.returncode == 0
    assert got.max_rss < 64 * 2**20, f"`true` measured at {got.max_rss / 2**20:.0f} MB"


def test_the_child_gets_its_input_and_its_output_exit_code_and_time_come_back(
    tmp_path: Path,
) -> None:
    script = (
        'read line; echo "got $line"; echo oops >&2;'
        " i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3"
    )
    got = measured(["sh", "-c", script], tmp_path, dict(os.environ), input=b"hello\n")
    assert (got.returncode, got.stdout, got.stderr) == (3, b"got hello\n", b"oops\n")
    assert got.cpu > 0 and got.wall >= got.cpu / 2  # the loop's CPU is the child's, not 0


def test_a_command_that_cannot_start_is_a_failed_run(tmp_path: Path) -> None:
    got = measured(["gitvault-no-such-command"], tmp_path, dict(os.environ))
    assert got.returncode == 127
