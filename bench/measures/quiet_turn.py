"""A turn end with nothing due, as every turn of a quiet session pays it: the installed command
(sh, `git rev-parse`, the launcher's quiet fast path) answers without starting Python. Timed
against `python -c pass` and the floor `sh -c :`, interleaved in one run, for every agent in
the adapter registry.

Each session starts (SessionStart), makes no commit, and has one turn end checked in Python
(which leaves the quiet stamp) before the timed ones; the files the stamp watches are let settle
first (gitvault.agents.quiet.SETTLE_NS: a real wait, as in any session, where a turn takes
longer). A timed run counts only when it printed nothing and the session's beat file grew by
one byte (the launcher answered; Python would have folded the beat into the ledger).
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path

from harness import init_repo, median
from registry import Measure, Row, Target

from measures.claude_hooks import steady_state
from measures.common import Context, install, state_dir
from measures.hook_imports import _payload, _run, installed_commands


def bench_quiet_turn(ctx: Context) -> list[Row]:
    from gitvault.agents import quiet
    from gitvault.agents.adapters import NAMES
    from gitvault.vault import statedir

    repo = init_repo(ctx.box.repo_dir("quiet-turn"))
    install(repo, agents=list(NAMES))
    steady_state(repo)
    commands = installed_commands(repo)
    runs_n = ctx.sizes.recall_runs * 3
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHONPROFILE")}
    quiet_dir = state_dir(repo) / statedir.QUIET
    sessions: dict[str, tuple[str, bytes, dict[str, str]]] = {}
    for agent in NAMES:
        sid = str(uuid.uuid4())
        agent_env = {**env, commands[(agent, "turn-end")][1]: str(repo)}
        start = _payload(agent, "session-start", sid, repo)
        _run(["sh", "-c", commands[(agent, "session-start")][0]], repo, start, agent_env)
        sessions[agent] = (sid, _payload(agent, "turn-end", sid, repo), agent_env)
    time.sleep(quiet.SETTLE_NS / 1e9 + 0.2)  # the session start's writes settle, as in a session
    rows: list[Row] = []
    python = [sys.executable, "-c", "pass"]
    floor = ["sh", "-c", ":"]
    for agent in NAMES:
        sid, stdin, agent_env = sessions[agent]
        command = ["sh", "-c", commands[(agent, "turn-end")][0]]
        _run(command, repo, stdin, agent_env)  # the check in Python: leaves the stamp
        beat = quiet_dir / (sid + statedir.QUIET_BEAT_SUFFIX)
        ctx.say(f"quiet_turn: {agent}, {runs_n} runs each of the hook, python, sh")
        hook_s: list[float] = []
        python_s: list[float] = []
        floor_s: list[float] = []
        answered = 0
        for i in range(runs_n):
            trio = [(hook_s, command, stdin), (python_s, python, b""), (floor_s, floor, b"")]
            for sink, argv, data in trio if i % 2 == 0 else reversed(trio):
                before = _size(beat) if argv is command else 0
                took, proc = _run(argv, repo, data, agent_env)
                sink.append(took)
                if argv is command and proc.stdout == b"" and _size(beat) == before + 1:
                    answered += 1
        ok = answered == runs_n
        ratio = median(hook_s) / median(python_s)
        rows.append(
            Row(
                f"{agent}_quiet_turn_end_vs_python",
                f"{agent} turn end, nothing due: whole command vs `python -c pass`",
                ratio,
                "×",
                target="quiet",
                shown=f"{ratio:.2f}× ({median(hook_s) * 1000:.1f} ms vs "
                f"{median(python_s) * 1000:.1f} ms; `sh -c :` {median(floor_s) * 1000:.1f} ms)",
                valid=ok,
                note="" if ok else f"only {answered} of {runs_n} runs answered without Python",
                how=f"The command {agent}'s settings run for its turn end (`sh -c`, the recorded "
                f"input shape on stdin), `{Path(sys.executable).name} -c pass` and `sh -c :`, "
                f"interleaved, {runs_n} runs each, median wall times; every hook run printed "
                "nothing and was answered by the launcher (its beat file grew by one byte).",
                details={"hook_s": hook_s, "python_s": python_s, "sh_s": floor_s},
            )
        )
    return rows


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


MEASURES = (
    Measure(
        section="quiet_turn",
        title="A turn end with nothing due: no Python, every agent",
        run=bench_quiet_turn,
        targets={"quiet": Target("<=", 1.0, "×")},
        about="A small repository with gitvault installed for every agent; each agent's "
        "session started and had one turn end checked (nothing due: no commit since), then "
        "its turn ends are timed as the agent runs them, next to `python -c pass` and "
        "`sh -c :` in the same run.",
        summary=("claude_quiet_turn_end_vs_python",),
        order=56,
    ),
)
