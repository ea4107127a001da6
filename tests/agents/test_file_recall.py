"""Edit-time recall through every agent's own tool hooks: the recorded inputs of the real CLIs
(tests/data/agent_hooks/<agent>-<event>-<tool>.json) run through `gitvault-hook <agent>
<word>` as installed, answered in the shape each agent shows the model (Claude Code and
Codex: hookSpecificOutput with the event's own name; Gemini: nested; Copilot: top level),
once per file and session, nothing when nothing is known, and cheaply when nothing is due."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from gitvault.agents import adapters
from gitvault.memory.fences import RECALL_BEGIN
from tests.support.memory import set_config
from tests.support.paths import DATA, ROOT
from tests.support.repos import Repo

WALK = ROOT / "tests" / "support" / "agent_walk.py"
RECORDED = DATA / "agent_hooks"
PLACEHOLDER = "/placeholder/proj"

# (agent, recorded input, canonical event, the file it names)
CALLS = [
    ("claude", "claude-PostToolUse-Read", "file-read", "hello.txt"),
    ("claude", "claude-PreToolUse-Edit", "file-edit", "hello.txt"),
    ("claude", "claude-PreToolUse-Write", "file-edit", "new.txt"),
    ("claude", "claude-PreToolUse-NotebookEdit", "file-edit", "nb.ipynb"),
    ("codex", "codex-PostToolUse-Bash", "file-read", "hello.txt"),
    ("codex", "codex-PreToolUse-apply_patch", "file-edit", "hello.txt"),
    ("gemini", "gemini-AfterTool-read_file", "file-read", "hello.txt"),
    ("gemini", "gemini-AfterTool-replace", "file-edit", "hello.txt"),
    ("gemini", "gemini-AfterTool-write_file", "file-edit", "new.txt"),
    ("copilot", "copilot-postToolUse-view", "file-read", "hello.txt"),
    ("copilot", "copilot-preToolUse-edit", "file-edit", "hello.txt"),
    ("copilot", "copilot-preToolUse-create", "file-edit", "new.txt"),
]
HEAVY = ("dataclasses", "inspect", "typer", "rich", "pygit2", "jsonschema", "tomllib", "tomlkit")


@pytest.fixture
def project(repo_factory: Any) -> Repo:
    """Every agent wired; hello.txt, new.txt and nb.ipynb with a history (new.txt was deleted:
    an agent writing it again still gets what happened to it)."""
    repo: Repo = repo_factory("proj", install=False)
    assert repo.gv("install", "--agent", ",".join(adapters.NAMES)).code == 0
    repo.commit("Greet the world", {"hello.txt": "hello world\n", "greet.py": "print(1)\n"})
    repo.commit("Greet twice", {"hello.txt": "hello world\nsecond line\n", "greet.py": "2\n"})
    repo.commit("A notebook and a new file", {"nb.ipynb": "{}\n", "new.txt": "old\n"})
    repo.git("rm", "-q", "new.txt")
    repo.commit("Drop new.txt", {})
    return repo


def _input(name: str, repo: Repo, session: str) -> str:
    text = (RECORDED / f"{name}.json").read_text(encoding="utf-8")
    data = json.loads(text.replace(PLACEHOLDER, str(repo.path)))
    for key in ("session_id", "sessionId"):
        if key in data:
            data[key] = session
    return json.dumps(data)


def _word(agent: str, event: str) -> str:
    hook = next(h for h in adapters.get(agent).hooks if h.event == event)
    return hook.word or hook.event


def _run(agent: str, event: str, stdin: str, repo: Repo) -> dict[str, Any]:
    adapter = adapters.get(agent)
    env = {**os.environ}
    if adapter.project_var != "PWD":
        env[adapter.project_var] = str(repo.path)
    done = subprocess.run(
        [sys.executable, str(WALK), agent, _word(agent, event)],
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


def _context(agent: str, event: str, stdout: str) -> str:
    """The text the agent shows its model, read the way that agent reads it."""
    if not stdout.strip():
        return ""
    data = json.loads(stdout)
    native = adapters.get(agent).native(event)
    if agent == "copilot":
        assert set(data) == {"additionalContext"}
        return str(data["additionalContext"])
    nested = data["hookSpecificOutput"]
    assert nested["hookEventName"] == native
    assert set(data) == {"hookSpecificOutput"}  # Codex rejects a top-level additionalContext
    return str(nested["additionalContext"])


def test_every_recorded_tool_input_is_covered() -> None:
    names = {p.stem for p in RECORDED.glob("*Tool*.json")}
    assert names == {name for _, name, _, _ in CALLS}
    for agent in adapters.NAMES:
        events = {h.event for h in adapters.get(agent).hooks}
        assert {"file-read", "file-edit"} <= events, agent


@pytest.mark.parametrize(("agent", "name", "event", "file"), CALLS)
def test_the_block_once_per_file_and_session(
    project: Repo, agent: str, name: str, event: str, file: str
) -> None:
    session = str(uuid.uuid4())
    first = _run(agent, event, _input(name, project, session), project)
    text = _context(agent, event, first["stdout"])
    assert text.startswith(RECALL_BEGIN) and f"Memory of {file} (" in text, first["stdout"]
    heavy = [m for m in first["modules"] if m.split(".")[0] in HEAVY]
    assert not heavy, heavy
    others = [
        m
        for m in first["modules"]
        if m.startswith("gitvault.agents.adapters.")
        and m.split(".")[3] not in (agent, "base")
        and m.split(".")[3] in adapters.NAMES
    ]
    assert not others, others
    again = _run(agent, event, _input(name, project, session), project)
    assert again["stdout"] == "", "the same file twice in one session"
    other = _run(agent, event, _input(name, project, str(uuid.uuid4())), project)
    assert _context(agent, event, other["stdout"]) == text, "another session gets it afresh"


@pytest.mark.parametrize("agent", adapters.NAMES)
def test_nothing_known_costs_no_git_and_no_index(project: Repo, agent: str) -> None:
    """A file the vault has never seen: answered from the path list alone."""
    _, name, event, _ = next(c for c in CALLS if c[0] == agent and c[2] == "file-read")
    stdin = _input(name, project, str(uuid.uuid4())).replace("hello.txt", "unheard-of.txt")
    report = _run(agent, event, stdin, project)
    assert report["stdout"] == ""
    costly = {"sqlite3", "subprocess", "gitvault.pathrecall.index", "gitvault.scrub.rules"}
    assert not set(report["modules"]) & costly, sorted(set(report["modules"]) & costly)


def test_outside_the_worktree_ignored_or_turned_off_says_nothing(project: Repo) -> None:
    session = str(uuid.uuid4())
    outside = _input("claude-PostToolUse-Read", project, session).replace(
        str(project.path / "hello.txt"), str(project.path / ".." / "elsewhere" / "hello.txt")
    )
    assert _run("claude", "file-read", outside, project)["stdout"] == ""
    git_dir = _input("claude-PostToolUse-Read", project, session).replace(
        str(project.path / "hello.txt"), str(project.path / ".git" / "config")
    )
    assert _run("claude", "file-read", git_dir, project)["stdout"] == ""
    set_config(project, "recall", edit_time=False)
    stdin = _input("claude-PostToolUse-Read", project, session)
    assert _run("claude", "file-read", stdin, project)["stdout"] == ""


def test_an_unserved_agent_gets_nothing(project: Repo) -> None:
    project.git("config", "gitvault.agents", "claude")
    stdin = _input("codex-PostToolUse-Bash", project, str(uuid.uuid4()))
    assert _run("codex", "file-read", stdin, project)["stdout"] == ""


def test_parallel_reads_of_one_file_show_it_once(project: Repo) -> None:
    session = str(uuid.uuid4())
    stdin = _input("claude-PostToolUse-Read", project, session)
    outputs: list[str] = []

    def read() -> None:
        outputs.append(_run("claude", "file-read", stdin, project)["stdout"])

    threads = [threading.Thread(target=read) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(1 for out in outputs if out) == 1, outputs
    shown = project.state_dir / "recall-shown" / session
    assert shown.read_text(encoding="utf-8") == "hello.txt\n"


def test_a_patch_of_several_files_gets_their_blocks_within_one_budget(project: Repo) -> None:
    patch = (
        "*** Begin Patch\n*** Update File: hello.txt\n@@\n-a\n+b\n"
        "*** Update File: greet.py\n@@\n-1\n+2\n*** Add File: brand-new.py\n+x\n*** End Patch\n"
    )
    data = json.loads(_input("codex-PreToolUse-apply_patch", project, str(uuid.uuid4())))
    data["tool_input"]["command"] = patch
    text = _context(
        "codex", "file-edit", _run("codex", "file-edit", json.dumps(data), project)["stdout"]
    )
    assert "Memory of hello.txt (" in text and "Memory of greet.py (" in text
    assert len(text) <= 3200


@pytest.mark.parametrize(
    ("command", "files"),
    [
        ("cat hello.txt", ["hello.txt"]),
        ("sed -n '1,80p' src/app.py", ["src/app.py"]),
        ("cd src && head -n 20 app.py util.py", ["src/app.py", "src/util.py"]),
        ("nl -ba a.py | sed -n 5,9p", ["a.py"]),
        ("grep -n TODO notes.md 2>/dev/null", ["notes.md"]),
        ("FOO=1 cat 'with space.txt'", ["with space.txt"]),
        ("python -c 'open(\"x\")'", []),
        ("echo 'unbalanced", []),
        ("cat < input.txt > out.txt", []),
        ("cat a.txt 2>&1 | head -5", ["a.txt"]),
        ("head -n20 x.py && tail -c 100 y.py", ["x.py", "y.py"]),
        ("sed -e 's/a/b/' -n f.txt", ["f.txt"]),
        ("awk -F: '{print $1}' /etc/passwd", ["/etc/passwd"]),
        ("rg -n pattern", []),
    ],
)
def test_the_files_a_shell_command_reads(command: str, files: list[str]) -> None:
    from gitvault.agents.adapters.codex import shell_reads

    assert shell_reads(command) == files


def test_install_adds_and_uninstall_removes_the_tool_hooks(project: Repo) -> None:
    for name, adapter in adapters.all_adapters().items():
        assert {"file-read", "file-edit"} <= set(adapter.installed(project.path)), name
    again = project.gv("install", "--agent", ",".join(adapters.NAMES))
    assert again.code == 0
    before = {
        n: (project.path / a.settings_file).read_text() for n, a in adapters.all_adapters().items()
    }
    assert project.gv("install", "--agent", ",".join(adapters.NAMES)).code == 0
    after = {
        n: (project.path / a.settings_file).read_text() for n, a in adapters.all_adapters().items()
    }
    assert before == after, "a second install changes nothing"
    status = project.gv("status", "--json").json("status")
    for entry in status["agents"]:
        assert {"file-read", "file-edit"} <= set(entry["hooks"]), entry
    assert project.gv("uninstall").code == 0
    for name, adapter in adapters.all_adapters().items():
        path: Path = project.path / adapter.settings_file
        assert not path.exists() or "file-read" not in path.read_text(), name


@pytest.mark.parametrize(("event", "name"), [("file-read", "claude-PostToolUse-Read")])
def test_the_block_loads_neither_typing_nor_openssl(project: Repo, event: str, name: str) -> None:
    """typing and hashlib (OpenSSL) cost a hook ~3 ms each to import and it uses neither: run
    with -S (no site, so no editable-install hook loads them first), the package from this
    checkout."""
    root = Path(__file__).resolve().parents[2]
    code = (
        f"import sys; sys.path.insert(0, {str(root)!r})\n"
        "from gitvault.hook import main\n"
        f"main(['claude', {_word('claude', event)!r}])\n"
        "sys.stderr.write(repr([m for m in ('typing', 'hashlib') if m in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", code],
        input=_input(name, project, str(uuid.uuid4())),
        capture_output=True,
        text=True,
        cwd=project.path,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(project.path)},
        timeout=120,
    )
    assert done.stderr == "[]", done.stderr
    assert "Memory of hello.txt (" in _context("claude", event, done.stdout)


def test_a_vault_branch_of_another_name_is_read_for_the_settings(repo_factory: Any) -> None:
    """The tool hook reads the git config, vault.toml and git's ignore rules side by side,
    vault.toml at the default branch's name before the config says which branch holds it: a
    clone whose vault lives on another branch gets that branch's settings, never those of a
    branch that happens to bear the default name."""
    repo: Repo = repo_factory("other", install=False)
    repo.git("branch", "vault")  # someone else's branch at the default name
    repo.git("config", "gitvault.branch", "memory")
    assert repo.gv("install", "--agent", "claude").code == 0
    repo.branch_name = "memory"
    repo.commit("Greet the world", {"hello.txt": "hello world\n"})
    set_config(repo, "recall", edit_time=False)
    off = _run("claude", "file-read", _input("claude-PostToolUse-Read", repo, "s1"), repo)
    assert off["stdout"] == "", "memory's vault.toml turns edit-time recall off"
    set_config(repo, "recall", edit_time=True)
    on = _run("claude", "file-read", _input("claude-PostToolUse-Read", repo, "s2"), repo)
    assert "Memory of hello.txt (" in _context("claude", "file-read", on["stdout"])


def test_a_tool_hook_takes_the_remembered_config_and_sees_a_change_at_once(project: Repo) -> None:
    """The git config keys are remembered (vault/configcache) once the files are settled: a
    later hook takes them from there, without a git process, and a change of any config file
    is seen by the next call."""
    from gitvault.resolve import resolve
    from gitvault.vault import files, gitcmd

    loc = resolve(project.path)
    past = time.time() - 60
    for path in gitcmd.config_files(loc.common_dir, loc.git_dir):
        if path.exists():
            os.utime(path, (past, past))
    first = _run("claude", "file-read", _input("claude-PostToolUse-Read", project, "c1"), project)
    assert "Memory of hello.txt (" in _context("claude", "file-read", first["stdout"])
    (cache,) = loc.state_dir.glob("config-cache.*")
    data = files.load_json_object(cache)
    assert data is not None and data["values"]["gitvault.agents"]
    data["values"]["gitvault.agents"] = "codex"  # what only the cache says: claude unserved
    files.write_json(cache, data)
    taken = _run("claude", "file-read", _input("claude-PostToolUse-Read", project, "c2"), project)
    assert taken["stdout"] == "", "the hook answered from the remembered config"
    project.git("config", "gitvault.agents", ",".join(adapters.NAMES))  # the file changes
    seen = _run("claude", "file-read", _input("claude-PostToolUse-Read", project, "c3"), project)
    assert "Memory of hello.txt (" in _context("claude", "file-read", seen["stdout"])
