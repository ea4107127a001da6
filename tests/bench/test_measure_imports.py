"""bench/: every name a measure imports from gitvault exists. Measures import inside their
functions (a section runs only when asked), so a renamed constant broke `--only drain` only
when it ran (`from gitvault.notes.drain import LOCK_FILE` after the lock moved to statedir)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from tests.support.paths import ROOT

BENCH = ROOT / "bench"


def _imports(path: Path) -> list[tuple[str, str, int]]:
    """(module, name, line) of every `from gitvault… import name` in a file, at any depth."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gitvault"):
            out += [(node.module or "", alias.name, node.lineno) for alias in node.names]
    return out


@pytest.mark.parametrize(
    "path", sorted(BENCH.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT))
)
def test_every_name_a_bench_module_imports_from_gitvault_exists(path: Path) -> None:
    missing = []
    for module, name, line in _imports(path):
        found = importlib.import_module(module)
        if not hasattr(found, name):
            try:
                importlib.import_module(f"{module}.{name}")  # a submodule
            except ImportError:
                missing.append(f"{path.name}:{line}: {module}.{name}")
    assert not missing, missing
