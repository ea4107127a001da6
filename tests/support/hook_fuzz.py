"""Untrusted hook input, generated: payloads shaped like Claude Code's hook input (and some
that are not JSON), special files named as transcript_path, and a driver that runs them
through every hook in this process and lists what failed. The fast tests in
tests/agents/test_claude_fuzz.py and the long run in tests/stress/ share it."""

from __future__ import annotations

import io
import json
import os
import random
import string
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

from gitvault.agents import runtime
from gitvault.agents.adapters.claude import ADAPTER as CLAUDE
from tests.support.claude_hooks import sample
from tests.support.repos import Repo

EVENTS = {
    "session-start": "SessionStart",
    "stop": "Stop",
    "pre-compact": "PreCompact",
    "session-end": "SessionEnd",
}
KEYS = [
    "session_id",
    "hook_event_name",
    "transcript_path",
    "cwd",
    "source",
    "stop_hook_active",
    "last_assistant_message",
    "custom_instructions",
    "trigger",
    "reason",
    "agent_id",
    "prompt_id",
]


def special_files(tmp_path: Path) -> dict[str, str]:
    """Files a transcript_path may name that are not transcripts."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sparse = tmp_path / "sparse.jsonl"
    with sparse.open("wb") as fh:
        fh.truncate(3 * 1024**3)  # 3 GB of holes: read only up to the cap
    line = tmp_path / "one-line.jsonl"
    line.write_bytes(b'{"type":"user","message":{"content":"' + b"x" * 5_000_000 + b'"}}')
    link = tmp_path / "link.jsonl"
    link.symlink_to("/dev/zero")
    return {
        "/dev/zero": "/dev/zero",
        "/dev/urandom": "/dev/urandom",
        "fifo": str(fifo),
        "directory": str(tmp_path),
        "sparse 3 GB": str(sparse),
        "5 MB line": str(line),
        "symlink to /dev/zero": str(link),
        "/dev/stdin": "/dev/stdin",
    }


def _value(rng: random.Random, repo: Repo, files: list[str]) -> Any:
    pick = rng.randrange(12)
    if pick == 0:
        return str(uuid.UUID(int=rng.getrandbits(128)))
    if pick == 1:
        return rng.choice(files)
    if pick == 2:
        return str(repo.path)
    if pick == 3:
        return "".join(rng.choice(string.printable) for _ in range(rng.randrange(40)))
    if pick == 4:
        return "".join(chr(rng.randrange(1, 0x2FFFF)) for _ in range(rng.randrange(30)))
    if pick == 5:
        return rng.choice([None, True, False, 0, -1, 2**70, 1.5, [], {}])
    if pick == 6:
        return "x" * rng.choice([0, 1, 127, 128, 129, 5000, 200_000])
    if pick == 7:
        return {"nested": [_value(rng, repo, files) for _ in range(2)]}
    if pick == 8:
        return rng.choice(["startup", "resume", "clear", "compact", "fork", "manual", "auto"])
    if pick == 9:
        return rng.choice(["$(touch pwned)", "`id`", "a;b", "../../etc/passwd", "-rf", "\n"])
    if pick == 10:
        return rng.choice(list(EVENTS.values()))
    return str(repo.path / rng.choice(["", "sub", ".git", "nope"]))


def payloads(
    event: str, n: int, seed: int, repo: Repo, files: list[str]
) -> Iterator[tuple[str, str]]:
    """(label, raw stdin) pairs: mostly JSON objects shaped like hook input, some not JSON."""
    rng = random.Random(seed)
    for index in range(n):
        kind = rng.randrange(10)
        if kind == 0:
            raw = rng.choice(["", "{", "null", "[]", '"x"', "1e999", "{" * 5000, "\x00\xff"])
            yield f"{index}: not an object", raw
            continue
        payload: dict[str, Any] = {}
        if kind > 2:  # mostly valid-looking
            payload = sample(
                {
                    "session-start": "SessionStart:startup",
                    "stop": "Stop:False",
                    "pre-compact": "PreCompact:manual",
                    "session-end": "SessionEnd:",
                }[event],
                repo=repo,
                session_id=str(uuid.UUID(int=rng.getrandbits(128))),
            )
        for _ in range(rng.randrange(6)):
            payload[rng.choice(KEYS)] = _value(rng, repo, files)
        if rng.random() < 0.5:
            payload["transcript_path"] = rng.choice(files)
        raw = json.dumps(payload, ensure_ascii=rng.random() < 0.5)
        yield f"{index}: {raw[:120]}", raw


def bound(event: str) -> float:
    """The time bound of the Claude Code hook called with this event word."""
    canonical = CLAUDE.event_for(event)
    assert canonical is not None, event
    return CLAUDE.time_bound(canonical)


def run_in_process(event: str, raw: str, repo: Repo) -> tuple[float, str]:
    old_stdin, old_env = sys.stdin, os.environ.get("CLAUDE_PROJECT_DIR")
    os.environ["CLAUDE_PROJECT_DIR"] = str(repo.path)
    sys.stdin = io.StringIO(raw)
    out = io.StringIO()
    started = time.monotonic()
    try:
        with redirect_stdout(out):
            code = runtime.main(["claude", event])
    finally:
        sys.stdin = old_stdin
        if old_env is None:
            os.environ.pop("CLAUDE_PROJECT_DIR", None)
        else:
            os.environ["CLAUDE_PROJECT_DIR"] = old_env
    assert code == 0
    return time.monotonic() - started, out.getvalue()


def fuzz(repo: Repo, special: dict[str, str], per_hook: int, seed: int) -> list[str]:
    """Run per_hook generated inputs through every hook in this process; what failed."""
    files = [*special.values(), "/nonexistent", str(repo.path / "missing.jsonl")]
    # A session with unsaved work, so the paths that read transcripts run.
    failures: list[str] = []
    tried = 0
    for event in EVENTS:
        for label, raw in payloads(event, per_hook, seed, repo, files):
            tried += 1
            try:
                elapsed, out = run_in_process(event, raw, repo)
            except BaseException as exc:  # noqa: BLE001 - report every failure
                failures.append(f"{event} {label}: raised {type(exc).__name__}: {exc}")
                continue
            if elapsed > bound(event):
                failures.append(f"{event} {label}: took {elapsed:.1f}s")
            if out:
                try:
                    answer = json.loads(out)
                except ValueError:
                    failures.append(f"{event} {label}: printed non-JSON {out[:80]!r}")
                    continue
                if event == "stop" and answer.get("decision") != "block":
                    failures.append(f"{event} {label}: odd answer {out[:80]!r}")
    assert not (repo.path / "pwned").exists(), "a value from hook input ran as a command"
    print(f"[fuzz] tried {tried} inputs ({per_hook} per hook), {len(failures)} failed")
    for failure in failures:
        print("FAILED:", failure)
    return failures
