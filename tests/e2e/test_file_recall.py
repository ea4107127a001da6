"""Edit-time recall with the real CLIs (Claude Code and Copilot CLI from npm, headless, offline
against the local model API mocks), through the tool hooks `gitvault install` wrote: the model
reads a file with history twice; the request after the first read carries the file's block
(exactly what `gitvault recall --for` prints), the request after the second read carries no
second copy, and a file the vault knows nothing of gets nothing.

Marked `claude` and `agents`; the CLIs skip with the reason printed when they cannot be had
(or fail, with GITVAULT_REQUIRE_CLAUDE=1 / GITVAULT_REQUIRE_AGENTS=1); never pass silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitvault.memory.fences import RECALL_BEGIN
from tests.support import agent_clis, mock_anthropic, mock_openai
from tests.support.claude_cli import run_claude
from tests.support.memory import cli_sub, set_config
from tests.support.model_server import ToolCall, text
from tests.support.repos import Repo

PROMPT = "read app.py twice, then notes.txt"
DECISION = "Keep the greeting in app.py — FILE-RECALL-CANARY-41d"
CLI_TIMEOUT = 120


@pytest.fixture
def project(repo_factory: Callable[..., Repo]) -> Repo:
    """Claude Code and Copilot wired; app.py with commits, a revert and a saved session
    decision about it; notes.txt, never committed, unknown to the vault."""
    repo = repo_factory("proj", install=False, identity=True)
    done = repo.gv("install", "--agent", "claude,copilot")
    assert done.code == 0, done
    set_config(repo, "capture", fold_on_session_end=False)
    repo.commit("feat: add the greeting module", files={"app.py": "print('hi')\n"})
    repo.commit("feat: greet loudly", files={"app.py": "print('HI')\n"})
    loud = repo.head()
    repo.git("revert", "--no-edit", loud)
    saved = cli_sub(
        repo,
        "save",
        "--title",
        "Greeting work",
        "--session-id",
        "earlier-1",
        stdin=f"## Summary\nWorked on app.py.\n## Key Decisions\n- {DECISION} ({loud[:7]})\n"
        "## Next Steps\n- Translate the greeting in app.py\n",
    )
    assert saved.code == 0, saved
    repo.git("add", ".")
    repo.commit("chore: commit the gitvault install", files={})
    repo.write("notes.txt", "scratch\n")
    return repo


def _expected(repo: Repo, rel: str) -> str:
    block = cli_sub(repo, "recall", "--for", rel).out.rstrip("\n")
    assert block.startswith(RECALL_BEGIN) and f"Memory of {rel} (" in block, block
    assert "greet loudly" in block and DECISION in block
    return block


def _reads(call: Callable[[str], ToolCall], results: Callable[[Any], list[str]]) -> Any:
    """A model that reads app.py, app.py again, then notes.txt, then stops."""
    order = ["app.py", "app.py", "notes.txt"]

    def respond(body: Any) -> Any:
        done = len(results(body))
        return call(order[done]) if done < len(order) else text("Read them.")

    return respond


def _check(requests: list[Any], received: Callable[[Any], str], block: str) -> None:
    """Four requests: the prompt, then one after each read; the block in the second only."""
    assert len(requests) == 4, len(requests)
    texts = [received(b) for b in requests]
    assert block not in texts[0]
    assert texts[1].count(block) == 1, "the block after the first read of app.py"
    assert texts[2].count(block) == 1, "no second copy after the second read"
    assert texts[3].count(block) == 1 and texts[3].count("Memory of ") == 1
    assert "Memory of notes.txt" not in texts[3], "a file the vault does not know: nothing"


@pytest.mark.claude
def test_claude_code_gets_a_files_block_once(
    claude: Path, anthropic_api: mock_anthropic.MockAnthropic, project: Repo, tmp_path: Path
) -> None:
    block = _expected(project, "app.py")
    anthropic_api.responder = _reads(
        lambda rel: ToolCall("Read", {"file_path": str(project.path / rel)}),
        mock_anthropic.tool_results,
    )
    done = run_claude(
        claude,
        ["-p", PROMPT, "--output-format", "json", "--model", "claude-sonnet-4-5"],
        cwd=project.path,
        home=tmp_path / "claude-home",
        base_url=anthropic_api.base_url,
        timeout=CLI_TIMEOUT,
        extra_env={"GITVAULT_SYNC": "1"},
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert json.loads(done.stdout)["is_error"] is False, done.stdout
    requests = [r.body for r in anthropic_api.model_requests()]
    _check(requests, mock_anthropic.received_text, block)
    # Where Claude Code puts it: a reminder after the Read result, naming the event.
    assert f"PostToolUse:Read hook additional context: {block}" in mock_anthropic.received_text(
        requests[1]
    )


@pytest.mark.agents
def test_copilot_gets_a_files_block_once(
    copilot: Path, openai_api: mock_openai.MockOpenAI, project: Repo, tmp_path: Path
) -> None:
    block = _expected(project, "app.py")
    openai_api.responder = _reads(
        lambda rel: ToolCall("view", {"path": str(project.path / rel)}),
        mock_openai.tool_results,
    )
    done = agent_clis.run_copilot(
        copilot,
        PROMPT,
        cwd=project.path,
        home=tmp_path / "copilot-home",
        base_url=openai_api.base_url,
        extra_env={"GITVAULT_SYNC": "1"},
        timeout=CLI_TIMEOUT,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    requests = [r.body for r in openai_api.model_requests()]
    _check(requests, mock_openai.received_text, block)
    # Where Copilot puts it: inside the tool message, after the file's text.
    first = mock_openai.tool_results(requests[1])[0]
    assert first.endswith(block) and "Additional guidance from postToolUse hooks" in first
