"""Claude Code hooks: `gitvault-hook claude <event>` (no typer, no rich).

session-start → recall block as additionalContext (reads only; ≤ 2 s, else exit 0 with nothing)
stop          → {"decision":"block","reason":…} only when a save is due
pre-compact   → mechanical session record when this session has unsaved work (never exit 2)
session-end   → the same record, then a detached, lease-guarded fold

Every path exits 0: a hook never blocks a session. Errors and malformed input go to the log in
the common git dir (`gitvault status` shows it). GITVAULT_CHILD=1 makes every hook exit at once.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any

TIME_BOUNDS = {"session-start": 2.0, "stop": 20.0, "pre-compact": 45.0, "session-end": 25.0}


class _TimeUp(BaseException):
    # Not an Exception: a library's `except Exception` must not swallow the time bound.
    pass


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    raise _TimeUp


def _log(loc: Any, message: str) -> None:
    from gitvault.vault.locking import log_failure

    if loc is not None:
        log_failure(loc.state_dir, message)
    else:
        sys.stderr.write(f"gitvault: {message}\n")


def _settings(cwd: Path, section: str) -> dict[str, Any]:
    from gitvault.vault import gitcmd, layout

    rev = f"{layout.branch_ref(gitcmd.vault_branch(cwd))}:{layout.CONFIG}"
    proc = gitcmd.run_git(["cat-file", "blob", rev], cwd, check=False)
    text = proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None
    return layout.read_settings(text, section)


def run(event: str, raw: str) -> str:
    """Handle one hook call; returns what to print on stdout ("" for nothing)."""
    from gitvault.agents import hookinput
    from gitvault.errors import GitvaultError
    from gitvault.resolve import resolve

    error = None
    try:
        payload = json.loads(raw) if raw.strip() else None
    except json.JSONDecodeError as exc:
        payload, error = None, f"input is not JSON: {exc}"
    problems = [error] if error else hookinput.validate(event, payload)
    project = (
        os.environ.get("CLAUDE_PROJECT_DIR")
        or (payload.get("cwd") if isinstance(payload, dict) else None)
        or os.getcwd()
    )
    try:
        loc = resolve(None, Path(str(project)))
    except GitvaultError:
        return ""  # not a repository: gitvault has nothing to say here
    if problems or not isinstance(payload, dict):
        _log(loc, f"hook {event}: malformed input ignored: {'; '.join(problems[:3])}")
        return ""
    cwd = loc.workdir or loc.common_dir
    try:
        return _dispatch(event, loc, cwd, payload)
    except _TimeUp:
        _log(loc, f"hook {event}: gave up after {TIME_BOUNDS.get(event, 10.0):.0f}s (exit 0)")
    except Exception as exc:  # noqa: BLE001 - a hook must never fail the session
        _log(loc, f"hook {event} failed: {type(exc).__name__}: {exc}")
    return ""


def _dispatch(event: str, loc: Any, cwd: Path, payload: dict[str, Any]) -> str:
    if event == "session-start":
        from gitvault.memory import recall

        result = recall.build(cwd)
        for problem in result.problems:
            _log(loc, f"hook {event}: {problem}")
        block = result.text
        if not block:
            return ""
        return json.dumps(
            {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": block}}
        )
    if event == "stop":
        from gitvault.agents import capture

        answer = capture.decide_stop(loc, cwd, payload, _settings(cwd, "capture"))
        return json.dumps(answer) if answer else ""
    if event in ("pre-compact", "session-end"):
        from gitvault.agents import capture

        settings = _settings(cwd, "capture")
        slug = capture.auto_record(loc, cwd, payload, event, settings)
        if slug:
            _log(loc, f"hook {event}: wrote the mechanical record s:{slug}")
        if event == "session-end" and settings["fold_on_session_end"]:
            from gitvault.fold import background

            background.spawn_fold(loc)
        capture.prune(loc)
        return ""
    _log(loc, f"hook: unknown event {event!r}")
    return ""


def main(argv: list[str] | None = None) -> int:
    if os.environ.get("GITVAULT_CHILD"):
        return 0  # inside the fold's own `claude -p`: never recurse into gitvault
    args = sys.argv[1:] if argv is None else argv
    event = args[0] if args else ""
    bound = TIME_BOUNDS.get(event, 10.0)
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, bound)
    out = ""
    try:
        raw = sys.stdin.read(4_000_000)
        out = run(event, raw)
    except _TimeUp:
        _log(None, f"hook {event}: gave up after {bound:.0f}s (exit 0, nothing injected)")
    except Exception as exc:  # noqa: BLE001 - a hook must never fail the session
        _log(None, f"hook {event} failed: {type(exc).__name__}: {exc}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if out:
        sys.stdout.write(out)
        sys.stdout.flush()
    return 0


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
