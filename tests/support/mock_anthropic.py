"""A standard-library mock of the Anthropic Messages API, for running the real Claude Code CLI
offline in tests (see /work/shared/reference/claude-code.md §5).

    with MockAnthropic(responder=bash_when("commit it", "git commit -m x")) as api:
        run_claude(binary, ["-p", "commit it"], ..., base_url=api.base_url)
        assert "MARKER" in received_text(api.message_requests()[0].body)

Endpoints: ``POST /v1/messages`` (any query string; SSE when ``stream`` is true, JSON
otherwise), ``POST /v1/messages/count_tokens``; everything else is a 404. Every request is
recorded. Replies come from a queue first, then from the responder callable.
"""

from __future__ import annotations

import gzip
import json
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import pytest

DEFAULT_TEXT = "MOCK_REPLY"


@dataclass(frozen=True)
class TextReply:
    text: str


@dataclass(frozen=True)
class ToolUseReply:
    """A single tool_use block, optionally preceded by a short text block."""

    name: str
    input: dict[str, Any]
    preamble: str | None = None


Reply = TextReply | ToolUseReply
Responder = Callable[[dict[str, Any]], "Reply | str"]


def text(value: str) -> TextReply:
    return TextReply(value)


def bash(command: str, description: str = "run a command") -> ToolUseReply:
    return ToolUseReply("Bash", {"command": command, "description": description})


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str  # without the query string
    query: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # parsed JSON, or None when the body was empty or not JSON
    raw_body: bytes = field(repr=False)


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


# --- responders ---------------------------------------------------------------------------


def default_responder(body: dict[str, Any]) -> Reply:
    return TextReply(DEFAULT_TEXT)


def bash_when(
    needle: str, command: str, *, otherwise: str = DEFAULT_TEXT, after_tool: str = "TOOL-DONE"
) -> Responder:
    """If the last user message contains ``needle`` (and is not a tool result), run ``command``
    through Bash; once the tool_result comes back answer ``after_tool`` so the turn ends."""

    def respond(body: dict[str, Any]) -> Reply:
        if ends_with_tool_result(body):
            return TextReply(after_tool)
        if needle in last_user_text(body):
            return bash(command)
        return TextReply(otherwise)

    return respond


# --- the server ---------------------------------------------------------------------------


def _estimate_tokens(body: Any) -> int:
    return max(1, len(received_text(body)) // 4)


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class MockAnthropic:
    """The mock server. Start/stop with ``with`` (or ``start()`` / ``stop()``)."""

    def __init__(
        self,
        replies: Iterable[Reply | str] = (),
        responder: Responder | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Reply | str] = deque(replies)
        self._requests: list[RecordedRequest] = []
        # Exceptions raised by the responder (answered with a 400, which the client won't retry).
        self.errors: list[BaseException] = []
        self.responder: Responder = responder or default_responder
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> MockAnthropic:
        handler = type("_Handler", (_Handler,), {"mock": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="mock-anthropic",
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

    def __enter__(self) -> MockAnthropic:
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
        return f"http://127.0.0.1:{self.port}"

    # scripting
    def enqueue(self, *replies: Reply | str) -> None:
        with self._lock:
            self._queue.extend(replies)

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            queued = self._queue.popleft() if self._queue else None
        reply = queued if queued is not None else self.responder(body)
        return TextReply(reply) if isinstance(reply, str) else reply

    # recording
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

    def message_requests(self) -> list[RecordedRequest]:
        """Recorded ``POST /v1/messages`` calls (the model turns), oldest first."""
        return [r for r in self.requests if r.method == "POST" and r.path == "/v1/messages"]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()


@pytest.fixture
def anthropic_mock() -> Iterator[MockAnthropic]:
    """Fixture form; register with ``pytest_plugins`` or wrap it in a local fixture."""
    with MockAnthropic() as mock:
        yield mock


class _Handler(BaseHTTPRequestHandler):
    mock: MockAnthropic
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep pytest output clean

    # body handling --------------------------------------------------------------------------
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
        )
        self.mock.record(request)
        return request

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", f"req_mock_{uuid.uuid4().hex[:16]}")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _not_found(self) -> None:
        self._send_json(
            404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}}
        )

    # verbs ----------------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._record()
        self._not_found()

    def do_HEAD(self) -> None:
        self._record()
        self._not_found()

    def do_POST(self) -> None:
        request = self._record()
        if request.path == "/v1/messages/count_tokens":
            self._send_json(200, {"input_tokens": _estimate_tokens(request.body)})
        elif request.path == "/v1/messages":
            if not isinstance(request.body, dict):
                self._send_json(
                    400,
                    {
                        "type": "error",
                        "error": {"type": "invalid_request_error", "message": "body is not JSON"},
                    },
                )
                return
            try:
                reply = self.mock.next_reply(request.body)
            except Exception as exc:  # a broken test responder: tell the client, do not hang
                self.mock.record_error(exc)
                message = f"mock responder failed: {exc!r}"
                self._send_json(
                    400,
                    {
                        "type": "error",
                        "error": {"type": "invalid_request_error", "message": message},
                    },
                )
                return
            model = str(request.body.get("model") or "claude-mock")
            if request.body.get("stream"):
                self._stream(reply, model, _estimate_tokens(request.body))
            else:
                self._send_json(200, _message_json(reply, model, _estimate_tokens(request.body)))
        else:
            self._not_found()

    # streaming --------------------------------------------------------------------------------
    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _stream(self, reply: Reply, model: str, input_tokens: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", f"req_mock_{uuid.uuid4().hex[:16]}")
        self.end_headers()
        for event, data in _stream_events(reply, model, input_tokens):
            self._chunk(_sse(event, data))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


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
            "input": reply.input,
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
            body = block["text"]
            # Several deltas, so the client's accumulation is exercised.
            for i in range(0, max(len(body), 1), 40):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": body[i : i + 40]},
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
            partial = json.dumps(block["input"])
            for i in range(0, len(partial), 40):
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": partial[i : i + 40]},
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
