"""A million notes: the hooks and commands an agent's session pays, at vault_large and at
vault_million generated notes (`--set vault_million=N`), side by side in one run, and a
Linux-size history (1.3 million commits) projected from the measured rates."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

from registry import Measure, Measured, Row
from repogen import count_notes, fake_notes

from measures.claude_hooks import recall_block, steady_state
from measures.commands import Run, gitvault, gitvault_env, large_repo, run_measured
from measures.common import Context
from measures.hook_imports import _payload

LINUX_COMMITS = 1_300_000
QUERY = "parser cache"


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _claude_command(event: str) -> str:
    from gitvault.agents.adapters import get

    adapter = get("claude")
    return adapter.command(next(h for h in adapter.hooks if h.event == event))


def _median_run(runs: list[Run]) -> tuple[float, float, float]:
    """(median wall s, median CPU s, largest peak RSS MB)."""
    return (
        statistics.median(r.wall for r in runs),
        statistics.median(r.cpu for r in runs),
        max(r.rss_mb for r in runs),
    )


def _one_size(ctx: Context, n: int) -> dict[str, object]:
    from gitvault.memory import search
    from gitvault.pathrecall.index import update_quietly
    from gitvault.resolve import resolve
    from gitvault.vault import statedir
    from gitvault.vault.store import Vault

    runs_n = max(3, ctx.sizes.recall_runs)
    commits = min(1_000, ctx.sizes.backfill_commits)
    start = time.perf_counter()
    repo = large_repo(ctx, f"million-{n}", n, commits)
    generated = time.perf_counter() - start
    steady_state(repo)
    loc = resolve(repo)
    update_quietly(loc)
    notes = count_notes(repo)
    pack_bytes = _dir_bytes(loc.common_dir / "objects")
    out: dict[str, object] = {"notes": notes, "generate_s": generated, "vault_bytes": pack_bytes}

    ctx.say(f"million: {notes:,} notes: search index build")
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    built = search.Index(loc).update()
    out["index_s"] = time.perf_counter() - t0
    out["index_cpu_s"] = time.process_time() - cpu0
    out["index_docs"] = built.added
    out["index_bytes"] = (loc.state_dir / statedir.SEARCH_INDEX).stat().st_size
    paths_db = loc.state_dir / statedir.PATH_INDEX
    out["path_index_bytes"] = paths_db.stat().st_size if paths_db.exists() else 0

    env = {**gitvault_env(), "CLAUDE_PROJECT_DIR": str(repo)}
    (repo / "unknown.txt").write_text("no history\n")
    hooks = {
        "session_start": ("session-start", _claude_command("session-start")),
        "stop": ("turn-end", _claude_command("turn-end")),
        "edit_time": ("file-read", _claude_command("file-read")),
    }
    sid = str(uuid.uuid4())
    measured: dict[str, tuple[float, float, float]] = {}
    recalled = 0
    for key, (event, command) in hooks.items():
        ctx.say(f"million: {notes:,} notes: claude {event}, {runs_n} runs")
        got: list[Run] = []
        for i in range(runs_n):
            this = str(uuid.uuid4()) if key == "session_start" else sid
            if key == "edit_time":
                stdin = json.dumps(
                    {
                        "session_id": this,
                        "transcript_path": str(repo / "none.jsonl"),
                        "cwd": str(repo),
                        "hook_event_name": "PostToolUse",
                        "tool_name": "Read",
                        "tool_input": {"file_path": str(repo / "unknown.txt")},
                    }
                ).encode()
            else:
                stdin = _payload("claude", event, this, repo)
            run = run_measured(["sh", "-c", command], repo, env, stdin)
            got.append(run)
            if key == "session_start":
                recalled += recall_block(run.out)
            if key == "session_start" and i == 0:
                # The session the turn ends below belong to.
                run_measured(["sh", "-c", command], repo, env, _payload("claude", event, sid, repo))
        measured[key] = _median_run(got)
    out["recalled"] = recalled
    out["runs"] = runs_n
    ctx.say(f"million: {notes:,} notes: search and status --line, {runs_n} runs")
    measured["search"] = _median_run([gitvault(["search", QUERY], repo) for _ in range(runs_n)])
    measured["status_line"] = _median_run(
        [gitvault(["status", "--line"], repo) for _ in range(runs_n)]
    )
    python = [run_measured([sys.executable, "-c", "pass"], repo) for _ in range(runs_n)]
    measured["python"] = _median_run(python)

    writes = fake_notes(10, years=1, seed=n % 9973)
    vault = Vault(loc)
    took: list[float] = []
    for fake in writes:
        t0 = time.perf_counter()
        vault.commit({fake.path: fake.text}, fake.message)
        took.append(time.perf_counter() - t0)
    measured["note_write"] = (statistics.median(took), 0.0, 0.0)

    ctx.say(f"million: {notes:,} notes: `gitvault backfill` of {commits:,} commits")
    back = gitvault(["backfill"], repo)
    out["backfill"] = {"commits": commits, "wall_s": back.wall, "cpu_s": back.cpu}
    out["backfill_rss_mb"] = back.rss_mb
    out["measured"] = measured
    os.sync()
    return out


LABELS = {
    "session_start": "claude SessionStart (whole command)",
    "stop": "claude Stop, nothing due (whole command)",
    "edit_time": "claude edit-time Read, nothing known (whole command)",
    "search": "`gitvault search`, warm index",
    "status_line": "`gitvault status --line`",
    "note_write": "one note write (`Vault.commit`, in process)",
    "python": "`python -c pass` (the floor, same run)",
}


def bench_million(ctx: Context) -> Measured:
    small_n, big_n = ctx.sizes.vault_large, ctx.sizes.vault_million
    ctx.say(f"million: {small_n:,} and {big_n:,} generated notes")
    small, big = _one_size(ctx, small_n), _one_size(ctx, big_n)
    s_notes, b_notes = int(str(small["notes"])), int(str(big["notes"]))
    rows: list[Row] = []
    table = [
        f"| | {s_notes:,} notes | {b_notes:,} notes | growth |",
        "|---|---:|---:|---:|",
    ]
    sm: dict[str, tuple[float, float, float]] = small["measured"]  # type: ignore[assignment]
    bm: dict[str, tuple[float, float, float]] = big["measured"]  # type: ignore[assignment]
    for key, label in LABELS.items():
        (sw, sc, sr), (bw, bc, br) = sm[key], bm[key]
        growth = bw / sw if sw else 0.0
        cpu_s = f", CPU {sc * 1000:.1f} ms, {sr:.0f} MB" if sc else ""
        cpu_b = f", CPU {bc * 1000:.1f} ms, {br:.0f} MB" if bc else ""
        table.append(
            f"| {label} | {sw * 1000:.1f} ms{cpu_s} | {bw * 1000:.1f} ms{cpu_b} | {growth:.2f}× |"
        )
        for n, wall, cpu, rss in ((s_notes, sw, sc, sr), (b_notes, bw, bc, br)):
            rows.append(
                Row(
                    f"{key}_{n}",
                    f"{label}, {n:,} notes",
                    wall * 1000,
                    "ms",
                    shown=f"{wall * 1000:.1f} ms"
                    + (f" (CPU {cpu * 1000:.1f} ms, {rss:.0f} MB)" if cpu else ""),
                    how=f"Median of {small['runs']} runs; CPU is user + system of the process "
                    "and its children (wait4), which the machine's load changes little.",
                    details={"wall_s": wall, "cpu_s": cpu, "rss_mb": rss},
                )
            )
    sizes = []
    for what, key in (
        ("vault objects (packed)", "vault_bytes"),
        ("search index", "index_bytes"),
        ("path index", "path_index_bytes"),
    ):
        a, b = int(str(small[key])), int(str(big[key]))
        sizes.append(
            f"| {what} | {a / 1e6:,.1f} MB ({a / s_notes:,.0f} B/note) | "
            f"{b / 1e6:,.1f} MB ({b / b_notes:,.0f} B/note) | {b / max(a, 1):.2f}× |"
        )
    table += sizes
    for data in (small, big):
        idx_rate = int(str(data["index_docs"])) / max(float(str(data["index_s"])), 1e-9)
        data["index_rate"] = idx_rate
    table.append(
        f"| search index build | {float(str(small['index_s'])):.1f} s | "
        f"{float(str(big['index_s'])):.1f} s | "
        f"{float(str(big['index_s'])) / max(float(str(small['index_s'])), 1e-9):.2f}× |"
    )
    back: dict[str, float] = big["backfill"]  # type: ignore[assignment]
    rate = back["commits"] / max(back["wall_s"], 1e-9)
    cpu_rate = back["commits"] / max(back["cpu_s"], 1e-9)
    note_bytes = int(str(big["vault_bytes"])) / b_notes
    index_bytes = int(str(big["index_bytes"])) / b_notes
    index_rate = float(str(big["index_rate"]))
    projection = (
        f"**A Linux-size history ({LINUX_COMMITS:,} commits), projected** from this run's rates "
        f"at {b_notes:,} notes: `gitvault backfill` noted {back['commits']:,.0f} commits in "
        f"{back['wall_s']:.1f} s wall ({back['cpu_s']:.1f} s CPU): {rate:,.0f} commits/s, so "
        f"{LINUX_COMMITS / rate / 3600:.1f} h wall ({LINUX_COMMITS / cpu_rate / 3600:.1f} h of "
        f"CPU); the vault at {note_bytes:,.0f} B/note packed: "
        f"{LINUX_COMMITS * note_bytes / 1e9:.2f} GB; the search index at {index_bytes:,.0f} "
        f"B/note: {LINUX_COMMITS * index_bytes / 1e9:.2f} GB, built in "
        f"{LINUX_COMMITS / index_rate / 60:.0f} min ({index_rate:,.0f} notes/s). Generated "
        "notes are shorter than real ones for large commits (file lists are capped), so read "
        "the sizes as a lower bound."
    )
    rows.append(
        Row(
            "linux_backfill_hours",
            f"projected `gitvault backfill` of {LINUX_COMMITS:,} commits",
            LINUX_COMMITS / rate / 3600,
            "h",
            how=projection,
            details={"rate": rate, "cpu_rate": cpu_rate},
        )
    )
    rows.append(
        Row(
            "linux_vault_gb",
            f"projected vault size, {LINUX_COMMITS:,} notes",
            LINUX_COMMITS * note_bytes / 1e9,
            "GB",
            how="Packed bytes per note at the larger size, times the commits.",
        )
    )
    rows.append(
        Row(
            "linux_index_gb",
            f"projected search index size, {LINUX_COMMITS:,} notes",
            LINUX_COMMITS * index_bytes / 1e9,
            "GB",
            how="Index bytes per note at the larger size, times the commits.",
        )
    )
    ok = int(str(small["recalled"])) == int(str(small["runs"])) and int(
        str(big["recalled"])
    ) == int(str(big["runs"]))
    if not ok:
        for row in rows:
            if row.key.startswith("session_start"):
                row.valid = False
                row.note = "a SessionStart run injected no recall block"
    markdown = "\n".join(table) + "\n\n" + projection + "\n"
    return Measured(rows, markdown)


MEASURES = (
    Measure(
        section="million",
        title="A million notes",
        run=bench_million,
        about="Two repositories, identical but for the vault's size (vault_large and "
        "vault_million generated notes, written straight into trees as the other large vaults "
        "are; `--set vault_million=N` for another size), each with a digest, sessions and "
        "patterns: the hooks and commands an agent's session pays, whole processes, median "
        "wall time with CPU and peak RSS, side by side; then a Linux-size history projected "
        "from the rates measured at the larger size.",
        order=95,
    ),
)
