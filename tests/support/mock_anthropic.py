"""A mock of the Anthropic Messages API on the shared core (model_server), for running the real
Claude Code CLI offline in tests (see /work/shared/reference/claude-code.md §5).

Endpoints: ``POST /v1/messages`` (any query string; SSE when ``stream`` is true, JSON
otherwise), ``POST /v1/messages/count_tokens``; everything else is a 404.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

from tests.support.model_server import (
    AFTER_TOOL,
    DEFAULT_TEXT,
    Dialect,
    Handler,
    ModelServer,
    RecordedRequest,
    Reply,
    Responder,
    TextReply,
    ToolCall,
    pieces,
    shell_when,
    text,
)

__all__ = ["DEFAULT_TEXT", "MockAnthropic", "Reply", "TextReply", "ToolCall", "text"]


def bash(
    command: str, description: str = "run a command", *, preamble: str | None = None
) -> ToolCall:
    """Claude Code's shell tool (preamble: a text block before the call, in the same turn)."""
    return ToolCall("Bash", {"command": command, "description": description}, preamble)


# --- what the model received --------------------------------------------------------------


def _block_texts(content: Any) -> Iterator[str]:
    """Text of a message's content: a string, or text / tool_result blocks."""
    if isinstance(content, str):
        yield content
        return
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, str):
            yield block
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                yield block["text"]
            elif kind == "tool_result":
                yield from _block_texts(block.get("content"))


def system_text(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    return "\n".join(_block_texts(body.get("system")))


def message_texts(body: Any, role: str | None = None) -> list[str]:
    """One string per message (all its text and tool_result blocks joined)."""
    if not isinstance(body, dict):
        return []
    out: list[str] = []
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        if role is not None and message.get("role") != role:
            continue
        out.append("\n".join(_block_texts(message.get("content"))))
    return out


def received_text(body: Any) -> str:
    """Everything textual the model received: system, then every message in order."""
    parts = [system_text(body), *message_texts(body)]
    return "\n".join(p for p in parts if p)


def last_user_message(body: Any) -> dict[str, Any] | None:
    if not isinstance(body, dict):
        return None
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            return message
    return None


def last_user_text(body: Any) -> str:
    message = last_user_message(body)
    return "" if message is None else "\n".join(_block_texts(message.get("content")))


def tool_results(body: Any) -> list[str]:
    """Text of every tool_result block in the request, in order."""
    out: list[str] = []
    if not isinstance(body, dict):
        return out
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                out.append("\n".join(_block_texts(block.get("content"))))
    return out


def ends_with_tool_result(body: Any) -> bool:
    """True when the last user message carries a tool_result: the tool already ran."""
    message = last_user_message(body)
    content = None if message is None else message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


DIALECT = Dialect(
    last_user_text=last_user_text,
    ends_with_tool_result=ends_with_tool_result,
    received_text=received_text,
    shell_call=lambda command, _body: bash(command),
)


def bash_when(
    needle: str, command: str, *, otherwise: str = DEFAULT_TEXT, after_tool: str = AFTER_TOOL
) -> Responder:
    """Run ``command`` through Bash when the last user message contains ``needle``."""
    return shell_when(DIALECT, needle, command, otherwise=otherwise, after_tool=after_tool)


# --- the server ---------------------------------------------------------------------------


def _estimate_tokens(body: Any) -> int:
    return max(1, len(received_text(body)) // 4)


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class _Messages(Handler):
    def extra_headers(self) -> Mapping[str, str]:
        return {"request-id": f"req_mock_{uuid.uuid4().hex[:16]}"}

    def error(self, status: int, message: str) -> None:
        kind = "not_found_error" if status == 404 else "invalid_request_error"
        self.send_json(status, {"type": "error", "error": {"type": kind, "message": message}})

    def do_GET(self) -> None:
        self.record()
        self.error(404, self.path)

    def do_POST(self) -> None:
        request = self.record()
        if request.path == "/v1/messages/count_tokens":
            self.send_json(200, {"input_tokens": _estimate_tokens(request.body)})
            return
        if request.path != "/v1/messages":
            self.error(404, self.path)
            return
        reply = self.scripted_reply(request.body)
        if reply is None:
            return
        model = str(request.body.get("model") or "claude-mock")
        tokens = _estimate_tokens(request.body)
        if not request.body.get("stream"):
            self.send_json(200, _message_json(reply, model, tokens))
            return
        self.start_stream()
        for event, data in _stream_events(reply, model, tokens):
            self.chunk(_sse(event, data))
        self.end_stream()


class MockAnthropic(ModelServer):
    handler = _Messages
    thread_name = "mock-anthropic"

    @property
    def base_url(self) -> str:
        return self.origin

    def is_model_turn(self, request: RecordedRequest) -> bool:
        """``POST /v1/messages`` (a model turn), not a token count or a probe."""
        return request.method == "POST" and request.path == "/v1/messages"


# --- the wire format ----------------------------------------------------------------------


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    if isinstance(reply, TextReply):
        return [{"type": "text", "text": reply.text}]
    blocks: list[dict[str, Any]] = []
    if reply.preamble:
        blocks.append({"type": "text", "text": reply.preamble})
    blocks.append(
        {
            "type": "tool_use",
            "id": f"toolu_mock_{uuid.uuid4().hex[:20]}",
            "name": reply.name,
            "input": reply.arguments,
        }
    )
    return blocks


def _stop_reason(reply: Reply) -> str:
    return "end_turn" if isinstance(reply, TextReply) else "tool_use"


def _output_tokens(blocks: list[dict[str, Any]]) -> int:
    return max(1, len(json.dumps(blocks)) // 4)


def _usage(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def _message_json(reply: Reply, model: str, input_tokens: int) -> dict[str, Any]:
    blocks = _blocks(reply)
    return {
        "id": f"msg_mock_{uuid.uuid4().hex[:20]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": _stop_reason(reply),
        "stop_sequence": None,
        "usage": _usage(input_tokens, _output_tokens(blocks)),
    }


def _stream_events(reply: Reply, model: str, input_tokens: int) -> Iterator[tuple[str, Any]]:
    blocks = _blocks(reply)
    start = _message_json(reply, model, input_tokens)
    start.update(content=[], stop_reason=None, usage=_usage(input_tokens, 1))
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            for piece in pieces(block["text"]):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                )
        else:
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {
                        "type": "tool_use",
                        "id": block["id"],
                        "name": block["name"],
                        "input": {},
                    },
                },
            )
            for piece in pieces(json.dumps(block["input"])):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    },
                )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": _stop_reason(reply), "stop_sequence": None},
            "usage": {"output_tokens": _output_tokens(blocks)},
        },
    )
    yield "message_stop", {"type": "message_stop"}
