"""`gitvault-hook <agent> <event>` for the adapters' agents (codex, gemini, copilot): read the
agent's hook input, normalise it (the adapter), run the shared behaviour for the canonical event
(gitvault.agents.hooks.behave), and print the answer in the agent's output shape (the adapter).

Like every hook: exit 0 whatever happens (the session must never fail because of gitvault),
within a time bound per event (the adapter's: Codex's SessionEnd is killed after 3 s), with
errors and malformed input logged in the common git dir. GITVAULT_CHILD=1 (the fold's own
agent) makes it exit at once.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from functools import cache
from pathlib import Path
from typing import Any

from gitvault.agents.adapters.base import EVENTS, Adapter, absolute_cli
from gitvault.agents.hooks import MAX_INPUT_BYTES, _alarm, _log, _TimeUp

SCHEMA = "agent-hook-input.json"


@cache
def _schema() -> dict[str, Any]:
    from gitvault.resources import schema_path

    data = json.loads(schema_path(SCHEMA).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def problems(payload: Any) -> list[str]:
    from gitvault.agents import hookinput

    return hookinput.problems(payload, _schema())


def run(adapter: Adapter, event: str, raw: str) -> str:
    """One hook call; what to print ("" for nothing)."""
    from gitvault.agents import hooks
    from gitvault.errors import GitvaultError
    from gitvault.resolve import resolve

    payload: dict[str, Any] | None = None
    found: list[str] = []
    try:
        data = json.loads(raw) if raw.strip() else None
    except (ValueError, RecursionError) as exc:
        data, found = None, [f"input is not JSON: {type(exc).__name__}"]
    if isinstance(data, dict):
        payload = adapter.normalise(event, data)
        found = problems(payload)
    elif not found:
        found = ["input is not a JSON object"]
    cwd_field = payload.get("cwd") if payload and not found else None
    # PWD (Codex sets no project variable) may be inherited stale: the process's own cwd.
    from_env = os.environ.get(adapter.project_var) if adapter.project_var != "PWD" else None
    project = cwd_field or from_env or os.getcwd()
    try:
        loc = resolve(None, Path(str(project)))
    except (GitvaultError, OSError, ValueError):
        return ""  # not a repository: nothing to say here
    tag = f"hook {adapter.name} {event}"
    if found or payload is None:
        _log(loc, f"{tag}: malformed input ignored: {'; '.join(found[:3])[:300]}")
        return ""
    try:
        if not adapter.wanted(loc, event, payload):
            return ""
        cwd = loc.workdir or loc.common_dir
        answer = hooks.behave(
            event,
            loc,
            cwd,
            payload,
            agent=adapter.agent,
            name=adapter.name,
            cli=absolute_cli(),
            heredoc=not adapter.escapes_angles,
        )
        try:
            adapter.after(loc, event, payload)
        except Exception as exc:  # noqa: BLE001 - the answer still goes out
            _log(loc, f"{tag}: {type(exc).__name__}: {exc}")
        return adapter.shape(event, answer)
    except _TimeUp:
        _log(loc, f"{tag}: gave up after {adapter.time_bound(event):.1f}s (exit 0)")
    except Exception as exc:  # noqa: BLE001 - a hook must never fail the session
        _log(loc, f"{tag} failed: {type(exc).__name__}: {exc}")
    return ""


def main(name: str, args: list[str]) -> int:
    from gitvault.agents.adapters import ADAPTERS

    if os.environ.get("GITVAULT_CHILD"):
        return 0  # inside the fold's own agent: never recurse into gitvault
    adapter = ADAPTERS.get(name)
    event = args[0] if args else ""
    if adapter is None or event not in EVENTS or len(args) != 1:
        sys.stderr.write(f"usage: gitvault-hook {'|'.join(ADAPTERS)} {'|'.join(EVENTS)}\n")
        return 2
    bound = adapter.time_bound(event)
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, bound)
    out = ""
    try:
        raw = sys.stdin.read(MAX_INPUT_BYTES)
        out = run(adapter, event, raw)
    except _TimeUp:
        _log(None, f"hook {name} {event}: gave up after {bound:.1f}s (exit 0, nothing said)")
    except Exception as exc:  # noqa: BLE001 - a hook must never fail the session
        _log(None, f"hook {name} {event} failed: {type(exc).__name__}: {exc}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if out:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    return 0
