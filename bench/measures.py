"""The measurements. Each benchmark builds its own scratch repositories in the sandbox, drives
gitvault through its real paths (installed shims, the drainer, Vault.commit, backfill) and
returns rows for the report. gitvault and pygit2 are imported inside the functions, after
run.py has isolated the environment.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import (
    Sandbox,
    cpu_seconds,
    drainer_pids,
    git,
    git_out,
    init_repo,
    median,
    percentile,
    timed_git,
    wait_no_drainers,
)
from repogen import HistorySpec, build_history, count_notes, fake_notes, populate_vault


@dataclass(frozen=True)
class Sizes:
    hook_samples: int = 60
    hook_warmup: int = 3
    hook_burst: int = 30
    rebase_commits: int = 500
    vault_small: int = 1_000
    vault_large: int = 100_000
    note_writes: int = 200
    drain_writes: int = 40
    recall_runs: int = 20
    backfill_commits: int = 5_000
    repeats: int = 3  # runs of the drain and backfill throughput measurements (median reported)


FULL = Sizes()
QUICK = Sizes(
    hook_samples=8,
    hook_warmup=1,
    hook_burst=5,
    rebase_commits=40,
    vault_small=200,
    vault_large=5_000,
    note_writes=20,
    drain_writes=5,
    recall_runs=3,
    backfill_commits=300,
    repeats=1,
)


@dataclass
class Row:
    key: str  # which benchmark made it (--only NAME)
    metric: str
    measured: str
    target: str
    passed: bool | None  # None: informational, or skipped
    how: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Context:
    box: Sandbox
    sizes: Sizes
    say: Callable[[str], None]
    cache: dict[str, Any] = field(default_factory=dict)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _install(repo: Path) -> None:
    from gitvault import install as install_mod
    from gitvault.resolve import resolve

    install_mod.install(resolve(repo))


def _state(repo: Path) -> Path:
    return repo / ".git" / "gitvault"


class NoteProbe:
    """Answers "does commit X have a note yet?" by reading the vault tip as it is on disk."""

    def __init__(self, repo: Path) -> None:
        self.repo_dir = repo

    def paths(self, shas: list[str]) -> dict[str, str]:
        import pygit2

        from gitvault.vault.layout import NOTES as NOTES_DIR

        repo = pygit2.Repository(str(self.repo_dir))
        out = {}
        for sha in shas:
            when = time.gmtime(repo[sha].commit_time)
            out[sha] = f"{NOTES_DIR}/{time.strftime('%Y/%m/%d', when)}/{sha}.md"
        return out

    def missing(self, paths: dict[str, str]) -> list[str]:
        import pygit2

        repo = pygit2.Repository(str(self.repo_dir))
        ref = repo.references.get("refs/heads/vault")
        if ref is None:
            return list(paths)
        tree = repo[ref.target].peel(pygit2.Tree)
        gone = []
        for sha, path in paths.items():
            try:
                tree[path]
            except KeyError:
                gone.append(sha)
        return gone

    def note_text(self, path: str) -> str:
        return git_out(["show", f"refs/heads/vault:{path}"], self.repo_dir)

    def wait(self, paths: dict[str, str], timeout: float = 120.0, poll: float = 0.005) -> float:
        """Poll until every path exists; returns when that was seen (perf_counter)."""
        deadline = time.monotonic() + timeout
        while True:
            left = self.missing(paths)
            if not left:
                return time.perf_counter()
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(left)} notes still missing after {timeout:.0f} s")
            time.sleep(poll)


# -- 1. foreground hook overhead ---------------------------------------------------------------


def bench_hook(ctx: Context) -> list[Row]:
    sz = ctx.sizes
    hooked = init_repo(ctx.box.repo_dir("hook-gitvault"))
    bare = init_repo(ctx.box.repo_dir("hook-bare"))
    _install(hooked)
    probe = NoteProbe(hooked)
    made: list[str] = []

    def commit(repo: Path, label: str) -> float:
        with open(repo / "work.txt", "a", encoding="utf-8") as fh:
            fh.write(f"{label}\n")
        git(["add", "work.txt"], repo)
        elapsed = timed_git(["commit", "-q", "-m", f"change {label}"], repo)
        if repo == hooked:
            made.append(git_out(["rev-parse", "HEAD"], repo))
        return elapsed

    def settle() -> None:
        """Wait until the note of the last hooked commit exists and its drainer has exited."""
        probe.wait(probe.paths(made[-1:]))
        left = wait_no_drainers(hooked, timeout=30)
        if left:
            raise RuntimeError(f"drainer {left} did not exit")

    ctx.say(f"hook: {sz.hook_warmup} warm-up + {sz.hook_samples} interleaved commits per repo")
    for i in range(sz.hook_warmup):
        commit(hooked, f"warmup {i}")
        settle()
        commit(bare, f"warmup {i}")
    with_hooks: list[float] = []
    without: list[float] = []
    for i in range(sz.hook_samples):
        order = [(hooked, with_hooks), (bare, without)]
        if i % 2:
            order.reverse()
        for repo, sink in order:
            sink.append(commit(repo, f"sample {i}"))
            if repo == hooked:
                settle()
    missing = probe.missing(probe.paths(made))
    if missing:
        raise RuntimeError(f"hook benchmark: {len(missing)} commits got no note")

    # Back-to-back: bursts of commits without waiting, so the drainers the shims start run
    # while the next commits are made (and compete for the CPU). Bursts alternate between the
    # repositories (a hooked burst's drainers are settled before a bare burst starts, so they
    # never slow the bare commits), in rounds whose order alternates to cancel drift.
    rounds = 3
    per_round = max(1, sz.hook_burst // rounds)
    ctx.say(f"hook: {rounds} rounds of {per_round}-commit bursts per repo (drainers running)")
    burst_with: list[float] = []
    burst_without: list[float] = []
    most_drainers = 0
    burst_start = len(made)
    for r in range(rounds):
        order = [hooked, bare] if r % 2 == 0 else [bare, hooked]
        for repo in order:
            for i in range(per_round):
                elapsed = commit(repo, f"burst {r}.{i}")
                if repo == hooked:
                    burst_with.append(elapsed)
                    most_drainers = max(most_drainers, len(drainer_pids(hooked)))
                else:
                    burst_without.append(elapsed)
            if repo == hooked:
                probe.wait(probe.paths(made[burst_start:]))
                wait_no_drainers(hooked, timeout=30)

    med = median(with_hooks) - median(without)
    p90 = percentile(with_hooks, 90) - percentile(without, 90)
    b_med = median(burst_with) - median(burst_without)
    b_p90 = percentile(burst_with, 90) - percentile(burst_without, 90)
    how = (
        f"`git commit -q` of a one-line change, timed from spawn to exit, {sz.hook_samples} "
        f"commits in a repository with gitvault's shims (default background drainer) and "
        f"{sz.hook_samples} in an identical one without hooks, interleaved (alternating which "
        f"goes first) after {sz.hook_warmup} warm-ups each. After every hooked commit the harness "
        f"waits (untimed) until the note exists and the detached drainer has exited, so drainers "
        f"never pile up or compete with the next sample. Median with hooks "
        f"{_ms(median(with_hooks))}, without {_ms(median(without))}; p90 {_ms(p90)} is "
        f"p90(with) − p90(without). All {len(made)} hooked commits got their note."
    )
    burst_how = (
        f"{rounds} rounds of {per_round} commits back to back in each repository, *not* waiting "
        f"for drainers between commits, so the detached drainers run (and compete for the "
        f"{os.cpu_count()} cores) while the next commits are made; bursts alternate between the "
        f"repositories and a hooked burst's drainers finish before a bare burst starts. All "
        f"notes were written. Median with hooks "
        f"{_ms(median(burst_with))}, without {_ms(median(burst_without))}; p90 overhead "
        f"{_ms(b_p90)}; up to {most_drainers} drainer processes were alive at once."
    )
    return [
        Row(
            "hook",
            "Hook overhead on `git commit` (median, drainer settled)",
            _ms(med),
            "≤ 10 ms",
            med <= 0.010,
            how,
            {"median_s": med, "p90_s": p90, "with_s": with_hooks, "without_s": without},
        ),
        Row(
            "hook",
            "Hook overhead on `git commit` (p90, drainer settled)",
            _ms(p90),
            "(report)",
            None,
            f"The same samples as the row above: p90 of the hooked commits "
            f"({_ms(percentile(with_hooks, 90))}) minus p90 of the bare ones "
            f"({_ms(percentile(without, 90))}).",
        ),
        Row(
            "hook",
            "Hook overhead, back-to-back commits (median, drainers running)",
            _ms(b_med),
            "(report)",
            None,
            burst_how,
            {"median_s": b_med, "p90_s": b_p90, "max_drainers": most_drainers},
        ),
    ]


# -- 2. drain throughput after a rebase --------------------------------------------------------


@contextmanager
def _hold_drain_lock(repo: Path) -> Iterator[None]:
    """Stand in for a running drainer: hold drain.lock and publish our pid in drain.pid, so the
    shims spool lines but start no drainer and nothing is drained early."""
    state = _state(repo)
    fd = os.open(state / "drain.lock", os.O_RDWR | os.O_CREAT, 0o644)
    pid_file = state / "drain.pid"
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        pid_file.write_text(str(os.getpid()))
        yield
    finally:
        pid_file.unlink(missing_ok=True)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _spool_kinds(repo: Path) -> dict[str, int]:
    kinds: dict[str, int] = {}
    spool = _state(repo) / "spool"
    if spool.exists():
        for line in spool.read_text(encoding="utf-8").splitlines():
            kind = line.split("\t", 1)[0]
            kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


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
    _install(hooked)
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
    inproc = ctx.box.repo_dir("rebase-inproc")
    shutil.copytree(hooked, inproc, symlinks=True)
    copies = [hooked]
    for i in range(1, ctx.sizes.repeats):
        copy = ctx.box.repo_dir(f"rebase-held-{i}")
        shutil.copytree(hooked, copy, symlinks=True)
        copies.append(copy)
    before = count_notes(hooked)

    ctx.say(f"drain: timing the drainer on the spooled lines ({len(copies)} identical copies)")
    drain_times: list[float] = []
    drain_cpu: list[float] = []
    for copy in copies:
        cpu0 = cpu_seconds()
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "gitvault.hook", "git", "drain", str(copy / ".git"), "--wait"],
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
        f"spool drained in-process by `gitvault.notes.drain.drain(loc, block=True)`: {t_inproc:.2f} s "
        f"wall ({n / t_inproc:.0f} notes/s), {cpu_inproc:.2f} s CPU."
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
            "drain",
            f"Drain throughput after a {n}-commit rebase",
            f"{rate:.0f} notes/s",
            "≥ 200 notes/s",
            rate >= 200,
            how,
            {"drain_s": t_drain, "inproc_s": t_inproc, "spool": kinds},
        ),
        Row(
            "drain",
            f"Rebase end → all {n} notes on the vault (live drainers)",
            f"{t_e2e:.2f} s ({n / t_e2e:.0f} notes/s)" if t_e2e > 0 else "0 s",
            "(report)",
            None,
            e2e_how,
            {
                "e2e_s": t_e2e,
                "rebase_bare_s": t_bare,
                "rebase_held_s": t_held,
                "rebase_live_s": t_live_rebase,
                "peak_drainers": peak,
            },
        ),
    ]


# -- 3. cost of one note write, small vs large vault -------------------------------------------


def _vault_repos(ctx: Context) -> tuple[Path, Path]:
    """Two installed repositories whose vaults hold vault_small and vault_large generated
    notes (same project history; identical apart from the vault's size), repacked alike."""
    if "vaults" in ctx.cache:
        return ctx.cache["vaults"]
    sz = ctx.sizes
    made: list[Path] = []
    for label, count in (("small", sz.vault_small), ("large", sz.vault_large)):
        repo = ctx.box.repo_dir(f"vault-{label}")
        build_history(
            repo,
            HistorySpec(commits=sz.drain_writes + 5, seed=21, start=1_700_000_000, step=7 * 86_400),
        )
        git(["checkout", "-q", "main"], repo)
        _install(repo)
        start = time.perf_counter()
        commits = populate_vault(repo, count)
        git(["repack", "-a", "-d", "-q"], repo)
        took = time.perf_counter() - start
        ctx.say(
            f"notecost: generated a {count:,}-note vault in {took:.1f} s "
            f"({commits} vault commits, repacked)"
        )
        ctx.cache[f"gen_{label}_s"] = took
        made.append(repo)
    ctx.cache["vaults"] = (made[0], made[1])
    return made[0], made[1]


def bench_notecost(ctx: Context) -> list[Row]:
    from gitvault.notes.drain import drain
    from gitvault.resolve import resolve
    from gitvault.vault.store import Vault

    sz = ctx.sizes
    small, large = _vault_repos(ctx)
    n_small, n_large = count_notes(small), count_notes(large)

    # The same new notes for both vaults, dated on random days inside the vault's span.
    rng = random.Random(5)
    writes = fake_notes(sz.note_writes, years=5, seed=99)
    rng.shuffle(writes)
    vaults = {small: Vault(resolve(small)), large: Vault(resolve(large))}
    times: dict[Path, list[float]] = {small: [], large: []}
    ctx.say(f"notecost: {sz.note_writes} single-note Vault.commit writes per vault, interleaved")
    for i, fake in enumerate(writes):
        order = [small, large] if i % 2 == 0 else [large, small]
        for repo in order:
            start = time.perf_counter()
            vaults[repo].commit({fake.path: fake.text}, fake.message)
            times[repo].append(time.perf_counter() - start)
    ratio = median(times[large]) / median(times[small])

    # The drainer path: one spooled commit, drained in-process, per sample.
    ctx.say(f"notecost: {sz.drain_writes} single-commit drains per vault, interleaved")
    shas = git_out(["rev-list", "--reverse", "main"], small).split()[-sz.drain_writes :]
    dtimes: dict[Path, list[float]] = {small: [], large: []}
    for i, sha in enumerate(shas):
        order = [small, large] if i % 2 == 0 else [large, small]
        for repo in order:
            line = f"commit\t{sha}\tref: refs/heads/main\tmain\t{repo / '.git'}\n"
            with open(_state(repo) / "spool", "a", encoding="utf-8") as fh:
                fh.write(line)
            start = time.perf_counter()
            wrote = drain(resolve(repo), block=True)
            dtimes[repo].append(time.perf_counter() - start)
            if wrote != 1:
                raise RuntimeError(f"drain of one spooled commit wrote {wrote} notes")
    dratio = median(dtimes[large]) / median(dtimes[small])

    how = (
        f"Two repositories whose vault branches hold {n_small:,} and {n_large:,} notes, generated "
        f"straight into date-sharded trees over 5 years (fast-import pack for the blobs, pygit2 "
        f"TreeBuilder for the trees, one commit per year; generating the large one took "
        f"{ctx.cache.get('gen_large_s', 0):.1f} s), both repacked. Then {sz.note_writes} new notes "
        f"(same paths and bytes in both, on random days inside the span) are written one by one "
        f"with `Vault.commit` (the store's real CAS write path), interleaved between the vaults. "
        f"Median per write: {_ms(median(times[small]))} at {n_small:,} notes, "
        f"{_ms(median(times[large]))} at {n_large:,}."
    )
    dhow = (
        f"{sz.drain_writes} real project commits, each spooled as a post-commit line and drained "
        f"in-process with `gitvault.notes.drain.drain(loc, block=True)` (git log + render + schema "
        f"check + Vault.commit_many), interleaved. Median: {_ms(median(dtimes[small]))} at "
        f"{n_small:,} notes, {_ms(median(dtimes[large]))} at {n_large:,}."
    )
    return [
        Row(
            "notecost",
            f"One note write, {n_large:,} vs {n_small:,} notes (Vault.commit)",
            f"{ratio:.2f}× ({_ms(median(times[large]))} vs {_ms(median(times[small]))})",
            "≤ 1.3×",
            ratio <= 1.3,
            how,
            {"small_s": times[small], "large_s": times[large], "ratio": ratio},
        ),
        Row(
            "notecost",
            f"One spooled commit drained, {n_large:,} vs {n_small:,} notes",
            f"{dratio:.2f}× ({_ms(median(dtimes[large]))} vs {_ms(median(dtimes[small]))})",
            "(report)",
            None,
            dhow,
            {"ratio": dratio},
        ),
    ]


# -- SessionStart recall at 100k notes (issue 4): a slot until gitvault.recall exists -----------


# The command Claude Code's SessionStart hook runs: the stable entry `gitvault-hook claude
# session-start`. The row fails (rather than passing silently) when the output has no block.
def _recall_hook_args() -> list[str]:
    return ["-m", "gitvault.hook", "claude", "session-start"]


def _memory_files(tip: str, shas: list[str]) -> dict[str, bytes | None]:
    """A digest near its 6,000-character cap citing real notes, two sessions and a patterns
    file: what a vault in steady use holds besides its notes (plain text, as fold/save write)."""
    from gitvault.vault import frontmatter

    cats = ["Architecture", "Decisions", "Conventions", "Gotchas", "State", "Next steps"]
    rng = random.Random(7)
    body = ["# Project memory", ""]
    for cat in cats:
        body.append(f"## {cat}")
        for i in range(9):
            words = " ".join(
                rng.choice(
                    (
                        "cache",
                        "parser",
                        "vault",
                        "retry",
                        "index",
                        "hook",
                        "schema",
                        "drain",
                        "batch",
                        "lock",
                    )
                )
                for _ in range(9)
            )
            body.append(f"- {cat} fact {i}: {words} (c:{rng.choice(shas)[:7]})")
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
    files: dict[str, bytes | None] = {"_master.md": digest.encode()}
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
        files[f"sessions/{saved[:10]}-{saved[11:13]}{saved[14:16]}-{slug}.md"] = frontmatter.render(
            meta, text + "\n"
        ).encode()
    files["patterns/testing.md"] = "".join(f"- standing rule {i}\n" for i in range(12)).encode()
    return files


def bench_recall(ctx: Context) -> list[Row]:
    n = ctx.sizes.vault_large
    metric = f"SessionStart hook at {n:,} notes (digest, 2 sessions)"
    if importlib.util.find_spec("gitvault.recall") is None:
        reason = "skipped: gitvault.recall does not exist yet (issue 4)"
        ctx.say(f"recall: {reason}")
        return [
            Row(
                "recall",
                metric,
                reason,
                "≤ 150 ms",
                None,
                "Slot for issue 4: runs the SessionStart hook command (a subprocess, "
                "interpreter start-up included) against the large generated vault and takes "
                "the median wall time. Skipped until the module exists.",
            )
        ]
    from gitvault.resolve import resolve
    from gitvault.vault.store import Vault

    _, large = _vault_repos(ctx)
    payload = json.dumps(
        {
            "session_id": "bench-session",
            "transcript_path": str(ctx.box.root / "none.jsonl"),
            "cwd": str(large),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    ).encode()
    hook_args = _recall_hook_args()

    def measure() -> tuple[list[float], bytes]:
        runs: list[float] = []
        output = b""
        for _ in range(ctx.sizes.recall_runs):
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, *hook_args],
                cwd=large,
                input=payload,
                capture_output=True,
                check=False,
            )
            runs.append(time.perf_counter() - start)
            output = proc.stdout
        return runs, output

    ctx.say(f"recall: SessionStart hook at {n:,} notes, before and after the first digest")
    bare_runs, bare_out = measure()
    vault = Vault(resolve(large))
    tip = vault.require_tip()
    shas = [
        p.rsplit("/", 1)[-1][:-3]
        for p in git_out(["ls-tree", "-r", "--name-only", tip, "notes/2024/01/"], large).split()
    ]
    vault.commit(_memory_files(tip, shas or ["0" * 40]), "bench: digest, sessions, patterns")
    runs, output = measure()

    def verdict(out: bytes) -> str:
        return (
            ""
            if b"VAULT RECALL" in out
            else (
                " The output carried no `=== VAULT RECALL ===` block (fail-open: nothing injected)"
                ", so the row counts as failed."
            )
        )

    ok = b"VAULT RECALL" in output
    how = (
        f"`python {' '.join(hook_args)}` with a SessionStart JSON input on stdin (interpreter "
        f"start-up included), {len(runs)} runs in the {n:,}-note vault after a digest near its "
        f"cap, two sessions and a patterns file were committed to it (the steady state): median "
        f"wall time; p90 {_ms(percentile(runs, 90))}.{verdict(output)}"
    )
    bare_how = (
        f"The same hook in the same vault before its first fold (no `_master.md`, so recall "
        f"reports how many notes wait for a fold): median of {len(bare_runs)} runs, p90 "
        f"{_ms(percentile(bare_runs, 90))}.{verdict(bare_out)}"
    )
    return [
        Row(
            "recall",
            metric,
            _ms(median(runs)),
            "≤ 150 ms",
            ok and median(runs) <= 0.150,
            how,
            {"runs_s": runs},
        ),
        Row(
            "recall",
            f"SessionStart hook at {n:,} notes, no digest yet",
            _ms(median(bare_runs)),
            "(report)",
            None if b"VAULT RECALL" in bare_out else False,
            bare_how,
            {"runs_s": bare_runs},
        ),
    ]


# -- 4. backfill rate, 5. bytes per note after gc ----------------------------------------------


def _backfilled(ctx: Context) -> Path:
    if "backfill" not in ctx.cache:
        bench_backfill(ctx)
    return ctx.cache["backfill"]


def bench_backfill(ctx: Context) -> list[Row]:
    from gitvault.notes.backfill import backfill
    from gitvault.resolve import resolve

    n = ctx.sizes.backfill_commits
    ctx.say(f"backfill: generating a {n:,}-commit history with fast-import")
    base = ctx.box.repo_dir("backfill-base")
    build_history(base, HistorySpec(commits=n, seed=31, start=1_650_000_000, step=4 * 3600))
    git(["checkout", "-q", "main"], base)
    _install(base)
    runs: list[tuple[float, float]] = []
    for i in range(ctx.sizes.repeats):
        repo = ctx.box.repo_dir(f"backfill-{i}")
        shutil.copytree(base, repo, symlinks=True)
        ctx.say(f"backfill: running gitvault.backfill.backfill ({i + 1}/{ctx.sizes.repeats})")
        cpu0 = cpu_seconds()
        start = time.perf_counter()
        result = backfill(resolve(repo))
        runs.append((time.perf_counter() - start, cpu_seconds() - cpu0))
        notes_now = count_notes(repo)
        if result.written != n or notes_now != n:
            raise RuntimeError(
                f"backfill wrote {result.written} notes ({notes_now} in the vault), expected {n}"
            )
        if i == 0:
            ctx.cache["backfill"] = repo
        else:
            shutil.rmtree(repo)
    elapsed = median([wall for wall, _ in runs])
    cpu = median([c for _, c in runs])
    rate = n / elapsed
    how = (
        f"A {n:,}-commit history (1-3 files per commit in a 400-file tree, generated with "
        f"`git fast-import`), `gitvault install`, then `gitvault.backfill.backfill(loc)` (what "
        f"`gitvault backfill` runs, without the progress bar) timed in-process from call to "
        f"return, everything it does included. Median of {len(runs)} runs on identical copies: "
        f"{n:,} notes in {elapsed:.2f} s wall (runs: "
        f"{', '.join(f'{w:.2f}' for w, _ in runs)} s), {cpu:.2f} s CPU (gitvault + its git "
        f"children)."
    )
    return [
        Row(
            "backfill",
            f"Backfill rate ({n:,} commits)",
            f"{rate:,.0f} commits/s",
            "≥ 1,000 commits/s",
            rate >= 1000,
            how,
            {"seconds": elapsed},
        )
    ]


def vault_only_bytes(repo: Path) -> tuple[int, dict[str, tuple[int, int]]]:
    """On-disk bytes of objects reachable from the vault branch and from no other branch,
    with a per-type breakdown {type: (objects, bytes)}."""
    # --exclude patterns for --branches are matched without the refs/heads/ prefix.
    rev = git(
        [
            "rev-list",
            "--objects",
            "--no-object-names",
            "refs/heads/vault",
            "--not",
            "--exclude=vault",
            "--branches",
        ],
        repo,
    ).stdout
    out = git(
        ["cat-file", "--batch-check=%(objecttype) %(objectsize:disk)"], repo, input=rev
    ).stdout.decode()
    total = 0
    kinds: dict[str, tuple[int, int]] = {}
    for line in out.splitlines():
        kind, size = line.split()
        count, sum_ = kinds.get(kind, (0, 0))
        kinds[kind] = (count + 1, sum_ + int(size))
        total += int(size)
    return total, kinds


def bench_gc(ctx: Context) -> list[Row]:
    repo = _backfilled(ctx)
    n = count_notes(repo)
    after_backfill, _ = vault_only_bytes(repo)
    ctx.say("gc: git gc")
    git(["gc", "-q"], repo)
    plain, kinds = vault_only_bytes(repo)
    ctx.say("gc: git gc --aggressive")
    git(["gc", "-q", "--aggressive"], repo)
    aggressive, akinds = vault_only_bytes(repo)
    per = plain / n
    per_aggr = aggressive / n

    def breakdown(k: dict[str, tuple[int, int]]) -> str:
        return ", ".join(
            f"{kind}s {b / n:,.0f} B/note ({c:,} objects)" for kind, (c, b) in sorted(k.items())
        )

    how = (
        f"After the backfill above ({n:,} notes), plain `git gc`; then the on-disk size "
        f"(`%(objectsize:disk)`, deltas counted as stored) of every object reachable from the "
        f"vault branch and from no other branch (`git rev-list --objects vault --not "
        f"--exclude=vault --branches | git cat-file --batch-check`), summed and "
        f"divided by the note count. Breakdown: {breakdown(kinds)}. As backfill left it, before "
        f"gc: {after_backfill / n:,.0f} B/note."
    )
    ahow = f"The same after `git gc --aggressive`. Breakdown: {breakdown(akinds)}."
    return [
        Row(
            "gc",
            "Bytes per note after `git gc`",
            f"{per:,.0f} B",
            "≤ 1.5 KB (1,536 B)",
            per <= 1536,
            how,
            {"bytes": plain, "notes": n},
        ),
        Row(
            "gc",
            "Bytes per note after `git gc --aggressive`",
            f"{per_aggr:,.0f} B",
            "(report)",
            None,
            ahow,
            {"bytes": aggressive},
        ),
    ]


BENCHMARKS: dict[str, Callable[[Context], list[Row]]] = {
    "hook": bench_hook,
    "drain": bench_drain,
    "notecost": bench_notecost,
    "recall": bench_recall,
    "backfill": bench_backfill,
    "gc": bench_gc,
}
