"""`gitvault mcp`: the memory as an MCP server over stdio, for what the hooks do not hand over
(search, an item by id, a file's edit-time block, the recall block, a save, a digest line's
check). Built on the maintained `mcp` SDK (its low-level Server: the tools below are its one
list, their input schemas checked by the SDK before a call runs).

The SDK costs ~1.6 s of CPU to import (pydantic models), more than some agents wait for a
server before their first request (Codex ≈1 s, Claude Code ≈2 s), so the process answers
first and loads later: a standard-library front answers `initialize`, `tools/list` and `ping`
from the same TOOLS table while the SDK imports in a thread; the first other request (or
the SDK being ready) hands the connection to the SDK, which is replayed the client's
`initialize` (its answer to it dropped: the client has one already) and serves everything
from then on. Tool results are plain text (no structuredContent: Claude Code and Codex would
show a JSON wrapper), bounded (MAX_RESULT), redacted again on the way out; paths are project
paths only (gitvault.pathrecall.gate); no lock is held between calls.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from gitvault import __version__
from gitvault.resolve import Location

NAME = "gitvault"
MAX_RESULT = 6000  # characters of one tool result
# The handshake versions the SDK answers (mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS;
# a test keeps them equal): the front answers the same as the SDK would.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
_TEXT = {"type": "string", "minLength": 1}

# name → (description, input schema). Descriptions are short: every session pays for them.
TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "search": (
        "Search the project memory (commit notes, sessions, past digest lines). "
        "Returns ranked results with ids for show.",
        {
            "type": "object",
            "properties": {
                "query": {**_TEXT, "maxLength": 500},
                "limit": {"type": "integer", "minimum": 1, "maximum": 20, "default": 8},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    ),
    "show": (
        "Show one memory item by id or citation (c:<sha>, s:<slug>, digest, a commit).",
        {
            "type": "object",
            "properties": {"id": {**_TEXT, "maxLength": 200}},
            "required": ["id"],
            "additionalProperties": False,
        },
    ),
    "file_memory": (
        "What the project memory knows about one file of this repository (history, reverts, "
        "co-changed files, decisions).",
        {
            "type": "object",
            "properties": {"path": {**_TEXT, "maxLength": 4096}},
            "required": ["path"],
            "additionalProperties": False,
        },
    ),
    "recall": (
        "The project memory's recall block (digest, recent sessions, standing patterns).",
        {"type": "object", "properties": {}, "additionalProperties": False},
    ),
    "save_session": (
        "Save a session summary (## Summary, ## Key Decisions, ## Next Steps) to the memory.",
        {
            "type": "object",
            "properties": {
                "summary": {**_TEXT, "maxLength": 20000},
                "title": {"type": "string", "maxLength": 200},
                "session_id": {"type": "string", "maxLength": 200},
            },
            "required": ["summary"],
            "additionalProperties": False,
        },
    ),
    "verify_line": (
        "Check one digest line against the repository now (citations, reverts, paths).",
        {
            "type": "object",
            "properties": {"line": {**_TEXT, "maxLength": 2000}},
            "required": ["line"],
            "additionalProperties": False,
        },
    ),
}


def tool_list() -> list[dict[str, Any]]:
    return [
        {"name": name, "description": text, "inputSchema": schema}
        for name, (text, schema) in TOOLS.items()
    ]


def invalid(name: str, args: Any) -> list[str]:
    """What is wrong with a call's arguments (empty: nothing)."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(TOOLS[name][1])
    return [
        f"{'/'.join(map(str, e.path)) or '(arguments)'}: {e.message}"
        for e in validator.iter_errors(args)
    ][:5]


# -- what the tools do (plain functions: the tests call them, the SDK's handler calls them) --


class Memory:
    """The tools over one repository, resolved once; every call reads afresh."""

    def __init__(self, loc: Location) -> None:
        self.loc = loc

    def call(self, name: str, args: dict[str, Any]) -> str:
        from gitvault.errors import GitvaultError
        from gitvault.scrub.engine import scrub_secrets
        from gitvault.vault.controls import neutralise_controls

        handler: Callable[[dict[str, Any]], str] | None = getattr(self, f"tool_{name}", None)
        if name not in TOOLS or handler is None:
            raise ValueError(f"unknown tool {name!r}")
        problems = invalid(name, args)
        if problems:
            raise ValueError(f"{name}: " + "; ".join(problems))
        try:
            text = handler(args)
        except GitvaultError as exc:
            text = f"(error: {exc.message})"
        # A model reads it: no secret and no control sequence, whoever wrote the vault's text.
        text = neutralise_controls(scrub_secrets(text)[0])
        if len(text) > MAX_RESULT:
            text = text[: MAX_RESULT - 40].rstrip() + "\n[… cut at the result's size limit]"
        return text

    def tool_search(self, args: dict[str, Any]) -> str:
        from gitvault.memory import search

        answer = search.Index(self.loc).search(str(args["query"]), limit=int(args.get("limit", 8)))
        return search.render(answer, max_chars=MAX_RESULT)

    def tool_show(self, args: dict[str, Any]) -> str:
        from gitvault.memory import history
        from gitvault.vault.store import Vault

        vault = Vault(self.loc)
        vault.check_format()
        shown = history.show(vault, str(args["id"]))
        if shown.held:
            return (
                f"(error: {shown.path} came from another clone and is held for review here; "
                "it reaches no agent until a person accepts it with `gitvault review`)"
            )
        mark = f"{shown.origin}: {history.FOREIGN}\n" if shown.origin else ""
        return f"{shown.path}\n{mark}\n{shown.text}"

    def tool_file_memory(self, args: dict[str, Any]) -> str:
        from gitvault.pathrecall.block import edit_block

        # A relative path is the project's: an agent's tools name files from the top folder.
        block = edit_block(self.loc, args["path"], cwd=self.loc.workdir)
        return block.text or f"(nothing: {block.reason})"

    def tool_recall(self, args: dict[str, Any]) -> str:
        from gitvault.memory import recall

        return recall.build(self.loc.workdir or self.loc.common_dir, loc=self.loc).text or (
            "(the memory is empty)"
        )

    def tool_save_session(self, args: dict[str, Any]) -> str:
        from gitvault.agents import capture
        from gitvault.agents.ledger import valid_session_id

        sid = args.get("session_id") or None
        if sid is not None and not valid_session_id(str(sid)):
            return "(error: session_id: use letters, digits, '.', '_' and '-')"
        title = args.get("title") or None
        saved = capture.save(
            self.loc, str(args["summary"]), title=title, session_id=sid, agent=None
        )
        extra = f"; redacted {saved.redactions} secret(s)" if saved.redactions else ""
        return f"saved {saved.path} ({saved.commit[:7]}){extra}"

    def tool_verify_line(self, args: dict[str, Any]) -> str:
        from gitvault.fold import verify

        line = " ".join(str(args["line"]).split())
        line = line if line.startswith("- ") else f"- {line}"
        check = verify.check_line(self.loc, line)
        reasons = "; ".join(check.reasons)
        return f"{check.status}" + (f": {reasons}" if reasons else "")


# -- the front: answers before the SDK has loaded ----------------------------------------------


def _reply(out: IO[str], lock: threading.Lock, message: dict[str, Any]) -> None:
    with lock:
        out.write(json.dumps({"jsonrpc": "2.0", **message}, ensure_ascii=False) + "\n")
        out.flush()


def initialize_result(params: Any) -> dict[str, Any]:
    """What the SDK answers to `initialize` with these params (the front says the same)."""
    asked = params.get("protocolVersion") if isinstance(params, dict) else None
    version = asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": NAME, "version": __version__},
    }


class _Front:
    """Reads stdin in a thread; answers the handshake until the SDK takes over."""

    def __init__(self, stdin: IO[str], stdout: IO[str]) -> None:
        self.out = stdout
        self.lock = threading.Lock()
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.replay: list[str] = []  # what the SDK must see first (initialize, initialized)
        self.answered_init: Any = None
        threading.Thread(target=self._read, args=(stdin,), daemon=True).start()

    def _read(self, stdin: IO[str]) -> None:
        for line in stdin:
            if line.strip():
                self.lines.put(line)
        self.lines.put(None)

    def handshake(self, ready: threading.Event) -> str | None:
        """Answer what the front can until the SDK is ready or a request needs it; returns the
        first line the SDK must serve (None at end of input)."""
        while True:
            try:
                line = self.lines.get(timeout=0.05)
            except queue.Empty:
                if ready.is_set() and self.answered_init is not None:
                    return ""
                continue
            if line is None:
                return None
            try:
                message = json.loads(line)
            except ValueError:
                return line  # the SDK says what is wrong with it
            method = message.get("method") if isinstance(message, dict) else None
            ident = message.get("id") if isinstance(message, dict) else None
            if method == "initialize" and self.answered_init is None:
                self.answered_init = ident
                self.replay.append(line)
                result = initialize_result(message.get("params"))
                _reply(self.out, self.lock, {"id": ident, "result": result})
            elif method == "notifications/initialized" and self.answered_init is not None:
                self.replay.append(line)
            elif self.answered_init is None and method not in ("initialize", "ping"):
                # Before the handshake (Copilot asks `server/discover`): not ours to answer.
                if ident is not None:
                    error = {"code": -32601, "message": f"Method not found: {method}"}
                    _reply(self.out, self.lock, {"id": ident, "error": error})
            elif method == "tools/list" and ident is not None:
                _reply(self.out, self.lock, {"id": ident, "result": {"tools": tool_list()}})
            elif method == "ping" and ident is not None:
                _reply(self.out, self.lock, {"id": ident, "result": {}})
            else:
                return line


def _load_sdk(ready: threading.Event, failed: list[BaseException]) -> None:
    try:
        import anyio  # noqa: F401
        import mcp.server.lowlevel  # noqa: F401
        import mcp.shared.message  # noqa: F401
        import mcp_types  # noqa: F401
    except BaseException as exc:  # noqa: BLE001 - said on stderr, the server stops
        failed.append(exc)
    ready.set()


def _sdk_server(memory: Memory) -> Any:
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[types.Tool(**t) for t in tool_list()])

    async def call_tool(ctx: Any, params: Any) -> Any:
        args = dict(params.arguments or {})
        try:
            text = await anyio.to_thread.run_sync(memory.call, params.name, args)
        except ValueError as exc:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=str(exc))], is_error=True
            )
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server(
        NAME,
        version=__version__,
        get_tool_input_schema=lambda name: TOOLS[name][1] if name in TOOLS else None,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _serve_sdk(memory: Memory, front: _Front, first: str) -> None:
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    server = _sdk_server(memory)
    to_sdk_send, to_sdk = anyio.create_memory_object_stream[Any](100)
    from_sdk, from_sdk_recv = anyio.create_memory_object_stream[Any](100)

    pending: set[Any] = set()  # requests the SDK has not answered yet

    def message_of(line: str) -> Any:
        try:
            return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except Exception as exc:  # noqa: BLE001 - the SDK answers a broken message
            return exc

    def next_line() -> str | None:
        return front.lines.get()

    async def pump_in() -> None:
        async with to_sdk_send:
            for line in [*front.replay, *([first] if first else [])]:
                await send(line)
            while True:
                got = await anyio.to_thread.run_sync(next_line, abandon_on_cancel=True)
                if got is None:
                    break
                await send(got)
            # End of input: what was asked is still answered before the server stops.
            while pending:
                await anyio.sleep(0.01)

    async def send(line: str) -> None:
        message = message_of(line)
        inner = getattr(message, "message", None)
        asks = getattr(inner, "method", None) is not None and getattr(inner, "id", None) is not None
        if asks and line not in front.replay:
            pending.add(getattr(inner, "id", None))
        await to_sdk_send.send(message)

    async def pump_out() -> None:
        async with from_sdk_recv:
            async for item in from_sdk_recv:
                data = item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
                replayed = front.answered_init is not None and data.get("id") == front.answered_init
                if replayed and "serverInfo" in (data.get("result") or {}):
                    continue  # its answer to the replayed initialize: the client has one
                data.pop("jsonrpc", None)
                _reply(front.out, front.lock, data)
                pending.discard(data.get("id"))

    async with anyio.create_task_group() as group:
        group.start_soon(pump_in)
        group.start_soon(pump_out)
        await server.run(to_sdk, from_sdk, server.create_initialization_options())
        group.cancel_scope.cancel()


def serve(loc: Location, stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    ready = threading.Event()
    failed: list[BaseException] = []
    threading.Thread(target=_load_sdk, args=(ready, failed), daemon=True).start()
    front = _Front(stdin or sys.stdin, stdout or sys.stdout)
    first = front.handshake(ready)
    if first is None:
        return 0
    ready.wait()
    if failed:
        sys.stderr.write(f"gitvault mcp: the mcp SDK cannot be loaded: {failed[0]}\n")
        return 1
    import anyio

    anyio.run(_serve_sdk, Memory(loc), front, first)
    return 0


def main(repo: str | None = None) -> int:
    """`gitvault mcp [--repo PATH]`, before typer loads."""
    from gitvault.errors import GitvaultError
    from gitvault.resolve import resolve

    try:
        loc = resolve(Path(repo) if repo else None)
    except GitvaultError as exc:
        sys.stderr.write(f"gitvault mcp: {exc.message}\n")
        return exc.exit_code
    from gitvault.vault import statedir

    statedir.keep_patterns(loc.state_dir)
    return serve(loc)
