"""The quiet fast path: an agent's turn end with nothing due is answered by the launcher's sh
without starting Python, and falls back to Python whenever something may be due.

Every hook runs as the agent runs it (tests/support/agent_hooks.py): the command gitvault wrote
into the agent's settings file, through `sh -c`, with the recorded hook input on stdin; whether
Python started is seen by a sitecustomize module that records every interpreter start."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitvault.agents import adapters
from gitvault.vault import statedir
from tests.support.agent_hooks import AGENTS, SAMPLES, SID, Hooks, payload
from tests.support.memory import cli_sub, set_config

# -- nothing due: no Python --------------------------------------------------------------------


@pytest.mark.parametrize("agent", AGENTS)
def test_a_turn_end_with_nothing_due_starts_no_python(hooks: Hooks, agent: str) -> None:
    hooks.quiet(agent)
    for turn in range(1, 4):
        assert hooks.turn_end(agent) == ("", False)
        assert hooks.beat.read_bytes() == b"x" * turn, "each answered turn is counted"


def test_the_turns_answered_without_python_reach_the_ledger(hooks: Hooks) -> None:
    hooks.quiet("claude")
    turns = hooks.ledger()["turns_since_save"]
    for _ in range(3):
        assert hooks.turn_end("claude") == ("", False)
    seen = hooks.beat.stat().st_mtime
    hooks.repo.commit("feat: after quiet turns")  # makes the next turn end run in Python
    _, python = hooks.turn_end("claude")
    assert python
    ledger = hooks.ledger()
    assert ledger["turns_since_save"] == turns + 3 + 1
    assert ledger["last_active"] >= seen
    assert not hooks.beat.exists(), "folded into the ledger once"


# -- something may be due: Python, and the due work is done --------------------------------------


@pytest.mark.parametrize("agent", AGENTS)
def test_a_new_commit_falls_back_to_python_and_asks_for_a_save(hooks: Hooks, agent: str) -> None:
    hooks.quiet(agent)
    sha = hooks.repo.commit(f"feat: {agent} work")
    out, python = hooks.turn_end(agent)
    assert python
    assert sha[:7] in json.loads(out)["reason"]
    assert not hooks.stamp.exists(), "a turn end that asked leaves no stamp"


def test_a_commit_reset_away_still_falls_back(hooks: Hooks) -> None:
    hooks.quiet("claude")
    before = hooks.repo.head()
    hooks.repo.commit("feat: made, then reset away")
    hooks.repo.git("reset", "-q", "--hard", before)
    _, python = hooks.turn_end("claude")
    assert python, "HEAD is back where it was, but its reflog moved"


def test_a_new_vault_tip_falls_back_and_a_new_setting_is_honoured(hooks: Hooks) -> None:
    hooks.quiet("claude")
    # vault.toml on the vault branch now asks for a save every turn: a travelling value of a
    # setting that spends model turns, held back until this clone's git config sets it.
    set_config(hooks.repo, "capture", stop_after_turns=1, stop_min_interval_seconds=0)
    out, python = hooks.turn_end("claude")
    assert python and out == "", "a new vault tip is looked at; its value is held back"
    hooks.repo.git("config", "gitvault.capture.stopAfterTurns", "1")
    hooks.repo.git("config", "gitvault.capture.stopMinIntervalSeconds", "0")
    out, python = hooks.turn_end("claude")
    assert python
    assert json.loads(out)["decision"] == "block", "the new setting made a save due"
    assert not hooks.stamp.exists(), "no stamp while a turn count is kept"
    _, python = hooks.turn_end("claude")
    assert python


def test_a_save_elsewhere_moves_the_vault_and_falls_back(hooks: Hooks) -> None:
    hooks.quiet("codex")
    text = "## Summary\nOther work.\n## Key Decisions\n- none\n## Next Steps\n- more\n"
    saved = cli_sub(hooks.repo, "save", "--agent", "codex", "--session-id", "s2", stdin=text)
    assert saved.code == 0, saved
    assert hooks.turn_end("codex")[1]


def test_a_resumed_conversation_falls_back(hooks: Hooks) -> None:
    hooks.quiet("claude")
    hooks.start("claude", source="resume")
    assert not hooks.stamp.exists(), "a session start removes the stamp"
    assert hooks.turn_end("claude")[1]


@pytest.mark.parametrize("scope", ["local", "global"])
def test_a_changed_git_config_falls_back(hooks: Hooks, scope: str) -> None:
    hooks.quiet("gemini")
    hooks.repo.git("config", f"--{scope}", "gitvault.agents", "claude,codex,gemini,copilot")
    assert hooks.turn_end("gemini")[1]


def test_a_changed_included_config_file_falls_back(hooks: Hooks, tmp_path: Path) -> None:
    """A file the repository's config includes (include.path) is config too."""
    extra = tmp_path / "included-gitconfig"
    extra.write_text("")
    then = time.time() - 3600
    os.utime(extra, (then, then))  # written a while ago, as the files a stamp watches
    hooks.repo.git("config", "include.path", str(extra))
    hooks.quiet("claude")
    assert hooks.turn_end("claude") == ("", False)
    extra.write_text("[gitvault]\n\tstopAfterTurns = 1\n")
    assert hooks.turn_end("claude")[1]


def test_another_project_folder_falls_back(hooks: Hooks, tmp_path: Path) -> None:
    hooks.quiet("codex")
    elsewhere = hooks.repo.path / "sub"
    elsewhere.mkdir()
    assert hooks.run(
        "codex", "turn-end", payload("codex", "turn-end", hooks.repo, cwd=str(elsewhere))
    )[1]


def test_a_fresh_reflog_write_leaves_no_stamp(hooks: Hooks) -> None:
    """A write in the same second as the check might not look newer to a shell comparing
    whole seconds: no stamp until the files settled (a reflog written "now" for as long as the
    turn end takes: its time is set a minute ahead)."""
    hooks.start("copilot")
    hooks.settle()
    soon = time.time() + 60
    os.utime(hooks.repo.git_dir / "logs" / "HEAD", (soon, soon))
    out, python = hooks.turn_end("copilot")
    assert (out, python) == ("", True)
    assert not hooks.stamp.exists()
    assert hooks.turn_end("copilot")[1]


def test_the_vault_ref_packed_away_falls_back(hooks: Hooks) -> None:
    hooks.quiet("claude")
    hooks.repo.git("pack-refs", "--all")
    assert hooks.turn_end("claude")[1]


def test_gitvault_child_makes_the_turn_end_exit_at_once(hooks: Hooks) -> None:
    hooks.repo.commit("feat: due, but this is the fold's own agent")
    out, python = hooks.run(
        "claude", "turn-end", payload("claude", "turn-end", hooks.repo), GITVAULT_CHILD="1"
    )
    assert (out, python) == ("", False)


# -- state files and input the sh must never trust ---------------------------------------------


def _rewrite_stamp(hooks: Hooks, edit: Callable[[list[str]], list[str]]) -> None:
    lines = hooks.stamp.read_text().splitlines()
    mtime = hooks.stamp.stat().st_mtime_ns
    hooks.stamp.write_text("\n".join(edit(lines)) + "\n")
    os.utime(hooks.stamp, ns=(mtime, mtime))


HOSTILE = {
    "truncated": lambda lines: lines[:-1],
    "other format": lambda lines: ["gitvault-quiet 2 claude", *lines[1:]],
    "other agent": lambda lines: ["gitvault-quiet 1 codex", *lines[1:]],
    "cwd as a glob": lambda lines: [lines[0], "*", *lines[2:]],
    "tip as a command": lambda lines: [*lines[:3], "$(touch PWNED)", *lines[4:]],
    "tip as a glob": lambda lines: [*lines[:3], "*", *lines[4:]],
    "ref as a command": lambda lines: [*lines[:2], "$(touch PWNED)", *lines[3:]],
    "empty": lambda lines: [],
}


def _no_command_ran(hooks: Hooks) -> None:
    assert not (hooks.repo.path / "PWNED").exists()
    assert not list(hooks.repo.state_dir.rglob("PWNED"))


@pytest.mark.parametrize("how", list(HOSTILE))
def test_a_malformed_or_hostile_stamp_falls_back_and_runs_nothing(hooks: Hooks, how: str) -> None:
    hooks.quiet("claude")
    _rewrite_stamp(hooks, HOSTILE[how])
    out, python = hooks.turn_end("claude")
    assert python
    _no_command_ran(hooks)


def test_a_watched_name_that_is_a_command_is_only_ever_looked_up(hooks: Hooks) -> None:
    """A name that does not exist cannot be newer: the stamp still holds, and nothing ran."""
    hooks.quiet("claude")
    _rewrite_stamp(hooks, lambda lines: [*lines[:4], "`touch PWNED`", "$(touch PWNED)", *lines[4:]])
    assert hooks.turn_end("claude") == ("", False)
    _no_command_ran(hooks)


@pytest.mark.parametrize("kind", ["missing", "fifo", "folder", "link to a fifo"])
def test_a_stamp_that_is_not_a_regular_file_falls_back_without_blocking(
    hooks: Hooks, kind: str, tmp_path: Path
) -> None:
    hooks.quiet("claude")
    hooks.stamp.unlink()
    if kind == "fifo":
        os.mkfifo(hooks.stamp)
    elif kind == "folder":
        hooks.stamp.mkdir()
    elif kind == "link to a fifo":
        os.mkfifo(tmp_path / "fifo")
        hooks.stamp.symlink_to(tmp_path / "fifo")
    assert hooks.turn_end("claude")[1]


def test_a_beat_file_that_is_a_link_is_never_written_through(hooks: Hooks, tmp_path: Path) -> None:
    hooks.quiet("claude")
    target = tmp_path / "outside"
    target.write_text("keep\n")
    hooks.beat.symlink_to(target)
    assert hooks.turn_end("claude")[1]
    assert target.read_text() == "keep\n"


@pytest.mark.parametrize(
    "raw",
    [
        # two session ids: which one Python would take is not the sh's to guess
        '{"session_id": "%s", "session_id": "other", "cwd": "%s"}',
        # an id that is not one (a path out of the folder)
        '{"session_id": "../../%s", "cwd": "%s"}',
        # an escaped id
        '{"session_id": "\\u0035%s", "cwd": "%s"}',
        # pretty-printed across lines with the id on the next line
        '{"session_id":\n "%s", "cwd": "%s"}',
        # not JSON at all, but the id is there
        "session_id %s %s",
    ],
)
def test_input_the_sh_cannot_read_for_sure_goes_to_python(hooks: Hooks, raw: str) -> None:
    hooks.quiet("claude")
    text = raw % (SID, hooks.repo.path) if raw.count("%s") == 2 else raw
    assert hooks.run("claude", "turn-end", text)[1]


def test_a_second_cwd_member_goes_to_python(hooks: Hooks) -> None:
    hooks.quiet("codex")
    raw = json.dumps(payload("codex", "turn-end", hooks.repo))
    raw = raw[:-1] + ', "nested": {"cwd": "/elsewhere"}}'
    assert hooks.run("codex", "turn-end", raw)[1]


def test_no_stamp_while_two_sessions_share_the_worktree_and_a_commit_is_undecided(
    hooks: Hooks,
) -> None:
    """Another session in the same worktree: a commit not yet in this session's transcript
    may still show up there, so the turn end keeps checking in Python."""
    other = dict(payload("claude", "session-start", hooks.repo), session_id="0ther-session")
    hooks.start("claude")
    hooks.run("claude", "session-start", other)
    hooks.repo.commit("feat: whose?")
    hooks.settle()
    out, python = hooks.turn_end("claude")
    assert python and out == ""
    assert not hooks.stamp.exists()
    assert hooks.turn_end("claude")[1]


# -- edit-time calls with nothing to say: no Python ------------------------------------------------


def _tool_input(hooks: Hooks, path: str, tool: str = "Read", **extra: Any) -> dict[str, Any]:
    return {
        "session_id": SID,
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": str(hooks.repo.path),
        "hook_event_name": "PostToolUse" if tool == "Read" else "PreToolUse",
        "tool_name": tool,
        "tool_input": {"file_path": path, **extra},
        "tool_response": {"type": "text", "file": {"filePath": path, "content": "x"}},
    }


@pytest.fixture
def known(hooks: Hooks) -> Hooks:
    """hello.txt has a history the vault knows; other.txt none."""
    hooks.repo.commit("Greet the world", {"hello.txt": "hello world\n"})
    hooks.repo.commit("Greet twice", {"hello.txt": "hello world\nsecond line\n"})
    hooks.repo.write("other.txt", "no history\n")
    listing = (hooks.repo.state_dir / statedir.KNOWN_PATHS).read_text()
    assert "\nhello.txt\n" in listing and "other.txt" not in listing
    return hooks


def _read(hooks: Hooks, path: str, event: str = "file-read", **extra: Any) -> tuple[str, bool]:
    tool = "Read" if event == "file-read" else "Edit"
    return hooks.run("claude", event, _tool_input(hooks, path, tool, **extra))


@pytest.mark.parametrize("event", ["file-read", "file-edit"])
def test_a_file_the_vault_knows_nothing_of_starts_no_python(known: Hooks, event: str) -> None:
    assert _read(known, str(known.repo.path / "other.txt"), event) == ("", False)
    assert _read(known, str(known.repo.path / "brand" / "new.txt"), event)[1], (
        "a folder that does not exist cannot be resolved by the sh"
    )


def test_a_known_file_gets_its_block_once_then_no_python(known: Hooks) -> None:
    out, python = _read(known, str(known.repo.path / "hello.txt"))
    assert python and "Greet" in out
    assert _read(known, str(known.repo.path / "hello.txt")) == ("", False), "already shown"


@pytest.mark.parametrize(
    "how",
    ["relative", "dot-dot", "double slash", "escaped", "linked file", "linked folder", "notebook"],
)
def test_a_path_the_sh_cannot_resolve_for_sure_goes_to_python(
    known: Hooks, how: str, tmp_path: Path
) -> None:
    root = known.repo.path
    extra: dict[str, Any] = {}
    if how == "relative":
        path = "hello.txt"
    elif how == "dot-dot":
        path = f"{root}/sub/../hello.txt"
    elif how == "double slash":
        path = f"{root}//hello.txt"
    elif how == "escaped":
        path = f"{root}/hel\\u006co.txt"
    elif how == "linked file":
        (root / "alias.txt").symlink_to(root / "hello.txt")
        path = f"{root}/alias.txt"
    elif how == "linked folder":
        (root / "alias").symlink_to(root)
        path = f"{root}/alias/hello.txt"
    else:
        path = f"{root}/other.txt"
        extra["notebook_path"] = f"{root}/hello.txt"
    payload = json.dumps(_tool_input(known, path, **extra))
    if how == "escaped":
        payload = payload.replace("\\\\u006c", "\\u006c")
    out, python = known.run("claude", "file-read", payload)
    assert python
    if how in ("dot-dot", "escaped", "linked file", "linked folder", "notebook"):
        assert "Greet" in out, "the file it names is the known one"


def test_a_second_file_path_member_goes_to_python(known: Hooks) -> None:
    data = _tool_input(known, str(known.repo.path / "other.txt"))
    response = data.pop("tool_response")
    data["extra"] = {"file_path": f"{known.repo.path}/hello.txt"}
    data["tool_response"] = response  # the second member before the tool's result
    assert known.run("claude", "file-read", json.dumps(data))[1]


def test_the_sh_reads_claudes_input_only_up_to_the_tools_result(known: Hooks) -> None:
    """Claude Code writes tool_response (the whole file read) after every member the sh reads:
    the sh never scans it, so a large file costs it nothing and the result's own members do
    not count; a member the sh needs that comes only after it is not found (Python then)."""
    other = str(known.repo.path / "other.txt")
    data = _tool_input(known, other)
    data["tool_response"] = {
        "file": {"file_path": f"{known.repo.path}/hello.txt", "content": "x = 1\n" * 50_000},
        "notebook_path": "x.ipynb",
    }
    assert known.run("claude", "file-read", json.dumps(data)) == ("", False)
    late = {k: v for k, v in data.items() if k != "tool_input"}
    late["tool_input"] = {"file_path": other}  # after the result: the sh cannot read it
    assert known.run("claude", "file-read", json.dumps(late))[1]


@pytest.mark.parametrize("how", ["missing", "other format", "fifo"])
def test_a_path_list_the_sh_cannot_trust_goes_to_python(known: Hooks, how: str) -> None:
    listing = known.repo.state_dir / statedir.KNOWN_PATHS
    if how == "missing":
        listing.unlink()
    elif how == "other format":
        listing.write_text("# gitvault recall-paths 2 x\n")
    else:
        listing.unlink()
        os.mkfifo(listing)
    assert _read(known, str(known.repo.path / "other.txt"))[1]


def test_a_shown_list_that_is_a_fifo_neither_blocks_nor_counts(known: Hooks) -> None:
    shown = known.repo.state_dir / statedir.SHOWN_PATHS
    shown.mkdir(exist_ok=True)
    os.mkfifo(shown / SID)
    assert _read(known, str(known.repo.path / "other.txt")) == ("", False)
    assert _read(known, str(known.repo.path / "hello.txt"))[1]


def test_a_file_name_that_is_a_command_is_only_compared(known: Hooks) -> None:
    name = "$(touch PWNED)`touch PWNED`;-e"
    (known.repo.path / name).write_text("x\n")
    assert _read(known, f"{known.repo.path}/{name}") == ("", False)
    assert not list(known.repo.path.rglob("PWNED"))
    assert not list(known.repo.state_dir.rglob("PWNED"))


# -- the other agents' edit-time calls: the same sh answer, from their own payloads -------------

TOOL_SAMPLES = {
    ("codex", "file-read"): "codex-PostToolUse-Bash",
    ("gemini", "file-read"): "gemini-AfterTool-read_file",
    ("gemini", "file-edit"): "gemini-AfterTool-replace",
    ("copilot", "file-read"): "copilot-postToolUse-view",
    ("copilot", "file-edit"): "copilot-preToolUse-edit",
}


def _agent_tool(hooks: Hooks, agent: str, event: str, name: str) -> dict[str, Any]:
    """The agent's recorded tool-event input, about file `name` (as the agent writes it:
    Codex a `cat` command line, the others a path)."""
    data: dict[str, Any] = json.loads((SAMPLES / f"{TOOL_SAMPLES[agent, event]}.json").read_text())
    data[adapters.get(agent).session_field] = SID
    data["cwd"] = str(hooks.repo.path)
    if agent == "codex":
        data["tool_input"] = {"command": f"cat {name}"}
        data["tool_response"] = "hello world\n"
    elif agent == "gemini":
        data["tool_input"]["file_path"] = name
        data["tool_response"] = {"llmContent": "x", "returnDisplay": ""}
    else:
        data["toolArgs"]["path"] = name
    return data


def _tool(hooks: Hooks, agent: str, event: str, name: str) -> tuple[str, bool]:
    return hooks.run(agent, event, _agent_tool(hooks, agent, event, name))


@pytest.mark.parametrize(("agent", "event"), sorted(TOOL_SAMPLES))
def test_every_agents_edit_time_call_with_nothing_known_starts_no_python(
    known: Hooks, agent: str, event: str
) -> None:
    root = known.repo.path
    assert _tool(known, agent, event, f"{root}/other.txt") == ("", False)
    out, python = _tool(known, agent, event, f"{root}/hello.txt")
    assert python and "Greet" in out, "a known file: Python, and its block"
    assert _tool(known, agent, event, f"{root}/hello.txt") == ("", False), "already shown"


@pytest.mark.parametrize(("agent", "event"), sorted(TOOL_SAMPLES))
def test_a_relative_name_is_taken_from_the_inputs_cwd(known: Hooks, agent: str, event: str) -> None:
    assert _tool(known, agent, event, "other.txt") == ("", False)
    out, python = _tool(known, agent, event, "hello.txt")
    assert python
    assert "Greet" in out, "taken from the session's folder, as Python takes it"


@pytest.mark.parametrize(
    "command",
    [
        "cat other.txt hello.txt",  # two files
        "cat other.txt; cat hello.txt",
        "cat other.txt && head hello.txt",
        "sed -n '1,5p' hello.txt other.txt",
        "cat 'other.txt' hello.txt",
        "grep x hello.txt",
        "cat -- hello.txt",
        "cat other.txt|cat hello.txt",
        "cd sub && cat other.txt",
    ],
)
def test_a_command_line_the_sh_cannot_read_for_sure_goes_to_python(
    known: Hooks, command: str
) -> None:
    data = _agent_tool(known, "codex", "file-read", "x")
    data["tool_input"] = {"command": command}
    out, python = known.run("codex", "file-read", data)
    assert python
    if "hello.txt" in command and "sub" not in command:
        assert "Greet" in out, "the command reads the known file"


@pytest.mark.parametrize(
    "command", ["sed -n '1,40p' other.txt", "sed -n 1,40p other.txt", "head -n 20 other.txt"]
)
def test_a_plain_read_command_of_an_unknown_file_starts_no_python(
    known: Hooks, command: str
) -> None:
    data = _agent_tool(known, "codex", "file-read", "x")
    data["tool_input"] = {"command": command}
    assert known.run("codex", "file-read", data) == ("", False)


@pytest.mark.parametrize("agent", ["gemini", "copilot"])
def test_a_path_outside_the_tools_arguments_goes_to_python(known: Hooks, agent: str) -> None:
    """A path member the sh could take for the file, elsewhere than in the tool's arguments:
    Python decides."""
    data = _agent_tool(known, agent, "file-read", f"{known.repo.path}/hello.txt")
    key = adapters.get(agent).fast_path_field
    parent = adapters.get(agent).fast_path_parent
    assert key and parent
    data[parent] = {"nested": {key: f"{known.repo.path}/other.txt"}}
    assert known.run(agent, "file-read", data)[1]
    data[parent] = json.dumps({key: f"{known.repo.path}/other.txt"})  # a JSON string
    data["extra"] = {key: f"{known.repo.path}/other.txt"}
    assert known.run(agent, "file-read", data)[1]
