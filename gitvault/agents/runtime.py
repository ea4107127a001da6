"""The one hook runtime: `gitvault-hook <agent> <event>` for every agent (no typer, no rich).

Read the agent's hook input (at most MAX_INPUT_BYTES of stdin), parse it as strict JSON, check
it against the agent's own input schema where its adapter has one, normalise it onto the
canonical payload and check that against schemas/agent-hook-input.json (one validator,
gitvault.agents.hookinput); resolve the repository once; run the behaviour for the canonical
event (gitvault.agents.behaviours) with the one HookCall that carries the location down; print
the answer in the agent's output shape.

Every path exits 0 within the event's time bound (the adapter's: Codex's SessionEnd is killed
after 3 s): a hook never blocks a session. Errors and malformed input go to the log in the
common git dir (`gitvault status` shows it). GITVAULT_CHILD=1 (the fold's own agent) makes
every hook exit at once, and so does `git config gitvault.agents none`.

Input is untrusted: a session id must look like one (the schemas), transcripts are read only
when they are regular files and boundedly (the adapter), and every value that reaches a command
line is shell-quoted. Only the adapter the call names is imported.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from types import FrameType

from gitvault.named import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from gitvault.agents.adapters.base import Adapter, Payload
    from gitvault.resolve import Location

MAX_INPUT_BYTES = 4_000_000


class _TimeUp(BaseException):
    # Not an Exception: a library's `except Exception` must not swallow the time bound.
    pass


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    raise _TimeUp


def _log(loc: Location | None, message: str) -> None:
    from gitvault.vault.locking import log_failure

    if loc is not None:
        log_failure(loc.state_dir, message)
    else:
        sys.stderr.write(f"gitvault: {message}\n")


def read_input(adapter: Adapter, event: str, raw: str) -> tuple[Payload | None, list[str]]:
    """The canonical payload of one hook input, or the problems that make it unusable."""
    from gitvault.agents import hookinput
    from gitvault.agents.adapters.base import CANONICAL_SCHEMA
    from gitvault.vault.files import parse_json

    try:
        data: Any = parse_json(raw) if raw.strip() else None
    except ValueError as exc:
        return None, [f"input is not JSON: {type(exc).__name__}"]
    if not isinstance(data, dict):
        return None, ["input is not a JSON object"]
    native = adapter.input_schemas.get(event)
    problems = hookinput.validate(native, data) if native else []
    if problems:
        return None, problems
    payload = adapter.normalise(event, data)
    problems = hookinput.validate(CANONICAL_SCHEMA, payload)
    return (None, problems) if problems else (payload, [])


def run(adapter: Adapter, event: str, word: str, raw: str) -> str:
    """One hook call; what to print ("" for nothing)."""
    from gitvault.agents.behaviours import HookCall, respond
    from gitvault.errors import GitvaultError
    from gitvault.resolve import resolve
    from gitvault.vault.controls import neutralise_controls_in

    tag = f"{adapter.name} hook {word}"
    payload, problems = read_input(adapter, event, raw)
    try:
        loc = resolve(None, Path(adapter.project_dir(payload, os.environ)))
    except (GitvaultError, OSError, ValueError):
        return ""  # not a repository: gitvault has nothing to say here
    from gitvault.vault import statedir

    statedir.keep_patterns(loc.state_dir)
    if payload is None:
        _log(loc, f"{tag}: malformed input ignored: {'; '.join(problems[:3])[:300]}")
        return ""
    call = HookCall(adapter, event, loc, payload, raw)
    try:
        if not adapter.wanted(call):
            return ""
        try:
            answer = respond(call)
        finally:
            call.close()
        try:
            adapter.after(call)
        except Exception as exc:  # noqa: BLE001 - the answer still goes out
            _log(loc, f"{tag}: {type(exc).__name__}: {exc}")
        call.finish()
        # What the agent decodes reaches its model: no control sequence, whoever wrote it.
        return adapter.shape(event, neutralise_controls_in(answer) if answer else answer)
    except _TimeUp:
        _log(loc, f"{tag}: gave up after {adapter.time_bound(event):g}s (exit 0)")
    except Exception as exc:  # noqa: BLE001 - a hook must never fail the session
        _log(loc, f"{tag} failed: {type(exc).__name__}: {exc}")
    return ""


def main(args: list[str]) -> int:
    """`gitvault-hook AGENT EVENT`, or `gitvault-hook EVENT` (the registry's DEFAULT agent: the
    form gitvault 0.1 installed). Exit 2 only when the arguments are not understood."""
    if os.environ.get("GITVAULT_CHILD"):
        return 0  # inside the fold's own agent: never recurse into gitvault
    from gitvault.agents import adapters

    name, word = (adapters.DEFAULT, args[0]) if len(args) == 1 else (args + ["", ""])[:2]
    try:
        adapter = adapters.get(name)
    except KeyError:
        adapter = None
    event = adapter.event_for(word) if adapter is not None and len(args) <= 2 else None
    if adapter is None or event is None:
        sys.stderr.write(
            f"usage: gitvault-hook {'|'.join(adapters.NAMES)} "
            "session-start|turn-end|pre-compact|session-end|file-read|file-edit\n"
        )
        return 2
    bound = adapter.time_bound(event)
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, bound)
    out = ""
    try:
        out = run(adapter, event, word, sys.stdin.read(MAX_INPUT_BYTES))
    except _TimeUp:
        _log(None, f"{name} hook {word}: gave up after {bound:g}s (exit 0, nothing said)")
    except Exception as exc:  # noqa: BLE001 - a hook must never fail the session
        _log(None, f"{name} hook {word} failed: {type(exc).__name__}: {exc}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if out:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    return 0
