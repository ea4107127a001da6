"""A mock of the OpenAI APIs that coding agents call, on the shared core (model_server), for
running the real CLIs offline in tests:

- the **Responses API** (``POST /v1/responses``, streamed as SSE) — what Codex CLI speaks with a
  ``[model_providers.X] wire_api = "responses"`` provider;
- **Chat Completions** (``POST /v1/chat/completions``, streamed or not) — what Copilot CLI speaks
  with ``COPILOT_OFFLINE=true`` + ``COPILOT_PROVIDER_BASE_URL``.

The paths are accepted with or without the ``/v1`` prefix; ``GET [/v1]/models`` answers a model
list; everything else is a 404. ``api_of(body)`` tells a responder which API a body is for.

A scripted tool call is a :class:`ToolCall`; :func:`shell_call` builds the right one for
each agent's shell tool (checked against codex-cli 0.171.0 and copilot 1.0.102):

- Codex: function ``exec_command`` with ``{"cmd": "<shell string>"}``;
- Copilot: function ``bash`` with ``{"command": ..., "description": ...}``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any, Literal

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
    text,
)
from tests.support.model_server import shell_when as _shell_when

__all__ = ["DEFAULT_TEXT", "MockOpenAI", "Reply", "TextReply", "ToolCall", "text"]

MODEL = "mock-model"

Api = Literal["responses", "chat"]


def codex_shell(command: str, *, workdir: str | None = None) -> ToolCall:
    """Codex 0.171's shell tool: ``exec_command`` with ``cmd`` (a shell string)."""
    args: dict[str, Any] = {"cmd": command}
    if workdir is not None:
        args["workdir"] = workdir
    return ToolCall("exec_command", args)


def copilot_shell(command: str, description: str = "run a command") -> ToolCall:
    """Copilot 1.0's shell tool: ``bash`` with ``command`` + ``description``."""
    return ToolCall("bash", {"command": command, "description": description})


def shell_call(command: str, body: dict[str, Any]) -> ToolCall:
    """The shell tool call that fits the client that sent ``body`` (by the tools it offers)."""
    names = tool_names(body)
    if "exec_command" in names:
        return codex_shell(command)
    if "bash" in names:
        return copilot_shell(command)
    if "shell" in names:  # older Codex: {"command": ["bash", "-lc", ...]}
        return ToolCall("shell", {"command": ["bash", "-lc", command]})
    return codex_shell(command) if api_of(body) == "responses" else copilot_shell(command)


# --- what the model received --------------------------------------------------------------


def api_of(body: Any) -> Api:
    """Which API a body is for: "responses" (has ``input``) or "chat"."""
    return "responses" if isinstance(body, dict) and "input" in body else "chat"


def tool_names(body: Any) -> list[str]:
    """Names of the tools offered in the request (function tools, and typed ones by type)."""
    out: list[str] = []
    if not isinstance(body, dict):
        return out
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            out.append(function["name"])  # Chat Completions
        elif isinstance(tool.get("name"), str):
            out.append(tool["name"])  # Responses function / custom tool
        elif isinstance(tool.get("type"), str):
            out.append(tool["type"])  # e.g. "local_shell", "web_search"
    return out


def _content_texts(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
        return
    if not isinstance(content, list):
        return
    for part in content:
        if isinstance(part, str):
            yield part
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            yield part["text"]  # input_text / output_text / text


def _item_text(item: Any) -> str:
    """Text of one Responses input item or one Chat message."""
    if not isinstance(item, dict):
        return ""
    kind = item.get("type")
    if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        output = item.get("output")
        if isinstance(output, str):
            return output
        return "\n".join(_content_texts(output))
    if kind in ("function_call", "custom_tool_call"):
        return str(item.get("arguments") or item.get("input") or "")
    parts = list(_content_texts(item.get("content")))
    for call in item.get("tool_calls") or []:
        if isinstance(call, dict) and isinstance(call.get("function"), dict):
            parts.append(str(call["function"].get("arguments") or ""))
    return "\n".join(parts)


def items(body: Any) -> list[dict[str, Any]]:
    """The conversation: Responses ``input`` items or Chat ``messages``, in order."""
    if not isinstance(body, dict):
        return []
    seq = body.get("input") if api_of(body) == "responses" else body.get("messages")
    if isinstance(seq, str):
        return [{"type": "message", "role": "user", "content": seq}]
    return [i for i in seq or [] if isinstance(i, dict)]


def role_of(item: dict[str, Any]) -> str:
    """The item's role: user, assistant, system, developer, or tool (tool results/calls)."""
    kind = item.get("type")
    if isinstance(kind, str) and kind.endswith("_call_output"):
        return "tool"
    if isinstance(kind, str) and kind.endswith("_call"):
        return "assistant"
    return str(item.get("role") or "")


def system_text(body: Any) -> str:
    """Responses ``instructions`` plus every system/developer message."""
    if not isinstance(body, dict):
        return ""
    parts: list[str] = []
    if isinstance(body.get("instructions"), str):
        parts.append(body["instructions"])
    parts += [_item_text(i) for i in items(body) if role_of(i) in ("system", "developer")]
    return "\n".join(p for p in parts if p)


def message_texts(body: Any, role: str | None = None) -> list[str]:
    """One string per item (message / tool call / tool result), optionally of one role."""
    return [_item_text(i) for i in items(body) if role is None or role_of(i) == role]


def received_text(body: Any) -> str:
    """Everything textual the model received (instructions first, then every item in order)."""
    parts: list[str] = []
    if isinstance(body, dict) and isinstance(body.get("instructions"), str):
        parts.append(body["instructions"])
    parts += [_item_text(i) for i in items(body)]
    return "\n".join(p for p in parts if p)


def last_user_text(body: Any) -> str:
    for item in reversed(items(body)):
        if role_of(item) == "user":
            return _item_text(item)
    return ""


def tool_results(body: Any) -> list[str]:
    return [_item_text(i) for i in items(body) if role_of(i) == "tool"]


def ends_with_tool_result(body: Any) -> bool:
    """True when the last item is a tool result (the tool already ran)."""
    seq = items(body)
    return bool(seq) and role_of(seq[-1]) == "tool"


DIALECT = Dialect(
    last_user_text=last_user_text,
    ends_with_tool_result=ends_with_tool_result,
    received_text=received_text,
    shell_call=shell_call,
)


def shell_when(
    needle: str, command: str, *, otherwise: str = DEFAULT_TEXT, after_tool: str = AFTER_TOOL
) -> Responder:
    """Run ``command`` through the client's shell tool when the last user message contains
    ``needle``."""
    return _shell_when(DIALECT, needle, command, otherwise=otherwise, after_tool=after_tool)


# --- the server ---------------------------------------------------------------------------


def _route(path: str) -> Api | None:
    path = path.rstrip("/")
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/chat/completions"):
        return "chat"
    return None


def _sse(data: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def _tokens(body: Any) -> int:
    return max(1, len(received_text(body)) // 4)


class _OpenAI(Handler):
    def error(self, status: int, message: str) -> None:
        self.send_json(
            status, {"error": {"message": message, "type": "invalid_request_error", "code": None}}
        )

    def do_GET(self) -> None:
        request = self.record()
        if request.path.rstrip("/").endswith("/models"):
            model = {"id": MODEL, "object": "model", "created": 0, "owned_by": "mock"}
            self.send_json(200, {"object": "list", "data": [model]})
        else:
            self.error(404, f"no route {request.path}")

    def do_POST(self) -> None:
        request = self.record()
        api = _route(request.path)
        if api is None:
            self.error(404, f"no route {request.path}")
            return
        reply = self.scripted_reply(request.body)
        if reply is None:
            return
        model = str(request.body.get("model") or MODEL)
        tokens = _tokens(request.body)
        if api == "responses":
            self.start_stream()
            for event in _responses_events(reply, model, tokens):
                self.chunk(_sse(event, event["type"]))
            self.end_stream()
        elif request.body.get("stream"):
            self.start_stream()
            for chunk in _chat_chunks(reply, model, tokens, request.body):
                self.chunk(_sse(chunk))
            self.chunk(b"data: [DONE]\n\n")
            self.end_stream()
        else:
            self.send_json(200, _chat_json(reply, model, tokens))


class MockOpenAI(ModelServer):
    handler = _OpenAI
    thread_name = "mock-openai"

    @property
    def base_url(self) -> str:
        """With the ``/v1`` suffix, as both Codex and Copilot expect."""
        return f"{self.origin}/v1"

    def is_model_turn(self, request: RecordedRequest) -> bool:
        """Responses or Chat Completions POSTs."""
        return request.method == "POST" and _route(request.path) is not None


# --- Responses API stream -------------------------------------------------------------------


def _responses_events(reply: Reply, model: str, tokens: int) -> Iterator[dict[str, Any]]:
    response_id = f"resp_mock_{uuid.uuid4().hex[:20]}"
    base = {"id": response_id, "object": "response", "created_at": int(time.time()), "model": model}
    yield {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}}
    output: list[dict[str, Any]] = []
    texts = [reply.text] if isinstance(reply, TextReply) else [reply.preamble or ""]
    for value in texts:
        if not value:
            continue
        index = len(output)
        item_id = f"msg_mock_{uuid.uuid4().hex[:20]}"
        empty = {"type": "message", "id": item_id, "role": "assistant", "status": "in_progress"}
        yield {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {**empty, "content": []},
        }
        for piece in pieces(value):
            yield {
                "type": "response.output_text.delta",
                "item_id": item_id,
                "output_index": index,
                "content_index": 0,
                "delta": piece,
            }
        item = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": value, "annotations": []}],
        }
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
        output.append(item)
    if isinstance(reply, ToolCall):
        index = len(output)
        item = {
            "type": "function_call",
            "id": f"fc_mock_{uuid.uuid4().hex[:20]}",
            "call_id": f"call_mock_{uuid.uuid4().hex[:20]}",
            "name": reply.name,
            "arguments": json.dumps(reply.arguments),
            "status": "completed",
        }
        yield {"type": "response.output_item.added", "output_index": index, "item": item}
        yield {"type": "response.output_item.done", "output_index": index, "item": item}
        output.append(item)
    out_tokens = max(1, len(json.dumps(output)) // 4)
    usage = {
        "input_tokens": tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": out_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": tokens + out_tokens,
    }
    done = {**base, "status": "completed", "output": output, "usage": usage}
    yield {"type": "response.completed", "response": done}


# --- Chat Completions ------------------------------------------------------------------------


def _chat_usage(tokens: int, out_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": tokens,
        "completion_tokens": out_tokens,
        "total_tokens": tokens + out_tokens,
    }


def _chat_chunks(
    reply: Reply, model: str, tokens: int, body: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    chunk_id = f"chatcmpl-mock{uuid.uuid4().hex[:20]}"
    base = {"id": chunk_id, "object": "chat.completion.chunk", "created": int(time.time())}
    base["model"] = model

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {**base, "choices": [choice]}

    yield chunk({"role": "assistant", "content": ""})
    value = reply.text if isinstance(reply, TextReply) else reply.preamble
    for piece in pieces(value) if value else []:
        yield chunk({"content": piece})
    if isinstance(reply, ToolCall):
        call_id = f"call_mock_{uuid.uuid4().hex[:20]}"
        head = {"index": 0, "id": call_id, "type": "function"}
        yield chunk({"tool_calls": [{**head, "function": {"name": reply.name, "arguments": ""}}]})
        for piece in pieces(json.dumps(reply.arguments)):
            yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        yield chunk({}, "tool_calls")
    else:
        yield chunk({}, "stop")
    options = body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        usage = _chat_usage(tokens, max(1, len(value or "") // 4))
        yield {**base, "choices": [], "usage": usage}


def _chat_json(reply: Reply, model: str, tokens: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if isinstance(reply, TextReply):
        message["content"] = reply.text
        finish = "stop"
    else:
        message["content"] = reply.preamble
        message["tool_calls"] = [
            {
                "id": f"call_mock_{uuid.uuid4().hex[:20]}",
                "type": "function",
                "function": {"name": reply.name, "arguments": json.dumps(reply.arguments)},
            }
        ]
        finish = "tool_calls"
    return {
        "id": f"chatcmpl-mock{uuid.uuid4().hex[:20]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": _chat_usage(tokens, 1),
    }
