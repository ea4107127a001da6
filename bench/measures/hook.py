"""The foreground cost of the git hook shims on `git commit` (post-commit and friends)."""

from __future__ import annotations

import os
from pathlib import Path

from harness import (
    drainer_pids,
    git,
    git_out,
    init_repo,
    median,
    percentile,
    timed_git,
    wait_no_drainers,
)
from registry import Measure, Row, Target

from measures.common import Context, NoteProbe, install, ms


def bench_hook(ctx: Context) -> list[Row]:
    sz = ctx.sizes
    hooked = init_repo(ctx.box.repo_dir("hook-gitvault"))
    bare = init_repo(ctx.box.repo_dir("hook-bare"))
    install(hooked)
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
        f"{ms(median(with_hooks))}, without {ms(median(without))}; p90 {ms(p90)} is "
        f"p90(with) − p90(without). All {len(made)} hooked commits got their note."
    )
    burst_how = (
        f"{rounds} rounds of {per_round} commits back to back in each repository, *not* waiting "
        f"for drainers between commits, so the detached drainers run (and compete for the "
        f"{os.cpu_count()} cores) while the next commits are made; bursts alternate between the "
        f"repositories and a hooked burst's drainers finish before a bare burst starts. All "
        f"notes were written. Median with hooks "
        f"{ms(median(burst_with))}, without {ms(median(burst_without))}; p90 overhead "
        f"{ms(b_p90)}; up to {most_drainers} drainer processes were alive at once."
    )
    return [
        Row(
            "median",
            "Hook overhead on `git commit` (median, drainer settled)",
            med * 1000,
            "ms",
            target="median",
            how=how,
            details={"median_s": med, "p90_s": p90, "with_s": with_hooks, "without_s": without},
        ),
        Row(
            "p90",
            "Hook overhead on `git commit` (p90, drainer settled)",
            p90 * 1000,
            "ms",
            how=f"The same samples as the row above: p90 of the hooked commits "
            f"({ms(percentile(with_hooks, 90))}) minus p90 of the bare ones "
            f"({ms(percentile(without, 90))}).",
        ),
        Row(
            "burst_median",
            "Hook overhead, back-to-back commits (median, drainers running)",
            b_med * 1000,
            "ms",
            how=burst_how,
            details={"median_s": b_med, "p90_s": b_p90, "max_drainers": most_drainers},
        ),
    ]


MEASURES = (
    Measure(
        section="hook",
        title="Post-commit hook overhead on `git commit`",
        run=bench_hook,
        targets={"median": Target("<=", 5, "ms")},
        about="What a user's `git commit` pays for gitvault's shims: the shim appends one line "
        "to the spool and starts a detached drainer; the note is written after git returns.",
        summary=("median",),
        order=10,
    ),
)
