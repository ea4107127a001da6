"""The package's shape, checked on its source: one home for the vault layout, subpackages that
say their job, imports that follow the layers, one compare-and-swap loop, and hooks that never
load what they do not need."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PACKAGE = ROOT / "gitvault"
SUBPACKAGES = ("vault", "scrub", "notes", "memory", "fold", "agents", "sync", "commands")
# What each layer may import from gitvault (besides itself and the always-allowed modules).
ALWAYS = {"gitvault", "gitvault.errors", "gitvault.resolve", "gitvault.resources"}
LAYERS = {
    "vault": set(),
    "scrub": set(),
    "notes": {"vault", "scrub"},
    "memory": {"vault", "scrub"},
    "fold": {"vault", "scrub", "notes", "memory"},
    "agents": {"vault", "scrub", "notes", "memory", "fold"},
    "sync": {"vault", "scrub", "notes", "memory"},
}
LAYOUT_NAMES = ("_master.md", "vault.toml", "sessions", "notes", "patterns")


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_subpackages_say_their_job_and_the_top_level_stays_small() -> None:
    for name in SUBPACKAGES:
        doc = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text()))
        assert doc and len(doc) > 80, f"gitvault/{name}/__init__.py needs a docstring"
    top = [p for p in PACKAGE.glob("*.py")]
    assert len(top) <= 15, sorted(p.name for p in top)


def test_only_the_layout_module_spells_vault_paths() -> None:
    offenders = []
    for path in _modules():
        if _rel(path) == "vault/layout.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            value = node.value
            if value in ("_master.md", "vault.toml") or value.startswith(
                ("sessions/", "notes/", "patterns/")
            ):
                offenders.append(f"{_rel(path)}:{node.lineno}: {value!r}")
    assert not offenders, offenders


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_imports_follow_the_layers(layer: str) -> None:
    allowed = {f"gitvault.{x}" for x in (*LAYERS[layer], layer)} | ALWAYS
    bad = []
    for path in (PACKAGE / layer).rglob("*.py"):
        for name in _imports(path):
            if not name.startswith("gitvault.") or name in ALWAYS or ".__" in name:
                continue
            parts = name.split(".")
            if ".".join(parts[:2]) not in allowed and name not in allowed:
                bad.append(f"{_rel(path)} imports {name}")
    assert not bad, bad


def test_only_the_cli_imports_typer_or_rich_and_only_objects_imports_pygit2() -> None:
    for path in _modules():
        names = {n.split(".")[0] for n in _imports(path)}
        rel = _rel(path)
        if not (rel == "cli.py" or rel.startswith("commands/")):
            assert not names & {"typer", "rich"}, f"{rel} imports typer or rich"
        if rel != "vault/objects.py":
            assert "pygit2" not in names, f"{rel} imports pygit2 (only vault/objects.py may)"


def test_the_compare_and_swap_loop_exists_once() -> None:
    calls = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef):
                continue
            for node in ast.walk(func):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "cas_ref"
                ):
                    calls.append(f"{_rel(path)}:{func.name}")
    # _publish is the loop every write goes through; create makes the orphan root once.
    # replace_history is redact's one explicit exception to append-only (backup ref + move).
    assert sorted(calls) == [
        "vault/store.py:_publish",
        "vault/store.py:create",
        "vault/store.py:replace_history",
        "vault/store.py:replace_history",
    ], calls
