"""Drain throughput: the spool after a large rebase, turned into notes."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness import (
    cpu_seconds,
    drainer_pids,
    git,
    git_out,
    median,
    timed_git,
    wait_no_drainers,
)
from registry import Measure, Row, Target
from repogen import HistorySpec, build_history, count_notes

from measures.common import Context, NoteProbe, install, state_dir


@contextmanager
def _hold_drain_lock(repo: Path) -> Iterator[None]:
    """Stand in for a running drainer: hold drain.lock and publish our pid in drain.pid, so the
    shims spool lines but start no drainer and nothing is drained early."""
    from gitvault.vault.statedir import DRAIN_LOCK, DRAIN_PID

    state = state_dir(repo)
    fd = os.open(state / DRAIN_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    pid_file = state / DRAIN_PID
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        pid_file.write_text(str(os.getpid()))
        yield
    finally:
        pid_file.unlink(missing_ok=True)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _spool_kinds(repo: Path) -> dict[str, int]:
    from gitvault.notes.drain import parse_line
    from gitvault.vault.statedir import SPOOL

    kinds: dict[str, int] = {}
    spool = state_dir(repo) / SPOOL
    if spool.exists():
        for line in spool.read_text(encoding="utf-8").splitlines():
            entry = parse_line(line)
            kind = entry.kind if entry else "unreadable"
            kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def common_dir(repo: Path) -> Path:
    from gitvault.resolve import resolve

    return resolve(repo).common_dir


def bench_drain(ctx: Context) -> list[Row]:
    from gitvault.notes.drain import drain
    from gitvault.resolve import resolve

    n = ctx.sizes.rebase_commits
    ctx.say(f"drain: building a repository with a {n}-commit branch")
    base = ctx.box.repo_dir("rebase-bare")
    root = build_history(base, HistorySpec(commits=1, prefix="base", seed=11))
    build_history(
        base,
        HistorySpec(
            commits=n,
            branch="topic",
            prefix="topic",
            seed=12,
            start=1_700_000_000,
            step=600,
            parent=root,
        ),
        init=False,
    )
    build_history(
        base,
        HistorySpec(commits=1, prefix="base", seed=13, start=1_700_500_000, parent=root),
        init=False,
    )
    git(["checkout", "-q", "topic"], base)
    hooked = ctx.box.repo_dir("rebase-held")
    shutil.copytree(base, hooked, symlinks=True)
    install(hooked)
    live = ctx.box.repo_dir("rebase-live")
    shutil.copytree(hooked, live, symlinks=True)

    ctx.say(f"drain: rebasing {n} commits (bare, then through the shims)")
    t_bare = timed_git(["rebase", "-q", "main"], base)
    with _hold_drain_lock(hooked):
        t_held = timed_git(["rebase", "-q", "main"], hooked)
        kinds = _spool_kinds(hooked)
        new_shas = git_out(["rev-list", "--reverse", "main..topic"], hooked).split()
        if len(new_shas) != n:
            raise RuntimeError(f"rebase produced {len(new_shas)} commits, expected {n}")
        # The copies are taken while the lock is held: a drainer the shims started waits for
        # it, and drains `hooked` itself the moment it is released.
        inproc = ctx.box.repo_dir("rebase-inproc")
        shutil.copytree(hooked, inproc, symlinks=True)
        copies = []
        for i in range(ctx.sizes.repeats):
            copy = ctx.box.repo_dir(f"rebase-held-{i}")
            shutil.copytree(hooked, copy, symlinks=True)
            copies.append(copy)
    before = count_notes(copies[0])

    ctx.say(f"drain: timing the drainer on the spooled lines ({len(copies)} identical copies)")
    drain_times: list[float] = []
    drain_cpu: list[float] = []
    for copy in copies:
        cpu0 = cpu_seconds()
        start = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "gitvault.hook",
                "git",
                "drain",
                str(common_dir(copy)),
                "--wait",
            ],
            cwd=copy,
            check=True,
            capture_output=True,
        )
        drain_times.append(time.perf_counter() - start)
        drain_cpu.append(cpu_seconds() - cpu0)
        probe = NoteProbe(copy)
        paths = probe.paths(new_shas)
        missing = probe.missing(paths)
        written = count_notes(copy) - before
        if missing or written != n:
            raise RuntimeError(f"drain wrote {written} notes, {len(missing)} of {n} missing")
        sample = probe.note_text(paths[new_shas[0]])
        if "replaces:" not in sample:
            raise RuntimeError("the rebased commit's note does not record the commit it replaced")
    t_drain = median(drain_times)
    cpu_drain = median(drain_cpu)

    cpu0 = cpu_seconds()
    start = time.perf_counter()
    written_inproc = drain(resolve(inproc), block=True)
    t_inproc = time.perf_counter() - start
    cpu_inproc = cpu_seconds() - cpu0
    if written_inproc != n:
        raise RuntimeError(f"in-process drain wrote {written_inproc} notes, expected {n}")

    ctx.say("drain: the same rebase with live background drainers, end to end")
    live_probe = NoteProbe(live)
    proc = subprocess.Popen(
        ["git", "rebase", "-q", "main"], cwd=live, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    start = time.perf_counter()
    peak = 0
    while proc.poll() is None:
        peak = max(peak, len(drainer_pids(live)))
        time.sleep(0.005)
    rebase_end = time.perf_counter()
    if proc.returncode != 0:
        raise RuntimeError(f"live rebase failed: {proc.stderr.read() if proc.stderr else ''}")
    t_live_rebase = rebase_end - start
    live_shas = git_out(["rev-list", "--reverse", "main..topic"], live).split()
    done = live_probe.wait(live_probe.paths(live_shas), timeout=600)
    t_e2e = done - rebase_end
    wait_no_drainers(live, timeout=60)

    rate = n / t_drain
    how = (
        f"A branch of {n} commits (generated with fast-import) is rebased onto a new base with "
        f"`git rebase` through the installed shims, which spooled "
        f"{', '.join(f'{v} `{k}`' for k, v in sorted(kinds.items()))} lines. During the rebase "
        f"the harness held drain.lock and published its own pid in drain.pid (as a running "
        f"drainer would), so no note was written early. Then it timed `gitvault-hook git drain "
        f"<common-dir> --wait` (the drainer a hook starts, interpreter start-up included) until it "
        f"exited with all {n} notes written (each records the commit it replaces). Median of "
        f"{len(drain_times)} runs on identical copies: {t_drain:.2f} s wall (runs: "
        f"{', '.join(f'{t:.2f}' for t in drain_times)} s), {cpu_drain:.2f} s CPU (drainer + its "
        f"git children). The same "
        f"spool drained in-process by `gitvault.notes.drain.drain(loc, block=True)`: "
        f"{t_inproc:.2f} s wall ({n / t_inproc:.0f} notes/s), {cpu_inproc:.2f} s CPU."
    )
    e2e_how = (
        f"The same rebase in a copy with nothing held, so the shims behave as they do for a "
        f"user (drainer processes seen while git rebased: at most {peak}). Time from the end of "
        f"`git rebase` until all {n} notes exist on the vault tip, polled every 5 ms. Rebase "
        f"wall time: without hooks {t_bare:.2f} s, with the shims and the drainer held off "
        f"{t_held:.2f} s, with the shims as installed {t_live_rebase:.2f} s."
    )
    return [
        Row(
            "throughput",
            f"Drain throughput after a {n}-commit rebase",
            rate,
            "notes/s",
            target="throughput",
            how=how,
            details={"drain_s": t_drain, "inproc_s": t_inproc, "spool": kinds},
        ),
        Row(
            "rebase_to_notes",
            f"Rebase end → all {n} notes on the vault (live drainers)",
            t_e2e,
            "s",
            shown=f"{t_e2e:.2f} s ({n / t_e2e:.0f} notes/s)" if t_e2e > 0 else "0 s",
            how=e2e_how,
            details={
                "e2e_s": t_e2e,
                "rebase_bare_s": t_bare,
                "rebase_held_s": t_held,
                "rebase_live_s": t_live_rebase,
                "peak_drainers": peak,
            },
        ),
    ]


MEASURES = (
    Measure(
        section="drain",
        title="Draining the spool after a rebase",
        run=bench_drain,
        targets={"throughput": Target(">=", 200, "notes/s")},
        about="A long rebase spools one line per rewritten commit; the drainer turns them into "
        "notes (each recording the commit it replaces) after git returns.",
        summary=("throughput",),
        order=20,
    ),
)
