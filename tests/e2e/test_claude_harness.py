"""The test harness itself: the Messages API mock on its own, then the real Claude Code CLI
running offline against it (hooks, a scripted Bash tool call, the transcript it writes).

Real-CLI tests are marked ``claude``; they skip with the reason when the CLI cannot be found or
installed, unless GITVAULT_REQUIRE_CLAUDE=1 (then they fail). Observed with CLI 2.1.197.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from gitvault.agents.adapters.claude.transcript import commits_in, read_transcript
from tests.support.claude_cli import (
    FAKE_API_KEY,
    run_claude,
    transcripts,
)
from tests.support.mock_anthropic import (
    DEFAULT_TEXT,
    MockAnthropic,
    Reply,
    TextReply,
    bash,
    bash_when,
    ends_with_tool_result,
    last_user_text,
    message_texts,
    received_text,
    text,
    tool_results,
)
from tests.support.repos import Repo

MODEL = "claude-sonnet-4-5"
# A plain repository (no gitvault) whose identity works under the CLI's own HOME.
pytestmark = pytest.mark.repo(install=False, identity=True)
CLI_TIMEOUT = 60


# --- the mock on its own (no CLI needed) -----------------------------------------------------


def _post(url: str, payload: Any) -> tuple[int, str, bytes]:
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode(),
        headers={"content-type": "application/json", "x-api-key": FAKE_API_KEY},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("content-type", ""), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("content-type", ""), error.read()


def _sse_events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.decode().split("\n\n"):
        if not chunk.strip():
            continue
        fields = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def _body(content: Any, *, stream: bool = True, system: Any = "SYS") -> dict[str, Any]:
    return {
        "model": MODEL,
        "max_tokens": 100,
        "stream": stream,
        "system": system,
        "messages": [{"role": "user", "content": content}],
    }


def test_mock_streams_text_as_sse() -> None:
    with MockAnthropic([text("streamed " * 20)]) as api:
        status, ctype, raw = _post(api.base_url + "/v1/messages?beta=true", _body("hi"))
    assert status == 200 and ctype.startswith("text/event-stream")
    events = _sse_events(raw)
    names = [name for name, _ in events]
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-4:] == [
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert events[0][1]["message"]["usage"]["input_tokens"] > 0
    deltas = [d["delta"]["text"] for n, d in events if n == "content_block_delta"]
    assert len(deltas) > 1 and "".join(deltas) == "streamed " * 20
    final = events[-2][1]
    assert final["delta"]["stop_reason"] == "end_turn" and final["usage"]["output_tokens"] > 0
    (recorded,) = api.requests
    assert recorded.path == "/v1/messages" and recorded.query == "beta=true"
    assert recorded.headers["x-api-key"] == FAKE_API_KEY and recorded.body["stream"] is True


def test_mock_streams_tool_use_as_input_json_deltas() -> None:
    command = "git commit -m 'a fairly long message so the JSON is split into pieces'"
    with MockAnthropic([bash(command)]) as api:
        _, _, raw = _post(api.base_url + "/v1/messages", _body("go"))
    events = _sse_events(raw)
    start = next(d for n, d in events if n == "content_block_start")
    assert start["content_block"]["type"] == "tool_use"
    assert start["content_block"]["name"] == "Bash"
    assert start["content_block"]["id"].startswith("toolu_")
    pieces = [d["delta"]["partial_json"] for n, d in events if n == "content_block_delta"]
    assert len(pieces) > 1
    assert json.loads("".join(pieces))["command"] == command
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_mock_non_streaming_count_tokens_and_404() -> None:
    with MockAnthropic([text("plain json")]) as api:
        status, ctype, raw = _post(api.base_url + "/v1/messages", _body("hi", stream=False))
        assert status == 200 and ctype == "application/json"
        message = json.loads(raw)
        assert message["content"] == [{"type": "text", "text": "plain json"}]
        assert message["stop_reason"] == "end_turn" and message["role"] == "assistant"

        status, _, raw = _post(api.base_url + "/v1/messages/count_tokens", _body("x" * 400))
        assert status == 200 and json.loads(raw)["input_tokens"] > 50

        status, _, _ = _post(api.base_url + "/v1/complete", {})
        assert status == 404
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(api.base_url + "/v1/models", timeout=10)
        assert info.value.code == 404
        assert [(r.method, r.path) for r in api.requests] == [
            ("POST", "/v1/messages"),
            ("POST", "/v1/messages/count_tokens"),
            ("POST", "/v1/complete"),
            ("GET", "/v1/models"),
        ]
        assert len(api.model_requests()) == 1


def test_mock_queue_then_responder_and_bash_when_rule() -> None:
    rule = bash_when("please commit", "git commit -am x", otherwise="nothing to do")
    with MockAnthropic(["first from queue"], responder=rule) as api:
        assert api.next_reply(_body("please commit")) == TextReply("first from queue")
        assert api.next_reply(_body("please commit")) == bash("git commit -am x")
        assert api.next_reply(_body("hello")) == TextReply("nothing to do")
        after_tool = _body([{"type": "tool_result", "tool_use_id": "t1", "content": "done"}])
        # The tool already ran: answer text so the turn ends, even though the rule matched.
        assert api.next_reply(after_tool) == TextReply("TOOL-DONE")


def test_mock_reports_a_broken_responder_instead_of_hanging() -> None:
    def broken(body: dict[str, Any]) -> Reply:
        raise RuntimeError("boom")

    with MockAnthropic(responder=broken) as api:
        status, _, raw = _post(api.base_url + "/v1/messages", _body("hi"))
    assert status == 400 and "boom" in json.loads(raw)["error"]["message"]
    assert [type(e) for e in api.errors] == [RuntimeError]


def test_received_text_covers_system_messages_and_tool_results() -> None:
    body = {
        "system": [{"type": "text", "text": "SYSTEM-A"}, {"type": "text", "text": "SYSTEM-B"}],
        "messages": [
            {"role": "user", "content": "PROMPT"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "ANSWER"},
                    {"type": "tool_use", "id": "t", "name": "Bash", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t", "content": "OUT-STR"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "u",
                        "content": [{"type": "text", "text": "OUT-LIST"}],
                    },
                    {"type": "text", "text": "<system-reminder>REMINDER</system-reminder>"},
                ],
            },
        ],
    }
    everything = received_text(body)
    for needle in ("SYSTEM-A", "SYSTEM-B", "PROMPT", "ANSWER", "OUT-STR", "OUT-LIST", "REMINDER"):
        assert needle in everything
    assert tool_results(body) == ["OUT-STR", "OUT-LIST"]
    assert message_texts(body, "user")[0] == "PROMPT"
    assert ends_with_tool_result(body)
    assert "REMINDER" in last_user_text(body)


# --- the real CLI ----------------------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _claude_json(
    claude: Path, api: MockAnthropic, project: Path, home: Path, *args: str
) -> dict[str, Any]:
    done = run_claude(
        claude,
        [*args, "--output-format", "json", "--model", MODEL],
        cwd=project,
        home=home,
        base_url=api.base_url,
        timeout=CLI_TIMEOUT,
    )
    assert done.returncode == 0, f"exit {done.returncode}\nstdout:\n{done.stdout}\n{done.stderr}"
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["is_error"] is False, result
    return result


@pytest.mark.claude
def test_print_mode_returns_mock_text(
    claude: Path, anthropic_api: MockAnthropic, repo: Repo, home: Path
) -> None:
    result = _claude_json(claude, anthropic_api, repo.path, home, "-p", "hello")

    assert result["result"] == DEFAULT_TEXT
    assert result["num_turns"] == 1
    (request,) = anthropic_api.model_requests()  # one model turn, one request
    # Besides it only a best-effort warm-up probe (2.1.197: `HEAD /`) may arrive.
    assert {r.method for r in anthropic_api.requests if r is not request} <= {"HEAD"}
    body = request.body
    assert body["model"] == MODEL and body["stream"] is True
    assert last_user_text(body).rstrip().endswith("hello")
    assert request.headers["x-api-key"] == FAKE_API_KEY
    assert request.headers["user-agent"].startswith("claude-cli/")
    # Everything landed in the temporary HOME.
    assert len(transcripts(home)) == 1


MARKER_HOOK = """\
import json, sys
sys.stdin.read()
print(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                          "additionalContext": "MARKER-123"}}))
"""


@pytest.mark.claude
def test_session_start_hook_context_reaches_the_model(
    claude: Path, anthropic_api: MockAnthropic, repo: Repo, home: Path
) -> None:
    hooks_dir = repo.path / ".claude" / "hooks"
    hooks_dir.mkdir(parents=True)
    (hooks_dir / "marker.py").write_text(MARKER_HOOK)
    command = f'"{sys.executable}" "$CLAUDE_PROJECT_DIR/.claude/hooks/marker.py"'
    settings = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": command}]}]}}
    (repo.path / ".claude" / "settings.json").write_text(json.dumps(settings))

    _claude_json(claude, anthropic_api, repo.path, home, "-p", "hello")

    first = anthropic_api.model_requests()[0].body
    assert "MARKER-123" in message_texts(first, "user")[0]


@pytest.mark.claude
def test_scripted_bash_tool_use_runs(
    claude: Path, anthropic_api: MockAnthropic, repo: Repo, home: Path
) -> None:
    anthropic_api.responder = bash_when("make the file", "echo TOOL-OK > tool-ok.txt")

    result = _claude_json(
        claude,
        anthropic_api,
        repo.path,
        home,
        "-p",
        "please make the file",
        "--allowedTools",
        "Bash",
    )

    assert (repo.path / "tool-ok.txt").read_text() == "TOOL-OK\n"
    assert result["result"] == "TOOL-DONE" and result["permission_denials"] == []
    first, second = anthropic_api.model_requests()
    assert not ends_with_tool_result(first.body)
    assert ends_with_tool_result(second.body)


@pytest.mark.claude
def test_live_transcript_parses_and_finds_the_commit(
    claude: Path, anthropic_api: MockAnthropic, repo: Repo, home: Path
) -> None:
    """The parser against whatever CLI version is installed, not only the stored fixtures."""
    initial = repo.head()
    commit = "printf '# fixed\\n' > README.md && git commit -am 'fix greeting'"

    def respond(body: dict[str, Any]) -> Reply:
        if ends_with_tool_result(body):
            return text("TOOL-DONE")
        return bash(commit, preamble="COMMITTING-NOW")

    anthropic_api.responder = respond

    _claude_json(
        claude,
        anthropic_api,
        repo.path,
        home,
        "-p",
        "please commit the fix",
        "--allowedTools",
        "Bash",
    )

    head = repo.head()
    assert head != initial
    (path,) = transcripts(home)
    # The turn's text is read from the same assistant message as the tool call, which Claude
    # Code writes before the tool runs. (Its last message, after the tool, is not always in the
    # file when `claude -p` exits on a loaded machine: that line is not the parser's to find.)
    summary = read_transcript(path)
    assert summary.prompt_count == 1 and summary.first_prompt == "please commit the fix"
    assert summary.bash_commands == [commit]
    assert "COMMITTING-NOW" in summary.assistant_texts
    # `git commit` prints the abbreviated hash; the initial commit never shows up.
    assert commits_in(summary, [initial, head]) == [head]


@pytest.mark.claude
def test_compact_through_resume_reaches_the_mock(
    claude: Path, anthropic_api: MockAnthropic, repo: Repo, home: Path
) -> None:
    tool_turn = bash_when("list files", "ls", after_tool="listed")

    def respond(body: dict[str, Any]) -> Reply | str:
        if "<summary>" in last_user_text(body):  # the summariser's instructions
            return "<analysis>a</analysis>\n<summary>COMPACT-SUMMARY-7</summary>"
        return tool_turn(body)

    anthropic_api.responder = respond
    # A single exchange is "Not enough messages to compact." (2.1.197); a tool round trip is.
    first = _claude_json(
        claude, anthropic_api, repo.path, home, "-p", "list files", "--allowedTools", "Bash"
    )
    resume = ["--resume", first["session_id"]]
    _claude_json(claude, anthropic_api, repo.path, home, "-p", "/compact keep notes", *resume)

    requests = anthropic_api.model_requests()
    assert len(requests) == 3
    assert "keep notes" in last_user_text(requests[2].body)
    (path,) = transcripts(home)
    raw = path.read_text()
    assert "COMPACT-SUMMARY-7" in raw and '"compact_boundary"' in raw
    summary = read_transcript(path)
    # The compaction summary and the /compact echo are not prompts.
    assert summary.prompt_count == 1 and summary.last_prompt == "list files"
    assert summary.bash_commands == ["ls"]
    assert all("COMPACT-SUMMARY-7" not in t for t in summary.assistant_texts)
