"""Many worktrees committing at once through the installed hooks, with background drainers as
in real use: the driver behind the concurrency tests (a small run in the default suite, the
large one under `just stress`)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from tests.support.repos import Repo

BURN = "while True: pass"


@contextmanager
def cpu_burners(count: int) -> Iterator[None]:
    """`count` CPU-bound processes beside the test: hooks get preempted where they would not
    be on an idle machine (between opening the spool and writing to it, say)."""
    procs = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(count)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def commit_at_once(repo: Repo, worktrees: int, commits: int) -> dict[str, list[str]]:
    """`worktrees` linked worktrees of repo, each making `commits` commits one after another,
    all worktrees at once (real `git commit` through the installed hooks); every note is
    waited for and checked: exactly one vault commit per note, each note names its worktree.
    Returns the commits made, by worktree."""
    trees = [repo.worktree(f"w{i}") for i in range(worktrees)]
    made: dict[str, list[str]] = {wt.path.name: [] for wt in trees}
    errors: list[BaseException] = []
    start = threading.Barrier(len(trees))

    def work(wt: Repo) -> None:
        try:
            start.wait()
            for i in range(commits):
                made[wt.path.name].append(wt.commit(f"{wt.path.name} commit {i}"))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(wt,)) for wt in trees]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    every = [sha for shas in made.values() for sha in shas]
    assert len(set(every)) == worktrees * commits
    repo.wait_for_notes(every, timeout=300)
    repo.wait_no_drainer()
    notes = [s for s in repo.vault_log() if s[1].startswith("note ")]
    assert len(notes) == len(every), "one vault commit per note, none doubled"
    for name, shas in made.items():
        for sha in shas[:3]:
            assert repo.note_meta(sha)["worktree"] == name
    return made
