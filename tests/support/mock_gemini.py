"""A mock of the Gemini API (``generativelanguage`` v1beta) on the shared core (model_server), for
running the real Gemini CLI offline in tests (``GOOGLE_GEMINI_BASE_URL`` + ``GEMINI_API_KEY``;
see tests/support/agent_clis.py).

Endpoints (any ``/v1*`` version prefix): ``POST .../models/<model>:streamGenerateContent``
(SSE when ``alt=sse``, else a JSON array), ``:generateContent``, ``:countTokens``,
``:embedContent``; ``GET .../models`` answers a model list; everything else is a 404.

The shell tool of gemini-cli 0.61.0 is the function ``run_shell_command`` with
``{"command": ..., "description": ...}`` (see :func:`shell`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs

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
    text,
)
from tests.support.model_server import (
    shell_when as _shell_when,
)

__all__ = ["DEFAULT_TEXT", "MockGemini", "Reply", "TextReply", "ToolCall", "text"]

SHELL_TOOL = "run_shell_command"
MODEL_TURNS = ("streamGenerateContent", "generateContent")


def shell(command: str, description: str = "run a command") -> ToolCall:
    return ToolCall(SHELL_TOOL, {"command": command, "description": description})


def model_of(request: RecordedRequest) -> str:
    """The model named in the path (``.../models/<model>:method``), or ""."""
    match = re.search(r"/models/([^/:]+)", request.path)
    return match.group(1) if match else ""


def method_of(request: RecordedRequest) -> str:
    """``streamGenerateContent``, ``generateContent``, ``countTokens``, … or ""."""
    return request.path.rsplit(":", 1)[1] if ":" in request.path else ""


# --- what the model received --------------------------------------------------------------


def _part_text(part: Any) -> str:
    if not isinstance(part, dict):
        return ""
    if isinstance(part.get("text"), str):
        return str(part["text"])
    if isinstance(part.get("functionResponse"), dict):
        return json.dumps(part["functionResponse"].get("response"))
    if isinstance(part.get("functionCall"), dict):
        return json.dumps(part["functionCall"].get("args"))
    return ""


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(t for t in (_part_text(p) for p in parts) if t)
    return ""


def contents(body: Any) -> list[dict[str, Any]]:
    if not isinstance(body, dict):
        return []
    return [c for c in body.get("contents") or [] if isinstance(c, dict)]


def system_text(body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    system = body.get("systemInstruction") or body.get("system_instruction")
    return _content_text(system)


def message_texts(body: Any, role: str | None = None) -> list[str]:
    """One string per content ("user" / "model" role), text and function parts joined."""
    return [_content_text(c) for c in contents(body) if role is None or c.get("role") == role]


def received_text(body: Any) -> str:
    parts = [system_text(body), *message_texts(body)]
    return "\n".join(p for p in parts if p)


def _is_function_response(content: dict[str, Any]) -> bool:
    parts = content.get("parts")
    return isinstance(parts, list) and any(
        isinstance(p, dict) and "functionResponse" in p for p in parts
    )


def last_user_text(body: Any) -> str:
    """Text of the last user content that is not a function response."""
    for content in reversed(contents(body)):
        if content.get("role") == "user" and not _is_function_response(content):
            return _content_text(content)
    return ""


def function_responses(body: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for content in contents(body):
        for part in content.get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
                out.append(part["functionResponse"])
    return out


def ends_with_tool_result(body: Any) -> bool:
    """True when the last content is a function response: the tool already ran."""
    seq = contents(body)
    return bool(seq) and _is_function_response(seq[-1])


def tool_names(body: Any) -> list[str]:
    out: list[str] = []
    if not isinstance(body, dict):
        return out
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        for decl in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
            if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                out.append(decl["name"])
    return out


DIALECT = Dialect(
    last_user_text=last_user_text,
    ends_with_tool_result=ends_with_tool_result,
    received_text=received_text,
    shell_call=lambda command, _body: shell(command),
)


def shell_when(
    needle: str, command: str, *, otherwise: str = DEFAULT_TEXT, after_tool: str = AFTER_TOOL
) -> Responder:
    """Call ``run_shell_command`` when the last user text contains ``needle``."""
    return _shell_when(DIALECT, needle, command, otherwise=otherwise, after_tool=after_tool)


# --- the server ---------------------------------------------------------------------------


class _Gemini(Handler):
    json_type = "application/json; charset=UTF-8"

    def error(self, status: int, message: str) -> None:
        state = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}.get(status, "INTERNAL")
        self.send_json(status, {"error": {"code": status, "message": message, "status": state}})

    def do_GET(self) -> None:
        request = self.record()
        if request.path.rstrip("/").endswith("/models"):
            self.send_json(200, {"models": []})
        else:
            self.error(404, f"no route {request.path}")

    def do_POST(self) -> None:
        request = self.record()
        method = method_of(request)
        body = request.body
        if method == "countTokens":
            self.send_json(200, {"totalTokens": max(1, len(received_text(body)) // 4)})
            return
        if method in ("embedContent", "batchEmbedContents"):
            self.send_json(200, {"embedding": {"values": [0.0] * 8}})
            return
        if method not in MODEL_TURNS:
            self.error(404, f"no route {request.path}")
            return
        reply = self.scripted_reply(body)
        if reply is None:
            return
        model = model_of(request) or "gemini-mock"
        if method == "generateContent":
            parts = _parts(reply)
            self.send_json(
                200, _response(parts, "STOP", _usage(body, len(json.dumps(parts))), model)
            )
            return
        chunks = list(_stream_chunks(reply, body, model))
        if parse_qs(request.query).get("alt") != ["sse"]:
            self.send_json(200, chunks)
            return
        self.start_stream()
        for chunk in chunks:
            self.chunk(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
        self.end_stream()


class MockGemini(ModelServer):
    handler = _Gemini
    thread_name = "mock-gemini"

    @property
    def base_url(self) -> str:
        """For ``GOOGLE_GEMINI_BASE_URL`` (no version suffix: the SDK adds ``/v1beta``)."""
        return self.origin

    def is_model_turn(self, request: RecordedRequest) -> bool:
        return request.method == "POST" and method_of(request) in MODEL_TURNS


# --- the wire format ----------------------------------------------------------------------


def _usage(body: Any, reply_len: int) -> dict[str, int]:
    prompt = max(1, len(received_text(body)) // 4)
    out = max(1, reply_len // 4)
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": out,
        "totalTokenCount": prompt + out,
    }


def _parts(reply: Reply) -> list[dict[str, Any]]:
    if isinstance(reply, TextReply):
        return [{"text": reply.text}]
    parts: list[dict[str, Any]] = []
    if reply.preamble:
        parts.append({"text": reply.preamble})
    parts.append({"functionCall": {"name": reply.name, "args": reply.arguments}})
    return parts


def _response(
    parts: list[dict[str, Any]], finish: str | None, usage: dict[str, int], model: str
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": model}


def _stream_chunks(reply: Reply, body: Any, model: str) -> Iterator[dict[str, Any]]:
    parts = _parts(reply)
    usage = _usage(body, len(json.dumps(parts)))
    if isinstance(reply, TextReply) and len(reply.text) > 40:
        # Several chunks, so the client's accumulation is exercised.
        pieces = [reply.text[i : i + 40] for i in range(0, len(reply.text), 40)]
        for piece in pieces[:-1]:
            yield _response([{"text": piece}], None, usage, model)
        yield _response([{"text": pieces[-1]}], "STOP", usage, model)
        return
    yield _response(parts, "STOP", usage, model)
