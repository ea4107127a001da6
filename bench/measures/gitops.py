"""Git operations through the installed shims: a long rebase, a long cherry-pick and a merge,
each timed bare, with an empty `exit 0` hook in every slot gitvault's shims take (the floor any
hook pays: one fork+exec of /bin/sh per hook run), and with gitvault installed (live
background drainers), interleaved and repeated; every note present afterwards."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from harness import git, git_out, init_repo, median, timed_git, wait_no_drainers
from registry import Measure, Row, Target

from measures.common import Context, install, note_shas, vault_ref

EMPTY_HOOK = "#!/bin/sh\nexit 0\n"


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


def _empty_hooks(repo: Path) -> None:
    """An `exit 0` hook in every slot gitvault's shims would take."""
    from gitvault.notes import shims
    from gitvault.resolve import resolve

    folder = shims.hooks_dir(resolve(repo)).path
    folder.mkdir(parents=True, exist_ok=True)
    for name in shims.HOOKS:
        hook = folder / name
        hook.write_text(EMPTY_HOOK)
        hook.chmod(0o755)


def _notes_for(repo: Path, rev_range: str) -> tuple[int, int]:
    shas = git_out(["rev-list", rev_range], repo).split()
    noted = note_shas(repo, vault_ref(repo))
    return len([s for s in shas if s in noted]), len(shas)


def _pair(ctx: Context, label: str, n: int, op: list[str], check_range: str) -> list[Row]:
    times: dict[str, list[float]] = {"bare": [], "empty": [], "gitvault": []}
    complete = True
    for round_ in range(ctx.sizes.repeats):
        template = _branchy_repo(ctx.box.root / "gitops", f"{label}-{round_}", n)
        copies = {kind: template.with_name(f"{template.name}-{kind}") for kind in times}
        for copy in copies.values():
            shutil.copytree(template, copy, symlinks=True)
        _empty_hooks(copies["empty"])
        install(copies["gitvault"])
        kinds = list(times)
        shift = round_ % len(kinds)
        for kind in kinds[shift:] + kinds[:shift]:  # each variant goes first once in 3 rounds
            repo = copies[kind]
            if op[0] == "rebase":
                git(["checkout", "-q", "topic"], repo)
            times[kind].append(timed_git(op, repo))
        hooked = copies["gitvault"]
        wait_no_drainers(hooked, timeout=300)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            got, want = _notes_for(hooked, check_range)
            if got == want:
                break
            time.sleep(0.05)
        got, want = _notes_for(hooked, check_range)
        complete = complete and got == want
    bare, empty, ours = (median(times[k]) for k in ("bare", "empty", "gitvault"))
    how = (
        f"`git {' '.join(op)}` of {n} commits in fresh copies of one repository: bare, with an "
        f"`exit 0` hook in each of gitvault's hook slots, and with gitvault installed (shims as "
        f"installed, background drainers live); {ctx.sizes.repeats} rounds, the order rotated "
        f"each round; medians: bare {bare:.2f} s, empty hooks {empty:.2f} s, gitvault "
        f"{ours:.2f} s. Notes complete afterwards: {'yes' if complete else 'NO'}."
    )
    key = label.replace("-", "_")
    return [
        Row(
            key,
            f"`git {label}` of {n} commits, with gitvault vs bare",
            ours / bare,
            "×",
            shown=f"{ours / bare:.2f}× ({ours:.2f} s vs {bare:.2f} s)",
            valid=complete,
            note="" if complete else "some commits got no note",
            how=how,
            details={"s": times, "complete": complete},
        ),
        Row(
            f"{key}_floor",
            f"`git {label}` of {n} commits, empty hooks vs bare (the floor)",
            empty / bare,
            "×",
            how="The same runs: what an `exit 0` hook alone costs.",
        ),
        Row(
            f"{key}_over_floor",
            f"`git {label}` of {n} commits, with gitvault vs empty hooks",
            ours / empty,
            "×",
            shown=f"{ours / empty:.2f}× ({ours:.2f} s vs {empty:.2f} s)",
            target="over_floor",
            valid=complete,
            note="" if complete else "some commits got no note",
            how="The same runs: what gitvault adds to the floor any post-commit hook pays.",
        ),
    ]


def bench_gitops(ctx: Context) -> list[Row]:
    n = ctx.sizes.rebase_commits
    picks = max(10, n * 2 // 5)
    ctx.say(f"gitops: rebase of {n} commits, cherry-pick of {picks}, a merge of {picks}")
    return [
        *_pair(ctx, "rebase", n, ["rebase", "-q", "main"], "main..topic"),
        *_pair(ctx, "cherry-pick", picks, ["cherry-pick", "main..topic"], f"main~{picks}..main"),
        *_pair(ctx, "merge", picks, ["merge", "-q", "--no-edit", "topic"], "main^!"),
    ]


MEASURES = (
    Measure(
        section="gitops",
        title="Git operations through the shims",
        run=bench_gitops,
        targets={"over_floor": Target("<=", 1.05, "×")},
        about="A rebase's picks leave gitvault's shim at its first line (git sets "
        "GIT_CHERRY_PICK_HELP for its sequencer, post-rewrite lists the commits at the end); a "
        "cherry-pick runs post-commit per pick: the spool append, and one background drainer "
        "that lingers a second so a burst starts one Python process, not one per commit.",
        summary=("rebase_over_floor", "cherry_pick_over_floor", "merge_over_floor"),
        order=30,
    ),
)
