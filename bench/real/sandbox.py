"""An isolated place to replay histories: a private HOME and global git config, git without
the caller's GIT_*/GITVAULT_* variables, and child processes measured one by one (wall time,
CPU and the peak RSS of that child and the processes it waited for, from wait4)."""

from __future__ import annotations

import os
import shutil
import subprocess
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


def measured(
    argv: Sequence[str], cwd: Path, env: Mapping[str, str], *, input: bytes | None = None
) -> Measured:
    """Run one child and measure it alone: wait4 reports that child's own rusage (peak RSS of
    it and its waited-for descendants), unlike RUSAGE_CHILDREN, whose maximum spans every
    child this process ever had."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
        if input is not None and proc.stdin is not None:
            proc.stdin.write(input)
            proc.stdin.close()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Measured(
            list(argv),
            proc.returncode,
            out.read(),
            err.read(),
            wall,
            usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss * 1024,  # Linux reports kilobytes
        )


def load_average() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")
