"""A session start served from the materialized recall: the launcher's sh prints the block the
last vault change built for the worktree (gitvault.materialize.ready) without starting Python, as
Python would have printed it, records the start for the session's ledger, and falls back to
Python whenever anything the block or the start depends on may have moved.

Every hook runs as the agent runs it (tests/support/agent_hooks.py): the installed command
through `sh -c`, the recorded input on stdin; a sitecustomize module shows whether Python
started."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitvault.agents import adapters
from gitvault.materialize import ready
from gitvault.resolve import resolve
from gitvault.vault import statedir
from tests.support.agent_hooks import AGENTS, SID, Hooks, payload
from tests.support.memory import cli_sub, set_config

SESSION = "## Summary\nSet the parser up.\n## Key Decisions\n- one parser\n## Next Steps\n- more\n"


@pytest.fixture
def served(hooks: Hooks) -> Hooks:
    """A vault with a commit note and a saved session, its block materialized for the worktree
    and servable."""
    hooks.repo.commit("feat: the parser")
    saved = cli_sub(hooks.repo, "save", "--agent", "codex", "--session-id", "s0", stdin=SESSION)
    assert saved.code == 0, saved
    assert hooks.materialize() == 1
    return hooks


def _served_once(hooks: Hooks, agent: str, sid: str = SID, **fields: Any) -> str:
    out, python = hooks.start(agent, sid, **fields)
    assert not python, "the launcher served the start"
    assert hooks.record(sid).is_file(), "and recorded it for the ledger"
    return out


# -- served without Python, as Python serves it ---------------------------------------------------


@pytest.mark.parametrize("agent", AGENTS)
def test_every_agents_session_start_is_served_without_python_as_python_serves_it(
    served: Hooks, agent: str
) -> None:
    out = _served_once(served, agent)
    assert out == served.python_start(agent, str(uuid.uuid4()))
    assert "Set the parser up." in out


@pytest.mark.parametrize("agent", AGENTS)
def test_a_served_start_reaches_the_ledger_and_the_turn_end_after_it_is_quiet(
    served: Hooks, agent: str
) -> None:
    """The start the sh answered is in the session's ledger as a Python start records it (its
    run from the reflog offset at the start, worktree, branch, the recall parts it holds), and
    the turn end after it checks in Python once, then leaves the quiet stamp."""
    size = (served.repo.git_dir / "logs" / "HEAD").stat().st_size
    _served_once(served, agent)
    when = served.record().stat().st_mtime
    served.settle()
    assert served.turn_end(agent) == ("", True), "a start waiting for the ledger: Python"
    assert not served.record().exists(), "folded into the ledger once"
    assert served.stamp.is_file(), "nothing due: the next turn end is the launcher's"
    ledger = served.ledger()
    assert ledger["runs"][0][:4] == [when, None, size, None]
    assert ledger["git_dir"] == str(served.repo.git_dir)
    assert (ledger["worktree"], ledger["branch"]) == (str(served.repo.path), "main")
    other = str(uuid.uuid4())
    served.python_start(agent, other)
    assert ledger["recall"] == served.ledger(other)["recall"] and ledger["recall"]
    assert ledger["cli"] == served.ledger(other)["cli"]
    assert served.turn_end(agent) == ("", False)


@pytest.mark.parametrize("agent", AGENTS)
def test_a_commit_after_a_served_start_is_the_sessions_and_one_before_it_is_not(
    served: Hooks, agent: str
) -> None:
    before = served.repo.commit("feat: made before the session")
    assert served.materialize() == 1
    _served_once(served, agent)
    during = served.repo.commit("feat: made by the session")
    out, python = served.turn_end(agent)
    assert python
    reason = json.loads(out)["reason"]
    assert during[:7] in reason and before[:7] not in reason


def test_a_session_the_launcher_started_is_a_rival_before_it_has_a_ledger(served: Hooks) -> None:
    """Two sessions in one worktree: a commit neither transcript shows is claimed by neither,
    also while the other session's start is only the launcher's record."""
    _served_once(served, "claude")
    other = str(uuid.uuid4())
    _served_once(served, "claude", other)
    served.repo.commit("feat: whose?")
    out, python = served.turn_end("claude")
    assert python and out == "", "the other session counts: the commit is not claimed"
    assert served.record(other).is_file(), "the other session's start still waits for it"


# -- anything that may have moved: Python -------------------------------------------------------


def test_a_resumed_conversation_goes_to_python(served: Hooks) -> None:
    _served_once(served, "claude")
    out, python = served.start("claude", source="resume")
    assert python and out == "", "nothing changed since the start: nothing to inject again"
    assert not served.record().exists(), "the served start is folded in first"


def test_a_new_vault_tip_goes_to_python_and_its_block_is_new(served: Hooks) -> None:
    set_config(served.repo, "recall", sessions=0)  # a vault commit no refresh followed
    out, python = served.start("claude")
    assert python and "Set the parser up." not in out
    assert served.materialize() == 1
    assert _served_once(served, "claude", str(uuid.uuid4())) == out


def test_a_block_larger_than_its_header_is_built_again_and_served(served: Hooks) -> None:
    """A block near its cap (a long saved session): its ready file is read for the worktree it
    names at every refresh, however large."""
    part = "The parser is fast now. " * 40
    long = f"## Summary\n{part}\n## Key Decisions\n- {part}\n## Next Steps\n- {part}\n"
    for sid in ("s8", "s9"):
        saved = cli_sub(served.repo, "save", "--agent", "codex", "--session-id", sid, stdin=long)
        assert saved.code == 0, saved
    assert served.materialize() == 1
    assert (served.repo.state_dir / statedir.READY / statedir.READY_MAIN).stat().st_size > 5000
    assert served.materialize() == 1, "built again, not dropped"
    assert "The parser is fast now." in _served_once(served, "gemini")


def test_a_commit_is_served_from_the_block_its_drain_built(served: Hooks) -> None:
    served.settle()
    served.repo.commit("feat: the lexer")
    out = _served_once(served, "codex")
    assert "2 commit notes" in out, "the drainer built the block again after the note"


def test_the_worktree_on_another_branch_goes_to_python(served: Hooks) -> None:
    served.repo.git("checkout", "-q", "-b", "other")
    assert served.start("gemini")[1]


@pytest.mark.parametrize("scope", ["local", "global"])
def test_a_changed_git_config_goes_to_python(served: Hooks, scope: str) -> None:
    served.repo.git("config", f"--{scope}", "gitvault.branch", "vault")
    assert served.start("copilot")[1]


def test_an_agent_this_clone_does_not_serve_is_answered_by_python_with_nothing(
    served: Hooks,
) -> None:
    served.repo.git("config", "gitvault.agents", "codex")
    assert served.materialize() == 1
    assert served.start("gemini") == ("", True)
    assert not served.record().exists()
    assert not served.start("codex", str(uuid.uuid4()))[1]


def test_a_new_standing_pattern_goes_to_python_and_is_in_the_block(served: Hooks) -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "gitvault" / "patterns"
    folder.mkdir(parents=True)
    (folder / "mine.md").write_text("- run the linters first\n")
    out, python = served.start("claude")
    assert python and "run the linters first" in out
    assert served.materialize() == 1
    (folder / "mine.md").write_text("- run the tests first\n")  # edited in place
    out, python = served.start("claude", str(uuid.uuid4()))
    assert python and "run the tests first" in out


@pytest.mark.parametrize(
    "write",
    [
        lambda loc: statedir.write_fold_state(loc, statedir.FoldState(pending=3, reason="x")),
        lambda loc: statedir.save_verify(loc, {"digest": "0" * 40, "results": []}),
        lambda loc: statedir.ORIGINS_FILE.write(loc, {}),
        lambda loc: statedir.HANDOVERS_FILE.write(loc, {"consumed": {}}),
    ],
    ids=["fold state", "verify", "origins", "handovers"],
)
def test_a_state_file_recall_reads_goes_to_python(
    served: Hooks, write: Callable[[Any], object]
) -> None:
    write(resolve(served.repo.path))
    assert served.start("codex")[1]


def test_a_handover_is_offered_by_python_once_then_starts_are_served_again(served: Hooks) -> None:
    text = "## Asked\nMake the parser fast.\n## Next Step\nProfile it.\n"
    done = cli_sub(served.repo, "checkpoint", "--agent", "codex", "--session-id", "s1", stdin=text)
    assert done.code == 0, done
    assert served.materialize() == 0, "a handover to offer: Python's"
    out, python = served.start("claude")
    assert python and "Profile it." in out
    assert served.materialize() == 1
    out = _served_once(served, "claude", str(uuid.uuid4()))
    assert "Handover from" not in out, "offered once"


def test_git_config_in_the_environment_goes_to_python(served: Hooks) -> None:
    data = payload("claude", "session-start", served.repo)
    assert served.run("claude", "session-start", data, GIT_CONFIG_COUNT="0")[1]


def test_an_agents_env_file_without_gitvault_on_path_goes_to_python(
    served: Hooks, tmp_path: Path
) -> None:
    """The agent hands its start a file for the session's environment and gitvault is not on
    PATH: Python writes gitvault's folder there; on PATH, nothing to write, the launcher."""
    key = adapters.get("claude").start_env_file
    assert key
    env_file = tmp_path / "session.env"
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("sh", "git", "head", "cat", "wc"):
        found = shutil.which(tool)
        assert found
        (bare / tool).symlink_to(found)
    data = payload("claude", "session-start", served.repo)
    assert served.run("claude", "session-start", data, **{key: str(env_file), "PATH": str(bare)})[1]
    assert "export PATH=" in env_file.read_text()
    on_path = tmp_path / "on-path"
    on_path.mkdir()
    (on_path / "gitvault").symlink_to(bare / "cat")
    data = payload("claude", "session-start", served.repo, session_id=str(uuid.uuid4()))
    path = f"{bare}:{on_path}"
    assert not served.run("claude", "session-start", data, **{key: str(env_file), "PATH": path})[1]


def test_a_second_start_before_any_python_hook_goes_to_python(served: Hooks) -> None:
    _served_once(served, "claude")
    assert served.start("claude", source="compact")[1]
    assert not served.record().exists()


def test_a_project_folder_below_the_worktree_goes_to_python(served: Hooks) -> None:
    sub = served.repo.path / "sub"
    sub.mkdir()
    assert served.start("codex", cwd=str(sub))[1]


def test_a_linked_worktree_is_served_from_its_own_block(served: Hooks) -> None:
    linked = served.repo.worktree("side")
    assert linked.gv("install", "--agent", ",".join(AGENTS)).code == 0
    other = Hooks(linked, served.starts)
    out, python = other.start("codex")
    assert python and "feat: the parser" not in out, "never from the main worktree's block"
    assert other.materialize() == 2
    sid = str(uuid.uuid4())
    assert _served_once(other, "codex", sid) == out
    part = json.loads(other.record(sid).read_text().split("\n")[1])
    assert (part["git_dir"], part["branch"]) == (str(linked.git_dir), "side")


@pytest.mark.parametrize(
    "raw",
    [
        '{"session_id": "%s", "session_id": "other", "cwd": "%s", "source": "startup"}',
        '{"session_id": "\\u0035%s", "cwd": "%s", "source": "startup"}',
        '{"session_id": "%s", "cwd": "%s", "source": "\\u0072esume"}',
        '{"session_id": "%s", "cwd": "%s", "source": "startup"} trailing',
        "session_id %s cwd %s",
    ],
)
def test_input_the_sh_cannot_read_for_sure_goes_to_python(served: Hooks, raw: str) -> None:
    assert served.run("codex", "session-start", raw % (SID, served.repo.path))[1]


def test_input_the_agents_schema_refuses_is_not_served(served: Hooks) -> None:
    """Claude Code's SessionStart input names its event; one that does not is malformed."""
    data = payload("claude", "session-start", served.repo)
    del data["hook_event_name"]
    assert served.run("claude", "session-start", data) == ("", True)


# -- ready files and records the sh must never trust -------------------------------------------


def _ready(hooks: Hooks) -> Path:
    return hooks.repo.state_dir / statedir.READY / statedir.READY_MAIN


def _rewrite(hooks: Hooks, edit: Callable[[list[str]], list[str]]) -> None:
    path = _ready(hooks)
    lines = path.read_text().split("\n")
    mtime = path.stat().st_mtime_ns
    path.write_text("\n".join(edit(lines)))
    os.utime(path, ns=(mtime, mtime))


HOSTILE = {
    "truncated": lambda lines: lines[:5],
    "other format": lambda lines: ["gitvault-ready 2 serve", *lines[1:]],
    "waiting": lambda lines: ["gitvault-ready 1 wait", *lines[1:]],
    "tip as a command": lambda lines: [*lines[:6], "$(touch PWNED)", *lines[7:]],
    "head as a glob": lambda lines: [*lines[:4], "*", *lines[5:]],
    "length as a command": lambda lines: [*lines[:11], "$(touch PWNED)", *lines[12:]],
    "agents as a glob": lambda lines: [*lines[:10], "?", *lines[11:]],
    "a watched name as a command": lambda lines: [*lines[:14], "`touch PWNED`", *lines[14:]][:-1],
    "empty": lambda lines: [],
}


@pytest.mark.parametrize("how", list(HOSTILE))
def test_a_malformed_or_hostile_ready_file_goes_to_python_and_runs_nothing(
    served: Hooks, how: str
) -> None:
    _rewrite(served, HOSTILE[how])
    out, python = served.start("claude")
    assert python and "Set the parser up." in out
    assert not list(served.repo.path.rglob("PWNED"))
    assert not list(served.repo.state_dir.rglob("PWNED"))


@pytest.mark.parametrize("what", ["ready file", "record"])
@pytest.mark.parametrize("kind", ["fifo", "folder", "link"])
def test_a_ready_file_or_record_that_is_not_a_regular_file_goes_to_python_without_blocking(
    served: Hooks, what: str, kind: str, tmp_path: Path
) -> None:
    path = _ready(served) if what == "ready file" else served.record()
    if path.exists():
        shutil.copy2(path, tmp_path / "copy")
        path.unlink()
    else:
        (tmp_path / "copy").write_text("0\n{}\n")
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.symlink_to(tmp_path / "copy")
    out, python = served.start("claude")
    assert python and "Set the parser up." in out


def test_a_record_that_cannot_be_read_is_dropped_and_the_ledger_is_python_s(
    served: Hooks,
) -> None:
    served.record().write_text("not a size\n{}\n")
    served.settle()
    assert served.turn_end("claude")[1]
    assert not served.record().exists()


def test_a_start_record_waits_for_its_session_through_a_prune(served: Hooks) -> None:
    from gitvault.agents import ledger

    _served_once(served, "claude")
    ledger.prune(resolve(served.repo.path))
    assert served.record().is_file(), "a session without a ledger yet keeps its start"
    old = served.record().stat().st_mtime - 40 * 86400
    os.utime(served.record(), (old, old))
    ledger.prune(resolve(served.repo.path))
    assert not served.record().exists(), "a month later it is gone"


def test_redact_drops_a_ready_file_that_holds_the_text(served: Hooks) -> None:
    loc = resolve(served.repo.path)
    assert "Set the parser up." in _ready(served).read_text()
    dropped = statedir.replace_text(loc, b"Set the parser up.", b"[redacted]")
    assert f"{statedir.READY}/{statedir.READY_MAIN}" in dropped
    assert not _ready(served).exists()
    assert served.start("claude")[1]


def test_no_ready_file_is_written_while_settings_are_fresh(served: Hooks) -> None:
    served.repo.git("config", "gitvault.agents", "claude,codex,gemini,copilot")
    assert ready.refresh(resolve(served.repo.path)) == 0, "a config written this second"
    assert served.start("claude")[1]
