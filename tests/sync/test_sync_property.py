"""Sync in random orders (property style, many seeds): a bare remote that refuses every
non-fast-forward, three clones committing in several worktrees, saving and folding. Every
clone ends with the same vault tree, every note and session of every clone is there exactly
once, nothing was ever forced, and `git fsck --strict` is clean. Also: a sync killed at
random points loses nothing, and concurrent syncs converge within the retry bound.

GITVAULT_SYNC_SEEDS=N runs N seeds (default 4)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gitvault.memory import sessions
from gitvault.resolve import resolve
from gitvault.vault import layout
from tests.support.remotes import bare_remote, clone, fsck, seed, tree
from tests.support.repos import Repo, git

SEEDS = int(os.environ.get("GITVAULT_SYNC_SEEDS", "4"))
SESSION = "## Summary\n{0}\n\n## Key Decisions\n- decided {0}\n\n## Next Steps\n- more\n"


def _sync(repo: Repo) -> None:
    result = repo.gv("sync")
    assert result.code == 0, result


@pytest.mark.parametrize("seed_", range(SEEDS))
def test_random_sync_orders_converge(seed_: int, tmp_path: Path) -> None:
    rng = random.Random(seed_)
    remote = bare_remote(tmp_path / "remote.git")
    seed(remote, tmp_path / "seed")
    clones = [clone(remote, tmp_path / name) for name in "abc"]
    worktrees = {
        c.path: [c, c.worktree(f"{c.path.name}-wt", f"{c.path.name}-topic")] for c in clones
    }
    commits: set[str] = set()
    saved: set[str] = set()
    for step in range(14):
        who = rng.choice(clones)
        action = rng.choice(["commit", "commit", "save", "fold", "sync", "sync", "sync"])
        if action == "commit":
            commits.add(
                rng.choice(worktrees[who.path]).commit(f"feat: step {step} in {who.path.name}")
            )
        elif action == "save":
            title = f"{who.path.name} step {step}"
            saved.add(
                sessions.save_session(resolve(who.path), SESSION.format(title), title=title).path
            )
        elif action == "fold":
            assert who.gv("fold", "--merger", "builtin").code == 0
        else:
            _sync(who)
    for _ in range(2):  # settle: everyone syncs, then everyone fast-forwards
        for c in clones:
            _sync(c)
    trees = [tree(c) for c in clones]
    assert trees[0] == trees[1] == trees[2]
    final = trees[0]
    noted = [layout.note_sha(p) for p in final if layout.note_sha(p)]
    assert len(noted) == len(set(noted))
    assert commits <= set(noted), "every commit of every clone has its note"
    assert saved <= set(final), "every session of every clone is there"
    assert git(remote, "rev-parse", "vault") == clones[0].vault_tip()
    for c in clones:
        fsck(c.path)
    fsck(remote)


def test_sync_killed_at_random_points_loses_nothing(tmp_path: Path) -> None:
    rng = random.Random(7)
    remote = bare_remote(tmp_path / "remote.git")
    seed(remote, tmp_path / "seed")
    a = clone(remote, tmp_path / "a")
    b = clone(remote, tmp_path / "b")
    _sync(a)
    _sync(b)
    made: set[str] = set()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for round_ in range(8):
        for repo in (a, b):
            made.add(repo.commit(f"feat: round {round_} {repo.path.name}"))
        victim = rng.choice([a, b])
        proc = subprocess.Popen(
            [sys.executable, "-m", "gitvault", "sync"],
            cwd=victim.path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        time.sleep(rng.uniform(0.0, 0.6))
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    for repo in (a, b, a):
        _sync(repo)
    assert tree(a) == tree(b)
    noted = {layout.note_sha(p) for p in tree(a)}
    assert made <= noted
    fsck(a.path)
    fsck(b.path)
    fsck(remote)


def test_concurrent_syncs_converge_within_the_retry_bound(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    seed(remote, tmp_path / "seed")
    first = clone(remote, tmp_path / "c0")
    _sync(first)
    clones = [first] + [clone(remote, tmp_path / f"c{i}") for i in range(1, 6)]
    made = {c.commit(f"feat: from {c.path.name}") for c in clones}
    with ThreadPoolExecutor(len(clones)) as pool:
        results = list(
            pool.map(
                lambda c: subprocess.run(
                    [sys.executable, "-m", "gitvault", "sync"],
                    cwd=c.path,
                    capture_output=True,
                    text=True,
                    env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                ),
                clones,
            )
        )
    for proc in results:
        assert proc.returncode == 0, proc.stderr
    for c in clones:
        _sync(c)
    trees = [tree(c) for c in clones]
    assert all(t == trees[0] for t in trees)
    assert made <= {layout.note_sha(p) for p in trees[0]}
    fsck(remote)
