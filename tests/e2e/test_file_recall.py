"""Edit-time recall with the real CLIs (Claude Code, Codex CLI, Gemini CLI and Copilot CLI from
npm, headless, offline against the local model API mocks), through the tool hooks `gitvault
install` wrote: the model reads a file with history twice (each agent with its own read: Claude
Code's Read, Codex's shell `cat` then `sed -n`, Gemini's read_file, Copilot's view); the request
after the first read carries the file's block (exactly what `gitvault recall --for` prints), the
request after the second read carries no second copy, and a file the vault knows nothing of gets
nothing.

Marked `claude` and `agents`; the CLIs skip with the reason printed when they cannot be had
(or fail, with GITVAULT_REQUIRE_CLAUDE=1 / GITVAULT_REQUIRE_AGENTS=1); never pass silently.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitvault.materialize import blocks
from gitvault.memory.fences import RECALL_BEGIN
from gitvault.resolve import resolve
from tests.support import agent_clis, mock_anthropic, mock_gemini, mock_openai
from tests.support.claude_cli import run_claude
from tests.support.memory import cli_sub, set_config
from tests.support.model_server import ToolCall, text
from tests.support.repos import Repo

PROMPT = "read app.py twice, then notes.txt"
DECISION = "Keep the greeting in app.py — FILE-RECALL-CANARY-41d"
CLI_TIMEOUT = 120


@pytest.fixture
def project(repo_factory: Callable[..., Repo]) -> Repo:
    """All four agents wired; app.py with commits, a revert and a saved session
    decision about it; notes.txt, never committed, unknown to the vault."""
    repo = repo_factory("proj", install=False, identity=True)
    done = repo.gv("install", "--agent", "claude,codex,gemini,copilot")
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


def _reads(
    call: Callable[[str], ToolCall], results: Callable[[Any], list[Any]], again: str | None = None
) -> Any:
    """A model that reads app.py, app.py again, then notes.txt, then stops. `again`: the
    second read's call when it differs from the first (Codex: `sed -n` after `cat`)."""
    order = ["app.py", "app.py", "notes.txt"]

    def respond(body: Any) -> Any:
        done = len(results(body))
        if done == 1 and again is not None:
            return call(again)
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


@pytest.mark.claude
def test_claude_code_is_served_a_files_block_without_python_after_a_vault_change(
    claude: Path, anthropic_api: mock_anthropic.MockAnthropic, project: Repo, tmp_path: Path
) -> None:
    """A first session reads app.py (Python builds its block); a commit follows, drained by the
    detached drainer as a user's commit is, whose refresh materializes the block of the file a
    session was shown; a second session's Read of app.py is answered by the launcher's sh: the
    same block reaches the model, and no Python starts for that Read."""
    block = _expected(project, "app.py")
    site = tmp_path / "site"
    site.mkdir()
    starts = tmp_path / "python-argv"
    (site / "sitecustomize.py").write_text(
        "import sys\n"
        f"with open({str(starts)!r}, 'a') as _f:\n    _f.write(repr(sys.argv) + '\\n')\n"
    )

    # The agent runs in the user's environment, as the commit below does: the same git config.
    names = ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "XDG_CONFIG_HOME")
    user_env = {name: os.environ[name] for name in names if name in os.environ}

    def session() -> list[Any]:
        anthropic_api.responder = _reads(
            lambda rel: ToolCall("Read", {"file_path": str(project.path / rel)}),
            mock_anthropic.tool_results,
        )
        before = len(anthropic_api.model_requests())
        done = run_claude(
            claude,
            ["-p", PROMPT, "--output-format", "json", "--model", "claude-sonnet-4-5"],
            cwd=project.path,
            home=tmp_path / "claude-home",
            base_url=anthropic_api.base_url,
            timeout=CLI_TIMEOUT,
            extra_env={"GITVAULT_SYNC": "1", "PYTHONPATH": str(site), **user_env},
        )
        assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        return [r.body for r in anthropic_api.model_requests()[before:]]

    _check(session(), mock_anthropic.received_text, block)
    where = blocks.path_for(resolve(project.path))
    project.commit("docs: a note beside the app", files={"NOTE.md": "x\n"}, sync=False)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
        where.is_file() and b"Memory of app.py" in where.read_bytes()
    ):
        time.sleep(0.2)
    assert where.is_file(), "the drainer's refresh built the blocks file"
    starts.unlink(missing_ok=True)
    _check(session(), mock_anthropic.received_text, block)
    argvs = starts.read_text().splitlines() if starts.exists() else []
    assert not [a for a in argvs if "'file-read'" in a], argvs


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


@pytest.mark.agents
def test_codex_gets_a_files_block_once(
    codex: Path, openai_api: mock_openai.MockOpenAI, project: Repo, tmp_path: Path
) -> None:
    block = _expected(project, "app.py")
    # Codex has no read tool: it reads through its shell, `cat` first, then `sed -n`.
    commands = {
        "app.py": "cat app.py",
        "again": "sed -n '1,20p' app.py",
        "notes.txt": "cat notes.txt",
    }
    openai_api.responder = _reads(
        lambda rel: mock_openai.codex_shell(commands[rel]), mock_openai.tool_results, "again"
    )
    done = agent_clis.run_codex(
        codex,
        PROMPT,
        cwd=project.path,
        home=tmp_path / "codex-home",
        base_url=openai_api.base_url,
        extra_env={"GITVAULT_SYNC": "1"},
        timeout=CLI_TIMEOUT,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    requests = [r.body for r in openai_api.model_requests()]
    _check(requests, mock_openai.received_text, block)
    # Where Codex puts it: one developer message, next to the shell call's output.
    after = mock_openai.items(requests[1])
    output = max(i for i, item in enumerate(after) if mock_openai.role_of(item) == "tool")
    carriers = [
        i
        for i, item in enumerate(after)
        if block in mock_openai.message_texts({"input": [item]})[0]
    ]
    assert len(carriers) == 1 and mock_openai.role_of(after[carriers[0]]) == "developer"
    assert abs(carriers[0] - output) == 1, (carriers, output)


def _gemini_text(body: Any) -> str:
    """What Gemini's model received, with each function response's strings as they are (the
    dialect's received_text JSON-encodes them, escaping the block's newlines)."""

    def strings(value: Any) -> list[str]:
        if isinstance(value, str):
            return [value]
        if isinstance(value, dict):
            return [s for v in value.values() for s in strings(v)]
        if isinstance(value, list):
            return [s for v in value for s in strings(v)]
        return []

    parts = [mock_gemini.system_text(body)]
    for content in mock_gemini.contents(body):
        for part in content.get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                parts += strings(part["functionResponse"].get("response"))
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
    return "\n".join(p for p in parts if p)


@pytest.mark.agents
def test_gemini_gets_a_files_block_once(
    gemini: Path, gemini_api: mock_gemini.MockGemini, project: Repo, tmp_path: Path
) -> None:
    block = _expected(project, "app.py")
    gemini_api.responder = _reads(
        lambda rel: ToolCall("read_file", {"file_path": str(project.path / rel)}),
        mock_gemini.function_responses,
    )
    done = agent_clis.run_gemini(
        gemini,
        PROMPT,
        cwd=project.path,
        home=tmp_path / "gemini-home",
        base_url=gemini_api.base_url,
        extra_env={"GITVAULT_SYNC": "1"},
        timeout=CLI_TIMEOUT,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    requests = [r.body for r in gemini_api.model_requests()]
    # Gemini 0.61 HTML-escapes angle brackets in a hook's context (`git show <sha>` arrives as
    # `git show &lt;sha&gt;`), inside <hook_context> tags of its own.
    seen = block.replace("<", "&lt;").replace(">", "&gt;")
    _check(requests, _gemini_text, seen)
    assert f"<hook_context>{seen}</hook_context>" in _gemini_text(requests[1])
    # Where Gemini puts it: inside the read_file result, after the file's text.
    (first,) = mock_gemini.function_responses(requests[1])
    assert first["name"] == "read_file" and seen in _gemini_text(
        {"contents": [{"role": "user", "parts": [{"functionResponse": first}]}]}
    )
