"""Git operations through the installed shims (issue 8): a long rebase, a long cherry-pick and a
merge, each timed bare and with gitvault installed (live background drainers), interleaved and
repeated; target ≤ 1.2× the bare time, and every note present afterwards."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from harness import git, git_out, init_repo, median, timed_git, wait_no_drainers

from measures.common import Context, Row, install

TARGET = 1.2


def _branchy_repo(root: Path, name: str, commits: int) -> Path:
    """main with one extra commit, and `topic`: `commits` commits off main's parent."""
    repo = init_repo(root / name)
    git(["checkout", "-q", "-b", "topic"], repo)
    for i in range(commits):
        (repo / f"t{i}.txt").write_text(f"{i}\n")
        git(["add", f"t{i}.txt"], repo)
        git(["commit", "-q", "--no-verify", "-m", f"topic change {i}"], repo)
    git(["checkout", "-q", "main"], repo)
    (repo / "base.txt").write_text("base\n")
    git(["add", "base.txt"], repo)
    git(["commit", "-q", "-m", "move main on"], repo)
    return repo


def _notes_for(repo: Path, rev_range: str) -> tuple[int, int]:
    shas = git_out(["rev-list", rev_range], repo).split()
    files = git_out(["ls-tree", "-r", "--name-only", "vault", "notes/"], repo)
    noted = {line.rsplit("/", 1)[-1][:-3] for line in files.split()}
    return len([s for s in shas if s in noted]), len(shas)


def _pair(ctx: Context, label: str, n: int, op: list[str], check_range: str) -> Row:
    bare_times: list[float] = []
    hooked_times: list[float] = []
    complete = True
    for round_ in range(ctx.sizes.repeats):
        template = _branchy_repo(ctx.box.root / "gitops", f"{label}-{round_}", n)
        bare = template.with_name(template.name + "-bare")
        hooked = template.with_name(template.name + "-hooked")
        shutil.copytree(template, bare, symlinks=True)
        shutil.copytree(template, hooked, symlinks=True)
        install(hooked)
        for repo, times in ((bare, bare_times), (hooked, hooked_times)):
            if "topic" in check_range and op[0] == "rebase":
                git(["checkout", "-q", "topic"], repo)
            times.append(timed_git(op, repo))
        wait_no_drainers(hooked, timeout=300)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            got, want = _notes_for(hooked, check_range)
            if got == want:
                break
            time.sleep(0.05)
        got, want = _notes_for(hooked, check_range)
        complete = complete and got == want
    ratio = median(hooked_times) / median(bare_times)
    how = (
        f"{label}: `git {' '.join(op)}` of {n} commits in fresh copies of one repository, bare "
        f"and with gitvault installed (shims as installed, background drainers live), "
        f"{ctx.sizes.repeats} interleaved rounds, medians: bare {median(bare_times):.2f} s, "
        f"with gitvault {median(hooked_times):.2f} s. Notes complete afterwards: "
        f"{'yes' if complete else 'NO'}."
    )
    return Row(
        "gitops",
        f"{label} ({n} commits) with the shims vs bare",
        f"{ratio:.2f}×",
        f"≤ {TARGET}×, notes complete",
        ratio <= TARGET and complete,
        how,
        {"bare_s": bare_times, "hooked_s": hooked_times, "complete": complete},
    )


def bench_gitops(ctx: Context) -> list[Row]:
    n = ctx.sizes.rebase_commits
    picks = max(10, n * 2 // 5)
    ctx.say(f"gitops: rebase of {n} commits, cherry-pick of {picks}, a merge of {picks}")
    return [
        _pair(ctx, "rebase", n, ["rebase", "-q", "main"], "main..topic"),
        _pair(ctx, "cherry-pick", picks, ["cherry-pick", "main..topic"], f"main~{picks}..main"),
        _pair(ctx, "merge", picks, ["merge", "-q", "--no-edit", "topic"], "main^!"),
    ]
