"""The handover with the real Claude Code CLI (`claude -p`, offline against the Messages API
mock): `/checkpoint` expands the skill `gitvault install` wrote, the model runs the command it
gives through the Bash tool, and after `/clear` the new session's SessionStart recall starts
from that handover; a later session's does not. Asserted from what the mock received and from
the vault.

Marked `claude`; skips with the reason printed when the CLI cannot be had (fails with
GITVAULT_REQUIRE_CLAUDE=1)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitvault.memory.fences import RECALL_BEGIN
from gitvault.vault import frontmatter
from tests.support.claude_cli import run_claude
from tests.support.memory import vault_text
from tests.support.mock_anthropic import (
    MockAnthropic,
    Reply,
    bash,
    ends_with_tool_result,
    last_user_text,
    message_texts,
    text,
)
from tests.support.repos import Repo

pytestmark = pytest.mark.claude

MODEL = "claude-sonnet-4-5"
CLI_TIMEOUT = 120
COMMIT = (
    "printf 'strict = True\\n' > parser.py && git add parser.py && "
    "git commit -q -m 'feat: strict parser'"
)
# The command the skill gives, from `gitvault` to the heredoc's end.
COMMAND = re.compile(
    r"^gitvault checkpoint --session-id (?P<sid>\S+) .*?^GITVAULT_EOF$", re.M | re.S
)
FILLED = {
    "<title: $ARGUMENTS>": "Strict parser",
    "<title: Strict parser>": "Strict parser",
    "<what the user asked this session, in their words, and what is done of it>": (
        "Make the parser strict (ASKED-7c1); half done."
    ),
    "<what is unfinished, undecided or broken, with file names>": "the lexer (OPEN-7c1)",
    "<the first thing the next session should do>": "Add the --strict flag (NEXT-7c1)",
}
PLACEHOLDER = re.compile(r"<[a-z][^<>\n]*>")


@pytest.fixture
def project(repo_factory: Callable[..., Repo]) -> Repo:
    repo = repo_factory("proj", claude=True, identity=True)
    repo.commit("feat: add the parser", files={"parser.py": "strict = False\n"})
    repo.git("add", ".claude", ".mcp.json", "CLAUDE.md")
    repo.commit("chore: commit the gitvault install", files={})
    return repo


def _claude(
    claude: Path, api: MockAnthropic, repo: Repo, home: Path, prompt: str, *args: str
) -> dict[str, Any]:
    done = run_claude(
        claude,
        ["-p", prompt, "--output-format", "json", "--model", MODEL, *args],
        cwd=repo.path,
        home=home,
        base_url=api.base_url,
        timeout=CLI_TIMEOUT,
        extra_env={"GITVAULT_SYNC": "1"},
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["is_error"] is False, result
    assert not api.errors, api.errors
    return result


def _start_context(api: MockAnthropic) -> str:
    """The recall block the first request of the last run carried (its SessionStart)."""
    first = api.model_requests()[0].body
    found = [t for t in message_texts(first, "user") if RECALL_BEGIN in t]
    assert found, message_texts(first, "user")
    block = found[0][found[0].index(RECALL_BEGIN) :]
    return block


def test_checkpoint_skill_then_clear_starts_from_the_handover_once(
    claude: Path, anthropic_api: MockAnthropic, project: Repo, tmp_path: Path
) -> None:
    repo = project
    home = tmp_path / "claude-home"
    ran: dict[str, str] = {}

    def respond(body: dict[str, Any]) -> Reply | str:
        last = last_user_text(body)
        if ends_with_tool_result(body):
            return text("Handover saved." if "checkpoint" in ran else "Committed.")
        match = COMMAND.search(last)
        if match:  # the skill's text reached the model: run its command, filled in
            ran["given"] = match.group(0)
            ran["checkpoint"] = PLACEHOLDER.sub(lambda m: FILLED[m.group(0)], match.group(0))
            return bash(ran["checkpoint"], "save the handover")
        if "make the parser strict" in last:
            ran["commit"] = COMMIT
            return bash(COMMIT, "commit the first part")
        return text("Nothing to do.")

    anthropic_api.responder = respond
    # Session 1: a commit, then /checkpoint in the same conversation.
    first = _claude(
        claude, anthropic_api, repo, home, "make the parser strict", "--allowedTools", "Bash"
    )
    sid = first["session_id"]
    sha = repo.head()
    assert repo.git("log", "-1", "--format=%s") == "feat: strict parser"
    anthropic_api.clear()
    _claude(
        claude,
        anthropic_api,
        repo,
        home,
        "/checkpoint Strict parser",
        "--resume",
        sid,
        "--allowedTools",
        "Bash",
    )
    assert "checkpoint" in ran, [
        last_user_text(r.body)[:500] for r in anthropic_api.model_requests()
    ]
    assert f"--session-id {sid} " in ran["given"]  # Claude Code filled in its session id
    handovers = []
    for path in repo.vault_files():
        if path.startswith("sessions/") and path.endswith(".md"):
            meta, body = frontmatter.parse(vault_text(repo, path) or "")
            if meta.get("handover") is True:
                handovers.append((meta, body))
    assert len(handovers) == 1, handovers
    meta, body = handovers[0]
    assert meta["session_id"] == sid and meta["agent"] == "claude-code"
    assert meta["commits"] == [sha], meta  # from the worktree's HEAD reflog
    assert f"{sha[:7]} feat: strict parser" in body and "NEXT-7c1" in body

    # /clear: Claude Code ends the conversation and starts a new session (SessionStart source
    # "clear", a new id) whose recall has the handover first; its first model request (the
    # next prompt, resuming it) carries that block.
    anthropic_api.clear()
    cleared = _claude(claude, anthropic_api, repo, home, "/clear", "--resume", sid)
    new_sid = cleared["session_id"]
    assert new_sid != sid and not anthropic_api.model_requests()
    consumed = json.loads((repo.state_dir / "handovers.json").read_text())["consumed"]
    assert consumed[meta["slug"]]["session"] == new_sid, consumed
    _claude(claude, anthropic_api, repo, home, "what now?", "--resume", new_sid)
    block = _start_context(anthropic_api)
    part = block.split("\n\n")[1]
    assert part.startswith(f"Handover from an earlier session, s:{meta['slug']}"), block
    for marker in ("ASKED-7c1", "OPEN-7c1", "NEXT-7c1", f"{sha[:7]} feat: strict parser"):
        assert marker in part, (marker, part)

    # A new session: the handover was consumed; the usual block, the handover not first.
    anthropic_api.clear()
    _claude(claude, anthropic_api, repo, home, "and now?")
    block = _start_context(anthropic_api)
    assert not block.split("\n\n")[1].startswith("Handover from"), block


def test_the_status_line_input_carries_context_window_used_percentage(claude: Path) -> None:
    """Claude Code 2.1.197 builds its statusLine input's context_window member with
    context_window_size, current_usage and used_percentage (read from the CLI's own code: the
    status line runs only in the interactive terminal UI, not under `claude -p`)."""
    data = claude.resolve().read_bytes()
    builder = re.search(
        rb"context_window_size:\w+,current_usage:\w+,used_percentage:\w+\.used", data
    )
    assert builder is not None, "the statusLine builder changed: check status/line.py's fields"
