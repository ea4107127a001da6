"""gitvault next to its peers on one repository, in one run (`just bench-peers`; optional: it
installs claude-mem, Bun and agentlore into .cache/peers/ on its first run).

The repository is a clone of the click history (shared/histories/click.bundle) with gitvault
installed for Claude Code, every commit backfilled and the digest folded with the builtin
merger; claude-mem's worker holds one observation per commit and one session per day of
commits, and agentlore the digest's lines as typed memories (peers/memory.py). Then, whole
processes as Claude Code (or an agent calling a CLI) starts them, the payload Claude Code sends
on stdin, interleaved round by round (the order rotates every round):

- SessionStart: claude-mem's `context` hook (its worker warm), and its `start` hook, next to
  gitvault's SessionStart command as `gitvault install` wrote it (sh, the launcher);
- per turn: claude-mem's UserPromptSubmit `session-init` and PostToolUse `observation` (for a
  Read) next to gitvault's Stop with nothing due and its PostToolUse Read hook (the file
  already shown in the session, and a first Read of it, which injects the file's block);
- recall: `agentlore recall TASK --budget 1600` next to `gitvault recall`;
- the floors: `node -e ""`, `bun -e ""`, `python -c pass`, `sh -c :`.

Then claude-mem's worker is stopped and its `context` hook runs again (worker down) interleaved
with gitvault's SessionStart. Every run is timed by a probe process (wall from fork to exit; CPU
and peak RSS of the process tree it waited for, from wait4); for claude-mem the CPU its worker
spent meanwhile is added (the daemon does part of each hook's work). What each run printed is
judged as the agent takes it: characters injected into the model's context, characters shown
to the user, and whether the output is valid for the agent (exit 0; empty, or JSON for the
event; within Claude Code's 10,000-character hook output limit; within a CLI's own budget).
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import REPO_ROOT, git, load_average, median, percentile, wait_no_drainers
from registry import Measure, Measured, Row, Target

from measures.claude_hooks import make_transcript, recall_block
from measures.commands import Run, gitvault_env, run_measured
from measures.common import Context, state_dir

CACHE = REPO_ROOT / ".cache" / "peers"
HISTORY = "click"
CLAUDE_CODE_LIMIT = 10_000  # Claude Code shows the model a preview of hook output past this
READ_FILE = "src/click/core.py"
READ_LINES = 2_000  # what Claude Code's Read returns of a longer file by default


@dataclass(frozen=True)
class Verdict:
    """What one run's output is to the agent."""

    valid: bool
    injected: int  # characters the model receives as context
    shown: int = 0  # characters shown to the user (systemMessage)
    control: bool = False  # terminal control sequences (ESC) in what is shown or injected
    why: str = ""
    over: int = 0  # characters past the tool's own budget (the agent still reads them)


@dataclass
class Sample:
    wall: float
    cpu: float  # the process tree's, plus claude-mem's worker meanwhile
    rss_mb: float
    verdict: Verdict


@dataclass
class Op:
    """One operation of one tool, run once per round."""

    key: str
    tool: str
    what: str
    argv: list[str] | Callable[[int], list[str]]  # the command (of round i)
    env: dict[str, str]
    cwd: Path
    payload: Callable[[int], bytes]
    judge: Callable[[Run], Verdict]
    prepare: Callable[[int], None] | None = None
    worker_cpu: Callable[[], float] | None = None
    after: Callable[[Verdict], Verdict] | None = None  # a check of the state the run left
    samples: list[Sample] = field(default_factory=list)

    def once(self, i: int) -> None:
        if self.prepare is not None:
            self.prepare(i)
        stdin = self.payload(i)
        before = self.worker_cpu() if self.worker_cpu else 0.0
        argv = self.argv(i) if callable(self.argv) else self.argv
        run = run_measured(argv, self.cwd, self.env, stdin)
        daemon = self.worker_cpu() - before if self.worker_cpu else 0.0
        verdict = self.judge(run)
        if self.after is not None and verdict.valid:
            verdict = self.after(verdict)
        self.samples.append(Sample(run.wall, run.cpu + daemon, run.rss_mb, verdict))

    def p(self, pct: float) -> float:
        return percentile([s.wall for s in self.samples], pct)

    def cpu50(self) -> float:
        return median([s.cpu for s in self.samples])

    def valid_runs(self) -> int:
        return sum(s.verdict.valid for s in self.samples)


def rounds(ops: list[Op], n: int, say: Callable[[str], None], loads: list[float]) -> None:
    """n rounds; each runs every op once, the order rotated by one every round."""
    for i in range(n):
        turn = i % len(ops)
        for op in ops[turn:] + ops[:turn]:
            op.once(i)
        loads.append(load_average())
        if (i + 1) % 10 == 0 or i + 1 == n:
            say(f"peers: round {i + 1} of {n} (load {loads[-1]:.1f})")


# -- what an output is to the agent ---------------------------------------------------------------


def hook_verdict(event: str, run: Run) -> Verdict:
    """A Claude Code command hook's output: empty, or one JSON object (hookSpecificOutput for
    this event); for SessionStart and UserPromptSubmit plain text is context too."""
    text = run.out.decode("utf-8", "replace")
    if run.code != 0:
        return Verdict(False, 0, why=f"exit {run.code}")
    if not text.strip():
        return Verdict(True, 0)
    try:
        data = json.loads(text)
    except ValueError:
        plain = event in ("SessionStart", "UserPromptSubmit")
        return _bounded(Verdict(True, len(text) if plain else 0, control="\x1b" in text))
    if not isinstance(data, dict):
        return Verdict(False, 0, why="output is JSON but not an object")
    specific = data.get("hookSpecificOutput") or {}
    if not isinstance(specific, dict) or specific.get("hookEventName", event) != event:
        return Verdict(False, 0, why=f"hookSpecificOutput is not for {event}")
    context = specific.get("additionalContext") or ""
    if event == "Stop" and data.get("decision") == "block":
        context = str(data.get("reason") or "")
    message = str(data.get("systemMessage") or "")
    if not isinstance(context, str):
        return Verdict(False, 0, why="additionalContext is not a string")
    control = "\x1b" in context or "\x1b" in message
    return _bounded(Verdict(True, len(context), len(message), control))


def _bounded(verdict: Verdict) -> Verdict:
    if verdict.injected > CLAUDE_CODE_LIMIT:
        return Verdict(
            False,
            verdict.injected,
            verdict.shown,
            verdict.control,
            f"{verdict.injected:,} characters: over Claude Code's {CLAUDE_CODE_LIMIT:,}",
        )
    return verdict


def cli_verdict(budget: int, run: Run, must: bytes = b"") -> Verdict:
    """A recall CLI's output, read by the agent that ran it: exit 0 and something (carrying
    `must` when given). What it prints past its own budget is counted, not refused: the agent
    reads it all."""
    text = run.out.decode("utf-8", "replace")
    if run.code != 0:
        return Verdict(False, 0, why=f"exit {run.code}")
    if not text.strip():
        return Verdict(False, 0, why="printed nothing")
    if must and must not in run.out:
        return Verdict(False, len(text), why="not the recall block")
    return Verdict(True, len(text), control="\x1b" in text, over=max(0, len(text) - budget))


def floor_verdict(run: Run) -> Verdict:
    return Verdict(run.code == 0, 0, why="" if run.code == 0 else f"exit {run.code}")


# -- Claude Code's hook input ---------------------------------------------------------------------


def claude_input(event: str, sid: str, repo: Path, transcript: Path, **extra: Any) -> bytes:
    payload: dict[str, Any] = {
        "session_id": sid,
        "transcript_path": str(transcript),
        "cwd": str(repo),
        "permission_mode": "default",
        "hook_event_name": event,
        **extra,
    }
    return json.dumps(payload).encode()


def read_input(sid: str, repo: Path, transcript: Path, path: str) -> bytes:
    """PostToolUse for a Read of `path`, with the file's text as the tool returned it."""
    full = repo / path
    lines = full.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    return claude_input(
        "PostToolUse",
        sid,
        repo,
        transcript,
        tool_name="Read",
        tool_input={"file_path": str(full)},
        tool_response={
            "type": "text",
            "file": {
                "filePath": str(full),
                "content": "".join(lines[:READ_LINES]),
                "numLines": min(len(lines), READ_LINES),
                "startLine": 1,
                "totalLines": len(lines),
            },
        },
        tool_use_id=f"toolu_{uuid.uuid4().hex[:24]}",
    )


def claude_commands(repo: Path) -> dict[str, list[str]]:
    """gitvault's Claude Code hook commands by native event (and matcher), as `gitvault
    install` wrote them into .claude/settings.json, run by sh."""
    from gitvault.agents.adapters import get
    from gitvault.vault.launcher import ENTRY

    adapter = get("claude")
    settings = json.loads((repo / adapter.settings_file).read_text(encoding="utf-8"))
    found: dict[str, list[str]] = {}
    for event, groups in settings["hooks"].items():
        for group in groups:
            for hook in group.get("hooks", []):
                if ENTRY in str(hook.get("command", "")):
                    name = f"{event}:{group['matcher']}" if group.get("matcher") else event
                    found[name] = ["sh", "-c", hook["command"]]
    return found


def gitvault_cli() -> list[str]:
    """`gitvault` as an agent runs it: the console script beside this interpreter."""
    script = Path(sys.executable).parent / "gitvault"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "gitvault"]


# -- the repository -------------------------------------------------------------------------------


def _gitvault(args: list[str], repo: Path) -> Run:
    run = run_measured([sys.executable, "-m", "gitvault", *args], repo, gitvault_env())
    if run.code != 0:
        raise RuntimeError(f"gitvault {' '.join(args)} failed: {run.err.decode()[-600:]}")
    return run


def build_repository(ctx: Context) -> tuple[Path, dict[str, float]]:
    """The click history cloned, gitvault installed for Claude Code, backfilled and folded."""
    from bench.real.run import histories_dir  # the one place that finds shared/histories

    where = histories_dir()
    bundle = where / f"{HISTORY}.bundle" if where else None
    if bundle is None or not bundle.is_file():
        raise RuntimeError(f"no {HISTORY}.bundle: set GITVAULT_BENCH_HISTORIES (bench/real)")
    repo = ctx.box.repo_dir(HISTORY)
    repo.parent.mkdir(parents=True, exist_ok=True)
    git(["clone", "--quiet", str(bundle), str(repo)], repo.parent)
    costs = {}
    for name, args in (
        ("install", ["install", "--agent", "claude"]),
        ("backfill", ["backfill", "--all"]),
        ("fold", ["fold", "--merger", "builtin"]),
    ):
        run = _gitvault(args, repo)
        costs[f"{name}_cpu_s"] = run.cpu
        ctx.say(f"peers: gitvault {' '.join(args)}: {run.wall:.1f} s")
    wait_no_drainers(ctx.box.root)
    return repo, costs


# -- the measure ----------------------------------------------------------------------------------


def bench_peers(ctx: Context) -> Measured:
    sys.path.insert(0, str(REPO_ROOT))  # bench.real, for histories_dir
    from peers import agentlore, claudemem, install, memory

    from gitvault.agents import quiet
    from gitvault.memory.fences import RECALL_BEGIN
    from gitvault.resolve import resolve
    from gitvault.vault import layout, statedir
    from gitvault.vault.store import Vault

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHONPROFILE")}
    peers = install.ensure(CACHE, env, ctx.say)
    versions = peers.versions()
    repo, setup = build_repository(ctx)
    history = memory.commits(repo, env)
    digest = Vault(resolve(repo)).read_text(layout.DIGEST) or ""
    typed, untyped = memory.typed_memories(digest, repo)
    n_typed = agentlore.give(peers, repo, env, typed)
    tasks = [c.subject for c in history if len(c.files) > 0][:50]
    transcript = make_transcript(ctx.box.root / "peers-transcript.jsonl", 100_000, "bench")
    runs_n = ctx.sizes.peer_runs
    loads: list[float] = []

    cm = claudemem.ClaudeMem(peers, ctx.box.home, env)
    hook_env = {**cm.env, "CLAUDE_PROJECT_DIR": str(repo)}  # one environment for every tool
    ours = claude_commands(repo)
    quiet_dir = state_dir(repo) / statedir.QUIET

    def op(
        key: str,
        tool: str,
        what: str,
        argv: list[str] | Callable[[int], list[str]],
        payload: Callable[[int], bytes],
        judge: Callable[[Run], Verdict],
        **more: Any,
    ) -> Op:
        return Op(key, tool, what, argv, hook_env, repo, payload, judge, **more)

    def new_sid(_: int = 0) -> str:
        return str(uuid.uuid4())

    def start_input(_: int) -> bytes:
        return claude_input("SessionStart", new_sid(), repo, transcript, source="startup")

    def gv_started(sid: str) -> None:
        """A gitvault session started as Claude Code starts it (untimed)."""
        stdin = claude_input("SessionStart", sid, repo, transcript, source="startup")
        run_measured(ours["SessionStart:startup|resume|clear|compact"], repo, hook_env, stdin)

    stray: list[int] = []
    cm_version = f"claude-mem {versions['claude-mem']}"
    al_version = f"agentlore {versions['agentlore']}"
    try:
        worker_start = cm.start()
        ctx.say(f"peers: claude-mem worker up in {worker_start:.1f} s on port {cm.port}")
        imported = cm.post("/api/import", memory.claude_mem_import(history, repo.name))
        ctx.say(f"peers: claude-mem imported {imported.get('stats')}")
        waited = cm.settle()  # the worker works through the import in the background first
        ctx.say(f"peers: claude-mem's worker idle after {waited:.0f} s")

        # The turn ends measured: a session that started, made no commit, and had one turn
        # end checked in Python (it leaves the quiet stamp the launcher's sh reads).
        stop_sid = new_sid()
        gv_started(stop_sid)
        stop_input = claude_input(
            "Stop",
            stop_sid,
            repo,
            transcript,
            stop_hook_active=False,
            last_assistant_message="Done.",
        )
        time.sleep(quiet.SETTLE_NS / 1e9 + 0.2)
        for _ in range(5):
            run_measured(ours["Stop"], repo, hook_env, stop_input)
            if (quiet_dir / stop_sid).is_file():
                break
            time.sleep(quiet.SETTLE_NS / 1e9 + 0.2)
        beat = quiet_dir / (stop_sid + statedir.QUIET_BEAT_SUFFIX)
        beats: list[int] = []

        def stop_judge(run: Run) -> Verdict:
            size = beat.stat().st_size if beat.exists() else 0
            beats.append(size)
            verdict = hook_verdict("Stop", run)
            if verdict.valid and run.out.strip():
                return Verdict(False, verdict.injected, why="Stop said something: work was due")
            return verdict

        # A Read of a file the session was already shown (the launcher answers), and the first
        # Read of it in a new session (Python builds the file's block).
        seen_sid = new_sid()
        gv_started(seen_sid)
        seen_input = read_input(seen_sid, repo, transcript, READ_FILE)
        first = run_measured(ours["PostToolUse:Read"], repo, hook_env, seen_input)
        first_sids: list[str] = []

        def fresh_session(_: int) -> None:
            first_sids.append(new_sid())
            gv_started(first_sids[-1])

        def same_worker(verdict: Verdict) -> Verdict:
            if cm.same_worker():
                return verdict
            return Verdict(False, verdict.injected, why="claude-mem's worker was replaced")

        cm_sid = new_sid()
        warm = [
            op(
                "cm_context",
                cm_version,
                "SessionStart `context` hook, worker warm",
                cm.command("SessionStart", claudemem.CONTEXT),
                start_input,
                served_context,
                worker_cpu=cm.cpu_seconds,
                after=same_worker,
            ),
            op(
                "cm_start",
                cm_version,
                "SessionStart `start` hook (runs beside `context`), worker warm",
                cm.command("SessionStart", claudemem.START),
                start_input,
                lambda r: hook_verdict("SessionStart", r),
                worker_cpu=cm.cpu_seconds,
                after=same_worker,
            ),
            op(
                "gv_start",
                "gitvault",
                "SessionStart hook (recall block)",
                ours["SessionStart:startup|resume|clear|compact"],
                start_input,
                lambda r: _needs(hook_verdict("SessionStart", r), recall_block(r.out), "recall"),
            ),
            op(
                "cm_prompt",
                cm_version,
                "UserPromptSubmit `session-init` hook (every prompt)",
                cm.command("UserPromptSubmit", claudemem.SESSION_INIT),
                lambda i: claude_input(
                    "UserPromptSubmit", cm_sid, repo, transcript, prompt=tasks[i % len(tasks)]
                ),
                lambda r: hook_verdict("UserPromptSubmit", r),
                worker_cpu=cm.cpu_seconds,
                after=same_worker,
            ),
            op(
                "cm_stop",
                cm_version,
                "Stop `summarize` hook (every turn end)",
                cm.command("Stop", claudemem.SUMMARIZE),
                lambda i: claude_input(
                    "Stop",
                    cm_sid,
                    repo,
                    transcript,
                    stop_hook_active=False,
                    last_assistant_message="Done.",
                ),
                lambda r: hook_verdict("Stop", r),
                worker_cpu=cm.cpu_seconds,
                after=same_worker,
            ),
            op(
                "gv_stop",
                "gitvault",
                "Stop hook, nothing due (every turn)",
                ours["Stop"],
                lambda i: stop_input,
                stop_judge,
            ),
            op(
                "cm_observation",
                cm_version,
                "PostToolUse `observation` hook, a Read (every tool call)",
                cm.command("PostToolUse", claudemem.OBSERVATION),
                lambda i: read_input(cm_sid, repo, transcript, READ_FILE),
                lambda r: hook_verdict("PostToolUse", r),
                worker_cpu=cm.cpu_seconds,
                after=same_worker,
            ),
            op(
                "cm_file_context",
                cm_version,
                "PreToolUse `file-context` hook, before a Read (every Read)",
                cm.command("PreToolUse", claudemem.FILE_CONTEXT),
                lambda i: claude_input(
                    "PreToolUse",
                    cm_sid,
                    repo,
                    transcript,
                    tool_name="Read",
                    tool_input={"file_path": str(repo / READ_FILE)},
                    tool_use_id=f"toolu_{uuid.uuid4().hex[:24]}",
                ),
                lambda r: hook_verdict("PreToolUse", r),
                worker_cpu=cm.cpu_seconds,
                after=same_worker,
            ),
            op(
                "gv_read_seen",
                "gitvault",
                "PostToolUse Read hook, file already shown (every Read after the first)",
                ours["PostToolUse:Read"],
                lambda i: seen_input,
                lambda r: _needs(hook_verdict("PostToolUse", r), not r.out.strip(), "silence"),
            ),
            op(
                "gv_read_first",
                "gitvault",
                "PostToolUse Read hook, first Read of the file (its block injected)",
                ours["PostToolUse:Read"],
                lambda i: read_input(first_sids[-1], repo, transcript, READ_FILE),
                lambda r: _needs(v := hook_verdict("PostToolUse", r), v.injected > 0, "block"),
                prepare=fresh_session,
            ),
            op(
                "al_recall",
                al_version,
                f"`agentlore recall TASK --budget {agentlore.BUDGET:,}`",
                lambda i: agentlore.recall(peers, tasks[i % len(tasks)]),
                lambda i: b"",
                lambda r: cli_verdict(agentlore.BUDGET, r),
            ),
            op(
                "gv_recall",
                "gitvault",
                "`gitvault recall`",
                [*gitvault_cli(), "recall"],
                lambda i: b"",
                lambda r: cli_verdict(layout.RECALL_MAX_CHARS, r, RECALL_BEGIN.encode()),
            ),
            op("node", "floor", '`node -e ""`', ["node", "-e", ""], lambda i: b"", floor_verdict),
            op(
                "bun",
                "floor",
                '`bun -e ""`',
                [str(peers.bin_dir / "bun"), "-e", ""],
                lambda i: b"",
                floor_verdict,
            ),
            op(
                "python",
                "floor",
                f"`{Path(sys.executable).name} -c pass`",
                [sys.executable, "-c", "pass"],
                lambda i: b"",
                floor_verdict,
            ),
            op("sh", "floor", "`sh -c :`", ["sh", "-c", ":"], lambda i: b"", floor_verdict),
        ]
        ctx.say(f"peers: {runs_n} rounds of {len(warm)} operations, claude-mem's worker warm")
        rounds(warm, runs_n, ctx.say, loads)

        stray.extend(cm.stop())

        def worker_down(_: int) -> None:
            stray.extend(cm.stop())

        def spawned_cpu() -> float:
            """The CPU of the worker the hook spawned (0 before: it was down)."""
            health = cm.health()
            cm.worker_pid = int(health["pid"]) if health else None
            return cm.cpu_seconds()

        down = [
            op(
                "cm_context_down",
                cm_version,
                "SessionStart `context` hook, worker down (the hook starts it)",
                cm.command("SessionStart", claudemem.CONTEXT),
                start_input,
                served_context,
                prepare=worker_down,
                worker_cpu=spawned_cpu,
            ),
            op(
                "gv_start_down",
                "gitvault",
                "SessionStart hook (recall block), beside claude-mem's worker-down runs",
                ours["SessionStart:startup|resume|clear|compact"],
                start_input,
                lambda r: _needs(hook_verdict("SessionStart", r), recall_block(r.out), "recall"),
            ),
        ]
        ctx.say(f"peers: {runs_n} rounds with claude-mem's worker down")
        rounds(down, runs_n, ctx.say, loads)
    finally:
        stray.extend(cm.stop())
    ops = {o.key: o for o in warm + down}
    answered = sum(1 for a, b in zip(beats, beats[1:], strict=False) if b == a + 1)
    facts = {
        "versions": versions,
        "worker_start_s": worker_start,
        "claude_mem_import": imported.get("stats"),
        "history_commits": len(history),
        "agentlore_memories": n_typed,
        "digest_lines_without_agentlore_type": untyped,
        "setup": setup,
        "first_read_injected": len(first.out),
        "stop_answered_by_launcher": answered,
        "processes_ended_by_the_bench": sorted(set(stray)),
        "worker_settle_s": waited,
        "load_per_round": loads,
        "async_in_claude_code": {
            "observation": cm.is_async("PostToolUse", claudemem.OBSERVATION),
            "session_init": cm.is_async("UserPromptSubmit", claudemem.SESSION_INIT),
            "context": cm.is_async("SessionStart", claudemem.CONTEXT),
            "summarize": cm.is_async("Stop", claudemem.SUMMARIZE),
            "file_context": cm.is_async("PreToolUse", claudemem.FILE_CONTEXT),
        },
    }
    return Measured(rows(ops, facts, runs_n), table(ops, facts))


def served_context(run: Run) -> Verdict:
    """claude-mem's context hook: valid output that carries context (the memory it holds)."""
    verdict = hook_verdict("SessionStart", run)
    return _needs(verdict, verdict.injected > 0, "context")


def _needs(verdict: Verdict, holds: bool, what: str) -> Verdict:
    if not verdict.valid or holds:
        return verdict
    return Verdict(False, verdict.injected, verdict.shown, verdict.control, f"no {what}")


# -- rows and the table ---------------------------------------------------------------------------

# (key, metric, peer op, gitvault op, target)
RATIOS = (
    (
        "session_start_x",
        "SessionStart: claude-mem `context` (worker warm) ÷ gitvault",
        "cm_context",
        "gv_start",
        "session_start",
    ),
    (
        "session_start_down_x",
        "SessionStart: claude-mem `context` (worker down) ÷ gitvault",
        "cm_context_down",
        "gv_start_down",
        None,
    ),
    (
        "per_prompt_x",
        "Per turn: claude-mem `session-init` (UserPromptSubmit) ÷ gitvault Stop",
        "cm_prompt",
        "gv_stop",
        "per_turn",
    ),
    (
        "per_tool_x",
        "Per tool call: claude-mem `observation` ÷ gitvault Read hook (file already shown)",
        "cm_observation",
        "gv_read_seen",
        "per_turn",
    ),
    (
        "turn_end_x",
        "Turn end: claude-mem `summarize` (Stop) ÷ gitvault Stop",
        "cm_stop",
        "gv_stop",
        None,
    ),
    (
        "per_read_x",
        "Per Read: claude-mem `file-context` (PreToolUse) ÷ gitvault Read hook (file already "
        "shown)",
        "cm_file_context",
        "gv_read_seen",
        None,
    ),
    (
        "per_tool_first_x",
        "Per tool call: claude-mem `observation` ÷ gitvault Read hook (first Read, block injected)",
        "cm_observation",
        "gv_read_first",
        None,
    ),
    (
        "recall_x",
        "Recall CLI: agentlore `recall` ÷ `gitvault recall`",
        "al_recall",
        "gv_recall",
        None,
    ),
)


def rows(ops: dict[str, Op], facts: dict[str, Any], n: int) -> list[Row]:
    out = []
    for key, metric, peer, ours, target in RATIOS:
        a, b = ops[peer], ops[ours]
        ratio = a.p(50) / b.p(50)
        valid = a.valid_runs() == n and b.valid_runs() == n
        bad = [f"{o.key} {o.valid_runs()}/{n} valid" for o in (a, b) if o.valid_runs() != n]
        out.append(
            Row(
                key,
                metric,
                ratio,
                "×",
                target=target,
                shown=f"{ratio:.1f}× (p50 {a.p(50) * 1000:.0f} vs {b.p(50) * 1000:.1f} ms; "
                f"p95 {a.p(95) * 1000:.0f} vs {b.p(95) * 1000:.1f} ms; CPU p50 "
                f"{a.cpu50() * 1000:.0f} vs {b.cpu50() * 1000:.1f} ms)",
                valid=valid,
                note="; ".join(bad),
                how=f"{a.tool}: {a.what}; {b.tool}: {b.what}. Ratio of the p50 wall times over "
                f"{n} interleaved runs each (the table below has every operation's figures).",
                details={
                    "peer_s": [s.wall for s in a.samples],
                    "ours_s": [s.wall for s in b.samples],
                },
            )
        )
    out.append(
        Row(
            "setup",
            "claude-mem worker start; memory given to each tool",
            facts["worker_start_s"],
            "s",
            shown=f"worker up in {facts['worker_start_s']:.1f} s; {facts['history_commits']:,} "
            f"commits → claude-mem {_counts(facts['claude_mem_import'])}; agentlore "
            f"{facts['agentlore_memories']} typed memories",
            valid=not facts["processes_ended_by_the_bench"],
            note=(
                f"claude-mem left processes its own stop did not end: "
                f"{facts['processes_ended_by_the_bench']}"
                if facts["processes_ended_by_the_bench"]
                else ""
            ),
            how="The worker started by claude-mem's SessionStart `start` hook command until its "
            "/api/health says initialized; stopped by its own `stop` at the end, then no process "
            "running the installed package was left (checked in /proc). Every operation's "
            "samples (wall, CPU, RSS, characters) are in this row's details.",
            details={
                **facts,
                "operations": {
                    o.key: {
                        "tool": o.tool,
                        "what": o.what,
                        "wall_s": [s.wall for s in o.samples],
                        "cpu_s": [s.cpu for s in o.samples],
                        "rss_mb": [s.rss_mb for s in o.samples],
                        "injected": [s.verdict.injected for s in o.samples],
                        "shown": [s.verdict.shown for s in o.samples],
                        "control": sum(s.verdict.control for s in o.samples),
                        "over_budget": [s.verdict.over for s in o.samples],
                        "invalid": _why(o),
                    }
                    for o in ops.values()
                },
            },
        )
    )
    return out


def _counts(stats: Any) -> str:
    """claude-mem's import answer, as a person reads it."""
    if not isinstance(stats, dict):
        return "nothing imported"
    kinds = ("observations", "sessions", "summaries", "prompts")
    return ", ".join(f"{int(stats.get(f'{k}Imported', 0)):,} {k}" for k in kinds)


def _why(o: Op) -> str:
    reasons = sorted({s.verdict.why for s in o.samples if not s.verdict.valid})
    return "; ".join(reasons)


def table(ops: dict[str, Op], facts: dict[str, Any]) -> str:
    lines = [
        "### Every operation",
        "",
        "| tool | operation | p50 | p95 | CPU p50 | peak RSS | injected (chars) | shown to "
        "the user | valid |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for o in ops.values():
        injected = [s.verdict.injected for s in o.samples]
        shown = [s.verdict.shown for s in o.samples]
        control = " (ESC codes)" if any(s.verdict.control for s in o.samples) else ""
        lines.append(
            f"| {o.tool} | {o.what} | {o.p(50) * 1000:.1f} ms | {o.p(95) * 1000:.1f} ms | "
            f"{o.cpu50() * 1000:.1f} ms | {median([s.rss_mb for s in o.samples]):.0f} MB | "
            f"{_span(injected)} | {_span(shown)}{control} | {o.valid_runs()}/{len(o.samples)}"
            f"{_over(o)} |"
        )
    asyncs = facts["async_in_claude_code"]
    unwaited = sorted(name for name, is_async in asyncs.items() if is_async)
    lines += [
        "",
        "CPU is user + system of the process tree (wait4); for claude-mem it includes what its "
        "worker's process group spent during the run. Peak RSS is the largest process of the "
        "tree. claude-mem declares these hooks async (Claude Code starts them and does not wait "
        f"for them; they still run, and take the CPU above, every time): {', '.join(unwaited)}. "
        f"gitvault's Stop was answered by its launcher's sh (no Python) in "
        f"{facts['stop_answered_by_launcher']} of {len(ops['gv_stop'].samples) - 1} runs after "
        "the first. "
        "Offline, claude-mem's model never runs (what its hooks send stays queued) and its "
        "vector search is off (no uvx): the memory it serves here is what the import gave it. "
        f"Versions: {', '.join(f'{k} {v}' for k, v in facts['versions'].items())}.",
    ]
    return "\n".join(lines)


def _over(o: Op) -> str:
    over = [s.verdict.over for s in o.samples if s.verdict.over]
    if not over:
        return ""
    return f" ({len(over)} past its own budget, by up to {max(over):,} characters)"


def _span(values: list[int]) -> str:
    low, high = min(values), max(values)
    return f"{low:,}" if low == high else f"{low:,}–{high:,}"


MEASURES = (
    Measure(
        section="peers",
        title="Side by side with claude-mem and agentlore",
        run=bench_peers,
        targets={
            "session_start": Target(">=", 20, "×"),
            "per_turn": Target(">=", 30, "×"),
        },
        about="One repository (the click history, 3,329 commits) with gitvault installed for "
        "Claude Code, backfilled and folded (builtin merger); claude-mem 13.25.3's worker given "
        "one observation per commit and one session per day of commits through its own "
        "/api/import, agentlore 0.9.1 the digest's lines as typed memories. Whole processes as "
        "Claude Code starts them (the hook commands each tool's settings declare, Claude Code's "
        "input on stdin), interleaved round by round, with the floors (`node`, `bun`, `python`, "
        "`sh` doing nothing) in the same rounds; then claude-mem's `context` hook with its "
        "worker down (the hook starts the worker; it is stopped again before the next run). A "
        "ratio is how many times longer the peer took than gitvault (p50 wall). "
        "`just bench-peers`; not part of `just bench`.",
        summary=("session_start_x", "per_prompt_x", "per_tool_x"),
        order=200,
        optional=True,
    ),
)
