"""A standard-library mock of the OpenAI APIs that coding agents call, for running real CLIs
offline in tests:

- the **Responses API** (``POST /v1/responses``, streamed as SSE) — what Codex CLI speaks with a
  ``[model_providers.X] wire_api = "responses"`` provider;
- **Chat Completions** (``POST /v1/chat/completions``, streamed or not) — what Copilot CLI speaks
  with ``COPILOT_OFFLINE=true`` + ``COPILOT_PROVIDER_BASE_URL``.

    with MockOpenAI(responder=shell_when("commit it", "git commit -m x")) as api:
        run_codex(binary, "commit it", cwd=repo, home=home, base_url=api.base_url)
        assert "MARKER" in received_text(api.model_requests()[0].body)

The paths are accepted with or without the ``/v1`` prefix; ``GET [/v1]/models`` answers a model
list; everything else is a 404. Every request is recorded. Replies come from a queue first, then
from the responder callable (which gets the parsed request body; ``api_of(body)`` tells the two
APIs apart).

A scripted tool call is a :class:`ToolCallReply`; :func:`shell_call` builds the right one for
each agent's shell tool (checked against codex-cli 0.171.0 and copilot 1.0.102):

- Codex: function ``exec_command`` with ``{"cmd": "<shell string>"}``;
- Copilot: function ``bash`` with ``{"command": ..., "description": ...}``.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal
from urllib.parse import urlsplit

DEFAULT_TEXT = "MOCK_REPLY"
MODEL = "mock-model"

Api = Literal["responses", "chat"]


@dataclass(frozen=True)
class TextReply:
    text: str


@dataclass(frozen=True)
class ToolCallReply:
    """One function call (optionally preceded by a short assistant text)."""

    name: str
    arguments: dict[str, Any]
    preamble: str | None = None


Reply = TextReply | ToolCallReply
Responder = Callable[[dict[str, Any]], "Reply | str"]


def text(value: str) -> TextReply:
    return TextReply(value)


def codex_shell(command: str, *, workdir: str | None = None) -> ToolCallReply:
    """Codex 0.171's shell tool: ``exec_command`` with ``cmd`` (a shell string)."""
    args: dict[str, Any] = {"cmd": command}
    if workdir is not None:
        args["workdir"] = workdir
    return ToolCallReply("exec_command", args)


def copilot_shell(command: str, description: str = "run a command") -> ToolCallReply:
    """Copilot 1.0's shell tool: ``bash`` with ``command`` + ``description``."""
    return ToolCallReply("bash", {"command": command, "description": description})


def shell_call(command: str, body: dict[str, Any]) -> ToolCallReply:
    """The shell tool call that fits the client that sent ``body`` (by the tools it offers)."""
    names = tool_names(body)
    if "exec_command" in names:
        return codex_shell(command)
    if "bash" in names:
        return copilot_shell(command)
    if "shell" in names:  # older Codex: {"command": ["bash", "-lc", ...]}
        return ToolCallReply("shell", {"command": ["bash", "-lc", command]})
    return codex_shell(command) if api_of(body) == "responses" else copilot_shell(command)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str  # without the query string
    query: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # parsed JSON, or None when the body was empty or not JSON
    raw_body: bytes = field(repr=False)
    time: float = 0.0  # time.time() when the request arrived


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


# --- responders ---------------------------------------------------------------------------


def default_responder(body: dict[str, Any]) -> Reply:
    return TextReply(DEFAULT_TEXT)


def shell_when(
    needle: str, command: str, *, otherwise: str = DEFAULT_TEXT, after_tool: str = "TOOL-DONE"
) -> Responder:
    """If the last user message contains ``needle`` (and the last item is not a tool result),
    run ``command`` through the client's shell tool; after the result answer ``after_tool``."""

    def respond(body: dict[str, Any]) -> Reply:
        if ends_with_tool_result(body):
            return TextReply(after_tool)
        if needle in last_user_text(body):
            return shell_call(command, body)
        return TextReply(otherwise)

    return respond


# --- the server ---------------------------------------------------------------------------


class MockOpenAI:
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

    def start(self) -> MockOpenAI:
        handler = type("_Handler", (_Handler,), {"mock": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="mock-openai",
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

    def __enter__(self) -> MockOpenAI:
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
        """With the ``/v1`` suffix, as both Codex and Copilot expect."""
        return f"http://127.0.0.1:{self.port}/v1"

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
        """Recorded model turns (Responses or Chat Completions POSTs), oldest first."""
        return [r for r in self.requests if r.method == "POST" and _route(r.path) is not None]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()


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


class _Handler(BaseHTTPRequestHandler):
    mock: MockOpenAI
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
        encoding = self.headers.get("Content-Encoding", "").lower()
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "zstd":  # Codex may compress request bodies
            try:
                import zstandard  # type: ignore[import-not-found,unused-ignore]

                raw = zstandard.ZstdDecompressor().decompressobj().decompress(raw)
            except ImportError:
                pass
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
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._send_json(
            status, {"error": {"message": message, "type": "invalid_request_error", "code": None}}
        )

    def do_GET(self) -> None:
        request = self._record()
        if request.path.rstrip("/").endswith("/models"):
            model = {"id": MODEL, "object": "model", "created": 0, "owned_by": "mock"}
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._error(404, f"no route {request.path}")

    def do_HEAD(self) -> None:
        self._record()
        self._error(404, "HEAD")

    def do_POST(self) -> None:
        request = self._record()
        api = _route(request.path)
        if api is None:
            self._error(404, f"no route {request.path}")
            return
        if not isinstance(request.body, dict):
            self._error(400, "body is not JSON")
            return
        try:
            reply = self.mock.next_reply(request.body)
        except Exception as exc:  # a broken test responder: tell the client, do not hang
            self.mock.record_error(exc)
            self._error(400, f"mock responder failed: {exc!r}")
            return
        model = str(request.body.get("model") or MODEL)
        tokens = _tokens(request.body)
        if api == "responses":
            self._start_stream()
            for event in _responses_events(reply, model, tokens):
                self._chunk(_sse(event, event["type"]))
            self._end_stream()
        elif request.body.get("stream"):
            self._start_stream()
            for chunk in _chat_chunks(reply, model, tokens, request.body):
                self._chunk(_sse(chunk))
            self._chunk(b"data: [DONE]\n\n")
            self._end_stream()
        else:
            self._send_json(200, _chat_json(reply, model, tokens))

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


# --- Responses API stream -------------------------------------------------------------------


def _pieces(value: str, size: int = 40) -> list[str]:
    return [value[i : i + size] for i in range(0, max(len(value), 1), size)]


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
        for piece in _pieces(value):
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
    if isinstance(reply, ToolCallReply):
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
    for piece in _pieces(value) if value else []:
        yield chunk({"content": piece})
    if isinstance(reply, ToolCallReply):
        call_id = f"call_mock_{uuid.uuid4().hex[:20]}"
        head = {"index": 0, "id": call_id, "type": "function"}
        yield chunk({"tool_calls": [{**head, "function": {"name": reply.name, "arguments": ""}}]})
        for piece in _pieces(json.dumps(reply.arguments)):
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
