"""Attacks on the edit-time blocks the launcher's sh serves (gitvault.materialize.blocks,
gitvault.vault.launcher): what the sh prints must be what Python would print on the same
input, never a stale block, never twice a session. Run as the agents run the hooks
(tests/support/agent_hooks.py)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitvault.materialize import blocks, ready
from gitvault.resolve import resolve
from gitvault.vault import launcher
from tests.materialize import test_blocks
from tests.materialize.test_blocks import _call, _input, _python, _refresh, _sid
from tests.support.agent_hooks import Hooks

shown = test_blocks.shown  # the fixture: hello.txt shown once, its block materialized
READ = ("claude", "claude-PostToolUse-Read", "file-read")


def _as_the_drainer(hooks: Hooks, change: Callable[[], None]) -> bool:
    """A vault change whose refresh the detached drainer runs once what it watches settled:
    the blocks file the last refresh wrote is still there when it builds (the foreground
    refresh of a GITVAULT_SYNC commit, which cannot wait, would remove it first)."""
    where = blocks.path_for(resolve(hooks.repo.path))
    data, stat = where.read_bytes(), where.stat()
    change()
    where.write_bytes(data)
    os.utime(where, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    fixed = 1_700_000_000  # what it watches settled long ago, at one moment
    hooks.settle()
    for path in _settled(hooks):
        os.utime(path, (fixed, fixed))
    ready.refresh(resolve(hooks.repo.path))
    return where.is_file()


def _settled(hooks: Hooks) -> list[Path]:
    """What Hooks.settle dates back (it dates them to its own call: a new basis each time)."""
    git = hooks.repo.git_dir
    found = [git / "logs" / "HEAD", git / "config", git / "packed-refs", git / "info" / "exclude"]
    xdg = Path(os.environ["XDG_CONFIG_HOME"])
    patterns = xdg / "gitvault" / "patterns"
    found += [Path(os.environ["GIT_CONFIG_GLOBAL"]), patterns, *patterns.glob("*.md")]
    found += [xdg / "git" / "ignore", *hooks.repo.path.rglob(".gitignore")]
    return [p for p in found if p.exists()]


def test_a_partner_a_commit_brings_back_is_in_the_carried_block(shown: Hooks) -> None:
    """A co-changed file deleted by a commit leaves hello.txt's block; a later commit that
    restores it (touching only it) must bring it back: the refresh may not carry the block
    that leaves it out (the restored name is nowhere in the carried text)."""
    repo = shown.repo
    repo.git("rm", "-q", "greet.py")
    assert _as_the_drainer(shown, lambda: repo.commit("Drop the greeter", {}))
    out, _ = _call(shown, *READ, _sid())
    assert "greet.py changed with it" not in out
    assert _as_the_drainer(
        shown, lambda: repo.commit("Bring the greeter back", {"greet.py": "3\n"})
    )
    want = _python(shown, *READ)
    assert "greet.py changed with it" in want
    out, python = _call(shown, *READ, _sid())
    assert not python
    assert out == want, "the sh served the stale block"


def test_another_global_config_in_the_hook_s_environment_goes_to_python(
    shown: Hooks, tmp_path: Path
) -> None:
    """The agent runs its hooks with GIT_CONFIG_GLOBAL naming another file than the refresh
    saw (its watched config files are the refresh's): Python answers, under that config (it
    may turn edit-time recall off, name another vault branch, or include anything)."""
    other = tmp_path / "other-gitconfig"
    other.write_text("[user]\n\tname = Someone Else\n")
    then = time.time() - 3600
    os.utime(other, (then, then))
    for env in ({"GIT_CONFIG_GLOBAL": str(other)}, {"GIT_CONFIG_SYSTEM": str(other)}):
        raw = _input("claude-PostToolUse-Read", shown.repo, _sid())
        out, python = shown.run("claude", "file-read", raw, **env)
        assert python, env
        argv = [sys.executable, "-m", "gitvault.hook", "claude", "file-read"]
        raw = _input("claude-PostToolUse-Read", shown.repo, _sid())
        assert out == shown._process(argv, "claude", raw, env)


def test_a_change_in_an_included_config_file_goes_to_python(shown: Hooks, tmp_path: Path) -> None:
    """git config follows include.path: a file the user's config includes is config too."""
    extra = tmp_path / "included-gitconfig"
    extra.write_text("")
    then = time.time() - 3600
    os.utime(extra, (then, then))  # written a while ago, as the files a refresh watches
    shown.repo.git("config", "include.path", str(extra))
    assert _refresh(shown)
    _, python = _call(shown, *READ, _sid())
    assert not python
    extra.write_text("[gitvault]\n\tagents = codex\n")
    assert shown.repo.git("config", "gitvault.agents").strip() == "codex"
    out, python = _call(shown, *READ, _sid())
    assert out == "", ("this agent is no longer served", python)


def test_a_hostile_commit_subject_prints_as_python_prints_it(hooks: Hooks) -> None:
    """Quotes, backslashes, escapes, non-ASCII, line separators in a teammate's commit
    subjects: one JSON line, byte for byte Python's."""
    subject = 'Q"uo\\te \x1b[31mred\x1b[0m \u2028ls\u2029ps ünï \U0001f600 </script> `x` $(id)'
    hooks.repo.commit(subject, {"hello.txt": "1\n", "greet.py": "1\n"})
    hooks.repo.commit("Second", {"hello.txt": "2\n"})
    _call(hooks, *READ, _sid())
    assert _refresh(hooks)
    out, python = _call(hooks, *READ, _sid())
    assert not python
    assert out == _python(hooks, *READ)
    assert "\x1b" not in out and out.count("\n") == 1
    json.loads(out)


def test_a_torn_last_line_in_the_shown_list_does_not_swallow_the_claim(shown: Hooks) -> None:
    """A shown list whose last line has no line break (a claim cut short): Python starts a new
    line before it appends; a claim glued to the torn line is lost, and the block is shown
    again on the next call of the session."""
    session = _sid()
    shown_list = shown.repo.state_dir / "recall-shown" / session
    shown_list.write_bytes(b"other.md")
    out, python = _call(shown, *READ, session)
    assert not python and "Memory of hello.txt (" in out
    assert shown_list.read_bytes() == b"other.md\nhello.txt\n"
    assert _call(shown, *READ, session)[0] == "", "never twice a session"


def test_a_full_shown_list_shows_nothing_as_in_python(shown: Hooks) -> None:
    """A session that read MAX_BYTES of paths has seen enough: Python shows no more blocks."""
    session = _sid()
    shown_list = shown.repo.state_dir / "recall-shown" / session
    shown_list.write_bytes(b"x\n" * (4 * 1024 * 1024 // 2))
    out, _ = _call(shown, *READ, session)
    assert out == ""


def test_names_a_shell_would_read_as_code_or_options_print_as_python_prints_them(
    hooks: Hooks,
) -> None:
    repo = hooks.repo
    names = ["-n", "--", "$(touch pwned)", "a'b", "`touch pwned2`", "sub/end", "x" * 40, "-e x"]
    repo.commit("Odd names", {n: f"{n}\n" for n in names})
    repo.commit("Odd names again", {n: f"{n}\n2\n" for n in names})
    for name in names:
        _call(hooks, *READ, _sid(), name)
    assert _refresh(hooks)
    for agent, recorded, event in (READ, ("copilot", "copilot-postToolUse-view", "file-read")):
        for name in names:
            out, python = _call(hooks, agent, recorded, event, _sid(), name)
            assert not python, name
            assert out == _python(hooks, agent, recorded, event, name), name
    assert not (repo.path / "pwned").exists() and not (repo.path / "pwned2").exists()


def test_a_path_through_a_linked_folder_prints_as_python_prints_it(shown: Hooks) -> None:
    (shown.repo.path / "here").symlink_to(".")
    for name in ("here/hello.txt", "here/here/hello.txt"):
        session = _sid()
        out, python = _call(shown, *READ, session, name)
        assert out == _python(shown, *READ, name), (name, python)


def _cut(raw: str) -> str:
    return raw[: raw.index('"tool_response"') + 40]


def _bigger_than_python_reads(raw: str) -> str:
    """A read whose result is larger than the most of the input Python reads (and the sh)."""
    data = json.loads(raw)
    data["tool_response"]["file"]["content"] = "x" * launcher.INPUT_CAP
    return json.dumps(data)


def _without(member: str) -> Callable[[str], str]:
    def drop(raw: str) -> str:
        data = json.loads(raw)
        del data[member]
        return json.dumps(data)

    return drop


@pytest.mark.parametrize(
    "spoil",
    [
        lambda raw: raw + "trailing",
        _cut,
        _bigger_than_python_reads,
        _without("hook_event_name"),
        _without("tool_name"),
        lambda raw: raw.replace('"PostToolUse"', '"PreToolUse"'),
    ],
)
def test_an_input_python_rejects_gets_no_block_from_the_sh(shown: Hooks, spoil: Any) -> None:
    """Python answers an input that is not JSON, or not the agent's input shape, with nothing:
    so must the sh."""
    argv = [sys.executable, "-m", "gitvault.hook", "claude", "file-read"]
    raw = spoil(_input("claude-PostToolUse-Read", shown.repo, _sid()))
    want = shown._process(argv, "claude", raw, {})
    out, _ = shown.run("claude", "file-read", spoil(_input(*READ[1:2], shown.repo, _sid())))
    assert out == want


@pytest.mark.parametrize(
    "partner",
    ["ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + ".txt", "a<b>&c.txt", "dir/x y.txt"],
)
def test_a_partner_whose_name_the_block_writes_otherwise_is_dropped_with_its_file(
    hooks: Hooks, partner: str
) -> None:
    """The carry-over finds a deleted partner by its name in the block's text: a name the
    block redacts or escapes is not found there."""
    repo = hooks.repo
    repo.commit("One", {"hello.txt": "1\n", partner: "1\n"})
    repo.commit("Two", {"hello.txt": "2\n", partner: "2\n"})
    _call(hooks, *READ, _sid())
    assert _refresh(hooks) and _as_the_drainer(hooks, lambda: None)
    repo.git("rm", "-q", "--", partner)
    assert _as_the_drainer(hooks, lambda: repo.commit("Drop it", {}))
    out, python = _call(hooks, *READ, _sid())
    assert out == _python(hooks, *READ), python


def test_parallel_calls_the_sh_and_python_answer_show_a_block_once(shown: Hooks) -> None:
    """One session's parallel reads of a file, some answered by the sh and some by Python (git
    config in their environment): one flock, one block."""
    session = _sid()
    raw = _input("claude-PostToolUse-Read", shown.repo, session)
    outputs: list[tuple[str, bool]] = []

    def read(env: dict[str, str]) -> None:
        outputs.append(shown.run("claude", "file-read", raw, **env))

    envs: list[dict[str, str]] = [{}, {"GIT_CONFIG_COUNT": "0"}] * 4
    threads = [threading.Thread(target=read, args=(env,)) for env in envs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(1 for out, _ in outputs if out) == 1, outputs
    shown_list = shown.repo.state_dir / "recall-shown" / session
    assert shown_list.read_text(encoding="utf-8") == "hello.txt\n"
