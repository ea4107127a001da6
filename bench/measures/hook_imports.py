"""What every agent's session-start and turn-end hooks cost before they do anything: the
modules their path imports (`-X importtime`), and the whole installed command as the agent runs
it (sh, the launcher, gitvault-hook) next to `python -c pass`, in the same run.

The command measured is the one `gitvault install` wrote into each agent's settings file, read
back from that file, so a change in what the settings run (a fast path in the shell, another
entry) is measured as it ships. Every adapter in gitvault's registry is measured; an adapter
without a payload below is an error, not a silent gap.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from harness import init_repo, median
from registry import Measure, Row

from measures.claude_hooks import make_transcript, recall_block, steady_state
from measures.common import Context, install

EVENTS = ("session-start", "turn-end")  # canonical events: the two every turn and start pay
# What the hook budget forbids on those paths (the architecture test enforces it in the suite).
HEAVY = ("dataclasses", "inspect", "typer", "rich", "pygit2", "jsonschema")
_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)\s*$")


def _claude_like(event: str, sid: str, repo: Path, transcript: Path) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "session_id": sid,
        "transcript_path": str(transcript),
        "cwd": str(repo),
        "hook_event_name": "SessionStart" if event == "session-start" else "Stop",
    }
    if event == "session-start":
        payload["source"] = "startup"
    else:
        payload.update(stop_hook_active=False, last_assistant_message="Done.")
    return payload


def _gemini(event: str, sid: str, repo: Path, transcript: Path) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "session_id": sid,
        "transcript_path": str(transcript),
        "cwd": str(repo),
        "timestamp": "2026-11-30T22:20:58.753Z",
    }
    if event == "session-start":
        payload.update(hook_event_name="SessionStart", source="startup")
    else:
        payload.update(
            hook_event_name="AfterAgent",
            prompt="please run it",
            prompt_response="Done.",
            stop_hook_active=False,
        )
    return payload


def _copilot(event: str, sid: str, repo: Path, transcript: Path) -> dict[str, Any]:
    payload: dict[str, Any] = {"sessionId": sid, "timestamp": 1796077262261, "cwd": str(repo)}
    if event == "session-start":
        payload.update(source="new", initialPrompt="please run it")
    else:
        payload.update(
            transcriptPath=str(transcript), stopReason="end_turn", stop_hook_active=False
        )
    return payload


# Each agent's hook input, in its own field names (as recorded from the real CLIs).
PAYLOADS: dict[str, Callable[[str, str, Path, Path], dict[str, Any]]] = {
    "claude": _claude_like,
    "codex": _claude_like,
    "gemini": _gemini,
    "copilot": _copilot,
}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _under_key(value: Any, key: str) -> Iterator[Any]:
    if isinstance(value, dict):
        for name, item in value.items():
            if name == key:
                yield item
            else:
                yield from _under_key(item, key)
    elif isinstance(value, list):
        for item in value:
            yield from _under_key(item, key)


def installed_commands(repo: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(agent, canonical event) → (shell command, project variable), read from the settings
    files `gitvault install` wrote for every adapter."""
    from gitvault.agents.adapters import all_adapters
    from gitvault.vault.launcher import ENTRY

    found: dict[tuple[str, str], tuple[str, str]] = {}
    for name, adapter in all_adapters().items():
        settings = json.loads((repo / adapter.settings_file).read_text(encoding="utf-8"))
        for hook in adapter.hooks:
            if hook.event not in EVENTS:
                continue
            commands = [
                text for item in _under_key(settings, hook.native) for text in _strings(item)
            ]
            ours = [text for text in commands if ENTRY in text]
            if not ours:
                raise RuntimeError(f"{adapter.settings_file} has no gitvault {hook.native} hook")
            found[(name, hook.event)] = (ours[0], adapter.project_var)
    return found


def imported(stderr: str) -> dict[str, int]:
    """module → its own import time in µs, from `-X importtime` output."""
    out: dict[str, int] = {}
    for line in stderr.splitlines():
        match = _LINE.match(line)
        if match:
            out[match.group(4)] = int(match.group(1))
    return out


def _payload(agent: str, event: str, sid: str, repo: Path, chat: Path | None = None) -> bytes:
    return json.dumps(PAYLOADS[agent](event, sid, repo, chat or repo / "none.jsonl")).encode()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(
    command: list[str],
    repo: Path,
    stdin: bytes,
    env: dict[str, str],
    cpu: list[float] | None = None,
) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    """Wall seconds of one process (and its CPU seconds, children included, into cpu)."""
    cpu0 = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=repo, input=stdin, capture_output=True, env=env)
    took = time.perf_counter() - start
    if cpu is not None:
        cpu.append(_children_cpu() - cpu0)
    return took, proc


def bench_hook_imports(ctx: Context) -> list[Row]:
    from gitvault.agents.adapters import NAMES

    missing = sorted(set(NAMES) - set(PAYLOADS))
    if missing:
        raise RuntimeError(f"hook_imports: no hook payload for agent {', '.join(missing)}")
    repo = init_repo(ctx.box.repo_dir("hook-imports"))
    install(repo, agents=list(NAMES))
    steady_state(repo)
    commands = installed_commands(repo)
    chat = make_transcript(ctx.box.root / "hook-imports.jsonl", 20_000, "bench")
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONPROFILEIMPORTTIME"}
    profiled = {**base_env, "PYTHONPROFILEIMPORTTIME": "1"}
    python = [sys.executable, "-c", "pass"]
    runs_n = ctx.sizes.import_runs

    floor = [imported(_run(python, repo, b"", profiled)[1].stderr.decode()) for _ in range(3)]
    at_start = set().union(*floor)  # what any interpreter here imports before user code
    rows: list[Row] = []
    for (agent, event), (command, project_var) in sorted(commands.items()):
        ctx.say(f"hook_imports: {agent} {event}, {runs_n} runs profiled and {runs_n} timed")
        env = {**base_env, project_var: str(repo)}

        def session(agent: str = agent, event: str = event, env: dict[str, str] = env) -> bytes:
            """The event's payload for a new session (turn-end: one that has started)."""
            sid = str(uuid.uuid4())
            if event == "turn-end":
                begin = commands[(agent, "session-start")][0]
                _run(["sh", "-c", begin], repo, _payload(agent, "session-start", sid, repo), env)
            return _payload(agent, event, sid, repo, chat)

        imports_us: list[int] = []
        heavy: set[str] = set()
        gitvault_modules = modules = 0
        names: list[str] = []
        outputs: list[bytes] = []
        for _ in range(runs_n):
            _, proc = _run(["sh", "-c", command], repo, session(), {**env, **profiled})
            mods = imported(proc.stderr.decode("utf-8", "replace"))
            new = {m: us for m, us in mods.items() if m not in at_start}
            imports_us.append(sum(new.values()))
            heavy |= {m for m in new if m.split(".")[0] in HEAVY}
            gitvault_modules = sum(1 for m in new if m.split(".")[0] == "gitvault")
            modules = len(new)
            names = sorted(new)
            outputs.append(proc.stdout)
        hook_s: list[float] = []
        python_s: list[float] = []
        hook_cpu: list[float] = []
        python_cpu: list[float] = []
        for i in range(runs_n):
            pair = [
                (hook_s, hook_cpu, ["sh", "-c", command], session()),
                (python_s, python_cpu, python, b""),
            ]
            for sink, cpu, argv, stdin in pair if i % 2 == 0 else reversed(pair):
                took, proc = _run(argv, repo, stdin, env, cpu)
                sink.append(took)
                if argv is not python:
                    outputs.append(proc.stdout)
        if event == "session-start":
            ok = all(recall_block(out) for out in outputs)
            expect = "every run printed the recall block"
        else:
            ok = all(out.strip() == b"" for out in outputs)
            expect = "every run printed nothing (nothing due)"
        imports_ms = median(imports_us) / 1000
        ratio = median(hook_s) / median(python_s)
        heavy_text = ", ".join(sorted(heavy)) or "none"
        rows.append(
            Row(
                f"{agent}_{event.replace('-', '_')}_imports",
                f"{agent} {event}: imports",
                imports_ms,
                "ms",
                shown=f"{imports_ms:.1f} ms ({modules} modules, {gitvault_modules} of them "
                f"gitvault's; forbidden: {heavy_text})",
                valid=ok,
                note="" if ok else f"not {expect}",
                how=f"The installed command (`sh -c` of what {agent}'s settings run) with "
                f"PYTHONPROFILEIMPORTTIME=1: the sum of the self times of the modules imported "
                f"beyond what `python -c pass` imports, median of {runs_n} runs; {expect}. "
                f"Imported from the hook budget's forbidden list ({', '.join(HEAVY)}): "
                f"{heavy_text}.",
                details={
                    "imports_us": imports_us,
                    "heavy": sorted(heavy),
                    "modules": modules,
                    "gitvault_modules": gitvault_modules,
                    "imported": names,  # what to diff between two runs
                },
            )
        )
        rows.append(
            Row(
                f"{agent}_{event.replace('-', '_')}_vs_python",
                f"{agent} {event}: whole command vs `python -c pass`",
                ratio,
                "×",
                shown=f"{ratio:.2f}× ({median(hook_s) * 1000:.1f} ms vs "
                f"{median(python_s) * 1000:.1f} ms; CPU {median(hook_cpu) * 1000:.1f} ms vs "
                f"{median(python_cpu) * 1000:.1f} ms)",
                valid=ok,
                note="" if ok else f"not {expect}",
                how=f"The installed command as the agent runs it (sh, `git rev-parse` for the "
                f"launcher, gitvault-hook) with the payload on stdin, and "
                f"`{Path(sys.executable).name} -c pass`, interleaved, {runs_n} runs each: "
                "median wall times, and median CPU times (user + system, the hook's git "
                "children included), which a loaded machine inflates less.",
                details={
                    "hook_s": hook_s,
                    "python_s": python_s,
                    "hook_cpu_s": hook_cpu,
                    "python_cpu_s": python_cpu,
                },
            )
        )
    return rows


MEASURES = (
    Measure(
        section="hook_imports",
        title="Agent hooks' start-up: imports and the whole command, every agent",
        run=bench_hook_imports,
        about="A small repository with gitvault installed for every agent in its adapter "
        "registry, a digest, two sessions and a patterns file. session-start serves a new "
        "session; turn-end follows a session-start of the same session with nothing due (no "
        "commit since), the case every turn pays.",
        summary=("claude_session_start_vs_python", "claude_turn_end_vs_python"),
        order=55,
    ),
)
