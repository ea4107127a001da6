"""`just lint` inside the suite, so CI keeps the code ruff- and mypy-clean."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests.support.paths import ROOT


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]')")
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_check() -> None:
    proc = _run("ruff", "check", "gitvault", "tests", "bench")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format() -> None:
    proc = _run("ruff", "format", "--check", "gitvault", "tests", "bench")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict() -> None:
    proc = _run("mypy")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_readme_command_reference_is_generated_from_the_cli() -> None:
    proc = _run("gitvault.commands.reference", "--check")
    assert proc.returncode == 0, proc.stdout + proc.stderr + " (run `just docs`)"
