"""The Claude Code hooks as a user waits for them (issue 9 item 7): whole processes
(`python -m gitvault.hook claude <event>`, interpreter start-up included), realistic payloads,
100 KB and 5 MB transcripts, the large (100k-note) vault."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

from harness import git, git_out, median, percentile

from measures.common import Context, Row, ms
from measures.notecost import vault_repos

HOOK = ["-m", "gitvault.hook", "claude"]


def _transcript(path: Path, size: int, sid: str) -> Path:
    """A transcript shaped like Claude Code's: prompts, assistant text, Bash tool uses and
    their results, until `size` bytes."""
    rng = random.Random(size)
    lines = []
    total = 0
    n = 0
    while total < size:
        n += 1
        stamp = f"2026-11-30T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
        base = {"sessionId": sid, "uuid": str(uuid.UUID(int=rng.getrandbits(128)))}
        if n % 4 == 1:
            entry = {
                **base,
                "type": "user",
                "timestamp": stamp,
                "message": {"role": "user", "content": f"please do step {n} of the refactor"},
            }
        elif n % 4 == 2:
            entry = {
                **base,
                "type": "assistant",
                "timestamp": stamp,
                "message": {
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [
                        {"type": "text", "text": "Working on it. " * 20},
                        {
                            "type": "tool_use",
                            "id": f"toolu_{n}",
                            "name": "Bash",
                            "input": {"command": f"pytest -q tests/test_{n}.py"},
                        },
                    ],
                },
            }
        else:
            out = "\n".join(f"tests/test_{n}.py::case_{i} PASSED" for i in range(30))
            entry = {
                **base,
                "type": "user",
                "timestamp": stamp,
                "toolUseResult": {"stdout": out, "stderr": ""},
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": out}
                    ],
                },
            }
        line = json.dumps(entry)
        lines.append(line)
        total += len(line) + 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(repo: Path, event: str, payload: dict[str, object]) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, *HOOK, event],
        cwd=repo,
        input=json.dumps(payload).encode(),
        capture_output=True,
        check=False,
        env={**_env(), "CLAUDE_PROJECT_DIR": str(repo)},
    )
    return time.perf_counter() - start, proc.stdout


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def _payload(event: str, sid: str, repo: Path, transcript: Path) -> dict[str, object]:
    name = {"session-start": "SessionStart", "stop": "Stop", "pre-compact": "PreCompact"}
    payload: dict[str, object] = {
        "session_id": sid,
        "transcript_path": str(transcript),
        "cwd": str(repo),
        "hook_event_name": name.get(event, "SessionEnd"),
    }
    if event == "session-start":
        payload["source"] = "startup"
    elif event == "stop":
        payload.update(stop_hook_active=False, last_assistant_message="Done.")
    elif event == "pre-compact":
        payload.update(trigger="manual", custom_instructions=None)
    else:
        payload["reason"] = "prompt_input_exit"
    return payload


def _set_vault(repo: Path, files: dict[str, bytes | None], message: str) -> None:
    from gitvault.resolve import resolve
    from gitvault.vault.store import Vault

    Vault(resolve(repo)).commit(files, message)


def bench_claude_hooks(ctx: Context) -> list[Row]:
    from gitvault.resolve import resolve
    from gitvault.vault.store import Vault
    from measures.recall import _memory_files

    runs_n = max(5, ctx.sizes.recall_runs)
    _, repo = vault_repos(ctx)
    n_notes = ctx.sizes.vault_large
    vault = Vault(resolve(repo))
    toml = vault.read_text("vault.toml") or ""
    # The detached fold SessionEnd starts would compete with the measurements: off.
    off = re.sub(r"fold_on_session_end\s*=\s*true", "fold_on_session_end = false", toml)
    _set_vault(repo, {"vault.toml": off.encode()}, "bench: no fold at session end")
    tip = vault.require_tip()
    if vault.read_text("_master.md") is None:
        shas = [
            p.rsplit("/", 1)[-1][:-3]
            for p in git_out(["ls-tree", "-r", "--name-only", tip, "notes/2024/01/"], repo).split()
        ]
        _set_vault(repo, _memory_files(tip, shas or ["0" * 40]), "bench: digest and sessions")
    scratch = ctx.box.root / "claude-hooks"
    scratch.mkdir(exist_ok=True)
    small = _transcript(scratch / "100k.jsonl", 100_000, "bench")
    large = _transcript(scratch / "5m.jsonl", 5_000_000, "bench")
    rows: list[Row] = []
    counter = [0]

    def commit() -> None:
        counter[0] += 1
        with open(repo / "bench-work.txt", "a", encoding="utf-8") as fh:
            fh.write(f"{counter[0]}\n")
        git(["add", "bench-work.txt"], repo)
        git(["commit", "-q", "-m", f"feat: bench change {counter[0]}"], repo)

    def started(transcript: Path) -> str:
        sid = str(uuid.uuid4())
        _run(repo, "session-start", _payload("session-start", sid, repo, transcript))
        return sid

    def row(metric: str, runs: list[float], target: float, how: str, ok: bool = True) -> Row:
        passed = ok and median(runs) <= target
        return Row(
            "claude_hooks",
            metric,
            ms(median(runs)),
            f"≤ {target * 1000:.0f} ms",
            passed,
            f"{how} Median of {len(runs)} runs, p90 {ms(percentile(runs, 90))}.",
            {"runs_s": runs},
        )

    ctx.say(f"claude_hooks: SessionStart at {n_notes:,} notes, with and without a digest")
    with_digest = [
        _run(repo, "session-start", _payload("session-start", str(uuid.uuid4()), repo, small))
        for _ in range(runs_n)
    ]
    ok = all(b"VAULT RECALL" in out for _, out in with_digest)
    digest = vault.read_text("_master.md")
    _set_vault(repo, {"_master.md": None}, "bench: no digest")
    without = [
        _run(repo, "session-start", _payload("session-start", str(uuid.uuid4()), repo, small))
        for _ in range(runs_n)
    ]
    ok_without = all(b"VAULT RECALL" in out for _, out in without)
    _set_vault(repo, {"_master.md": (digest or "").encode()}, "bench: digest back")
    start_how = (
        f"`python -m gitvault.hook claude session-start` (source startup, a new session each "
        f"run) in the {n_notes:,}-note vault"
    )
    rows.append(
        row(
            f"SessionStart at {n_notes:,} notes, with a digest",
            [t for t, _ in with_digest],
            0.100,
            start_how + " with a digest near its cap, two sessions and patterns.",
            ok,
        )
    )
    rows.append(
        row(
            f"SessionStart at {n_notes:,} notes, no digest yet",
            [t for t, _ in without],
            0.150,
            start_how + " after the digest was removed (recall says how much waits).",
            ok_without,
        )
    )

    for label, transcript in (("100 KB", small), ("5 MB", large)):
        ctx.say(f"claude_hooks: Stop, PreCompact, SessionEnd with a {label} transcript")
        sid = started(transcript)
        idle = [_run(repo, "stop", _payload("stop", sid, repo, transcript)) for _ in range(runs_n)]
        rows.append(
            row(
                f"Stop, nothing due ({label} transcript)",
                [t for t, _ in idle],
                0.060,
                "`gitvault-hook claude stop` for a started session that made no commit.",
                all(out == b"" for _, out in idle),
            )
        )
        asks, compacts, ends = [], [], []
        for _ in range(runs_n):
            sid = started(transcript)
            commit()
            asks.append(_run(repo, "stop", _payload("stop", sid, repo, transcript)))
            compacts.append(
                _run(repo, "pre-compact", _payload("pre-compact", sid, repo, transcript))
            )
            sid = started(transcript)
            commit()
            ends.append(_run(repo, "session-end", _payload("session-end", sid, repo, transcript)))
        rows.append(
            row(
                f"Stop, asks for a save ({label} transcript)",
                [t for t, _ in asks],
                0.150,
                "A new session commits once, then Stop: it names the commit and blocks.",
                all(b'"block"' in out for _, out in asks),
            )
        )
        for name, samples in (("PreCompact", compacts), ("SessionEnd", ends)):
            rows.append(
                row(
                    f"{name} with the mechanical record ({label} transcript)",
                    [t for t, _ in samples],
                    0.300,
                    f"A session with one unsaved commit; {name} writes its automatic record "
                    "(the transcript read for prompt facts, the session committed to the vault; "
                    "the SessionEnd fold is switched off for the measurement).",
                )
            )
    _set_vault(repo, {"vault.toml": toml.encode()}, "bench: vault.toml back")
    return rows
