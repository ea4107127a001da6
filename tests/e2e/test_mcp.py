"""An agent calling gitvault's MCP server end to end: the real CLIs, headless and offline
against the local model mocks, in a project `gitvault install` wired. Claude Code: .mcp.json,
and in .claude/settings.local.json an allow rule for each of the server's tools (a headless
session cannot ask, and denies the call otherwise); the mock model calls
`mcp__gitvault__search`. Gemini CLI (`mcpServers` in .gemini/settings.json, trusted) and Copilot
CLI (.mcp.json) offer the same tools under their own names — `mcp_gitvault_search` and
`gitvault-search`, as their first requests show — and the mock calls them so. In each, the
request after the call carries the tool's result: the commit found.

Facts from Claude Code 2.1.197 behind the setup (seen with --debug): a headless `-p` session
connects the project's .mcp.json servers without an approval step, but sends its first request
without waiting for them ("running fully async (nonblocking)"), so under load the tools may not
be offered yet; MCP_CONNECTION_NONBLOCKING=false makes it wait. Allow rules in
.claude/settings.json are ignored until the workspace is trusted; settings.local.json's count
at once.

Marked `claude` / `agents`: skips with the reason printed when a CLI cannot be had (or fails,
with GITVAULT_REQUIRE_CLAUDE=1 / GITVAULT_REQUIRE_AGENTS=1); never passes silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support import agent_clis, mock_anthropic, mock_gemini, mock_openai
from tests.support.claude_cli import run_claude
from tests.support.model_server import ToolCall, text
from tests.support.repos import Repo

SUBJECT = "fix: parse the MCPCANARY-58e option before the subcommand"
PROMPT = "what do we know about MCPCANARY-58e?"
CLI_TIMEOUT = 120
TOOL = "mcp__gitvault__search"


@pytest.fixture
def project(repo_factory: Callable[..., Repo]) -> Repo:
    repo = repo_factory("proj", install=False, identity=True)
    done = repo.gv("install", "--agent", "claude,gemini,copilot")
    assert done.code == 0, done
    repo.commit(SUBJECT, files={"cli.py": "OPTION = 1\n"})
    repo.git("add", ".")
    repo.commit("chore: commit the gitvault install", files={})
    return repo


def _search_then_stop(body: Any) -> Any:
    if mock_anthropic.tool_results(body):
        return text("Found it.")
    return ToolCall(TOOL, {"query": "MCPCANARY-58e"})


@pytest.mark.claude
def test_claude_code_calls_the_mcp_search_and_gets_its_result(
    claude: Path, anthropic_api: mock_anthropic.MockAnthropic, project: Repo, tmp_path: Path
) -> None:
    anthropic_api.responder = _search_then_stop
    done = run_claude(
        claude,
        ["-p", PROMPT, "--output-format", "json", "--model", "claude-sonnet-4-5"],
        cwd=project.path,
        home=tmp_path / "claude-home",
        base_url=anthropic_api.base_url,
        timeout=CLI_TIMEOUT,
        extra_env={"MCP_CONNECTION_NONBLOCKING": "false"},
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert json.loads(done.stdout)["is_error"] is False, done.stdout
    requests = [r.body for r in anthropic_api.model_requests()]
    offered = [t.get("name") for t in requests[0].get("tools") or []]
    assert TOOL in offered, offered
    assert len(requests) == 2, len(requests)
    (result,) = mock_anthropic.tool_results(requests[1])
    assert SUBJECT in result, result
    assert "permission" not in result.lower(), result
    allowed = json.loads((project.path / ".claude" / "settings.local.json").read_text())
    assert TOOL in allowed["permissions"]["allow"], "install allowed the tool by name"


def _search_in(results: Callable[[Any], list[Any]], tool: str) -> Callable[[Any], Any]:
    def respond(body: Any) -> Any:
        return text("Found it.") if results(body) else ToolCall(tool, {"query": "MCPCANARY-58e"})

    return respond


@pytest.mark.agents
def test_gemini_calls_the_mcp_search_and_gets_its_result(
    gemini: Path, gemini_api: mock_gemini.MockGemini, project: Repo, tmp_path: Path
) -> None:
    tool = "mcp_gitvault_search"
    gemini_api.responder = _search_in(mock_gemini.function_responses, tool)
    done = agent_clis.run_gemini(
        gemini,
        PROMPT,
        cwd=project.path,
        home=tmp_path / "gemini-home",
        base_url=gemini_api.base_url,
        timeout=CLI_TIMEOUT,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    requests = [r.body for r in gemini_api.model_requests()]
    offered = [
        d.get("name") for t in requests[0].get("tools") or [] for d in t["functionDeclarations"]
    ]
    assert tool in offered, offered
    assert len(requests) == 2, len(requests)
    (result,) = mock_gemini.function_responses(requests[1])
    assert result["name"] == tool and SUBJECT in json.dumps(result["response"]), result


@pytest.mark.agents
def test_copilot_calls_the_mcp_search_and_gets_its_result(
    copilot: Path, openai_api: mock_openai.MockOpenAI, project: Repo, tmp_path: Path
) -> None:
    tool = "gitvault-search"
    openai_api.responder = _search_in(mock_openai.tool_results, tool)
    done = agent_clis.run_copilot(
        copilot,
        PROMPT,
        cwd=project.path,
        home=tmp_path / "copilot-home",
        base_url=openai_api.base_url,
        timeout=CLI_TIMEOUT,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    requests = [r.body for r in openai_api.model_requests()]
    offered = [(t.get("function") or {}).get("name") for t in requests[0].get("tools") or []]
    assert tool in offered, offered
    assert len(requests) == 2, len(requests)
    (result,) = mock_openai.tool_results(requests[1])
    assert SUBJECT in result, result
