"""Writers killed at random points: the driver the kill-point tests share (a few rounds in
tests/test_hardening.py, many in tests/stress/test_kill_points.py)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

from tests.support.repos import Repo


def kill_rounds(repo: Repo, rounds: int, seed: int) -> list[str]:
    """SIGKILL drainers and bulk writers at random moments in a repository whose commits are
    noted in the background; after each, the next run must complete and lose nothing.
    Returns what failed (empty when all held)."""

    rng = random.Random(seed)
    failures: list[str] = []
    expected: set[str] = set()
    for round_ in range(rounds):
        shas = [repo.commit(f"r{round_} c{i}", hooks=False) for i in range(rng.randint(5, 40))]
        expected.update(shas)
        line = "commit\t{}\tref: refs/heads/main\tmain\t{}\n"
        with open(repo.state_dir / "spool", "a") as fh:
            fh.write("".join(line.format(s, repo.git_dir) for s in shas))
        what = rng.choice(["drain", "backfill"])
        cmd = (
            [sys.executable, "-m", "gitvault.hook", "git", "drain", str(repo.common_dir), "--wait"]
            if what == "drain"
            else [sys.executable, "-m", "gitvault", "--repo", str(repo.path), "backfill"]
        )
        delay = rng.uniform(0.0, 0.6)
        proc = subprocess.Popen(
            cmd, cwd=repo.path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        # The next run: a read answers, a drain completes, nothing is lost or wedged.
        if repo.gv("log", "-n", "1").code != 0:
            failures.append(f"round {round_}: log failed after killing {what} at {delay:.2f}s")
        done = subprocess.run(
            [sys.executable, "-m", "gitvault.hook", "git", "drain", str(repo.common_dir), "--wait"],
            cwd=repo.path,
            capture_output=True,
            timeout=120,
        )
        missing = expected - set(repo.note_paths())
        if done.returncode != 0 or missing:
            failures.append(
                f"round {round_}: after killing {what} at {delay:.2f}s, "
                f"{len(missing)} notes missing; {done.stderr.decode()[-300:]}"
            )
        print(f"round {round_}: killed {what} after {delay:.2f}s; {len(expected)} notes expected")
    fsck = repo.run("fsck", "--strict", "--no-dangling", check=False)
    if fsck.returncode != 0:
        failures.append(f"git fsck: {fsck.stderr.decode()[-500:]}")
    if repo.git("for-each-ref", "refs/gitvault/"):
        failures.append("an import ref was left behind")
    if (repo.common_dir / "refs" / "heads" / "vault.lock").exists():
        failures.append("vault.lock was left behind")
    assert os.path.isdir(repo.state_dir)
    return failures
