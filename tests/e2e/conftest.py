"""What the end-to-end tests share: the real agent CLIs (pinned, installed from npm into .cache)
and local mocks of their model APIs, one per test.

When a CLI cannot be had its tests skip with the reason printed, or fail when
GITVAULT_REQUIRE_CLAUDE=1 (Claude Code) / GITVAULT_REQUIRE_AGENTS=1 (the other three) says
they must run; they never pass silently."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import agent_clis
from tests.support.claude_cli import claude_binary, claude_unavailable_reason, claude_version
from tests.support.mock_anthropic import MockAnthropic
from tests.support.mock_gemini import MockGemini
from tests.support.mock_openai import MockOpenAI


def _cli_or_skip(name: str, binary: Path | None, reason: str, required_by: str) -> Path:
    if binary is None:
        print(f"\n[e2e] {name} skipped: {reason}", file=sys.stderr)
        if os.environ.get(required_by) == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return binary


@pytest.fixture(scope="session")
def claude() -> Path:
    found = claude_binary()
    binary = _cli_or_skip(
        "Claude Code",
        found,
        "" if found else claude_unavailable_reason(),
        "GITVAULT_REQUIRE_CLAUDE",
    )
    print(f"\n[e2e] Claude Code {claude_version(binary)} at {binary}", file=sys.stderr)
    return binary


def _agent(agent: agent_clis.AgentCli) -> Path:
    binary = _cli_or_skip(agent.name, *agent_clis.agent_binary(agent), "GITVAULT_REQUIRE_AGENTS")
    print(f"\n[e2e] {agent_clis.agent_version(binary)} at {binary}", file=sys.stderr)
    return binary


@pytest.fixture(scope="session")
def codex() -> Path:
    return _agent(agent_clis.CODEX)


@pytest.fixture(scope="session")
def gemini() -> Path:
    return _agent(agent_clis.GEMINI)


@pytest.fixture(scope="session")
def copilot() -> Path:
    return _agent(agent_clis.COPILOT)


@pytest.fixture
def anthropic_api() -> Iterator[MockAnthropic]:
    with MockAnthropic() as mock:
        yield mock


@pytest.fixture
def openai_api() -> Iterator[MockOpenAI]:
    with MockOpenAI() as mock:
        yield mock


@pytest.fixture
def gemini_api() -> Iterator[MockGemini]:
    with MockGemini() as mock:
        yield mock
