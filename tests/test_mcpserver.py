"""`gitvault mcp` spoken to by the mcp SDK's own stdio client (the server started as an agent
starts it, `gitvault mcp` in the repository): the tools it lists, what each answers, inputs
refused, text results without a structured copy; the standard-library front that answers the
handshake before the SDK loads says what the SDK says; install registers the server in each
agent's MCP configuration beside the user's own, uninstall removes only it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from gitvault import mcpserver
from gitvault.agents import adapters
from tests.support.memory import vault_text
from tests.support.repos import Repo

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
SESSION = (
    f"## Summary\nMCP-SAVED, token {SECRET}\n## Key Decisions\n- Capitals — they read better\n"
    "## Next Steps\n- Translate\n"
)


@pytest.fixture
def project(repo_factory: Any) -> Repo:
    repo: Repo = repo_factory("proj")
    repo.commit("feat: add the greeting module", {"app.py": "print('hi')\n"})
    repo.commit("fix: greet with a capital letter", {"app.py": "print('Hi')\n"})
    return repo


def _client_calls(repo: Repo, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Start `gitvault mcp` with the SDK's client, initialize, list the tools, make the calls."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=str(Path(sys.executable).with_name("gitvault")),
        args=["mcp"],
        cwd=str(repo.path),
        env=dict(os.environ),
    )
    out: dict[str, Any] = {"calls": []}

    async def run() -> None:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            out["init"] = await session.initialize()
            out["tools"] = (await session.list_tools()).tools
            for name, args in calls:
                out["calls"].append(await session.call_tool(name, args))

    anyio.run(run)
    return out


def _text(result: Any) -> str:
    assert result.structured_content is None, "text only: agents would show a JSON wrapper"
    return "\n".join(c.text for c in result.content)


def test_a_real_client_gets_every_tool_and_bounded_text_answers(project: Repo) -> None:
    head = project.head()
    calls = [
        ("search", {"query": "capital letter"}),
        ("show", {"id": f"c:{head[:7]}"}),
        ("file_memory", {"path": "app.py"}),
        ("file_memory", {"path": "../elsewhere/app.py"}),
        ("file_memory", {"path": ".git/config"}),
        ("recall", {}),
        ("search", {"query": ""}),
        ("search", {"query": "x", "limit": 500}),
        ("show", {"id": "c:0000000"}),
        ("save_session", {"summary": SESSION, "title": "Via MCP"}),
        ("verify_line", {"line": f"- Greets with a capital letter (c:{head[:7]})"}),
        ("verify_line", {"line": "- Greets in French (c:1234567)"}),
    ]
    got = _client_calls(project, calls)
    assert got["init"].server_info.name == "gitvault"
    assert [t.name for t in got["tools"]] == list(mcpserver.TOOLS)
    for tool in got["tools"]:
        assert len(tool.description or "") <= 140, tool.name  # every session pays for them
    texts = [_text(r) for r in got["calls"]]
    errors = [bool(r.is_error) for r in got["calls"]]
    assert f"c:{head[:7]}" in texts[0] and "capital letter" in texts[0]
    assert "fix: greet with a capital letter" in texts[1]
    assert texts[2].startswith("=== VAULT RECALL ===") and "Memory of app.py (" in texts[2]
    assert texts[3] == texts[4] == "(nothing: not a file inside this worktree)"
    assert "=== VAULT RECALL ===" in texts[5] or texts[5] == "(the memory is empty)"
    assert errors[6] and "query" in texts[6], "an empty query is refused by its schema"
    assert errors[7] and "limit" in texts[7]
    assert not errors[8] and texts[8].startswith("(error: ")
    assert texts[9].startswith("saved sessions/") and "redacted 1 secret" in texts[9]
    saved = [p for p in project.vault_files() if p.startswith("sessions/")]
    body = "".join(vault_text(project, p) or "" for p in saved)
    assert "MCP-SAVED" in body and SECRET not in body
    assert texts[10].startswith("ok"), texts[10]
    assert texts[11].startswith("dangling") and "c:1234567" in texts[11]
    assert all(len(t) <= mcpserver.MAX_RESULT for t in texts)


def test_the_front_answers_the_handshake_as_the_sdk_would(project: Repo) -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    assert mcpserver.HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
    lines = [
        {"id": 0, "method": "server/discover", "params": {}},  # Copilot asks this first
        {
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"method": "notifications/initialized"},
        {"id": 2, "method": "tools/list"},
        {"id": 3, "method": "ping"},
        {"id": 4, "method": "tools/call", "params": {"name": "recall", "arguments": {}}},
        {"id": 5, "method": "tools/list"},
    ]
    stdin = "".join(json.dumps({"jsonrpc": "2.0", **m}) + "\n" for m in lines)
    done = subprocess.run(
        [str(Path(sys.executable).with_name("gitvault")), "mcp"],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=project.path,
        timeout=300,
    )
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert answers[0]["error"]["code"] == -32601
    assert answers[1]["result"]["protocolVersion"] == "2025-06-18"
    assert list(answers[1]["result"]) == ["protocolVersion", "capabilities", "serverInfo"]
    # The front's list (before the SDK loaded, or the SDK's after): the same tools.
    for ident in (2, 5):
        listed = answers[ident]["result"]["tools"]
        assert [t["name"] for t in listed] == list(mcpserver.TOOLS)
        assert [t["inputSchema"] for t in listed] == [s for _, s in mcpserver.TOOLS.values()]
    assert answers[3]["result"] == {}
    assert answers[4]["result"]["content"][0]["type"] == "text"
    assert "structuredContent" not in answers[4]["result"]
    assert sorted(answers) == [0, 1, 2, 3, 4, 5], "one answer per request, initialize once"


def test_install_registers_the_server_for_each_agent_and_uninstall_removes_it(
    repo_factory: Any,
) -> None:
    repo: Repo = repo_factory("proj", install=False)
    repo.write(".mcp.json", json.dumps({"mcpServers": {"mine": {"command": "my-server"}}}))
    repo.write(".codex/config.toml", '# my settings\nmodel = "m"\n')
    assert repo.gv("install", "--agent", ",".join(adapters.NAMES)).code == 0
    shared = json.loads((repo.path / ".mcp.json").read_text())
    assert shared["mcpServers"]["mine"] == {"command": "my-server"}
    assert shared["mcpServers"]["gitvault"] == {"command": "gitvault", "args": ["mcp"]}
    gemini = json.loads((repo.path / ".gemini/settings.json").read_text())
    assert gemini["mcpServers"]["gitvault"]["trust"] is True
    toml = (repo.path / ".codex/config.toml").read_text()
    assert toml.startswith('# my settings\nmodel = "m"\n')
    assert '[mcp_servers.gitvault]\ncommand = "gitvault"\nargs = ["mcp"]' in toml
    before = {p: (repo.path / p).read_bytes() for p in (".mcp.json", ".codex/config.toml")}
    assert repo.gv("install", "--agent", ",".join(adapters.NAMES)).code == 0
    assert before == {p: (repo.path / p).read_bytes() for p in before}, "a second install"
    status = repo.gv("status", "--json").json("status")
    assert all(entry["mcp"] for entry in status["agents"]), status["agents"]
    assert repo.gv("uninstall").code == 0
    assert json.loads((repo.path / ".mcp.json").read_text()) == {
        "mcpServers": {"mine": {"command": "my-server"}}
    }
    assert (repo.path / ".codex/config.toml").read_text() == '# my settings\nmodel = "m"\n'
    assert not (repo.path / ".gemini/settings.json").exists()


def test_install_allows_each_of_the_servers_tools_by_name() -> None:
    from gitvault.agents import texts

    assert tuple(mcpserver.TOOLS) == texts.MCP_TOOLS
    assert tuple(f"mcp__{mcpserver.NAME}__{t}" for t in mcpserver.TOOLS) == texts.MCP_PERMISSIONS
