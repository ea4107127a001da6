"""Every command as a whole process at vault_large notes: its peak RSS (the kernel's high-water
mark of the process and of the git children it waited for, from wait4) and its time (wall,
and CPU: user + system of the process and its children, which holds under load)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from harness import git
from registry import Measure, Row, Target
from repogen import HistorySpec, build_history, count_notes, fake_notes, populate_vault

from measures.common import Context, install

SYNC_NOTES = 100
FOLD_NOTES = 100
QUERY = "parser cache"


@dataclass(frozen=True)
class Run:
    """One whole process: wall seconds, CPU seconds (user + system, children included), peak
    RSS in MB (ru_maxrss: the largest of the process and its waited-for children), exit code."""

    wall: float
    cpu: float
    rss_mb: float
    code: int
    out: bytes
    err: bytes


def run_measured(
    args: list[str], cwd: Path, env: dict[str, str] | None = None, stdin: bytes = b""
) -> Run:
    """`args` as a process of its own, with its own rusage (bench/real/sandbox.measured: started
    by a small probe, so the bench's own size is never in the figure); `stdin` on its standard
    input."""
    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)  # bench.real, the one home of the probe
    from bench.real.sandbox import measured

    got = measured(args, cwd, os.environ if env is None else env, input=stdin)
    return Run(got.wall, got.cpu, got.max_rss / 2**20, got.returncode, got.stdout, got.stderr)


def gitvault_env() -> dict[str, str]:
    from gitvault.resolve import ENV_REPO

    env = dict(os.environ)
    env.pop(ENV_REPO, None)
    return env


def gitvault(args: list[str], cwd: Path) -> Run:
    return run_measured([sys.executable, "-m", "gitvault", *args], cwd, gitvault_env())


def _add_notes(repo: Path, count: int, seed: int) -> None:
    from gitvault.resolve import resolve
    from gitvault.vault.store import Vault, Write

    notes = fake_notes(count, years=1, seed=seed)
    Vault(resolve(repo)).commit_many([Write({n.path: n.text}, n.message) for n in notes])


def large_repo(ctx: Context, name: str, notes: int, commits: int) -> Path:
    """An installed repository with a `commits`-commit project history that has no notes yet,
    and a vault of `notes` generated notes, repacked."""
    repo = ctx.box.repo_dir(name)
    build_history(repo, HistorySpec(commits=commits, seed=41, start=1_650_000_000, step=4 * 3600))
    git(["checkout", "-q", "main"], repo)
    install(repo)
    start = time.perf_counter()
    populate_vault(repo, notes)
    git(["repack", "-a", "-d", "-q"], repo)
    ctx.say(f"commands: a {notes:,}-note vault generated in {time.perf_counter() - start:.1f} s")
    return repo


def bench_commands(ctx: Context) -> list[Row]:
    n = ctx.sizes.vault_large
    commits = ctx.sizes.backfill_commits
    repo = large_repo(ctx, "commands", n, commits)
    n_notes = count_notes(repo)
    listed = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "refs/heads/vault", "notes/"],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout.split()
    from gitvault.vault import layout

    shown = next(s for s in map(layout.note_sha, (p.decode() for p in listed[-50:])) if s)

    remote = ctx.box.repo_dir("commands-remote.git")
    remote.mkdir(parents=True)
    git(["init", "-q", "--bare", "-b", "main"], remote)
    git(["remote", "add", "origin", str(remote)], repo)
    git(["push", "-q", "origin", "main"], repo)

    plan: list[tuple[str, str, list[str], Path]] = [
        ("status", "`gitvault status`", ["status"], repo),
        ("status_line", "`gitvault status --line`", ["status", "--line"], repo),
        ("log", "`gitvault log` (20 entries)", ["log"], repo),
        ("log_all", "`gitvault log -n 100000 --kind note`", ["log", "-n", "100000"], repo),
        ("show", "`gitvault show <note>`", ["show", shown], repo),
        ("search_cold", "`gitvault search` building the index", ["search", QUERY], repo),
        ("search", "`gitvault search`, warm index", ["search", QUERY], repo),
        ("stats", "`gitvault stats`", ["stats"], repo),
        (
            "fold_full",
            "`gitvault fold --merger builtin`, first fold",
            ["fold", "--merger", "builtin"],
            repo,
        ),
    ]
    runs: dict[str, tuple[str, list[str], Run]] = {}

    def measure(key: str, label: str, args: list[str], cwd: Path) -> None:
        ctx.say(f"commands: {label}")
        got = gitvault(args, cwd)
        runs[key] = (label, args, got)
        if got.code != 0:
            ctx.say(f"commands: {label} exited {got.code}: {got.err.decode()[-400:]}")

    for key, label, args, cwd in plan:
        measure(key, label, args, cwd)
    _add_notes(repo, FOLD_NOTES, seed=71)
    measure(
        "fold_incremental",
        f"`gitvault fold --merger builtin`, {FOLD_NOTES} new notes",
        ["fold", "--merger", "builtin"],
        repo,
    )
    measure("verify", "`gitvault verify`", ["verify"], repo)
    measure("sync_first", "`gitvault sync`, the first push of the whole vault", ["sync"], repo)
    other = ctx.box.repo_dir("commands-clone")
    shutil.copytree(repo, other, symlinks=True)
    _add_notes(repo, SYNC_NOTES, seed=72)
    measure("sync_push", f"`gitvault sync` pushing {SYNC_NOTES} new notes", ["sync"], repo)
    measure("sync_fetch", f"`gitvault sync` fetching {SYNC_NOTES} new notes", ["sync"], other)
    measure(
        "backfill",
        f"`gitvault backfill` of a {commits:,}-commit history",
        ["backfill"],
        repo,
    )
    backfilled = count_notes(repo) - count_notes(other)

    rows: list[Row] = []
    for key, (label, args, got) in runs.items():
        ok = got.code == 0
        if key == "backfill":
            ok = ok and backfilled >= commits
        rows.append(
            Row(
                f"{key}_rss",
                f"{label}, {n_notes:,} notes: peak RSS",
                got.rss_mb,
                "MB",
                target="rss",
                valid=ok,
                note="" if ok else f"exit {got.code}: {got.err.decode()[-200:]!r}",
                shown=f"{got.rss_mb:.0f} MB (CPU {got.cpu:.2f} s, wall {got.wall:.2f} s)",
                how=f"`python -m gitvault {' '.join(args)}` as one process, reaped with wait4: "
                f"ru_maxrss (the process or the largest git child it waited for); CPU is user + "
                f"system of the process and its children.",
                details={"wall_s": got.wall, "cpu_s": got.cpu, "rss_mb": got.rss_mb},
            )
        )
    return rows


MEASURES = (
    Measure(
        section="commands",
        title="Every command at scale: peak memory and time",
        run=bench_commands,
        targets={"rss": Target("<=", 150, "MB")},
        about="Each command runs once as a whole process (`python -m gitvault …`) in a "
        "repository whose vault holds vault_large generated notes and whose project history "
        "(backfill_commits commits) has no notes yet; peak RSS comes from the kernel (wait4's "
        "ru_maxrss), which the machine's load does not change.",
        summary=(),
        order=65,
    ),
)
