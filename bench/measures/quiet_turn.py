"""A turn end with nothing due, as every turn of a quiet session pays it: the installed command
(sh, `git rev-parse`, the launcher's quiet fast path) answers without starting Python. Timed
against `python -c pass` and the floor `sh -c :`, interleaved in one run, for every agent in
the adapter registry.

Each session starts (SessionStart), makes no commit, and has one turn end checked in Python
(which leaves the quiet stamp) before the timed ones; the files the stamp watches are let settle
first (gitvault.agents.quiet.SETTLE_NS: a real wait, as in any session, where a turn takes
longer). A timed run counts only when it printed nothing and the session's beat file grew by
one byte (the launcher answered; Python would have folded the beat into the ledger).

A session start in the large vault is served the same way from the recall block the last vault
change materialized (gitvault.materialize.ready): a run counts only when it printed the block and
left the launcher's start record (Python would have written the session's ledger instead).
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from harness import init_repo, median
from registry import Measure, Row, Target

from measures.claude_hooks import recall_block, steady_state
from measures.common import Context, install, state_dir
from measures.hook_imports import _payload, _run, installed_commands

if TYPE_CHECKING:
    from gitvault.resolve import Location


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
        # The check in Python leaves the stamp; one that saw a watched file move meanwhile (a
        # background git or gitvault process here) leaves none, and a later one does.
        checks = 0
        while checks < 5:
            checks += 1
            _run(command, repo, stdin, agent_env)
            if (quiet_dir / sid).is_file():
                break
            time.sleep(quiet.SETTLE_NS / 1e9 + 0.2)
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
                details={
                    "hook_s": hook_s,
                    "python_s": python_s,
                    "sh_s": floor_s,
                    "checks_in_python": checks,
                },
            )
        )
    rows.append(_edit_time_row(ctx, repo, env, runs_n))
    rows += _served_start_rows(ctx, env, runs_n)
    return rows


def _served_start_rows(ctx: Context, env: dict[str, str], runs_n: int) -> list[Row]:
    """Every agent's session start in the large vault with a digest, served from the block the
    last vault change materialized (gitvault.materialize.ready), against `python -c pass`."""
    from gitvault.agents import quiet
    from gitvault.agents.adapters import NAMES, get
    from gitvault.materialize import ready
    from gitvault.resolve import resolve
    from gitvault.vault import statedir
    from measures.notecost import vault_repos

    _, repo = vault_repos(ctx)
    install(repo, agents=list(NAMES))
    steady_state(repo)
    commands = installed_commands(repo)
    n_notes = ctx.sizes.vault_large
    time.sleep(quiet.SETTLE_NS / 1e9 + 0.2)  # install's settings settle, as before a session
    loc = resolve(repo)
    _quiet_vault(loc)
    served_n = ready.refresh(loc)  # what the drainer runs after the next commit's note
    from gitvault.vault.store import Vault

    tip = Vault(loc).tip()
    records = state_dir(repo) / statedir.QUIET
    python = [sys.executable, "-c", "pass"]
    rows: list[Row] = []
    for agent in NAMES:
        command = ["sh", "-c", commands[(agent, "session-start")][0]]
        agent_env = {**env, commands[(agent, "session-start")][1]: str(repo)}
        if get(agent).start_env_file:
            agent_env.pop(get(agent).start_env_file or "", None)
        ctx.say(f"quiet_turn: {agent} session start served at {n_notes:,} notes, {runs_n} runs")
        hook_s: list[float] = []
        python_s: list[float] = []
        hook_cpu: list[float] = []
        python_cpu: list[float] = []
        answered = 0
        for i in range(runs_n):
            sid = str(uuid.uuid4())
            stdin = _payload(agent, "session-start", sid, repo)
            pair = [(hook_s, hook_cpu, command, stdin), (python_s, python_cpu, python, b"")]
            for sink, cpu, argv, data in pair if i % 2 == 0 else reversed(pair):
                took, proc = _run(argv, repo, data, agent_env, cpu)
                sink.append(took)
                if argv is command:
                    record = records / (sid + statedir.QUIET_START_SUFFIX)
                    answered += recall_block(proc.stdout) and record.is_file()
                    record.unlink(missing_ok=True)
        ok = answered == runs_n and served_n >= 1
        ratio = median(hook_s) / median(python_s)
        cpu_ratio = median(hook_cpu) / median(python_cpu)
        rows.append(
            Row(
                f"{agent}_session_start_served_vs_python",
                f"{agent} session start at {n_notes:,} notes, served: whole command vs "
                "`python -c pass`",
                ratio,
                "×",
                target="served_start",
                shown=f"{ratio:.2f}× ({median(hook_s) * 1000:.1f} ms vs "
                f"{median(python_s) * 1000:.1f} ms; CPU {cpu_ratio:.2f}×, "
                f"{median(hook_cpu) * 1000:.1f} ms vs {median(python_cpu) * 1000:.1f} ms)",
                valid=ok,
                note=""
                if ok
                else f"only {answered} of {runs_n} starts served by the launcher "
                f"({served_n} worktree block(s) materialized)",
                how=f"The command {agent}'s settings run for its session start (`sh -c`, a new "
                f"session each run, source startup) in the {n_notes:,}-note vault with a digest, "
                "two sessions and patterns, the block materialized as a vault change leaves it; "
                f"interleaved with `{Path(sys.executable).name} -c pass`, {runs_n} runs each: "
                "median wall times and CPU times (user + system, children included); every run "
                "printed the recall block and left the launcher's start record.",
                details={
                    "hook_s": hook_s,
                    "python_s": python_s,
                    "hook_cpu_s": hook_cpu,
                    "python_cpu_s": python_cpu,
                    "vault_tip_moved": Vault(loc).tip() != tip,
                },
            )
        )
    rows += _edit_time_block_rows(ctx, repo, env, runs_n)
    return rows


def _edit_time_block_rows(ctx: Context, repo: Path, env: dict[str, str], runs_n: int) -> list[Row]:
    """Claude Code's first Read, in a session, of a file the large vault knows: built by Python
    when no session was shown the file before; served by the launcher from the blocks the next
    vault change materialized once one was (gitvault.materialize.blocks)."""
    import json

    from gitvault.agents import quiet
    from gitvault.agents.adapters import get
    from gitvault.materialize import blocks, ready
    from gitvault.pathrecall.index import iter_known, update_quietly
    from gitvault.resolve import resolve

    loc = resolve(repo)
    update_quietly(loc)  # the path index, as drain, save, fold and sync keep it
    known = sorted(p for p in iter_known(loc) if "/" in p and ".." not in p)
    path = known[len(known) // 2]
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        target.write_text("a file the vault has history for\n")
    adapter = get("claude")
    hook = next(h for h in adapter.hooks if h.event == "file-read")
    command = ["sh", "-c", adapter.command(hook)]
    claude_env = {**env, adapter.project_var: str(repo)}
    n_notes = ctx.sizes.vault_large

    def timed() -> tuple[list[float], list[float], list[bytes]]:
        took_s: list[float] = []
        cpu_s: list[float] = []
        outs: list[bytes] = []
        for _ in range(runs_n):
            stdin = json.dumps(
                {
                    "session_id": str(uuid.uuid4()),  # a new session: the file not shown yet
                    "transcript_path": str(repo / "none.jsonl"),
                    "cwd": str(repo),
                    "hook_event_name": "PostToolUse",
                    "tool_name": "Read",
                    "tool_input": {"file_path": str(target)},
                    "tool_response": {"type": "text", "file": {"filePath": str(target)}},
                }
            ).encode()
            took, proc = _run(command, repo, stdin, claude_env, cpu_s)
            took_s.append(took)
            outs.append(proc.stdout)
        return took_s, cpu_s, outs

    ctx.say(f"quiet_turn: claude edit-time block at {n_notes:,} notes, built, {runs_n} runs")
    built_s, built_cpu, built_out = timed()
    shown = sum(b"VAULT RECALL" in out for out in built_out)
    time.sleep(quiet.SETTLE_NS / 1e9 + 0.2)  # the files the blocks watch settle
    ready.refresh(loc)  # what the drainer runs after the next commit's note
    materialized = blocks.path_for(loc).is_file()
    ctx.say(f"quiet_turn: claude edit-time block at {n_notes:,} notes, served, {runs_n} runs")
    served_s, served_cpu, served_out = timed()
    same = sum(out == built_out[0] for out in served_out) if shown else 0
    rows = []
    for key, metric, took_s, cpu_s, ok, note, how in (
        (
            "claude_edit_time_block",
            f"claude edit-time call with a block, {n_notes:,} notes, first read of the file "
            "by any session (Python builds it): whole command",
            built_s,
            built_cpu,
            shown == runs_n,
            f"only {shown} of {runs_n} runs printed the block",
            "the launcher finds it in the path list and Python builds the block from the path "
            "index",
        ),
        (
            "claude_edit_time_block_served",
            f"claude edit-time call with a block, {n_notes:,} notes, a file an earlier session "
            "read (served by the launcher): whole command",
            served_s,
            served_cpu,
            materialized and same == runs_n,
            f"{same} of {runs_n} runs printed the block Python built "
            f"(blocks file {'written' if materialized else 'missing'})",
            "earlier sessions read it (the runs of the row above), the vault changed since "
            "(its refresh, as the drainer runs it after a commit's note, materialized the "
            "block), and the launcher's sh serves it; every run printed the block Python built",
        ),
    ):
        wall = median(took_s) * 1000
        rows.append(
            Row(
                key,
                metric,
                wall,
                "ms",
                target="edit_block",
                shown=f"{wall:.1f} ms (CPU {median(cpu_s) * 1000:.1f} ms)",
                valid=ok,
                note="" if ok else note,
                how=f"Claude Code's PostToolUse command for the first Read in a session of {path}, "
                f"a file the {n_notes:,}-note vault has history for (`sh -c`; a new session each "
                f"run, so it is never already shown): {how}. {runs_n} runs, median wall and CPU "
                "time (children included).",
                details={"hook_s": took_s, "cpu_s": cpu_s, "path": path},
            )
        )
    return rows


def _edit_time_row(ctx: Context, repo: Path, env: dict[str, str], runs_n: int) -> Row:
    """Claude Code's Read of a file the vault knows nothing of, as its PostToolUse runs it."""
    import json

    from gitvault.agents.adapters import get
    from gitvault.pathrecall.index import update_quietly
    from gitvault.resolve import resolve

    update_quietly(resolve(repo))  # the path list, as drain, save, fold and sync keep it
    adapter = get("claude")
    hook = next(h for h in adapter.hooks if h.event == "file-read")
    command = ["sh", "-c", adapter.command(hook)]
    (repo / "unknown.txt").write_text("no history\n")
    stdin = json.dumps(
        {
            "session_id": str(uuid.uuid4()),
            "transcript_path": str(repo / "none.jsonl"),
            "cwd": str(repo),
            "hook_event_name": "PostToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": str(repo / "unknown.txt")},
            "tool_response": {"type": "text", "file": {"filePath": str(repo / "unknown.txt")}},
        }
    ).encode()
    claude_env = {**env, adapter.project_var: str(repo)}
    ctx.say(f"quiet_turn: claude edit-time, {runs_n} runs each of the hook and python")
    hook_s: list[float] = []
    python_s: list[float] = []
    silent = 0
    python = [sys.executable, "-c", "pass"]
    for i in range(runs_n):
        pair = [(hook_s, command, stdin), (python_s, python, b"")]
        for sink, argv, data in pair if i % 2 == 0 else reversed(pair):
            took, proc = _run(argv, repo, data, claude_env)
            sink.append(took)
            silent += argv is command and proc.stdout == b""
    ratio = median(hook_s) / median(python_s)
    return Row(
        "claude_edit_time_unknown_vs_python",
        "claude edit-time call, nothing known: whole command vs `python -c pass`",
        ratio,
        "×",
        target="quiet",
        shown=f"{ratio:.2f}× ({median(hook_s) * 1000:.1f} ms vs {median(python_s) * 1000:.1f} ms)",
        valid=silent == runs_n,
        note="" if silent == runs_n else "a run printed something",
        how="Claude Code's PostToolUse command for a Read of a file without history (`sh -c`, "
        f"the launcher's edit-time fast path), interleaved with `python -c pass`, {runs_n} "
        "runs each, median wall times; every hook run printed nothing.",
        details={"hook_s": hook_s, "python_s": python_s},
    )


def _quiet_vault(loc: Location) -> None:
    """Wait for the background work earlier measures started on this repository (detached
    drainers writing notes and records, the path index they bring up to date): the vault tip
    must not move while starts are timed, as in a session where nobody commits."""
    from gitvault.agents import records
    from gitvault.notes.drain import drain
    from gitvault.pathrecall.index import update_quietly

    drain(loc, block=True, timeout=600.0)
    records.written(loc)
    update_quietly(loc)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


MEASURES = (
    Measure(
        section="quiet_turn",
        title="A turn end with nothing due, an edit-time call with nothing known, a session "
        "start served from the materialized recall: no Python",
        run=bench_quiet_turn,
        targets={
            "quiet": Target("<=", 1.0, "×"),
            "served_start": Target("<=", 2.0, "×"),
            "edit_block": Target("<=", 40, "ms"),
        },
        about="A small repository with gitvault installed for every agent; each agent's "
        "session started and had one turn end checked (nothing due: no commit since), then "
        "its turn ends are timed as the agent runs them, next to `python -c pass` and "
        "`sh -c :` in the same run. Session starts are timed in the large generated vault "
        "with a digest, its recall block materialized as the last vault change leaves it.",
        summary=("claude_quiet_turn_end_vs_python", "claude_session_start_served_vs_python"),
        order=56,
    ),
)
