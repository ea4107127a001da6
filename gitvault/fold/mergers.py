"""Mergers: what turns the current digest plus new items into a new digest. One interface
(gitvault.fold.merger), one registry (MERGERS); the builtin merger is an entry like the others.

claude  — `claude -p`, prompt on stdin, gitvault's own short system prompt, no tools, no MCP,
          no slash commands, no hooks, no extended thinking, no CLAUDE.md, no session left on
          disk, GITVAULT_CHILD=1, and ANTHROPIC_API_KEY removed (a subscription login is used)
          unless fold.use_api_key. Measured with Claude Code 2.1.197 against the Messages API
          mock: the request is the merge prompt plus ~900 characters (the default argv sent a
          25,710-character system prompt and a 31,999-token thinking budget).
command — any command line that reads the prompt on stdin and prints the digest.
builtin — deterministic and offline (gitvault.fold.builtin); it mines the vault's history
          through MergeContext.history, which model mergers do not need.

A model merger's answer is untrusted: it is parsed strictly, its citations are checked, it is
asked once to compress when over its caps, and the caps are then enforced in code.
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass
from typing import Protocol

from gitvault.errors import FoldRejected, GitvaultError
from gitvault.fold import digest as digest_mod
from gitvault.fold import prompt
from gitvault.fold.builtin import BuiltinMerger
from gitvault.fold.items import Item
from gitvault.fold.merger import MergeContext, Merger, MergerFailed, MergerUnavailable
from gitvault.named import NamedTuple
from gitvault.vault import processes
from gitvault.vault.config import VaultConfig
from gitvault.vault.locking import scratch_dir

CHILD_SETTINGS = '{"disableAllHooks":true,"alwaysThinkingEnabled":false}'
# The child is a one-shot text transform: no thinking, no CLAUDE.md or auto memory, no prompt
# caching writes, no telemetry or update checks, one attempt (a failed fold falls back, it
# does not wait out retries), no attribution header in the system prompt.
CHILD_ENV = {
    "CLAUDE_CODE_ATTRIBUTION_HEADER": "0",
    "MAX_THINKING_TOKENS": "0",
    "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
    "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
    "DISABLE_PROMPT_CACHING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",
}
OFFLINE_FIX = (
    "fold offline with the builtin merger: `gitvault fold --merger builtin` once, "
    "`gitvault config fold.merger builtin` from now on"
)
LOGIN_FIX = (
    "run `claude` once and /login (or `gitvault config fold.use_api_key true` with "
    f"ANTHROPIC_API_KEY set), or {OFFLINE_FIX}"
)
MAX_OUTPUT = 200_000
NESTING_MARKERS = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")


def _current_body(current: digest_mod.Digest) -> str | None:
    return current.body() if any(current.categories.values()) else None


@dataclass(frozen=True)
class ModelMerger:
    name: str  # claude | command
    argv: tuple[str, ...]
    env: dict[str, str]
    timeout: float
    model: str | None
    spends_budget: bool = True

    def prompt_chars(
        self, current: digest_mod.Digest, batch: list[Item], config: VaultConfig
    ) -> int:
        return len(prompt.merge_prompt(_current_body(current), batch, config))

    def merge(
        self,
        current: digest_mod.Digest,
        batch: list[Item],
        config: VaultConfig,
        ctx: MergeContext,
    ) -> tuple[digest_mod.Digest, int]:
        exists = ctx.exists
        text = prompt.merge_prompt(_current_body(current), batch, config, older=ctx.older)
        sent = len(text)
        new = digest_mod.parse(self.complete(text), config, strict=True)
        digest_mod.check_citations(new, exists)
        over = digest_mod.over_caps(new, config)
        if over:
            # Ask once to compress; a bad answer here keeps the first one (then cut in code).
            text = prompt.compress_prompt(new.body(), over, config)
            sent += len(text)
            try:
                again = digest_mod.parse(self.complete(text), config, strict=True)
                digest_mod.check_citations(again, exists)
                again.dropped = new.dropped + again.dropped
                new = again
            except FoldRejected:
                pass
        digest_mod.enforce_caps(new, config)
        return new, sent

    def complete(self, prompt: str) -> str:
        # `claude -p` reads a stdin prompt starting with "/" as a slash command (exit 0,
        # "Unknown command"): the prompts start with fixed text, and this makes sure of it.
        if prompt.lstrip().startswith("/"):
            prompt = "gitvault fold request:\n" + prompt
        # A neutral working directory: run in the project, `claude -p` would load its CLAUDE.md
        # and git status into the fold's context (tens of thousands of characters, and the
        # project's own instructions mixed into a merge task).
        with scratch_dir("gitvault-fold-") as neutral:
            return self._run(prompt, str(neutral))

    def _run(self, prompt: str, cwd: str) -> str:
        try:
            proc = processes.run_isolated(
                self.argv, input=prompt.encode(), env=self.env, cwd=cwd, timeout=self.timeout
            )
        except OSError as exc:
            raise MergerUnavailable(f"cannot run {self.argv[0]}: {exc.strerror}") from exc
        except processes.Timeout:
            raise MergerFailed(
                f"the {self.name} merger did not answer within {self.timeout:.0f}s",
                hint="raise fold.timeout_seconds in vault.toml, or fold fewer items per call",
            ) from None
        stdout, stderr = proc.stdout, proc.stderr
        said = (stderr + b"\n" + stdout).decode("utf-8", "replace")
        if self.name == "claude" and _not_logged_in(said, proc.returncode):
            raise MergerUnavailable(
                "the claude merger is not logged in (`claude -p` said: Not logged in)",
                hint=LOGIN_FIX,
            )
        if proc.returncode != 0:
            detail = (stderr or stdout).decode("utf-8", "replace").strip().splitlines()
            raise MergerFailed(
                f"the {self.name} merger exited with {proc.returncode}: "
                f"{detail[-1] if detail else 'no output'}"
            )
        return stdout[:MAX_OUTPUT].decode("utf-8", "replace")


def _not_logged_in(output: str, returncode: int) -> bool:
    """Claude Code without credentials prints "Not logged in · Please run /login" on stdout
    and exits 1 in well under a second."""
    head = output.strip()[:400].lower()
    return returncode != 0 and ("not logged in" in head or "please run /login" in head)


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


def claude_child_env(*, keep_api_key: bool) -> dict[str, str]:
    return {**child_env(keep_api_key=keep_api_key), **CHILD_ENV}


def claude_merger(config: VaultConfig, model: str | None, *, check: bool = True) -> ModelMerger:
    model = model or str(config.fold_value("model"))
    timeout = float(config.fold_value("timeout_seconds"))
    use_api_key = bool(config.fold_value("use_api_key"))
    binary = os.environ.get("GITVAULT_CLAUDE") or shutil.which("claude")
    if not binary and not check:
        binary = "claude"
    if not binary:
        # One line that names the alternatives (no separate hint line).
        raise MergerUnavailable(
            "the claude merger needs the `claude` CLI on PATH, and it is not there: install "
            f"Claude Code, or {OFFLINE_FIX}, or use --merger command (fold.command)"
        )
    argv = [
        binary,
        "-p",
        "--output-format",
        "text",
        "--tools",
        "",
        "--strict-mcp-config",
        "--disable-slash-commands",
        "--no-session-persistence",
        "--settings",
        CHILD_SETTINGS,
        "--system-prompt",
        prompt.SYSTEM,
    ]
    if model:
        argv += ["--model", model]
    env = claude_child_env(keep_api_key=use_api_key)
    return ModelMerger("claude", tuple(argv), env, timeout, model)


def command_merger(config: VaultConfig, model: str | None, *, check: bool = True) -> ModelMerger:
    command = str(config.fold_value("command"))
    timeout = float(config.fold_value("timeout_seconds"))
    if not check:
        return ModelMerger("command", tuple(shlex.split(command)), {}, timeout, None)
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


def builtin_merger(config: VaultConfig, model: str | None, *, check: bool = True) -> Merger:
    return BuiltinMerger()


class MergerFactory(Protocol):
    def __call__(self, config: VaultConfig, model: str | None, *, check: bool = True) -> Merger: ...


BUILTIN = BuiltinMerger.name
MERGERS: dict[str, MergerFactory] = {
    "claude": claude_merger,
    "command": command_merger,
    BUILTIN: builtin_merger,
}
NAMES = tuple(MERGERS)


def check_name(name: str) -> str:
    if name not in MERGERS:
        raise GitvaultError(f"unknown merger {name!r}", hint=f"use {', '.join(NAMES)}")
    return name


def make(name: str, config: VaultConfig, model: str | None, *, check: bool = True) -> Merger:
    """The merger of that name, checked now (a missing CLI or command fails here, before
    anything is written); check=False for planning only (a dry run calls nothing)."""
    return MERGERS[check_name(name)](config, model, check=check)


class Outlook(NamedTuple):
    text: str  # what folds will do, in one line
    runs: bool  # the configured merger can run here (as far as a free check can tell)


def outlook(config: VaultConfig) -> Outlook:
    """What folds will do, checked once without a model call (install says it): the merger
    found and logged in, or what stands in for it and how to fix it."""
    name = str(config.fold_value("merger"))
    fallback = str(config.fold_value("fallback")) == "builtin"
    instead = (
        "background folds use the builtin merger meanwhile (fold.fallback)"
        if fallback
        else 'background folds fail until then (fold.fallback = "none")'
    )
    if name == "builtin":
        return Outlook("folds use the builtin merger (offline, deterministic, no model)", True)
    try:
        merger = make(name, config, None)
    except MergerUnavailable as exc:
        fix = f"; fix: {exc.hint}" if exc.hint else ""
        return Outlook(f"the {name} merger cannot run: {exc.message}{fix}; {instead}", False)
    if not isinstance(merger, ModelMerger):
        return Outlook(f"folds use the {name} merger", True)
    if name != "claude":
        return Outlook(f"folds use the {name} merger ({merger.argv[0]})", True)
    status = _auth_status(merger)
    if status is False:
        return Outlook(f"claude is not logged in; fix: {LOGIN_FIX}; {instead}", False)
    how = "" if status is None else f", {status}"
    return Outlook(f"folds use claude ({merger.model}{how}); if it fails, {instead}", True)


def _auth_status(merger: ModelMerger) -> str | bool | None:
    """`claude auth status` (free, ~1 s): the auth method, False when not logged in, None
    when it cannot tell (an older CLI)."""
    import json

    try:
        proc = processes.run(
            [merger.argv[0], "auth", "status", "--json"], env=merger.env, timeout=20
        )
        data = json.loads(proc.stdout.decode("utf-8", "replace") or "{}")
    except (OSError, processes.Timeout, ValueError):
        return None
    if not isinstance(data, dict) or "loggedIn" not in data:
        return None
    if not data.get("loggedIn"):
        return False
    return str(data.get("authMethod") or "logged in")
