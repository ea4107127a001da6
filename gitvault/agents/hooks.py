"""Claude Code hooks: `gitvault-hook claude <event>` (no typer, no rich).

session-start → recall block as additionalContext (≤ 2 s, else exit 0 with nothing). It opens
                the session's run in the ledger (when and in which worktree it runs: the basis
                of attribution), remembers a hash of each recall part it injected, and on
                `resume` injects only the parts that changed since this conversation last got
                them (nothing when none did); startup, clear and compact inject the whole block.
stop          → {"decision":"block","reason":…} only when a save is due
pre-compact   → mechanical session record when this session has unsaved work (never exit 2)
session-end   → the same record, closes the run, then a detached, lease-guarded fold

Every path exits 0: a hook never blocks a session. Errors and malformed input go to the log in
the common git dir (`gitvault status` shows it). GITVAULT_CHILD=1 makes every hook exit at once,
and so does `git config gitvault.agents none` (install --no-claude).

Input is untrusted: it is validated against the schemas (a session id must look like one),
transcripts are read only when they are regular files and at most transcript.MAX_READ_BYTES
per call, and every value that reaches a command line is shell-quoted.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

TIME_BOUNDS = {"session-start": 2.0, "stop": 20.0, "pre-compact": 45.0, "session-end": 25.0}
MAX_INPUT_BYTES = 4_000_000


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


def _git_config(cwd: Path) -> dict[str, str]:
    """gitvault's keys of the repository's git config, in one process."""
    from gitvault.vault import gitcmd

    proc = gitcmd.run_git(["config", "--get-regexp", r"^gitvault\."], cwd, check=False)
    out: dict[str, str] = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        out.setdefault(key.lower(), value.strip())
    return out


def _settings(cwd: Path, section: str, config: dict[str, str]) -> dict[str, Any]:
    from gitvault.vault import gitcmd, layout

    branch = layout.branch_name(config.get(layout.BRANCH_KEY))
    rev = f"{layout.branch_ref(branch)}:{layout.CONFIG}"
    proc = gitcmd.run_git(["cat-file", "blob", rev], cwd, check=False)
    text = proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None
    return layout.read_settings(text, section)


def run(event: str, raw: str) -> str:
    """Handle one hook call; returns what to print on stdout ("" for nothing)."""
    from gitvault.agents import hookinput
    from gitvault.errors import GitvaultError
    from gitvault.memory.ledger import valid_session_id
    from gitvault.resolve import resolve

    error = None
    try:
        payload = json.loads(raw) if raw.strip() else None
    except (ValueError, RecursionError) as exc:
        payload, error = None, f"input is not JSON: {type(exc).__name__}"
    problems = [error] if error else hookinput.validate(event, payload)
    if not problems and isinstance(payload, dict) and not valid_session_id(payload["session_id"]):
        problems = ["session_id: not a session id"]
    project = os.environ.get("CLAUDE_PROJECT_DIR") or (
        payload.get("cwd") if isinstance(payload, dict) and not problems else None
    )
    try:
        loc = resolve(None, Path(str(project or os.getcwd())))
    except (GitvaultError, OSError, ValueError):
        return ""  # not a repository: gitvault has nothing to say here
    if problems or not isinstance(payload, dict):
        _log(loc, f"hook {event}: malformed input ignored: {'; '.join(problems[:3])[:300]}")
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
    """Claude Code's output shapes around the shared behaviours."""
    if event not in ("session-start", "stop", "pre-compact", "session-end"):
        _log(loc, f"hook: unknown event {event!r}")
        return ""
    answer = behave(event, loc, cwd, payload)
    if not answer:
        return ""  # the common case: nothing to say, and no adapter to import
    from gitvault.agents.adapters.claude import Claude

    return Claude().shape("turn-end" if event == "stop" else event, answer)


def behave(
    event: str,
    loc: Any,
    cwd: Path,
    payload: dict[str, Any],
    *,
    agent: str = "claude-code",
    name: str = "claude",
    cli: str | None = None,
    heredoc: bool = True,
) -> dict[str, str] | None:
    """The one set of behaviours every agent adapter maps its hooks onto (canonical events;
    Claude Code's "stop" is "turn-end"). The payload is canonical: session_id, cwd,
    transcript_path (Claude Code's format only), source, stop_hook_active. Returns
    {"context": block} at session-start, {"decision": "block", "reason": …} at turn-end when
    a save is due, None otherwise; the adapter shapes it for its agent. `agent` is what saves
    and records are attributed to, `name` the adapter (git config gitvault.agents), `cli` how
    the agent's shell runs gitvault (None: Claude Code's, found at session start), heredoc
    False: the save command without `<`/`>` (texts.save_command)."""
    from gitvault.agents.adapters import serves
    from gitvault.vault import layout

    config = _git_config(cwd)
    value = config.get(layout.AGENTS_KEY, "").strip().lower()
    if value == "none" or not serves(value or None, name):
        return None  # this clone does not wire that agent: gitvault stays out of its sessions
    if event == "session-start":
        block = _session_start(loc, cwd, payload, config, cli=cli)
        return {"context": block} if block else None
    if event in ("stop", "turn-end"):
        from gitvault.agents import capture

        return capture.decide_stop(
            loc,
            cwd,
            payload,
            lambda: _settings(cwd, "capture", config),
            agent=agent,
            heredoc=heredoc,
        )
    if event in ("pre-compact", "session-end"):
        from gitvault.agents import capture

        settings = _settings(cwd, "capture", config)
        slug = capture.auto_record(loc, cwd, payload, event, lambda: settings, agent=agent)
        if slug:
            _log(loc, f"hook {event}: wrote the mechanical record s:{slug}")
        if event == "session-end" and settings["fold_on_session_end"]:
            from gitvault.fold import background

            background.spawn_fold(loc)
        capture.prune(loc)
    return None


def _session_start(
    loc: Any, cwd: Path, payload: dict[str, Any], config: dict[str, str], *, cli: str | None
) -> str:
    from gitvault.memory import ledger, recall
    from gitvault.memory.attribution import reflog_size
    from gitvault.vault import gitcmd, layout

    state = ledger.load(loc, str(payload["session_id"]))
    source = str(payload.get("source") or "startup")
    state.open_run(time.time(), reflog_size(loc.git_dir))
    state.git_dir = str(loc.git_dir)
    state.worktree = str(loc.workdir or "")
    state.branch = gitcmd.head_branch(loc.git_dir) or ""
    # A resumed conversation still holds what it was given (Claude Code replays it): only what
    # changed since. compact and clear dropped it: everything again.
    known = state.recall if source == "resume" and state.recall else None
    result = recall.build(
        cwd, layout.branch_name(config.get(layout.BRANCH_KEY)), here=state.branch, known=known
    )
    for problem in result.problems:
        _log(loc, f"hook session-start: {problem}")
    state.recall = {**(known or {}), **result.parts}
    state.cli = cli or _export_cli()
    ledger.store(loc, state)
    return result.text


def _export_cli() -> str:
    """Make plain `gitvault` work in the session's Bash tool: when it is not on PATH but this
    gitvault's own `gitvault` script is (a virtualenv), put that folder on the session's PATH
    through CLAUDE_ENV_FILE (machine-specific, outside the repository). Returns how the Bash
    tool runs gitvault."""
    import shlex
    import shutil

    if shutil.which("gitvault"):
        return "gitvault"
    folder = os.path.dirname(sys.executable)
    script = os.path.join(folder, "gitvault")
    env_file = os.environ.get("CLAUDE_ENV_FILE")
    if env_file and os.access(script, os.X_OK):
        line = f'export PATH={shlex.quote(folder)}:"$PATH"\n'
        try:
            try:
                with open(env_file, encoding="utf-8") as fh:
                    present = line in fh.read(1_000_000)
            except FileNotFoundError:
                present = False
            if not present:
                with open(env_file, "a", encoding="utf-8") as fh:
                    fh.write(line)
            return "gitvault"
        except OSError:
            pass
    return f"{shlex.quote(sys.executable)} -m gitvault"


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
        raw = sys.stdin.read(MAX_INPUT_BYTES)
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
