"""A standard-library mock of the Gemini API (``generativelanguage`` v1beta), for running the real
Gemini CLI offline in tests (``GOOGLE_GEMINI_BASE_URL`` + ``GEMINI_API_KEY``; see
tests/support/agent_clis.py).

    with MockGemini(responder=shell_when("commit it", "git commit -m x")) as api:
        run_gemini(binary, "commit it", cwd=repo, home=home, base_url=api.base_url)
        assert "MARKER" in received_text(api.model_requests()[0].body)

Endpoints (any ``/v1*`` version prefix): ``POST .../models/<model>:streamGenerateContent``
(SSE when ``alt=sse``, else a JSON array), ``:generateContent``, ``:countTokens``,
``:embedContent``; ``GET .../models`` answers a model list; everything else is a 404. Every
request is recorded. Replies come from a queue first, then from the responder callable.

The shell tool of gemini-cli 0.61.0 is the function ``run_shell_command`` with
``{"command": ..., "description": ...}`` (see :func:`shell`).
"""

from __future__ import annotations

import gzip
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

DEFAULT_TEXT = "MOCK_REPLY"
SHELL_TOOL = "run_shell_command"


@dataclass(frozen=True)
class TextReply:
    text: str


@dataclass(frozen=True)
class FunctionCallReply:
    """One ``functionCall`` part (optionally preceded by a text part)."""

    name: str
    args: dict[str, Any]
    preamble: str | None = None


Reply = TextReply | FunctionCallReply
Responder = Callable[[dict[str, Any]], "Reply | str"]


def text(value: str) -> TextReply:
    return TextReply(value)


def shell(command: str, description: str = "run a command") -> FunctionCallReply:
    return FunctionCallReply(SHELL_TOOL, {"command": command, "description": description})


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str  # without the query string
    query: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # parsed JSON, or None when the body was empty or not JSON
    raw_body: bytes = field(repr=False)
    time: float = 0.0

    @property
    def model(self) -> str:
        """The model named in the path (``.../models/<model>:method``), or ""."""
        match = re.search(r"/models/([^/:]+)", self.path)
        return match.group(1) if match else ""

    @property
    def method_name(self) -> str:
        """``streamGenerateContent``, ``generateContent``, ``countTokens``, … or ""."""
        return self.path.rsplit(":", 1)[1] if ":" in self.path else ""


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


def ends_with_function_response(body: Any) -> bool:
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


# --- responders ---------------------------------------------------------------------------


def default_responder(body: dict[str, Any]) -> Reply:
    return TextReply(DEFAULT_TEXT)


def shell_when(
    needle: str, command: str, *, otherwise: str = DEFAULT_TEXT, after_tool: str = "TOOL-DONE"
) -> Responder:
    """If the last user text contains ``needle`` (and the last content is not a function
    response), call ``run_shell_command``; once its response comes back, answer ``after_tool``."""

    def respond(body: dict[str, Any]) -> Reply:
        if ends_with_function_response(body):
            return TextReply(after_tool)
        if needle in last_user_text(body):
            return shell(command)
        return TextReply(otherwise)

    return respond


# --- the server ---------------------------------------------------------------------------


class MockGemini:
    """The mock server. Start/stop with ``with`` (or ``start()`` / ``stop()``)."""

    def __init__(
        self,
        replies: Iterable[Reply | str] = (),
        responder: Responder | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Reply | str] = deque(replies)
        self._requests: list[RecordedRequest] = []
        self.errors: list[BaseException] = []
        self.responder: Responder = responder or default_responder
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> MockGemini:
        handler = type("_Handler", (_Handler,), {"mock": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="mock-gemini",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> MockGemini:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "mock not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """For ``GOOGLE_GEMINI_BASE_URL`` (no version suffix: the SDK adds ``/v1beta``)."""
        return f"http://127.0.0.1:{self.port}"

    def enqueue(self, *replies: Reply | str) -> None:
        with self._lock:
            self._queue.extend(replies)

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            queued = self._queue.popleft() if self._queue else None
        reply = queued if queued is not None else self.responder(body)
        return TextReply(reply) if isinstance(reply, str) else reply

    def record_error(self, error: BaseException) -> None:
        with self._lock:
            self.errors.append(error)

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def model_requests(self) -> list[RecordedRequest]:
        """Recorded ``streamGenerateContent`` / ``generateContent`` calls, oldest first."""
        return [
            r
            for r in self.requests
            if r.method == "POST" and r.method_name in ("streamGenerateContent", "generateContent")
        ]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()


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
    parts.append({"functionCall": {"name": reply.name, "args": reply.args}})
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


class _Handler(BaseHTTPRequestHandler):
    mock: MockGemini
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            raw = b"".join(chunks)
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            raw = gzip.decompress(raw)
        return raw

    def _record(self) -> RecordedRequest:
        raw = self._read_body() if self.command in ("POST", "PUT", "PATCH") else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        parts = urlsplit(self.path)
        request = RecordedRequest(
            method=self.command,
            path=parts.path,
            query=parts.query,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw_body=raw,
            time=time.time(),
        )
        self.mock.record(request)
        return request

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        state = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}.get(status, "INTERNAL")
        self._send_json(status, {"error": {"code": status, "message": message, "status": state}})

    def do_GET(self) -> None:
        request = self._record()
        if request.path.rstrip("/").endswith("/models"):
            self._send_json(200, {"models": []})
        else:
            self._error(404, f"no route {request.path}")

    def do_POST(self) -> None:
        request = self._record()
        method = request.method_name
        body = request.body
        if method == "countTokens":
            self._send_json(200, {"totalTokens": max(1, len(received_text(body)) // 4)})
            return
        if method in ("embedContent", "batchEmbedContents"):
            self._send_json(200, {"embedding": {"values": [0.0] * 8}})
            return
        if method not in ("streamGenerateContent", "generateContent"):
            self._error(404, f"no route {request.path}")
            return
        if not isinstance(body, dict):
            self._error(400, "body is not JSON")
            return
        try:
            reply = self.mock.next_reply(body)
        except Exception as exc:  # a broken test responder: tell the client, do not hang
            self.mock.record_error(exc)
            self._error(400, f"mock responder failed: {exc!r}")
            return
        model = request.model or "gemini-mock"
        if method == "generateContent":
            parts = _parts(reply)
            self._send_json(
                200, _response(parts, "STOP", _usage(body, len(json.dumps(parts))), model)
            )
            return
        chunks = list(_stream_chunks(reply, body, model))
        if parse_qs(request.query).get("alt") == ["sse"]:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in chunks:
                data = f"data: {json.dumps(chunk)}\r\n\r\n".encode()
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        else:
            self._send_json(200, chunks)
