"""An isolated place to replay histories: a private HOME and global git config, git without
the caller's GIT_*/GITVAULT_* variables, and child processes measured one by one (wall time,
CPU and the peak RSS of that child and the processes it waited for, from wait4, each started
by a small probe so that no figure holds the harness's own size)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# Variables that would point git or gitvault somewhere other than the replayed repository.
_DROP_PREFIXES = ("GIT_", "GITVAULT_")
NAME = "Bench Real"
EMAIL = "bench-real@example.invalid"


@dataclass
class Sandbox:
    root: Path
    env: dict[str, str]

    def path(self, name: str) -> Path:
        return self.root / name


def isolated_env(root: Path) -> dict[str, str]:
    """The environment of every child: the caller's, minus git's and gitvault's redirections,
    with a private HOME and global git config under root."""
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    gitconfig = root / "gitconfig"
    gitconfig.write_text(
        f"[user]\n\tname = {NAME}\n\temail = {EMAIL}\n"
        "[init]\n\tdefaultBranch = main\n"
        "[advice]\n\tdetachedHead = false\n"
        "[commit]\n\tgpgSign = false\n"
        "[core]\n\tquotePath = false\n"
        # No background `git gc --auto` / maintenance after the replay's commits: it would
        # run beside the measured commands, and race the sandbox's removal.
        "[gc]\n\tauto = 0\n\tautoDetach = false\n"
        "[maintenance]\n\tauto = false\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP_PREFIXES)}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_GLOBAL=str(gitconfig),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        LC_ALL="C.UTF-8",
        TZ="UTC",
    )
    return env


@contextmanager
def sandbox(parent: Path | None = None, keep: bool = False) -> Iterator[Sandbox]:
    root = Path(tempfile.mkdtemp(prefix="gitvault-real-", dir=parent)).resolve()
    try:
        yield Sandbox(root, isolated_env(root))
    finally:
        if keep:
            print(f"kept the sandbox: {root}")
        else:
            _remove(root)


def _remove(root: Path) -> None:
    """Remove the sandbox; a straggler that was still writing gets a second chance, and a
    failure is said, never hidden."""
    for attempt in range(3):
        shutil.rmtree(root, ignore_errors=True)
        if not root.exists():
            return
        time.sleep(1.0 + attempt)
    print(f"could not remove the sandbox {root}: remove it by hand")


class GitError(RuntimeError):
    pass


def git(
    args: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    *,
    input: bytes | None = None,
    check: bool = True,
) -> bytes:
    proc = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=dict(env),
        input=input,
        capture_output=True,
        check=False,
    )
    if check and proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git {' '.join(args)} (in {cwd}) exited {proc.returncode}: {err}")
    return proc.stdout


def git_ok(args: Sequence[str], cwd: Path, env: Mapping[str, str]) -> bool:
    """Whether a git command exits 0 (for the commands that answer with their exit status)."""
    proc = subprocess.run(["git", *args], cwd=cwd, env=dict(env), capture_output=True, check=False)
    return proc.returncode == 0


@dataclass
class Measured:
    argv: list[str]
    returncode: int
    stdout: bytes
    stderr: bytes
    wall: float  # seconds
    cpu: float  # user + system seconds of the child and what it waited for
    max_rss: int  # bytes: the largest RSS of the child or of any process it waited for

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    def require(self) -> Measured:
        if self.returncode != 0:
            err = self.stderr.decode("utf-8", "replace").strip()[-2000:]
            raise RuntimeError(f"{' '.join(self.argv)} exited {self.returncode}: {err}")
        return self


# Every measured command is started by this probe, a bare interpreter (~10 MB), never by the
# harness itself: on exec, Linux keeps the high-water RSS of the memory the new program
# replaces, and a child the harness starts (vfork or fork) replaces the harness's own, so its
# ru_maxrss could never read below the harness's size (a replay of git/git grows to ~400 MB:
# `/bin/true` reported as much). The probe forks, execs the command and writes what wait4 said.
PROBE = """
import json, os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(sys.argv[1], "w") as f:
    json.dump([wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, os.waitstatus_to_exitcode(status)], f)
"""


def measured(
    argv: Sequence[str], cwd: Path, env: Mapping[str, str], *, input: bytes | None = None
) -> Measured:
    """Run one child and measure it alone: wait4 reports that child's own rusage (peak RSS of
    it and its waited-for descendants), unlike RUSAGE_CHILDREN, whose maximum spans every
    child this process ever had; started by PROBE, so the figure is the child's, not the
    harness's."""
    with tempfile.TemporaryDirectory(prefix="gitvault-probe-") as scratch:
        report = Path(scratch) / "rusage.json"
        proc = subprocess.run(
            [sys.executable, "-I", "-S", "-c", PROBE, str(report), *argv],
            cwd=cwd,
            env=dict(env),
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
        if not report.exists():
            raise RuntimeError(f"the probe could not run {argv[0]}: {proc.stderr[-400:]!r}")
        wall, cpu, rss_kib, code = json.loads(report.read_text(encoding="utf-8"))
    return Measured(
        list(argv),
        int(code),
        proc.stdout,
        proc.stderr,
        float(wall),
        float(cpu),
        int(rss_kib) * 1024,  # Linux reports kilobytes
    )


def load_average() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")
