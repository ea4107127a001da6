"""The MCP server as a client meets it: `gitvault mcp` started as a whole process in the large
generated vault, `initialize` timed from the process start to its answer, then each tool an
agent calls most (search, file_memory, show, recall) called over stdio, newline-delimited
JSON-RPC as every MCP client sends it, and timed from request to answer."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import IO, Any

from harness import git_out, median
from registry import Measure, Row, Target

from measures.common import Context
from measures.notecost import vault_repos

CALLS = 15  # timed calls of each tool, after a first (untimed) call of each


def _ask(out: IO[str], inp: IO[str], ident: int, method: str, params: Any) -> dict[str, Any]:
    out.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}))
    out.write("\n")
    out.flush()
    while True:
        line = inp.readline()
        if not line:
            raise RuntimeError(f"gitvault mcp closed before answering {method}")
        message = json.loads(line)
        if message.get("id") == ident:
            return dict(message)


def bench_mcp(ctx: Context) -> list[Row]:
    from gitvault.pathrecall.index import iter_known, update_quietly
    from gitvault.resolve import resolve
    from gitvault.vault import frontmatter

    _, repo = vault_repos(ctx)
    loc = resolve(repo)
    update_quietly(loc)  # the path index, as drain, save, fold and sync keep it
    subprocess.run(
        [sys.executable, "-m", "gitvault", "search", "warm", "--json"],
        cwd=repo,
        capture_output=True,
        check=False,
    )  # the search index, as the first search leaves it
    notes = git_out(["ls-tree", "-r", "--name-only", "vault", "--", "notes"], repo).split()
    note = notes[len(notes) // 2]
    meta, body = frontmatter.parse(git_out(["show", f"vault:{note}"], repo))
    title = next(line for line in body.splitlines() if line.strip()).lstrip("# ")
    sha, word = str(meta["sha"])[:7], max((w for w in title.split() if w.isalpha()), key=len)
    known = sorted(p for p in iter_known(loc) if "/" in p)
    path = known[len(known) // 2]
    calls: dict[str, dict[str, Any]] = {
        "search": {"query": word},
        "file_memory": {"path": path},
        "show": {"id": f"c:{sha}"},
        "recall": {},
    }
    n_notes = ctx.sizes.vault_large
    ctx.say(f"mcp: gitvault mcp at {n_notes:,} notes, {CALLS} calls of each tool")
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gitvault", "mcp"],
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        bufsize=1,
    )
    assert proc.stdin is not None and proc.stdout is not None
    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    }
    answered = _ask(proc.stdin, proc.stdout, 0, "initialize", init)
    init_s = time.perf_counter() - start
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    times: dict[str, list[float]] = {name: [] for name in calls}
    first: dict[str, float] = {}
    ok = "result" in answered
    ident = 1
    for round_n in range(CALLS + 1):
        for name, args in calls.items():
            t0 = time.perf_counter()
            reply = _ask(
                proc.stdin, proc.stdout, ident, "tools/call", {"name": name, "arguments": args}
            )
            took = time.perf_counter() - t0
            ident += 1
            result = reply.get("result") or {}
            ok = ok and not result.get("isError") and bool(result.get("content"))
            if round_n == 0:
                first[name] = took  # the first call of a tool also waits for the SDK's load
            else:
                times[name].append(took)
    proc.stdin.close()
    proc.wait(timeout=60)
    rows = [
        Row(
            "initialize",
            f"`gitvault mcp` answers `initialize`, {n_notes:,} notes (from process start)",
            init_s * 1000,
            "ms",
            target="initialize",
            valid=ok,
            note="" if ok else "a call failed or answered an error",
            how="`python -m gitvault mcp` started in the large generated vault; the time from "
            "starting the process to reading its answer to `initialize` on stdout.",
        )
    ]
    for name in calls:
        wall = median(times[name]) * 1000
        rows.append(
            Row(
                f"call_{name}",
                f"MCP tool `{name}`, {n_notes:,} notes (median of {CALLS} calls)",
                wall,
                "ms",
                target="call",
                shown=f"{wall:.1f} ms (worst {max(times[name]) * 1000:.1f} ms; first call "
                f"{first[name] * 1000:.0f} ms)",
                valid=ok,
                how=f"tools/call `{name}` {json.dumps(calls[name])} over the server's stdin, "
                "timed from writing the request to reading its answer; the first call of each "
                "tool (which may wait for the MCP SDK to finish loading) reported apart.",
                details={"times_s": times[name], "first_s": first[name]},
            )
        )
    return rows


MEASURES = (
    Measure(
        section="mcp",
        title="The MCP server at scale",
        run=bench_mcp,
        targets={"initialize": Target("<=", 1000, "ms"), "call": Target("<=", 100, "ms")},
        about="`gitvault mcp` as an agent's MCP client starts it: a whole process in the large "
        "generated vault (indexes as the hooks keep them), newline-delimited JSON-RPC over "
        "stdio.",
        summary=("initialize", "call_search", "call_file_memory"),
        order=57,
    ),
)
