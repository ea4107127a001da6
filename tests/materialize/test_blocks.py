"""Edit-time blocks served from the materialized file (gitvault.materialize.blocks): the launcher's
sh prints, without Python, the block Python would print for the first read or edit of a file in
a session, once per session, and hands the call to Python whenever the block may have moved
(a commit, a new vault tip, a checkout, an ignore rule, a setting, git config in the
environment). The blocks a refresh carries over are the ones it would have built.

Every hook runs as the agent runs it (tests/support/agent_hooks.py): the installed command
through `sh -c`, a recorded input of the real CLI on stdin; a sitecustomize module shows
whether Python started."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from gitvault.agents import adapters
from gitvault.materialize import blocks
from gitvault.memory.fences import RECALL_BEGIN
from gitvault.resolve import resolve
from tests.support.agent_hooks import Hooks
from tests.support.memory import set_config
from tests.support.paths import DATA
from tests.support.repos import Repo

RECORDED = DATA / "agent_hooks"
PLACEHOLDER = "/placeholder/proj"
# (agent, recorded input, canonical event): the sh serves every agent's blocks (Codex's for a
# read through its shell tool, the command line naming one file).
CALLS = [
    ("claude", "claude-PostToolUse-Read", "file-read"),
    ("codex", "codex-PostToolUse-Bash", "file-read"),
    ("claude", "claude-PreToolUse-Edit", "file-edit"),
    ("gemini", "gemini-AfterTool-read_file", "file-read"),
    ("gemini", "gemini-AfterTool-replace", "file-edit"),
    ("copilot", "copilot-postToolUse-view", "file-read"),
    ("copilot", "copilot-preToolUse-edit", "file-edit"),
]


@pytest.fixture
def shown(hooks: Hooks) -> Hooks:
    """hello.txt and greet.py with a history; an earlier session was shown hello.txt (Python),
    and a vault change since built the blocks file."""
    repo = hooks.repo
    repo.commit("Greet the world", {"hello.txt": "hello world\n", "greet.py": "print(1)\n"})
    repo.commit("Greet twice", {"hello.txt": "hello world\nsecond\n", "greet.py": "2\n"})
    repo.commit("A note on its own", {"other.md": "x\n"})
    out, python = _call(hooks, "claude", "claude-PostToolUse-Read", "file-read", _sid())
    assert python and RECALL_BEGIN in out
    _refresh(hooks)
    return hooks


def _sid() -> str:
    return str(uuid.uuid4())


def _input(name: str, repo: Repo, session: str, file: str = "hello.txt") -> str:
    def named(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace(PLACEHOLDER, str(repo.path)).replace("hello.txt", file)
        if isinstance(value, dict):
            return {k: named(v) for k, v in value.items()}
        return [named(v) for v in value] if isinstance(value, list) else value

    data = named(json.loads((RECORDED / f"{name}.json").read_text(encoding="utf-8")))
    for key in ("session_id", "sessionId"):
        if key in data:
            data[key] = session
    return json.dumps(data)


def _call(
    hooks: Hooks, agent: str, name: str, event: str, session: str, file: str = "hello.txt"
) -> tuple[str, bool]:
    return hooks.run(agent, event, _input(name, hooks.repo, session, file))


def _python(hooks: Hooks, agent: str, name: str, event: str, file: str = "hello.txt") -> str:
    """What Python answers the call in a new session (gitvault-hook itself, no launcher)."""
    hook = next(h for h in adapters.get(agent).hooks if h.event == event)
    argv = [sys.executable, "-m", "gitvault.hook", agent, hook.word or hook.event]
    return hooks._process(argv, agent, _input(name, hooks.repo, _sid(), file), {})


def _refresh(hooks: Hooks) -> bool:
    """A vault change's refresh, once the files the blocks file watches settled."""
    hooks.materialize()
    return blocks.path_for(resolve(hooks.repo.path)).is_file()


def _blocks(hooks: Hooks) -> bytes:
    return blocks.path_for(resolve(hooks.repo.path)).read_bytes()


@pytest.mark.parametrize(("agent", "name", "event"), CALLS)
def test_a_block_is_served_without_python_as_python_serves_it_once_a_session(
    shown: Hooks, agent: str, name: str, event: str
) -> None:
    session = _sid()
    out, python = _call(shown, agent, name, event, session)
    assert not python, "served by the launcher"
    assert RECALL_BEGIN in out and "Memory of hello.txt (" in out
    assert out == _python(shown, agent, name, event)
    shown_list = shown.repo.state_dir / "recall-shown" / session
    assert shown_list.read_text(encoding="utf-8") == "hello.txt\n"
    assert (shown_list.stat().st_mode & 0o777) == 0o600
    assert _call(shown, agent, name, event, session) == ("", False), "never twice a session"


def test_codex_s_block_is_served_only_for_its_shell_tool(shown: Hooks) -> None:
    """The same command line under another tool (apply_patch: a patch) is Python's to read."""
    raw = json.loads(_input("codex-PostToolUse-Bash", shown.repo, _sid()))
    raw["tool_name"] = "apply_patch"
    out, python = shown.run("codex", "file-read", json.dumps(raw))
    assert python
    hook = [sys.executable, "-m", "gitvault.hook", "codex", "file-read"]
    raw["session_id"] = _sid()
    assert out == shown._process(hook, "codex", json.dumps(raw), {})


def test_a_file_no_session_was_shown_is_python_s(shown: Hooks) -> None:
    out, python = _call(shown, "claude", "claude-PostToolUse-Read", "file-read", _sid(), "greet.py")
    assert python and "Memory of greet.py (" in out


def test_a_commit_goes_to_python_until_its_refresh_and_the_new_block_is_served(
    shown: Hooks,
) -> None:
    shown.repo.commit("Greet a third time", {"hello.txt": "three\n"})
    out, python = _call(shown, "claude", "claude-PostToolUse-Read", "file-read", _sid())
    assert python and "Greet a third time" in out
    assert _refresh(shown)
    again, python = _call(shown, "claude", "claude-PostToolUse-Read", "file-read", _sid())
    assert not python and again == out


def test_a_block_carried_over_is_the_block_a_rebuild_makes(
    shown: Hooks, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unrelated commit carries hello.txt's block over (no block rendered again); a commit
    deleting a file it names builds it again; either way what the sh serves is what Python
    says."""
    from gitvault.pathrecall import block

    rendered: list[str] = []
    render = block.render
    monkeypatch.setattr(
        block,
        "render",
        lambda found, *a, **k: rendered.append(found.path) or render(found, *a, **k),
    )
    where = blocks.path_for(resolve(shown.repo.path))

    def commit(message: str, files: dict[str, str]) -> None:
        """A commit whose refresh the detached drainer runs once what it watches settled:
        the last blocks file is still there (the test's synchronous commit, whose refresh
        cannot wait, removes it)."""
        data, stat = where.read_bytes(), where.stat()
        shown.repo.commit(message, files)
        where.write_bytes(data)
        os.utime(where, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert _refresh(shown)

    commit("Unrelated", {"other.md": "changed\n"})  # a change (a file added: all again)
    assert rendered == [], "carried over, not built again"
    out, python = _call(shown, "claude", "claude-PostToolUse-Read", "file-read", _sid())
    assert not python and out == _python(shown, "claude", "claude-PostToolUse-Read", "file-read")
    assert "greet.py" in out
    shown.repo.git("rm", "-q", "greet.py")
    commit("Drop greet.py", {})
    assert rendered == ["hello.txt"], "its block names greet.py: built again"
    out, python = _call(shown, "claude", "claude-PostToolUse-Read", "file-read", _sid())
    assert not python and out == _python(shown, "claude", "claude-PostToolUse-Read", "file-read")
    assert "greet.py changed with it" not in out


def test_a_vault_tip_no_refresh_followed_goes_to_python(shown: Hooks) -> None:
    """The vault moved by other hands than gitvault's (a fetch into the branch, a reset): no
    refresh ran, so no block is served from the file."""
    shown.repo.git("update-ref", "refs/heads/vault", "refs/heads/vault~1")
    _, python = _call(shown, "claude", "claude-PostToolUse-Read", "file-read", _sid())
    assert python


def test_a_checkout_goes_to_python(shown: Hooks) -> None:
    shown.repo.git("checkout", "-q", "-b", "elsewhere")
    _, python = _call(shown, "claude", "claude-PostToolUse-Read", "file-read", _sid())
    assert python


def test_an_ignore_rule_on_the_way_down_goes_to_python_which_says_nothing(shown: Hooks) -> None:
    (shown.repo.path / ".gitignore").write_text("hello.txt\n")
    shown.repo.git("rm", "-q", "--cached", "hello.txt")
    out, python = _call(shown, "claude", "claude-PostToolUse-Read", "file-read", _sid())
    assert python and out == ""


def test_edit_time_recall_turned_off_or_another_agent_list_goes_to_python(shown: Hooks) -> None:
    shown.repo.git("config", "gitvault.agents", "codex")
    out, python = _call(shown, "claude", "claude-PostToolUse-Read", "file-read", _sid())
    assert python and out == ""
    shown.repo.git("config", "--unset", "gitvault.agents")
    set_config(shown.repo, "recall", edit_time=False)
    _refresh(shown)
    out, python = _call(shown, "claude", "claude-PostToolUse-Read", "file-read", _sid())
    assert out == ""
    assert not blocks.path_for(resolve(shown.repo.path)).exists(), "no blocks while it is off"


def test_git_config_in_the_environment_goes_to_python(shown: Hooks) -> None:
    raw = _input("claude-PostToolUse-Read", shown.repo, _sid())
    _, python = shown.run("claude", "file-read", raw, GIT_CONFIG_COUNT="0")
    assert python


def test_parallel_reads_of_one_file_in_a_session_show_it_once(shown: Hooks) -> None:
    session = _sid()
    outputs: list[str] = []

    def read() -> None:
        outputs.append(_call(shown, "claude", "claude-PostToolUse-Read", "file-read", session)[0])

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(1 for out in outputs if out) == 1, outputs
    shown_list = shown.repo.state_dir / "recall-shown" / session
    assert shown_list.read_text(encoding="utf-8") == "hello.txt\n"


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],
        lambda data: data.replace(b"\n#", b"\nX"),
        lambda data: data.replace(b"hello.txt\n#", b"hello.txt\n#99999\t"),
        lambda data: data.replace(b"gitvault-files 1", b"gitvault-files 2"),
        lambda data: data.replace(b"hello.txt\n#", b"hello.txt\n"),
        lambda data: b"$(touch pwned)\n" + data,
    ],
)
def test_a_damaged_blocks_file_goes_to_python_and_runs_nothing(shown: Hooks, damage: Any) -> None:
    where = blocks.path_for(resolve(shown.repo.path))
    stat = where.stat()
    where.write_bytes(damage(where.read_bytes()))
    os.utime(where, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    out, python = _call(shown, "claude", "claude-PostToolUse-Read", "file-read", _sid())
    assert python and out == _python(shown, "claude", "claude-PostToolUse-Read", "file-read")
    assert not (shown.repo.path / "pwned").exists()


def test_a_blocks_file_that_is_a_link_or_a_fifo_goes_to_python(shown: Hooks) -> None:
    where = blocks.path_for(resolve(shown.repo.path))
    copy = where.with_name("elsewhere")
    where.rename(copy)
    where.symlink_to(copy)
    _, python = _call(shown, "claude", "claude-PostToolUse-Read", "file-read", _sid())
    assert python
    where.unlink()
    os.mkfifo(where)
    _, python = _call(shown, "claude", "claude-PostToolUse-Read", "file-read", _sid())
    assert python


def test_hostile_file_names_never_match_another_line(hooks: Hooks) -> None:
    """A file named like a header line, a digit string or another path's block is served its
    own block or none, never another line of the file."""
    repo = hooks.repo
    names = ["ref: refs/heads/main", "end", "123", "a b.txt", "ünï.txt"]
    repo.commit("Odd names", {n: f"{n}\n" for n in names})
    for name in names:
        _call(hooks, "claude", "claude-PostToolUse-Read", "file-read", _sid(), name)
    assert _refresh(hooks)
    for name in names:
        out, python = _call(hooks, "claude", "claude-PostToolUse-Read", "file-read", _sid(), name)
        # A name JSON writes with an escape (a tab, non-ASCII) is Python's: the sh reads none.
        assert python == (json.dumps(name) != f'"{name}"'), name
        text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
        assert f"Memory of {name} (" in text, (name, text[:200])
        assert out == _python(hooks, "claude", "claude-PostToolUse-Read", "file-read", name)


def test_forget_and_redact_leave_no_copy_in_the_blocks(shown: Hooks) -> None:
    where = blocks.path_for(resolve(shown.repo.path))

    def sha(subject: str) -> str:
        return shown.repo.git("log", "--format=%H", f"--grep={subject}", "-n1").strip()

    for subject in ("Greet twice", "Greet the world"):
        assert subject.encode() in _blocks(shown)
    done = shown.repo.gv("forget", f"c:{sha('Greet twice')}")
    assert done.code == 0, done
    assert not where.exists() or b"Greet twice" not in where.read_bytes()
    done = shown.repo.gv("redact", f"c:{sha('Greet the world')}", "--pattern", "the world", "-y")
    assert done.code == 0, done
    assert not where.exists() or b"the world" not in where.read_bytes()
    out, _ = _call(shown, "claude", "claude-PostToolUse-Read", "file-read", _sid())
    assert "Greet twice" not in out and "the world" not in out


def test_a_refresh_a_command_waits_for_spends_at_most_its_budget(
    shown: Hooks, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no time left, a full build writes no block (Python's, at the call), and leaves no
    block of the last file behind."""
    shown.repo.git("config", "gitvault.unrelated", "1")  # a changed basis: build every block
    shown.then += 5  # the config file, written since the last refresh, settled later
    shown.settle()
    loc = resolve(shown.repo.path)
    assert blocks.refresh(loc, budget=0.0)
    assert b"Memory of hello.txt" not in _blocks(shown)
    _, python = _call(shown, "claude", "claude-PostToolUse-Read", "file-read", _sid())
    assert python


def test_the_launcher_serves_no_block_without_flock(shown: Hooks, tmp_path: Path) -> None:
    """flock(1) is util-linux's, not POSIX: without it the claim is Python's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sh", "git", "grep", "awk", "head", "cat", "wc", "date"):
        found = subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, text=True)
        if found.stdout.strip():
            (bin_dir / tool).symlink_to(found.stdout.strip())
    python_dir = str(Path(sys.executable).parent)
    raw = _input("claude-PostToolUse-Read", shown.repo, _sid())
    _, python = shown.run("claude", "file-read", raw, PATH=f"{bin_dir}:{python_dir}")
    assert python
