"""The agents live in their adapters: no module outside gitvault/agents/adapters/ names one,
generic code reaches a specific adapter only through the registry, and every agent's hooks go
through the one runtime — importing nothing heavy on session-start and turn-end, loading the
session's ledger once, resolving the repository once."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitvault.agents import adapters
from tests.support.paths import DATA, ROOT
from tests.support.repos import Repo

PACKAGE = ROOT / "gitvault"
WALK = ROOT / "tests" / "support" / "agent_walk.py"
ADAPTERS_DIR = PACKAGE / "agents" / "adapters"

# What may still name an agent outside the adapters, and why. Each entry is a module and the
# exact names or texts it may use ("*": anything in that module).
ALLOWED: dict[str, tuple[str, set[str]]] = {
    "claude_hooks.py": (
        "the forwarder that gitvault 0.1 settings run by its module path",
        {"<file name>"},
    ),
    "vault/statedir.py": (
        "the ledgers' folder on disk (named with every local state file), older than the other "
        "agents: renaming it would orphan the ledgers of sessions running during an upgrade",
        {"claude-sessions"},
    ),
    "fold/mergers.py": (
        "the fold's `claude` merger runs the claude CLI as a one-shot text model (no hooks, no "
        "session): a fold merger, not an agent adapter",
        {"*"},
    ),
    "vault/layout.py": (
        "vault.toml's defaults, which every vault already carries: the default fold merger "
        "and the default agent file",
        {"claude", "CLAUDE.md"},
    ),
    "vault/config.py": (
        "vault.toml's documentation of the fold merger settings",
        {
            "claude | command | builtin",
            "false: ANTHROPIC_API_KEY is removed from the claude child's env",
        },
    ),
    "commands/memory_cmds.py": (
        "`gitvault fold --merger/--model`: the fold merger's name",
        {"claude (default), command or builtin.", "Model for the claude merger."},
    ),
    "demo.py": ("the demo names the default fold merger", {"   `claude -p` with a small model"}),
}


def _agent_words() -> re.Pattern[str]:
    words = set()
    for adapter in adapters.all_adapters().values():
        words |= {adapter.name, adapter.agent, adapter.binary}
    return re.compile("|".join(sorted(map(re.escape, words), key=len, reverse=True)), re.I)


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found.add(id(first.value))
    return found


def _names_in(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, text) of every identifier and every string that is not a docstring (docstrings
    explain; code and the texts it shows must not single an agent out)."""
    docs = _docstrings(tree)
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            out.append((line, node.value))
        elif isinstance(node, ast.Name):
            out.append((line, node.id))
        elif isinstance(node, ast.Attribute):
            out.append((line, node.attr))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.append((line, node.name))
        elif isinstance(node, ast.arg) or isinstance(node, ast.keyword) and node.arg:
            out.append((line, node.arg))
        elif isinstance(node, ast.alias):
            out.append((line, node.name))
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append((line, node.module))
    return out


def test_no_module_outside_the_adapters_names_an_agent() -> None:
    words = _agent_words()
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ADAPTERS_DIR in path.parents:
            continue
        rel = path.relative_to(PACKAGE).as_posix()
        allowed = ALLOWED.get(rel, ("", set()))[1]
        if words.search(rel) and "<file name>" not in allowed:
            offenders.append(f"{rel}: the module's own name")
        if "*" in allowed:
            continue
        for line, text in _names_in(ast.parse(path.read_text(encoding="utf-8"))):
            if words.search(text) and text not in allowed:
                offenders.append(f"{rel}:{line}: {text[:80]!r}")
    assert not offenders, "\n".join(offenders)


def test_the_allowances_are_still_needed() -> None:
    """An allowance nobody uses any more is removed, so the list says what is left."""
    words = _agent_words()
    for rel, (reason, allowed) in ALLOWED.items():
        assert reason
        path = PACKAGE / rel
        assert path.is_file(), f"{rel} is gone: drop its allowance"
        if allowed & {"*", "<file name>"}:
            continue
        texts = {text for _, text in _names_in(ast.parse(path.read_text(encoding="utf-8")))}
        unused = {a for a in allowed if a not in texts}
        assert not unused, f"{rel}: {unused} allowed but not used"
        assert all(words.search(a) for a in allowed)


def test_generic_code_reaches_a_specific_adapter_only_through_the_registry() -> None:
    specific = {f"gitvault.agents.adapters.{name}" for name in adapters.NAMES}
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        own = next((n for n in adapters.NAMES if rel.startswith(f"agents/adapters/{n}")), None)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                hit = next((s for s in specific if name == s or name.startswith(s + ".")), None)
                if hit and hit != f"gitvault.agents.adapters.{own}":
                    offenders.append(f"{rel} imports {name}")
    assert not offenders, offenders


# -- every agent's hooks, as the agent runs them ------------------------------------------------

# Each agent's recorded hook inputs (tests/data): session-start of a new session, and turn-end.
# A new adapter adds its own here: the test fails for an agent without them.
RECORDED: dict[str, tuple[str, str]] = {
    "claude": ("SessionStart:startup", "Stop:False"),
    "codex": ("codex-SessionStart", "codex-Stop"),
    "gemini": ("gemini-SessionStart", "gemini-AfterAgent"),
    "copilot": ("copilot-sessionStart", "copilot-agentStop"),
}
HEAVY = ("dataclasses", "inspect", "typer", "rich", "pygit2", "jsonschema", "tomllib", "tomlkit")
CLAUDE_INPUTS = json.loads((DATA / "claude-hook-inputs.json").read_text(encoding="utf-8"))


def _recorded(name: str, repo: Path, session_id: str) -> str:
    if ":" in name:
        data: dict[str, Any] = dict(CLAUDE_INPUTS[name]["input"])
    else:
        data = json.loads((DATA / "agent_hooks" / f"{name}.json").read_text(encoding="utf-8"))
    for key in ("session_id", "sessionId"):
        if key in data:
            data[key] = session_id
    for key in ("transcript_path", "transcriptPath"):
        data.pop(key, None)
    data["cwd"] = str(repo)
    return json.dumps(data)


def _word(name: str, event: str) -> str:
    """The event word the agent's installed settings pass to `gitvault-hook <agent>`."""
    hook = next(h for h in adapters.get(name).hooks if h.event == event)
    return hook.word or hook.event


def _run(name: str, event: str, stdin: str, repo: Repo, *extra: str) -> dict[str, Any]:
    adapter = adapters.get(name)
    env = {**os.environ, "GITVAULT_SYNC": "1"}
    if adapter.project_var != "PWD":
        env[adapter.project_var] = str(repo.path)
    for var in adapter.session_env:
        env.pop(var, None)
    done = subprocess.run(
        [sys.executable, str(WALK), name, _word(name, event), *extra],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=repo.path,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["code"] == 0
    return report


@pytest.fixture
def every_agent(repo_factory: Callable[..., Repo]) -> Repo:
    """A repository with gitvault installed for every agent, and a digest to recall."""
    repo = repo_factory("proj", install=False)
    done = repo.gv("install", "--agent", ",".join(adapters.NAMES))
    assert done.code == 0, done
    repo.commit("feat: something to recall")
    assert repo.gv("fold", "--merger", "builtin").code == 0
    return repo


def test_every_adapter_has_recorded_hook_inputs() -> None:
    assert set(RECORDED) == set(adapters.NAMES)


@pytest.mark.parametrize("name", adapters.NAMES)
def test_session_start_and_turn_end_import_nothing_heavy(every_agent: Repo, name: str) -> None:
    start, turn_end = RECORDED[name]
    sid = str(uuid.uuid4())
    began = _run(name, "session-start", _recorded(start, every_agent.path, sid), every_agent)
    assert "VAULT RECALL" in began["stdout"], "the recall block was printed"
    ended = _run(name, "turn-end", _recorded(turn_end, every_agent.path, sid), every_agent)
    assert ended["stdout"] == "", "nothing was due at the turn's end"
    for event, report in (("session-start", began), ("turn-end", ended)):
        heavy = [m for m in report["modules"] if m.split(".")[0] in HEAVY]
        assert not heavy, f"{name} {event} imported {heavy}"
        others = [
            m
            for m in report["modules"]
            if m.startswith("gitvault.agents.adapters.")
            and m.split(".")[3] in adapters.NAMES
            and m.split(".")[3] != name
        ]
        assert not others, f"{name} {event} imported other agents' adapters: {others}"


def test_one_turn_end_walks_one_runtime_loading_the_ledger_once(every_agent: Repo) -> None:
    """A turn end with a save due, from `gitvault-hook` to stdout: the one runtime, one
    resolve (the location is passed down, never rediscovered from a folder), the ledger loaded
    once and stored once, and at most two calls from a lower floor up into a higher one."""
    for name in adapters.NAMES:
        start, turn_end = RECORDED[name]
        sid = str(uuid.uuid4())
        _run(name, "session-start", _recorded(start, every_agent.path, sid), every_agent)
        every_agent.commit(f"feat: work of the {name} session")
        walk = _run(
            name, "turn-end", _recorded(turn_end, every_agent.path, sid), every_agent, "--walk"
        )
        assert "decision" in walk["stdout"], walk["stdout"]
        runtimes = [r for r in walk["rooms"] if r.startswith("gitvault.agents.") and "runtime" in r]
        assert runtimes == ["gitvault.agents.runtime"], walk["rooms"]
        assert (walk["resolve"], walk["ledger_load"], walk["ledger_store"]) == (1, 1, 1), walk
        assert len(walk["climbs"]) <= 2, walk["climbs"]
        print(f"[walk] {name} turn-end: {len(walk['rooms'])} rooms, climbs {walk['climbs']}")


@pytest.mark.parametrize(
    "entry",
    [
        ["-m", "gitvault.hook", "session-start"],  # settings of 0.1 that named the entry
        ["-m", "gitvault.claude_hooks", "session-start"],  # settings of 0.1 (module path)
        ["-m", "gitvault.hook", adapters.DEFAULT, "session-start"],
    ],
)
def test_the_forms_earlier_releases_installed_reach_the_default_agent(
    every_agent: Repo, entry: list[str]
) -> None:
    default = adapters.get(adapters.DEFAULT)
    start, turn_end = RECORDED[adapters.DEFAULT]
    env = {**os.environ, default.project_var: str(every_agent.path)}
    sid = str(uuid.uuid4())

    def run(args: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args],
            input=stdin,
            capture_output=True,
            text=True,
            cwd=every_agent.path,
            env=env,
            timeout=120,
        )

    began = run(entry, _recorded(start, every_agent.path, sid))
    assert began.returncode == 0 and "VAULT RECALL" in began.stdout, began
    # The turn end under both words: the one 0.2 settings pass, and the canonical event.
    for word in {_word(adapters.DEFAULT, "turn-end"), "turn-end"}:
        ended = run([*entry[:-1], word], _recorded(turn_end, every_agent.path, sid))
        assert (ended.returncode, ended.stdout) == (0, ""), ended
    assert run([*entry[:-1], "no-such-event"], "{}").returncode == 2
