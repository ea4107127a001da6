"""`gitvault status --line`: one short line for a shell prompt or Claude Code's statusLine, and
whether the digest is behind. Plain git only (no pygit2, no jsonschema, no tomllib, no typer):
the line runs on every prompt and status refresh, within 50 ms, and the CLI answers it before
typer loads (cli._fast_path).

STALE, in the line, means one of:
- more than `status.stale_items` notes and sessions wait for a fold (vault.toml; default 20);
- something waits and the digest is older than `status.stale_days` days (default 7);
- the last fold with the configured merger failed and nothing folded since (fold-state.json,
  read through vault/statedir); when the builtin fallback folded instead, the digest is
  current and the line says which merger stands in.

CHECKPOINT, first in the line, means the agent's status-line input (Claude Code's statusLine
JSON on stdin) says CHECKPOINT_PERCENT or more of the context window is used.
"""

from __future__ import annotations

import time
from pathlib import Path

from gitvault.memory import vaultstate
from gitvault.named import NamedTuple
from gitvault.resolve import Location
from gitvault.vault.controls import neutralise_controls

PENDING_CAP = vaultstate.PENDING_CAP  # the line counts unfolded items up to this many ("1000+")
LINE_MAX = 200  # characters: a prompt's line, whatever a state file holds


def short_age(seconds: float) -> str:
    if seconds < 3600:
        return f"{max(0, int(seconds // 60))}m"
    if seconds < 86400 * 2:
        return f"{int(seconds // 3600)}h"
    return f"{int(seconds // 86400)}d"


class Line(NamedTuple):  # not a dataclass: `dataclasses` costs ~5 ms the line cannot pay
    text: str
    stale: bool
    reasons: tuple[str, ...] = ()
    checkpoint: bool = False  # the agent's context window is nearly full (with_context)


def status_line(loc: Location, now: float | None = None) -> Line:
    """One short line for a shell prompt or Claude Code's statusLine: from the fold state the
    last vault change stored (gitvault.memory.vaultstate) while it holds, else read from git."""
    state = vaultstate.materialized(loc) or vaultstate.computed(loc)
    return render(state, time.time() if now is None else now)


def render(state: vaultstate.VaultState, moment: float) -> Line:
    if not state.exists:  # no vault here: a prompt shown in every repository stays quiet
        return Line("", False)
    pending, folded = state.pending, state.folded_at
    reasons: list[str] = []
    count = f"{pending}+" if pending >= PENDING_CAP else str(pending)
    if pending > state.stale_items:
        reasons.append(f"{count} unfolded")
    if pending and folded is not None and moment - folded > state.stale_days * 86400:
        reasons.append(f"digest {short_age(moment - folded)} old")
    stand_in = ""
    if state.failure is not None and state.fallback:
        # The fallback folded: the digest is current, only not by the configured merger.
        stand_in = f" ({state.fallback} stands in for {state.failure[:20]})"
    elif state.failure is not None:
        reasons.append(f"last fold failed ({(state.failure or 'fold')[:20]})")
    if reasons:
        return Line("gitvault STALE: " + ", ".join(reasons), True, tuple(reasons))
    digest = f"digest {short_age(moment - folded)} old" if folded is not None else "no digest yet"
    return Line(f"gitvault: {digest}, {count} unfolded{stand_in}", False)


# -- the command line's fast path -------------------------------------------------------------


CHECKPOINT_PERCENT = 85  # of the context window used: time to save the session


def _stdin_input() -> dict[str, object] | None:
    """The JSON object an agent's status line passes on stdin (Claude Code's statusLine). A
    terminal, an empty stdin or anything but an object is none."""
    import select
    import sys

    stream = sys.stdin
    try:
        if stream is None or stream.isatty():
            return None
        ready, _, _ = select.select([stream], [], [], 0.05)
        if not ready:
            return None
        raw = stream.read(65536)
        if not raw.strip():  # a prompt's empty stdin: no JSON (nor `json`) to read
            return None
        import json

        data = json.loads(raw)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value < 1e15 else None  # NaN fails both comparisons


def context_percent(data: dict[str, object] | None) -> int | None:
    """How much of the context window the input says is used, in whole percent (0–100), or
    None when it does not say. Claude Code's statusLine carries
    context_window.used_percentage, null before the first answer; without it, the last call's
    current_usage (input + cache creation + cache reads, output excluded, as Claude Code
    counts it) against context_window_size."""
    window = data.get("context_window") if data else None
    if not isinstance(window, dict):
        return None
    used = _number(window.get("used_percentage"))
    if used is None:
        usage, size = window.get("current_usage"), _number(window.get("context_window_size"))
        if not isinstance(usage, dict) or not size:
            return None
        parts = [
            _number(usage.get(k))
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        ]
        if all(part is None for part in parts):
            return None
        used = 100 * sum(part or 0.0 for part in parts) / size
    return min(100, int(used))


def with_context(line: Line, percent: int | None) -> Line:
    """The line with CHECKPOINT first once the context window is CHECKPOINT_PERCENT used."""
    if percent is None or percent < CHECKPOINT_PERCENT:
        return line
    rest = line.text.removeprefix("gitvault").lstrip(":").strip()
    text = f"gitvault CHECKPOINT: context {percent}% used, run /checkpoint then /clear"
    return Line(f"{text}; {rest}" if rest else text, line.stale, line.reasons, True)


def _stdin_dir(data: dict[str, object] | None) -> str | None:
    """The directory the status-line input names (workspace.project_dir, else cwd)."""
    if data is None:
        return None
    workspace = data.get("workspace")
    for value in (
        workspace.get("project_dir") if isinstance(workspace, dict) else None,
        workspace.get("current_dir") if isinstance(workspace, dict) else None,
        data.get("cwd"),
    ):
        if isinstance(value, str) and value and "\0" not in value:
            return value
    return None


def print_line(repo: str | None, *, json_out: bool = False) -> int:
    """`gitvault status --line`: print the line (nothing outside a repository, so a shell
    prompt stays clean) and return the exit code. Never drains or writes anything."""
    import sys

    from gitvault.errors import GitvaultError, NotARepository
    from gitvault.resolve import resolve

    data = _stdin_input()
    where = repo or _stdin_dir(data)
    percent = context_percent(data)
    try:
        loc = resolve(repo) if repo else resolve(cwd=Path(where) if where else None)
        line = with_context(status_line(loc), percent)
    except NotARepository:
        if repo is not None:
            raise
        line = Line("", False)
    except GitvaultError as exc:
        line = Line(f"gitvault: {exc.message}"[:80], False)
    # It runs inside PS1 and Claude Code's status line: no control sequence, and one short line
    # whatever fold-state.json or an error message holds.
    text = neutralise_controls(" ".join(line.text.split()))[:LINE_MAX]
    if json_out:
        import json

        payload = {
            "line": text,
            "stale": line.stale,
            "reasons": list(line.reasons),
            "checkpoint": line.checkpoint,
            "context_percent": percent,
        }
        sys.stdout.write(json.dumps({"gitvault": 1, "kind": "status-line", "data": payload}))
        sys.stdout.write("\n")
    elif text:
        sys.stdout.write(text + "\n")
    return 0


def fast_status_line(argv: list[str]) -> int | None:
    """The exit code when argv is `status --line` (with --repo/-C PATH, --json anywhere), else
    None: the CLI calls this before loading typer and rich (~200 ms a prompt cannot pay)."""
    repo: str | None = None
    seen: set[str] = set()
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg in ("--repo", "-C") and index + 1 < len(argv):
            repo = argv[index + 1]
            index += 2
            continue
        if arg.startswith("--repo="):
            repo = arg.split("=", 1)[1]
        elif arg in ("status", "--line", "--json") and arg not in seen:
            seen.add(arg)
        else:
            return None
        index += 1
    if not {"status", "--line"} <= seen or argv.index("status") > argv.index("--line"):
        return None
    import os

    return print_line(repo or os.environ.get("GITVAULT_REPO") or None, json_out="--json" in seen)
