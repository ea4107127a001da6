"""The core every local mock of a model API shares, for running the real agent CLIs offline: an
HTTP server on 127.0.0.1 (a free port, served from its own thread), a script of replies (a
queue first, then a responder callable that sees the parsed request body), and a journal of
every request that arrived. A dialect (mock_anthropic, mock_openai, mock_gemini) adds only its
routes, how it encodes a reply on the wire, and how to read what the model received.

    with MockAnthropic(responder=bash_when("commit it", "git commit -m x")) as api:
        run_claude(binary, ["-p", "commit it"], ..., base_url=api.base_url)
        assert "MARKER" in received_text(api.model_requests()[0].body)

A responder that raises is answered with a 400 (which no client retries) and the exception is
kept in ``errors``, so a broken test script fails the test instead of hanging the CLI.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Self
from urllib.parse import urlsplit

DEFAULT_TEXT = "MOCK_REPLY"
AFTER_TOOL = "TOOL-DONE"


# --- what a scripted model answers ----------------------------------------------------------


@dataclass(frozen=True)
class TextReply:
    text: str


@dataclass(frozen=True)
class ToolCall:
    """One call of a tool the client offered, optionally preceded by a short text."""

    name: str
    arguments: dict[str, Any]
    preamble: str | None = None


Reply = TextReply | ToolCall
Responder = Callable[[dict[str, Any]], "Reply | str"]


def text(value: str) -> TextReply:
    return TextReply(value)


def default_responder(body: dict[str, Any]) -> Reply:
    return TextReply(DEFAULT_TEXT)


@dataclass(frozen=True)
class Dialect:
    """How one API's requests read and how its client's shell tool is called: what a test
    needs to script a model turn without knowing the wire format."""

    last_user_text: Callable[[Any], str]
    ends_with_tool_result: Callable[[Any], bool]
    received_text: Callable[[Any], str]
    shell_call: Callable[[str, Any], ToolCall]


def shell_when(
    dialect: Dialect,
    needle: str,
    command: str,
    *,
    otherwise: str = DEFAULT_TEXT,
    after_tool: str = AFTER_TOOL,
) -> Responder:
    """If the last user message contains ``needle`` (and the tool has not run yet), run
    ``command`` through the client's shell tool; once its result comes back, answer
    ``after_tool`` so the turn ends."""

    def respond(body: dict[str, Any]) -> Reply:
        if dialect.ends_with_tool_result(body):
            return TextReply(after_tool)
        if needle in dialect.last_user_text(body):
            return dialect.shell_call(command, body)
        return TextReply(otherwise)

    return respond


# --- the journal ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str  # without the query string
    query: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # parsed JSON, or None when the body was empty or not JSON
    raw_body: bytes = field(repr=False)
    time: float = 0.0  # time.time() when the request arrived


# --- the server -------------------------------------------------------------------------------


class ModelServer:
    """Start and stop with ``with`` (or ``start()`` / ``stop()``). A dialect sets ``handler``
    and says which recorded requests are model turns."""

    handler: ClassVar[type[Handler]]
    thread_name: ClassVar[str] = "mock-model-api"

    def __init__(
        self, replies: Iterable[Reply | str] = (), responder: Responder | None = None
    ) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Reply | str] = deque(replies)
        self._requests: list[RecordedRequest] = []
        self.errors: list[BaseException] = []
        self.responder: Responder = responder or default_responder
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> Self:
        handler = type("_BoundHandler", (self.handler,), {"mock": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=self.thread_name,
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

    def __enter__(self) -> Self:
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
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # the script
    def enqueue(self, *replies: Reply | str) -> None:
        with self._lock:
            self._queue.extend(replies)

    def next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            queued = self._queue.popleft() if self._queue else None
        reply = queued if queued is not None else self.responder(body)
        return TextReply(reply) if isinstance(reply, str) else reply

    # the journal
    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def record_error(self, error: BaseException) -> None:
        with self._lock:
            self.errors.append(error)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def is_model_turn(self, request: RecordedRequest) -> bool:
        raise NotImplementedError

    def model_requests(self) -> list[RecordedRequest]:
        """The recorded model turns, oldest first."""
        return [r for r in self.requests if self.is_model_turn(r)]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()


class Handler(BaseHTTPRequestHandler):
    """Reading, recording and answering one request; a dialect adds the verbs and ``error``."""

    mock: ModelServer
    protocol_version = "HTTP/1.1"
    json_type: ClassVar[str] = "application/json"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep pytest output clean

    def extra_headers(self) -> Mapping[str, str]:
        """Headers every answer carries (a dialect's request id, say)."""
        return {}

    def error(self, status: int, message: str) -> None:
        """Answer with the dialect's error shape."""
        raise NotImplementedError

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

    def record(self) -> RecordedRequest:
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

    def scripted_reply(self, body: Any) -> Reply | None:
        """The script's next reply; None (after answering with an error) when the body is not
        a JSON object or the responder raised."""
        if not isinstance(body, dict):
            self.error(400, "body is not JSON")
            return None
        try:
            return self.mock.next_reply(body)
        except Exception as exc:  # a broken test responder: tell the client, do not hang
            self.mock.record_error(exc)
            self.error(400, f"mock responder failed: {exc!r}")
            return None

    def send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", self.json_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in self.extra_headers().items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in self.extra_headers().items():
            self.send_header(name, value)
        self.end_headers()

    def chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_HEAD(self) -> None:
        self.record()
        self.error(404, "HEAD")


def pieces(value: str, size: int = 40) -> list[str]:
    """A text cut into several deltas, so the client's accumulation is exercised."""
    return [value[i : i + size] for i in range(0, max(len(value), 1), size)]
