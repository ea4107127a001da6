"""The benchmark sandbox: isolated git identity, temp repositories, git helpers, the drainer
processes gitvault starts, small statistics and the machine description.

Nothing here imports gitvault or pygit2: run.py sets up the isolated environment first (HOME,
GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM), and only then imports them, so libgit2 never reads the
real user's configuration either.
"""

from __future__ import annotations

import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import installed

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent

# Identity of every commit the harness makes in its scratch repositories.
NAME = "Bench Author"
EMAIL = "bench@example.invalid"

# Variables that would redirect git or gitvault away from the scratch repositories.
_DROP_ENV_PREFIXES = ("GIT_", "GITVAULT_")


@dataclass
class Sandbox:
    """A temp folder holding a private HOME, a private global git config and the repositories."""

    root: Path
    home: Path
    gitconfig: Path
    saved_env: dict[str, str | None] = field(default_factory=dict)

    def repo_dir(self, name: str) -> Path:
        return self.root / "repos" / name

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ)
        if extra:
            env.update(extra)
        return env


@contextmanager
def sandbox(keep: bool = False) -> Iterator[Sandbox]:
    """Isolate git for this process and its children; remove everything afterwards.

    Same isolation as the test suite: HOME → a temp dir, GIT_CONFIG_GLOBAL → a temp file,
    GIT_CONFIG_NOSYSTEM=1. Drainers gitvault started in the sandbox are waited for and, if
    they outlive a grace period, ended by pid (only processes whose command line names the
    sandbox) before the folder is removed.
    """
    root = Path(tempfile.mkdtemp(prefix="gitvault-bench-")).resolve()
    home = root / "home"
    home.mkdir()
    (root / "repos").mkdir()
    gitconfig = root / "gitconfig"
    gitconfig.write_text(
        "[user]\n"
        f"\tname = {NAME}\n"
        f"\temail = {EMAIL}\n"
        "[init]\n\tdefaultBranch = main\n"
        "[advice]\n\tdetachedHead = false\n"
        "[commit]\n\tgpgSign = false\n",
        encoding="utf-8",
    )
    box = Sandbox(root=root, home=home, gitconfig=gitconfig)
    wanted = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_GLOBAL": str(gitconfig),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
        "TZ": "UTC",
    }
    for key in list(os.environ):
        if key.startswith(_DROP_ENV_PREFIXES) and key not in wanted:
            box.saved_env[key] = os.environ.pop(key)
    for key, value in wanted.items():
        box.saved_env.setdefault(key, os.environ.get(key))
        os.environ[key] = value
    try:
        yield box
    finally:
        stray = wait_no_drainers(root, timeout=30.0)
        for pid in stray:  # only processes whose command line names this sandbox
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        if stray:
            wait_no_drainers(root, timeout=5.0)
        for key, value in box.saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if keep:
            print(f"kept sandbox: {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)


# -- processes ------------------------------------------------------------------------------


def drainer_pids(under: Path) -> list[int]:
    """Pids of drainer processes (`gitvault-hook git drain <dir>`) whose dir lies under `under`."""
    needle = str(under).encode()
    pids: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        if b"git\x00drain\x00" in cmdline and needle in cmdline:
            pids.append(int(entry.name))
    return pids


def wait_no_drainers(under: Path, timeout: float = 60.0, poll: float = 0.005) -> list[int]:
    """Wait until no drainer for `under` runs; returns the pids still alive at the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        pids = drainer_pids(under)
        if not pids or time.monotonic() > deadline:
            return pids
        time.sleep(poll)


# -- git ------------------------------------------------------------------------------------


def git(
    args: Sequence[str],
    cwd: Path,
    *,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, input=input, capture_output=True, env=env, check=False
    )
    if check and proc.returncode != 0:
        raise RuntimeError(
            f"git {' '.join(args)} failed ({proc.returncode}) in {cwd}: "
            f"{proc.stderr.decode(errors='replace').strip()[-800:]}"
        )
    return proc


def git_out(args: Sequence[str], cwd: Path) -> str:
    return git(args, cwd).stdout.decode("utf-8", "replace").strip()


def timed_git(args: Sequence[str], cwd: Path) -> float:
    """Wall-clock seconds of one git command, from spawn to exit."""
    start = time.perf_counter()
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(
            f"git {' '.join(args)} failed in {cwd}: {proc.stderr.decode(errors='replace')}"
        )
    return elapsed


def init_repo(path: Path, files: Mapping[str, str] | None = None) -> Path:
    path.mkdir(parents=True)
    git(["init", "-q"], path)
    for name, text in (files or {"README.md": "scratch repository\n"}).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git(["add", "-A"], path)
    git(["commit", "-q", "-m", "initial commit"], path)
    return path


# -- statistics -----------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def percentile(values: Sequence[float], pct: float) -> float:
    """Linear-interpolated percentile (pct in 0..100)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no samples")
    if len(ordered) == 1:
        return ordered[0]
    rank = (len(ordered) - 1) * pct / 100.0
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


# -- the machine ----------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Hardware", "Processor") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ram() -> str:
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    kib = int(line.split()[1])
                    return f"{kib / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return "unknown"


def _os_name() -> str:
    pretty = None
    try:
        with open("/etc/os-release", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("PRETTY_NAME="):
                    pretty = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    kernel = f"{platform.system()} {platform.release()}"
    return f"{pretty} ({kernel})" if pretty else kernel


# Files a run of the harness itself rewrites: they do not make the measured code "changed".
GENERATED = ("BENCHMARKS.md", "README.md", "bench/results.json")


def checkout() -> tuple[str, bool]:
    """The commit measured (12 hex digits) and whether the working tree differs from it in
    anything but the files the harness writes."""
    try:
        head = git_out(["rev-parse", "--short=12", "HEAD"], REPO_ROOT)
        status = git(
            [
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                *(f":!{p}" for p in GENERATED),
            ],
            REPO_ROOT,
        )
    except (RuntimeError, OSError):
        return "unknown", False
    return head, bool(status.stdout.strip())


def small_file_cost(where: Path, count: int = 200) -> float:
    """Median seconds to create one small file the way git writes a loose object (create a
    temp file in a fan-out folder, write, close, rename): the disk's metadata speed."""
    base = Path(tempfile.mkdtemp(prefix="fsprobe-", dir=where))
    times = []
    try:
        for i in range(count):
            shard = base / f"{i % 256:02x}"
            start = time.perf_counter()
            shard.mkdir(exist_ok=True)
            tmp = shard / f"tmp_{i}"
            with open(tmp, "wb") as fh:
                fh.write(b"x" * 200)
            os.rename(tmp, shard / f"obj_{i}")
            times.append(time.perf_counter() - start)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return median(times)


def cpu_busy(window: float = 1.0) -> float:
    """Fraction of all CPUs busy (any process) over `window` seconds, from /proc/stat."""

    def sample() -> tuple[int, int]:
        with open("/proc/stat", encoding="utf-8") as fh:
            fields = [int(x) for x in fh.readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        return idle, sum(fields)

    try:
        idle0, total0 = sample()
        time.sleep(window)
        idle1, total1 = sample()
    except (OSError, ValueError, IndexError):
        return float("nan")
    total = total1 - total0
    return 1.0 - (idle1 - idle0) / total if total > 0 else 0.0


def wait_for_quiet(max_busy: float, max_wait: float, say: Callable[[str], None]) -> float:
    """Wait (up to max_wait seconds) until other work leaves the CPUs mostly idle: busy
    fraction ≤ max_busy over 3 consecutive 1-second samples. Returns the last busy fraction."""
    deadline = time.monotonic() + max_wait
    calm = 0
    busy = cpu_busy()
    announced = False
    while time.monotonic() < deadline:
        calm = calm + 1 if busy <= max_busy else 0
        if calm >= 3:
            break
        if not announced and busy > max_busy:
            say(f"waiting for a quieter machine (CPUs {busy:.0%} busy; want ≤ {max_busy:.0%})")
            announced = True
        busy = cpu_busy()
    return busy


def load_average() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def _fs_type(path: Path) -> str:
    best, kind = "", "unknown"
    try:
        with open("/proc/mounts", encoding="utf-8") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 3 and str(path).startswith(parts[1]) and len(parts[1]) > len(best):
                    best, kind = parts[1], parts[2]
    except OSError:
        pass
    return kind


def cpu_seconds() -> float:
    """User + system CPU time of this process and of its waited-for children so far."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def machine(scratch: Path) -> dict[str, object]:
    """What a figure depends on besides gitvault: recorded with every section."""
    import pygit2  # imported after the sandbox is set up (see module docstring)

    import gitvault

    cores = os.cpu_count() or 0
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = cores
    return {
        "cpu": _cpu_model(),
        "cores": cores,
        "usable_cores": usable,
        "ram": _ram(),
        "os": _os_name(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "git": git_out(["--version"], REPO_ROOT).removeprefix("git version "),
        "pygit2": f"{pygit2.__version__} (libgit2 {pygit2.LIBGIT2_VERSION})",
        "gitvault": f"{gitvault.__version__}, {installed.how()}",
        "scratch": f"{scratch.parent} ({_fs_type(scratch)}), one small-file create (mkdir -p, "
        f"write, rename, as git writes a loose object) {small_file_cost(scratch) * 1e6:,.0f} µs",
    }


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
