"""The model API mocks on their own (no CLI needed): every dialect answers a scripted text and a
scripted shell call in its own wire format, journals what arrived, plays its queue before its
responder, and answers a responder that raises with a 400 while keeping the exception."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.support import mock_anthropic, mock_gemini, mock_openai
from tests.support.model_server import ModelServer, ToolCall, text


def _post(url: str, payload: Any) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST")
    request.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _anthropic_turn(api: ModelServer, prompt: str) -> tuple[int, bytes]:
    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": prompt}]}
    return _post(f"{api.origin}/v1/messages", body)


def _chat_turn(api: ModelServer, prompt: str) -> tuple[int, bytes]:
    body = {"model": "m", "messages": [{"role": "user", "content": prompt}]}
    return _post(f"{api.origin}/v1/chat/completions", body)


def _gemini_turn(api: ModelServer, prompt: str) -> tuple[int, bytes]:
    body = {"contents": [{"role": "user", "parts": [{"text": prompt}]}]}
    return _post(f"{api.origin}/v1beta/models/g:generateContent", body)


def _anthropic_answer(raw: bytes) -> tuple[str, str | None]:
    blocks = json.loads(raw)["content"]
    tools = [b for b in blocks if b["type"] == "tool_use"]
    texts = [b["text"] for b in blocks if b["type"] == "text"]
    return ("".join(texts), tools[0]["input"]["command"] if tools else None)


def _chat_answer(raw: bytes) -> tuple[str, str | None]:
    message = json.loads(raw)["choices"][0]["message"]
    calls = message.get("tool_calls") or []
    command = json.loads(calls[0]["function"]["arguments"])["command"] if calls else None
    return (message["content"] or "", command)


def _gemini_answer(raw: bytes) -> tuple[str, str | None]:
    parts = json.loads(raw)["candidates"][0]["content"]["parts"]
    calls = [p["functionCall"] for p in parts if "functionCall" in p]
    texts = [p["text"] for p in parts if "text" in p]
    return ("".join(texts), calls[0]["args"]["command"] if calls else None)


DIALECTS = {
    "anthropic": (mock_anthropic.MockAnthropic, _anthropic_turn, _anthropic_answer),
    "openai-chat": (mock_openai.MockOpenAI, _chat_turn, _chat_answer),
    "gemini": (mock_gemini.MockGemini, _gemini_turn, _gemini_answer),
}
SHELL = {
    "anthropic": mock_anthropic.bash,
    "openai-chat": mock_openai.copilot_shell,
    "gemini": mock_gemini.shell,
}


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_each_dialect_plays_its_queue_then_its_responder_and_journals_every_turn(
    dialect: str,
) -> None:
    server, turn, answer = DIALECTS[dialect]
    call: ToolCall = SHELL[dialect]("echo QUEUED")
    with server([call], responder=lambda body: text("FROM-RESPONDER")) as api:
        status, raw = turn(api, "first")
        assert status == 200, raw
        assert answer(raw)[1] == "echo QUEUED"
        status, raw = turn(api, "second")
        assert status == 200, raw
        assert answer(raw) == ("FROM-RESPONDER", None)
        turns = api.model_requests()
    assert [r.method for r in turns] == ["POST", "POST"]
    assert "second" in json.dumps(turns[1].body)
    assert not api.errors


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_a_responder_that_raises_is_answered_400_and_kept(dialect: str) -> None:
    server, turn, _ = DIALECTS[dialect]

    def broken(body: dict[str, Any]) -> str:
        raise RuntimeError("script bug")

    with server(responder=broken) as api:
        status, raw = turn(api, "hello")
    assert status == 400 and b"script bug" in raw
    assert [type(e) for e in api.errors] == [RuntimeError]


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_an_unknown_route_is_a_404_and_still_journaled(dialect: str) -> None:
    server, _, _ = DIALECTS[dialect]
    with server() as api:
        status, _ = _post(f"{api.origin}/nowhere", {})
    assert status == 404
    assert [r.path for r in api.requests] == ["/nowhere"]
    assert api.model_requests() == []


def test_shell_when_runs_the_command_once_then_ends_the_turn() -> None:
    respond = mock_openai.shell_when("commit it", "git commit -m x", after_tool="DONE")
    ask = {"model": "m", "messages": [{"role": "user", "content": "please commit it"}]}
    call = respond(ask)
    assert isinstance(call, ToolCall) and call.arguments["command"] == "git commit -m x"
    after = {**ask, "messages": [*ask["messages"], {"role": "tool", "content": "ok"}]}
    assert respond(after) == text("DONE")
    assert respond({"model": "m", "messages": [{"role": "user", "content": "hi"}]}) == text(
        mock_openai.DEFAULT_TEXT
    )
