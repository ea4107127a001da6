"""The Claude Code hooks as a user waits for them: whole processes (`python -m gitvault.hook
claude <event>`, interpreter start-up included), realistic payloads, 100 KB and 5 MB
transcripts, the large (100k-note) vault with a digest, sessions and patterns."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

from harness import git, median, percentile
from registry import Measure, Row, Target

from measures.common import Context, ms, note_shas
from measures.notecost import vault_repos

HOOK = ["-m", "gitvault.hook", "claude"]


def memory_files(tip: str, shas: list[str]) -> dict[str, bytes | None]:
    """A digest near its cap citing real notes, two sessions and a patterns file: what a vault
    in steady use holds besides its notes (plain text, as fold and save write them)."""
    from gitvault.vault import frontmatter, layout

    cats = [name for name, _ in layout.DIGEST_CATEGORIES]
    words = ("cache", "parser", "vault", "retry", "index", "hook", "schema", "drain", "batch")
    rng = random.Random(7)
    body = ["# Project memory", ""]
    for cat in cats:
        body.append(f"## {cat}")
        for i in range(9):
            fact = " ".join(rng.choice(words) for _ in range(9))
            body.append(f"- {cat} fact {i}: {fact} (c:{rng.choice(shas)[:7]})")
        body.append("")
    digest = frontmatter.render(
        {
            "kind": "digest",
            "watermark": tip,
            "folded_at": "2025-10-09T12:00:00Z",
            "merger": "builtin",
            "model": None,
            "items": {c: 9 for c in cats},
        },
        "\n".join(body),
    )
    files: dict[str, bytes | None] = {layout.DIGEST: digest.encode()}
    for n, (slug, saved) in enumerate(
        (
            ("bench-first", "2025-10-08T10:00:00+00:00"),
            ("bench-second", "2025-10-09T11:00:00+00:00"),
        )
    ):
        meta = {
            "kind": "session",
            "title": f"bench session {n}",
            "saved_at": saved,
            "mode": "manual",
        }
        text = "\n\n".join(
            f"## {sec}\n" + "\n".join(f"- {sec} point {i} of session {n}" for i in range(12))
            for sec in ("Summary", "Key Decisions", "Next Steps")
        )
        name = layout.session_path(f"{saved[:10]}-{saved[11:13]}{saved[14:16]}-{slug}")
        files[name] = frontmatter.render(meta, text + "\n").encode()
    rules = "".join(f"- standing rule {i}\n" for i in range(12))
    files[f"{layout.PATTERNS}/testing.md"] = rules.encode()
    return files


def make_transcript(path: Path, size: int, sid: str) -> Path:
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


def _record_landed(repo: Path, sid: str, timeout: float = 120.0) -> bool:
    """Wait (untimed) for the drainer to write the session's spooled record; whether it is in
    the vault then."""
    from gitvault.agents import records
    from gitvault.resolve import resolve
    from gitvault.vault import layout
    from gitvault.vault.store import Vault

    loc = resolve(repo)
    deadline = time.monotonic() + timeout
    while records.pending(loc) and time.monotonic() < deadline:
        time.sleep(0.05)
    vault = Vault(loc)
    names = sorted(name for name, _ in vault.listdir(layout.SESSIONS))[-20:]
    return any(sid in (vault.read_text(f"{layout.SESSIONS}/{name}") or "") for name in names)


def _set_vault(repo: Path, files: dict[str, bytes | None], message: str) -> None:
    from gitvault.resolve import resolve
    from gitvault.vault.store import Vault

    Vault(resolve(repo)).commit(files, message)


def recall_block(out: bytes) -> bool:
    """Whether a hook's output carries the recall block (it fails open: nothing injected)."""
    from gitvault.memory.fences import RECALL_BEGIN

    return RECALL_BEGIN.encode() in out


def steady_state(repo: Path) -> None:
    """Give repo's vault what a vault in use holds besides notes (digest, sessions, patterns),
    unless it has a digest already."""
    from gitvault.resolve import resolve
    from gitvault.vault import layout
    from gitvault.vault.store import Vault

    vault = Vault(resolve(repo))
    if vault.read_text(layout.DIGEST) is not None:
        return
    tip = vault.require_tip()
    shas = sorted(note_shas(repo, tip, "2024/01"))
    vault.commit(memory_files(tip, shas or ["0" * 40]), "bench: digest, sessions, patterns")


def bench_claude_hooks(ctx: Context) -> list[Row]:
    from gitvault.resolve import resolve
    from gitvault.vault import layout
    from gitvault.vault.store import Vault

    runs_n = max(5, ctx.sizes.recall_runs)
    _, repo = vault_repos(ctx)
    n_notes = ctx.sizes.vault_large
    vault = Vault(resolve(repo))
    toml = vault.read_text(layout.CONFIG) or ""
    # The detached fold SessionEnd starts would compete with the measurements: off.
    off = re.sub(r"fold_on_session_end\s*=\s*true", "fold_on_session_end = false", toml)
    if layout.read_settings(off, "capture")["fold_on_session_end"]:
        raise RuntimeError(f"could not switch fold_on_session_end off in {layout.CONFIG}")
    _set_vault(repo, {layout.CONFIG: off.encode()}, "bench: no fold at session end")
    steady_state(repo)
    scratch = ctx.box.root / "claude-hooks"
    scratch.mkdir(exist_ok=True)
    small = make_transcript(scratch / "100k.jsonl", 100_000, "bench")
    large = make_transcript(scratch / "5m.jsonl", 5_000_000, "bench")
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

    def row(
        key: str, metric: str, runs: list[float], target: str, how: str, ok: bool = True
    ) -> Row:
        return Row(
            key,
            metric,
            median(runs) * 1000,
            "ms",
            target=target,
            valid=ok,
            note="" if ok else "the hook's output was not what the event asks for",
            how=f"{how} Median of {len(runs)} runs, p90 {ms(percentile(runs, 90))}.",
            details={"runs_s": runs},
        )

    ctx.say(f"claude_hooks: SessionStart at {n_notes:,} notes, with and without a digest")
    with_digest = [
        _run(repo, "session-start", _payload("session-start", str(uuid.uuid4()), repo, small))
        for _ in range(runs_n)
    ]
    ok = all(recall_block(out) for _, out in with_digest)
    digest = vault.read_text(layout.DIGEST)
    _set_vault(repo, {layout.DIGEST: None}, "bench: no digest")
    without = [
        _run(repo, "session-start", _payload("session-start", str(uuid.uuid4()), repo, small))
        for _ in range(runs_n)
    ]
    ok_without = all(recall_block(out) for _, out in without)
    _set_vault(repo, {layout.DIGEST: (digest or "").encode()}, "bench: digest back")
    start_how = (
        f"`python -m gitvault.hook claude session-start` (source startup, a new session each "
        f"run) in the {n_notes:,}-note vault"
    )
    rows.append(
        row(
            "session_start",
            f"SessionStart at {n_notes:,} notes, with a digest",
            [t for t, _ in with_digest],
            "session_start",
            start_how + " with a digest near its cap, two sessions and patterns.",
            ok,
        )
    )
    rows.append(
        row(
            "session_start_no_digest",
            f"SessionStart at {n_notes:,} notes, no digest yet",
            [t for t, _ in without],
            "session_start_no_digest",
            start_how + " after the digest was removed (recall says how much waits).",
            ok_without,
        )
    )

    for label, transcript in (("100 KB", small), ("5 MB", large)):
        tag = label.replace(" ", "").lower()
        ctx.say(f"claude_hooks: Stop, PreCompact, SessionEnd with a {label} transcript")
        sid = started(transcript)
        idle = [_run(repo, "stop", _payload("stop", sid, repo, transcript)) for _ in range(runs_n)]
        rows.append(
            row(
                f"stop_idle_{tag}",
                f"Stop, nothing due ({label} transcript)",
                [t for t, _ in idle],
                "stop_idle",
                "`gitvault-hook claude stop` for a started session that made no commit.",
                all(out == b"" for _, out in idle),
            )
        )
        asks, compacts, ends = [], [], []
        recorded = 0
        for _ in range(runs_n):
            sid = started(transcript)
            commit()
            asks.append(_run(repo, "stop", _payload("stop", sid, repo, transcript)))
            compacts.append(
                _run(repo, "pre-compact", _payload("pre-compact", sid, repo, transcript))
            )
            recorded += _record_landed(repo, sid)
            sid = started(transcript)
            commit()
            ends.append(_run(repo, "session-end", _payload("session-end", sid, repo, transcript)))
            recorded += _record_landed(repo, sid)
        rows.append(
            row(
                f"stop_ask_{tag}",
                f"Stop, asks for a save ({label} transcript)",
                [t for t, _ in asks],
                "stop_ask",
                "A new session commits once, then Stop: it names the commit and blocks.",
                all(b'"block"' in out for _, out in asks),
            )
        )
        for name, samples in (("PreCompact", compacts), ("SessionEnd", ends)):
            rows.append(
                row(
                    f"{name.lower()}_{tag}",
                    f"{name} with the mechanical record ({label} transcript)",
                    [t for t, _ in samples],
                    "record",
                    f"A session with one unsaved commit; {name} spools its automatic record and "
                    "answers, the drainer it starts writes it (the transcript read for prompt "
                    "facts, the session committed to the vault); timed is the hook, as the agent "
                    "waits for it. Between runs (not timed) the bench waits for the record to "
                    "land; every record of the section landed. The SessionEnd fold is switched "
                    "off for the measurement.",
                    recorded == 2 * runs_n,
                )
            )
    _set_vault(repo, {layout.CONFIG: toml.encode()}, "bench: settings back")
    return rows


MEASURES = (
    Measure(
        section="claude_hooks",
        title="Claude Code hooks as a user waits for them",
        run=bench_claude_hooks,
        targets={
            "session_start": Target("<=", 100, "ms"),
            "session_start_no_digest": Target("<=", 150, "ms"),
            "stop_idle": Target("<=", 60, "ms"),
            "stop_ask": Target("<=", 150, "ms"),
            "record": Target("<=", 100, "ms"),  # PreCompact, SessionEnd
        },
        about="Whole processes, interpreter start-up included, as Claude Code runs them "
        "(gitvault installed as the machine line says), in the large generated vault with a "
        "digest near its cap, two sessions and a patterns file; SessionEnd's background fold "
        "is switched off so that it does not compete with the next runs.",
        summary=(
            "session_start",
            "session_start_no_digest",
            "stop_idle_5mb",
            "stop_ask_5mb",
            "precompact_5mb",
            "sessionend_5mb",
        ),
        order=50,
    ),
)
