"""The package's shape, checked on its source: one home for the vault layout and for the local
state files, subpackages that say their job, imports that follow the layers (top-level modules
and commands/ included), no generic module importing a specific one, no import cycle at all,
one door to child processes, one compare-and-swap loop, and hooks that never load what they do
not need."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PACKAGE = ROOT / "gitvault"
SUBPACKAGES = (
    "vault",
    "scrub",
    "notes",
    "memory",
    "pathrecall",
    "fold",
    "agents",
    "sync",
    "status",
    "commands",
)

# The floors, bottom to top. A unit (a subpackage, or a top-level module) may import units of
# lower floors; units on one floor are siblings and import none of each other.
FLOORS: tuple[frozenset[str], ...] = tuple(
    frozenset("gitvault" if name == "(package)" else f"gitvault.{name}" for name in floor.split())
    for floor in (
        "(package) errors named",  # (package): the version; the exception root; NamedTuple, light
        "resolve resources lazyre",  # which vault this is; the package data files; lazy patterns
        "scrub",  # the secret filter (only named, lazyre of gitvault; vault commits name it)
        "vault",  # the branch, git, files, the state folder, child processes
        "notes memory",  # commit → note; session text in, recall out
        "pathrecall",  # what the vault knows per project path: the index, the edit-time block
        "materialize",  # what the hooks serve without Python: recall and edit-time blocks
        "fold sync",  # the digest rewrite; the vault exchange
        "agents",  # the hook behaviours and the agent adapters
        "install status drain claude_hooks configure mcpserver",  # product-wide, MCP
        # the whole loop on a scratch repository; the hooks' entry (it answers the status line)
        "demo hook",
        "commands",  # the typer commands, thin over the floors below
        "cli",  # the app: parse, dispatch, map errors to exit codes (and status --line first)
        "__main__",
    )
)
# Upward imports that are part of the design: the README's command reference is rendered from
# the app itself (a developer's tool, which the app never imports).
UPWARD_IMPORTS = {("gitvault.commands.reference", "gitvault.cli")}

# Generic modules and the specific modules they must never import.
GENERIC = {
    "gitvault.vault.files": ("gitvault.vault.",),
    "gitvault.vault.times": ("gitvault.vault.",),
    "gitvault.vault.processes": ("gitvault.vault.",),
    "gitvault.vault.layout": ("gitvault.vault.",),
    "gitvault.vault.statedir": ("gitvault.vault.store", "gitvault.vault.objects"),
    "gitvault.vault.gitcmd": ("gitvault.vault.store", "gitvault.vault.objects"),
    "gitvault.scrub.rules": ("gitvault.scrub.engine",),
    "gitvault.fold.merger": ("gitvault.fold.mergers", "gitvault.fold.builtin", "gitvault.fold.run"),
    "gitvault.notes.render": ("gitvault.notes.drain", "gitvault.notes.backfill"),
}

# The one door to child processes, and the one module that starts git through it.
PROCESS_DOOR = "vault/processes.py"
GIT_DOOR = "vault/gitcmd.py"
_PROCESS_CALLS = re.compile(r"^(system|popen|exec\w*|spawn\w*|fork\w*|posix_spawn\w*)$")


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _name(path: Path) -> str:
    parts = ["gitvault", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in _modules()}


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node, function bodies included, but not what `if TYPE_CHECKING:` guards."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _imports(path: Path) -> set[str]:
    """The gitvault modules (and anything else) path imports, at module level or in a function;
    `from a import b` counts as a.b when that is a module."""
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(
                f"{node.module}.{a.name}"
                for a in node.names
                if f"{node.module}.{a.name}" in MODULES
            )
    return found


@functools.cache
def _graph() -> dict[str, set[str]]:
    """module → the gitvault modules it imports (an import names one module: the packages'
    __init__ run on the way are not counted, or every package that lists its modules, like
    the adapter registry, would be a cycle with each of them)."""
    return {
        name: {target for target in _imports(path) if target in MODULES and target != name}
        for name, path in MODULES.items()
    }


def _unit(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def _floor(unit: str) -> int:
    for index, floor in enumerate(FLOORS):
        if unit in floor:
            return index
    raise AssertionError(f"{unit} is on no floor: place it in FLOORS")


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), and self-loops."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def test_subpackages_say_their_job_and_the_top_level_stays_small() -> None:
    for name in SUBPACKAGES:
        doc = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text()))
        assert doc and len(doc) > 80, f"gitvault/{name}/__init__.py needs a docstring"
    top = [p for p in PACKAGE.glob("*.py")]
    assert len(top) <= 15, sorted(p.name for p in top)


def test_every_module_is_on_a_floor() -> None:
    units = {_unit(m) for m in MODULES}
    placed = set().union(*FLOORS)
    assert units <= placed, sorted(units - placed)
    assert placed <= units, f"FLOORS names what does not exist: {sorted(placed - units)}"


def test_imports_follow_the_floors() -> None:
    bad = []
    for module, targets in _graph().items():
        here = _unit(module)
        for target in targets:
            there = _unit(target)
            if there == here or (module, target) in UPWARD_IMPORTS:
                continue
            if _floor(there) >= _floor(here):
                bad.append(f"{module} imports {target} (floor {_floor(there)} ≥ {_floor(here)})")
    assert not bad, bad


def test_the_import_reader_counts_function_level_imports_not_type_checking_ones(
    tmp_path: Path,
) -> None:
    source = tmp_path / "sample.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import gitvault.fold.run\n"
        "def later():\n    from gitvault.vault import store\n"
    )
    found = _imports(source)
    assert "gitvault.vault.store" in found and "gitvault.fold.run" not in found


@pytest.mark.parametrize("generic", sorted(GENERIC))
def test_no_generic_module_imports_a_specific_one(generic: str) -> None:
    imported = _graph()[generic]
    bad = sorted(t for t in imported if t.startswith(GENERIC[generic]))
    assert not bad, f"{generic} imports {bad}"


def test_there_is_no_import_cycle() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert sorted(_cycles(graph)) == [["a", "b", "c"], ["e"]]


def test_one_door_to_child_processes() -> None:
    """Only vault/processes.py imports subprocess (or starts a process any other way), and
    only vault/gitcmd.py starts git."""
    bad = []
    for path in _modules():
        rel = _rel(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {n.split(".")[0] for n in _imports(path)}
        if rel != PROCESS_DOOR and names & {"subprocess", "pty", "multiprocessing"}:
            bad.append(f"{rel} imports {sorted(names & {'subprocess', 'pty', 'multiprocessing'})}")
        compared = {
            id(side)
            for node in ast.walk(tree)
            if isinstance(node, ast.Compare)
            for side in (node.left, *node.comparators)
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "os"
                and _PROCESS_CALLS.match(node.attr)
            ):
                bad.append(f"{rel}:{node.lineno} os.{node.attr}")
            if (
                rel != GIT_DOOR
                and isinstance(node, ast.List | ast.Tuple)
                and node.elts
                and isinstance(node.elts[0], ast.Constant)
                and node.elts[0].value == "git"
                and id(node) not in compared  # `args[:2] == ["git", "drain"]` starts nothing
            ):
                bad.append(f"{rel}:{node.lineno} starts git itself (use vault/gitcmd)")
    assert not bad, bad


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


def test_only_the_state_module_names_a_local_state_file() -> None:
    from gitvault.vault import statedir

    names = {
        value
        for key, value in vars(statedir).items()
        if key.isupper() and isinstance(value, str) and re.search(r"[./-]", value)
    }
    assert {"fold-state.json", "spool.work", "drain.pid", "bin/gitvault-hook"} <= names
    offenders = []
    for path in _modules():
        if _rel(path) == "vault/statedir.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in names:
                offenders.append(f"{_rel(path)}:{node.lineno}: {node.value!r}")
    assert not offenders, offenders


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
