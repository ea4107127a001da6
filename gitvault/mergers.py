"""Mergers: what turns the current digest plus new items into a new digest.

claude  — `claude -p`, prompt on stdin, no tools, hooks disabled, GITVAULT_CHILD=1, and
          ANTHROPIC_API_KEY removed (a subscription login is used) unless fold.use_api_key.
command — any command line that reads the prompt on stdin and prints the digest.
builtin — deterministic and offline (see builtin_merge.py).
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass

from gitvault.errors import GitvaultError

NAMES = ("claude", "command", "builtin")
CHILD_SETTINGS = '{"disableAllHooks": true}'
MAX_OUTPUT = 200_000
NESTING_MARKERS = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")


class MergerUnavailable(GitvaultError):
    pass


class MergerFailed(GitvaultError):
    pass


@dataclass(frozen=True)
class ModelMerger:
    name: str  # claude | command
    argv: tuple[str, ...]
    env: dict[str, str]
    timeout: float
    model: str | None

    def complete(self, prompt: str) -> str:
        # A neutral working directory: run in the project, `claude -p` would load its CLAUDE.md
        # and git status into the fold's context (tens of thousands of characters, and the
        # project's own instructions mixed into a merge task).
        with tempfile.TemporaryDirectory(prefix="gitvault-fold-") as neutral:
            return self._run(prompt, neutral)

    def _run(self, prompt: str, cwd: str) -> str:
        try:
            proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
                cwd=cwd,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        except OSError as exc:
            raise MergerUnavailable(f"cannot run {self.argv[0]}: {exc.strerror}") from exc
        try:
            stdout, stderr = proc.communicate(prompt.encode(), timeout=self.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise MergerFailed(
                f"the {self.name} merger did not answer within {self.timeout:.0f}s",
                hint="raise fold.timeout_seconds in vault.toml, or fold fewer items per call",
            ) from None
        if proc.returncode != 0:
            detail = (stderr or stdout).decode("utf-8", "replace").strip().splitlines()
            raise MergerFailed(
                f"the {self.name} merger exited with {proc.returncode}: "
                f"{detail[-1] if detail else 'no output'}"
            )
        return stdout[:MAX_OUTPUT].decode("utf-8", "replace")


def _die_with_parent() -> None:
    """Linux: the merger dies when the fold does (even by SIGKILL), so no orphan keeps
    spending model credits. Elsewhere a no-op."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait()


def child_env(*, keep_api_key: bool) -> dict[str, str]:
    env = dict(os.environ)
    env["GITVAULT_CHILD"] = "1"  # every gitvault hook exits at once inside this child
    # A fold started from a Claude Code hook inherits CLAUDECODE; Claude Code >= 2.1.39 then
    # refuses to start ("cannot be launched inside another Claude Code session"). The child is
    # a separate, non-interactive, hook-less session, so the marker must not leak into it.
    for name in NESTING_MARKERS:
        env.pop(name, None)
    if not keep_api_key:
        env.pop("ANTHROPIC_API_KEY", None)  # removed, not blanked: an empty key still wins
    return env


def claude_merger(model: str | None, timeout: float, *, use_api_key: bool) -> ModelMerger:
    binary = os.environ.get("GITVAULT_CLAUDE") or shutil.which("claude")
    if not binary:
        # One line that names the alternatives (no separate hint line).
        raise MergerUnavailable(
            "the claude merger needs the `claude` CLI on PATH, and it is not there: "
            "install Claude Code, or use --merger builtin (offline) or --merger command "
            "(fold.command in vault.toml)"
        )
    argv = [
        binary,
        "-p",
        "--output-format",
        "text",
        "--tools",
        "",
        "--settings",
        CHILD_SETTINGS,
        "--no-session-persistence",
    ]
    if model:
        argv += ["--model", model]
    return ModelMerger("claude", tuple(argv), child_env(keep_api_key=use_api_key), timeout, model)


def command_merger(command: str, timeout: float) -> ModelMerger:
    if not command.strip():
        raise MergerUnavailable(
            "fold.merger is 'command' but fold.command is empty",
            hint="set fold.command in vault.toml, or use --merger builtin / --merger claude",
        )
    argv = shlex.split(command)
    if shutil.which(argv[0]) is None and not os.path.isfile(argv[0]):
        raise MergerUnavailable(
            f"fold.command runs {argv[0]!r}, which is not on PATH",
            hint="fix fold.command in vault.toml, or use --merger builtin",
        )
    return ModelMerger("command", tuple(argv), child_env(keep_api_key=True), timeout, None)
