"""The one door through which gitvault starts a process: git (always through vault/gitcmd, which
adds the git-specific environment and errors), the model CLIs a fold merger runs, and the
detached fold. Standard library only (the hooks start git through it).

Every caller gets the same guarantees: no shell, a bounded wait where it asks for one, and a
child that cannot outlive what it was started for unless it is meant to (`spawn_detached`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from gitvault.named import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import IO


class Timeout(Exception):
    """The process did not finish in time (it was killed)."""


class Finished(NamedTuple):
    returncode: int
    stdout: bytes
    stderr: bytes


def run(
    argv: Sequence[str],
    *,
    cwd: Path | str | None = None,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> Finished:
    """Run to completion with its output captured; stdin is `input`, else nothing (never the
    caller's terminal). Raises FileNotFoundError / OSError when it cannot start, Timeout."""
    try:
        proc = subprocess.run(
            list(argv),
            cwd=cwd,
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            env=None if env is None else dict(env),
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        raise Timeout(f"{argv[0]} did not finish within {timeout}s") from exc
    return Finished(proc.returncode, proc.stdout, proc.stderr)


def _piped(
    argv: Sequence[str], cwd: Path | str | None, env: Mapping[str, str] | None
) -> subprocess.Popen[bytes]:
    """A child with no stdin, its stdout and stderr piped to the caller."""
    return subprocess.Popen(
        list(argv),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=None if env is None else dict(env),
    )


class Started:
    """A child running beside its caller, its (small) output read whole by `finish`."""

    def __init__(self, argv: Sequence[str], proc: subprocess.Popen[bytes]) -> None:
        self._name = argv[0]
        self._proc = proc

    def finish(self, timeout: float | None = None) -> Finished:
        """Wait for it (Timeout: it was killed)."""
        try:
            out, err = self._proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            self.abandon()
            raise Timeout(f"{self._name} did not finish within {timeout}s") from exc
        return Finished(self._proc.returncode, out, err)

    def abandon(self) -> None:
        """Its answer is not wanted: killed if it still runs, and reaped."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.communicate()


def start(
    argv: Sequence[str], *, cwd: Path | str | None = None, env: Mapping[str, str] | None = None
) -> Started:
    """Start a child whose answer is wanted later (`Started.finish`), so that several run side
    by side; stdin is nothing. Raises FileNotFoundError / OSError when it cannot start."""
    proc = _piped(argv, cwd, env)
    return Started(argv, proc)


class Filed:
    """A child reading its input from a file and writing its output to another (`start_filed`):
    several run side by side, none ever blocked on a pipe its caller has not read yet."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self._proc = proc

    def wait(self) -> int:
        return self._proc.wait()

    def stop(self) -> None:
        """Killed if it still runs, and reaped."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()


def start_filed(
    argv: Sequence[str],
    *,
    cwd: Path | str | None,
    env: Mapping[str, str] | None,
    stdin: IO[bytes],
    stdout: IO[bytes],
    stderr: IO[bytes],
) -> Filed:
    """Start a child on open files (the caller's to close once it started). Raises
    FileNotFoundError / OSError when it cannot start."""
    proc = subprocess.Popen(
        list(argv),
        cwd=cwd,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env=None if env is None else dict(env),
    )
    return Filed(proc)


class Streaming:
    """A running child's stdout, chunk by chunk (iterate), then how it ended (`finish`)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None and proc.stderr is not None
        self._proc = proc
        self._out: IO[bytes] = proc.stdout
        self._err: IO[bytes] = proc.stderr

    def __iter__(self) -> Iterator[bytes]:
        while chunk := self._out.read(1 << 16):
            yield chunk

    def finish(self) -> Finished:
        """Once the output is read: the return code and stderr."""
        stderr = self._err.read()
        return Finished(self._proc.wait(), b"", stderr)


@contextmanager
def stream(
    argv: Sequence[str], *, cwd: Path | str | None = None, env: Mapping[str, str] | None = None
) -> Iterator[Streaming]:
    """The child's stdout while it runs. Leaving the block before the end kills it: a reader
    that has what it needs never waits for the rest. Raises OSError when it cannot start."""
    proc = _piped(argv, cwd, env)
    try:
        yield Streaming(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait()


def run_isolated(
    argv: Sequence[str],
    *,
    input: bytes,
    env: Mapping[str, str],
    cwd: Path | str,
    timeout: float,
) -> Finished:
    """A model CLI: in a session (and so a process group) of its own, dying with this process
    on Linux (even when it is SIGKILLed: no orphan keeps spending model credits), and killed
    with its whole group at the timeout (Timeout). Raises OSError when it cannot start."""
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env),
        cwd=cwd,
        start_new_session=True,
        preexec_fn=_die_with_parent,
    )
    try:
        stdout, stderr = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()
        raise Timeout(f"{argv[0]} did not answer within {timeout:.0f}s") from None
    return Finished(proc.returncode, stdout, stderr)


class Stopped(Exception):
    """A watched process was stopped (its whole group killed) for the reason given."""


def run_watched(
    argv: Sequence[str],
    *,
    cwd: Path | str,
    env: Mapping[str, str] | None,
    timeout: float,
    watch: Callable[[], str | None],
    interval: float = 0.25,
    stall: float | None = None,
) -> Finished:
    """A network child (git fetch and the ssh or https helper it starts): in a process group of
    its own, dying with this process, its output in temporary files (never a pipe that could
    fill), and `watch()` asked every `interval` seconds; when it names a reason, at the
    timeout, or (stall) when it wrote nothing for that many seconds (git push --progress
    reports as it sends), the whole group is killed and Stopped (or Timeout) raised: nothing is
    left behind. Raises OSError when it cannot start."""
    import threading

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)  # unwinds through the finally below: the group dies

    handled = (signal.SIGTERM, signal.SIGHUP)
    before = {}
    if threading.current_thread() is threading.main_thread():
        before = {s: signal.signal(s, stop) for s in handled}
    try:
        return _watched(argv, cwd, env, timeout, watch, interval, stall)
    finally:
        for sig, old in before.items():
            signal.signal(sig, old)


def _watched(
    argv: Sequence[str],
    cwd: Path | str,
    env: Mapping[str, str] | None,
    timeout: float,
    watch: Callable[[], str | None],
    interval: float,
    stall: float | None = None,
) -> Finished:
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=None if env is None else dict(env),
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        deadline = time.monotonic() + timeout
        reason: str | None = None
        late = False
        written, since = 0, time.monotonic()
        try:
            while proc.poll() is None:
                reason = watch()
                now = time.monotonic()
                if reason is None and stall is not None:
                    size = os.fstat(out.fileno()).st_size + os.fstat(err.fileno()).st_size
                    if size != written:
                        written, since = size, now
                    elif now - since > stall:
                        reason = f"{argv[0]} reported nothing for {stall:.0f}s"
                if reason is None and now > deadline:
                    late, reason = True, f"{argv[0]} did not finish within {timeout:.0f}s"
                if reason is not None:
                    break
                try:
                    proc.wait(interval)
                except subprocess.TimeoutExpired:
                    pass
        finally:  # also when this process is told to stop (SIGTERM, SIGHUP, Ctrl-C)
            if proc.poll() is None or reason is not None:
                _kill_group(proc)
        if reason is not None:
            raise (Timeout if late else Stopped)(reason)
        out.seek(0)
        err.seek(0)
        return Finished(proc.returncode, out.read(), err.read())


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()


def _die_with_parent() -> None:
    """Linux: the child gets SIGKILL when its parent dies. Elsewhere a no-op."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def spawn_detached(
    argv: Sequence[str], *, cwd: Path | str, env: Mapping[str, str], output: int
) -> int:
    """Start a child that outlives this process (its own session: a terminal's Ctrl-C or a
    tool killing our process group does not reach it), its output and errors written to the
    descriptor `output` (the caller's to open, as a regular file, and to close). No one waits
    for it; it exits when its work ends. Returns its pid."""
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=output,
        start_new_session=True,
        cwd=cwd,
        env=dict(env),
    )
    return proc.pid


def open_in_browser(path: Path) -> bool:
    """Open a local file in the user's web browser (the standard library's webbrowser starts
    it; this is the door it goes through): whether a browser was found."""
    import webbrowser

    return webbrowser.open(path.resolve().as_uri())
