"""Find (or install once) the real Claude Code CLI for end-to-end tests, and run it isolated.

Lookup order:
1. ``GITVAULT_TEST_CLAUDE``: path to an executable ``claude``.
2. ``<repo>/.cache/claude-code/node_modules/.bin/claude``, installed there with npm when missing.
   A file lock makes parallel pytest workers (xdist) install it once.

``claude_binary()`` returns None when the CLI cannot be had; ``claude_unavailable_reason()``
then says why, for ``pytest.skip``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.support.paths import ROOT

CACHE_DIR = ROOT / ".cache" / "claude-code"
PACKAGE = "@anthropic-ai/claude-code"
VERSION = "2.1.197"  # the version the hook facts in tests and docs were checked against
ENV_VAR = "GITVAULT_TEST_CLAUDE"
INSTALL_TIMEOUT = 300.0
FAKE_API_KEY = "sk-ant-fake"


def cached_binary_path(cache_dir: Path = CACHE_DIR) -> Path:
    return cache_dir / "node_modules" / ".bin" / "claude"


def claude_binary() -> Path | None:
    """The CLI to test against, installing it into the cache on first use; None if unavailable."""
    return _locate()[0]


def claude_unavailable_reason() -> str:
    """Why ``claude_binary()`` returned None ("" when it did not)."""
    return _locate()[1]


def claude_version(binary: Path) -> str:
    """``claude --version`` output, e.g. "2.1.197 (Claude Code)"."""
    return _version(binary)[0]


@functools.cache
def _locate() -> tuple[Path | None, str]:
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        path = Path(explicit).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            return None, f"{ENV_VAR}={explicit} is not an executable file"
        return _checked(path, f"{ENV_VAR}={explicit}")
    return install_into(CACHE_DIR)


def install_into(cache_dir: Path, *, timeout: float = INSTALL_TIMEOUT) -> tuple[Path | None, str]:
    """Make sure ``cache_dir`` holds an npm install of the CLI; return (binary, reason)."""
    binary = cached_binary_path(cache_dir)
    if _runs(binary):
        return binary, ""
    npm = shutil.which("npm")
    node = shutil.which("node")
    if npm is None or node is None:
        missing = " and ".join(n for n, p in (("npm", npm), ("node", node)) if p is None)
        return None, (
            f"Claude Code CLI not available: {missing} not found on PATH, so "
            f"`npm install {PACKAGE}` into {cache_dir} is impossible "
            f"(or set {ENV_VAR} to a claude executable)"
        )
    cache_dir.mkdir(parents=True, exist_ok=True)
    with file_lock(cache_dir / ".install.lock", timeout=timeout + 60):
        if _runs(binary):  # another worker installed it while we waited
            return binary, ""
        command = [
            npm,
            "install",
            "--prefix",
            str(cache_dir),
            "--no-audit",
            "--no-fund",
            f"{PACKAGE}@{VERSION}",
        ]
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return None, f"`{' '.join(command)}` timed out after {timeout:.0f} s"
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-15:]
            return None, (
                f"`{' '.join(command)}` failed with exit code {done.returncode}:\n"
                + "\n".join(tail)
            )
    return _checked(binary, f"npm install into {cache_dir}")


def _checked(binary: Path, origin: str) -> tuple[Path | None, str]:
    version, error = _version(binary)
    if error:
        return None, f"Claude Code CLI from {origin} ({binary}) does not run: {error}"
    return binary, ""


def _runs(binary: Path) -> bool:
    return binary.exists() and not _version(binary)[1]


@functools.cache
def _version(binary: Path) -> tuple[str, str]:
    """(version text, error text); exactly one is non-empty."""
    try:
        with tempfile.TemporaryDirectory(prefix="claude-version-") as home:
            done = subprocess.run(
                [str(binary), "--version"],
                capture_output=True,
                text=True,
                timeout=60,
                env=_base_env(Path(home)),
                stdin=subprocess.DEVNULL,
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "", str(exc)
    if done.returncode != 0 or not done.stdout.strip():
        return "", f"`claude --version` exit {done.returncode}: {done.stderr.strip()[:500]}"
    return done.stdout.strip(), ""


@contextmanager
def file_lock(path: Path, *, timeout: float) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no parallel-install protection
        yield
        return
    with path.open("a+") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"could not lock {path} within {timeout:.0f} s") from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _base_env(home: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    # Hook scripts in tests run under this interpreter's directory first.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env["PATH"]])
    return env


def claude_env(
    *, home: Path, base_url: str, extra_env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A from-scratch environment: nothing from the real HOME or the caller's Claude setup."""
    env = _base_env(home)
    env["ANTHROPIC_BASE_URL"] = base_url
    env["ANTHROPIC_API_KEY"] = FAKE_API_KEY
    if extra_env:
        env.update(extra_env)
    return env


def run_claude(
    binary: Path,
    args: Sequence[str],
    *,
    cwd: Path,
    home: Path,
    base_url: str,
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``claude <args>`` in ``cwd`` against the mock at ``base_url``, with HOME=``home``."""
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [str(binary), *args],
        cwd=cwd,
        env=claude_env(home=home, base_url=base_url, extra_env=extra_env),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def transcripts(home: Path) -> list[Path]:
    """Main-session transcript files written under ``home`` (not subagent side files)."""
    root = home / ".claude" / "projects"
    return sorted(p for p in root.glob("*/*.jsonl") if p.is_file())
