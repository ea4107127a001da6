"""Codex CLI (npm @openai/codex; observed on codex-cli 0.171.0).

- Hooks: <repo>/.codex/hooks.json, Claude Code's layout; timeouts in seconds; SessionEnd is
  clamped to 3 s (a longer hook is killed), so gitvault's own bound there is 2.5 s.
- Trust: two gates, both silent when closed: the project (`[projects."<dir>"] trust_level =
  "trusted"` in ~/.codex/config.toml) and the hooks themselves (reviewed with /hooks, stored
  as `[hooks.state."<hooks.json>:<event>:<group>:<handler>"] trusted_hash`; a changed hook
  needs a new review).
- Input: Claude Code's field names (session_id, transcript_path, cwd, source,
  stop_hook_active); the transcript is Codex's own rollout format, which gitvault does not read.
- A Stop reason reaches the model HTML-escaped (`<<` arrives as `&lt;&lt;`): the save
  command handed over has no `<` or `>` (printf lines piped in, not a heredoc).
- Output: SessionStart context nested in hookSpecificOutput (a JSON that also has a top-level
  additionalContext is rejected whole); Stop {"decision": "block", "reason"}.
- Context beyond ~2,500 tokens is cut to head and tail unless the handler sets
  additionalContextLimit: gitvault sets it (recall is ≤ 9,500 characters of any script).
- The agent's shell exports CODEX_SESSION_ID; it may be a login shell whose PATH lacks
  gitvault, so the save command handed over names gitvault by absolute path.
- Instructions: AGENTS.md.
- Tool events: no read tool (the agent reads through its shell: PostToolUse with tool_name
  "Bash", the command line in tool_input.command, whose cat/sed/head arguments are the files);
  changes through apply_patch (PreToolUse, the patch in tool_input.command, the paths on its
  `*** Update File:` lines). Context from either reaches the model as a developer message
  next to the call; the output must carry hookEventName, a top-level additionalContext is
  rejected.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from gitvault.agents.adapters.base import MAX_PATHS, Adapter, Hook, Trust

# How Codex names events in its hook-trust keys.
SNAKE_NAMES = {
    "SessionStart": "session_start",
    "Stop": "stop",
    "PreCompact": "pre_compact",
    "SessionEnd": "session_end",
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
}
# Shell commands whose file arguments the agent reads (Codex has no read tool: it reads with
# its shell), each with its short options that take a value (`head -n 20`: 20 is no file).
READERS: dict[str, frozenset[str]] = {
    "cat": frozenset(),
    "nl": frozenset({"-b", "-i", "-n", "-s", "-v", "-w"}),
    "head": frozenset({"-n", "-c"}),
    "tail": frozenset({"-n", "-c"}),
    "less": frozenset(),
    "more": frozenset(),
    "bat": frozenset({"-r", "-l", "-H"}),
    "batcat": frozenset({"-r", "-l", "-H"}),
    "wc": frozenset(),
    "sed": frozenset({"-e", "-f", "-l"}),
    "awk": frozenset({"-F", "-v", "-f"}),
    "grep": frozenset({"-e", "-f", "-m", "-A", "-B", "-C"}),
    "rg": frozenset({"-e", "-f", "-m", "-A", "-B", "-C", "-g", "-t", "-T"}),
}
# Those whose first argument is a script or a pattern unless -e or -f gave it.
SCRIPTED = frozenset({"sed", "awk", "grep", "rg"})
_FD_BEFORE_REDIRECTION = re.compile(r"(?<![^\s;&|(])\d+(?=[<>])")
_PATCH_PATHS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")
CONTEXT_TOKENS = 10_000  # additionalContextLimit: 9,500 characters in any script fit


class Codex(Adapter):
    name: ClassVar[str] = "codex"
    agent: ClassVar[str] = "codex"
    label: ClassVar[str] = "Codex CLI"
    binary: ClassVar[str] = "codex"
    settings_file: ClassVar[str] = ".codex/hooks.json"
    mcp_file: ClassVar[str | None] = ".codex/config.toml"
    mcp_format: ClassVar[str] = "toml"
    instruction_file: ClassVar[str] = "AGENTS.md"
    reads_instructions: ClassVar[tuple[str, ...]] = ("AGENTS.md", "AGENTS.override.md")
    session_env: ClassVar[tuple[str, ...]] = ("CODEX_SESSION_ID", "CODEX_THREAD_ID")
    hooks: ClassVar[tuple[Hook, ...]] = (
        Hook("SessionStart", "session-start", 15),
        Hook("Stop", "turn-end", 30),
        Hook("PreCompact", "pre-compact", 60),
        Hook("SessionEnd", "session-end", 3),
        # Reads happen through the shell tool (tool_name "Bash"); changes through apply_patch,
        # whose paths are in the patch text.
        Hook("PostToolUse", "file-read", 10, "^Bash$"),
        Hook("PreToolUse", "file-edit", 10, "^apply_patch$"),
    )
    bounds: ClassVar[Mapping[str, float]] = {"session-end": 2.5}
    # The launcher's sh answers a read through a plain `cat FILE`, `sed -n 'N,Mp' FILE` …
    # (shell_reads' answer for those) when nothing is known or it was shown; apply_patch and
    # any other command line go to Python.
    fast_path_field: ClassVar[str | None] = "command"
    fast_path_parent: ClassVar[str] = "tool_input"
    fast_path_readers: ClassVar[tuple[str, ...]] = tuple(
        sorted(name for name in READERS if name not in SCRIPTED)
    )
    fast_path_events: ClassVar[tuple[str, ...]] = ("file-read",)
    # Its block only for the shell tool: apply_patch's command is a patch (Python reads it).
    fast_path_needs: ClassVar[tuple[tuple[str, str], ...]] = (("tool_name", "Bash"),)
    escapes_angles: ClassVar[bool] = True
    trust_step: ClassVar[str] = (
        "trust the project (codex asks on first start, or `codex exec --trust`) and review "
        "gitvault's hooks once with /hooks in codex (they run only after both; Codex asks "
        "again whenever .codex/hooks.json changes)"
    )

    def tool_paths(self, event: str, tool: str | None, raw: Mapping[str, Any]) -> list[str]:
        given = raw.get("tool_input")
        command = given.get("command") if isinstance(given, dict) else None
        if not isinstance(command, str):
            return []
        if tool == "apply_patch":
            return patch_paths(command)
        return shell_reads(command) if event == "file-read" else []

    def _handler(self, hook: Hook) -> dict[str, Any]:
        handler: dict[str, Any] = {
            "type": "command",
            "command": self.command(hook),
            "timeout": hook.timeout,
        }
        if hook.event == "session-start":
            handler["additionalContextLimit"] = CONTEXT_TOKENS
        return handler

    def merged(self, current: dict[str, Any]) -> dict[str, Any]:
        from gitvault.agents.adapters import settings

        return settings.merge_grouped(current, self.hooks, self._handler, self.markers)

    def cleaned(self, current: dict[str, Any]) -> dict[str, Any]:
        from gitvault.agents.adapters import settings

        return settings.clean_table(current, lambda g: settings.drop_grouped(g, self.markers))

    def ours_in(self, current: dict[str, Any]) -> list[str]:
        from gitvault.agents.adapters import settings

        return settings.grouped_events(current, self.hooks, self.markers)

    def trust(self, workdir: Path, environ: Mapping[str, str]) -> Trust:
        import tomllib

        from gitvault.agents.adapters.base import find_up

        home = Path(environ.get("CODEX_HOME") or Path(environ.get("HOME", "~")) / ".codex")
        try:
            config = tomllib.loads((home.expanduser() / "config.toml").read_text("utf-8"))
        except FileNotFoundError:
            config = {}
        except (OSError, ValueError):
            return Trust(None, f"cannot read {home / 'config.toml'}")
        projects = config.get("projects")
        trusted = find_up(
            workdir,
            projects if isinstance(projects, dict) else {},
            lambda v: isinstance(v, dict) and v.get("trust_level") == "trusted",
        )
        if trusted is None:
            return Trust(False, "the project is not trusted in ~/.codex/config.toml")
        state = config.get("hooks", {}).get("state", {}) if isinstance(config, dict) else {}
        hooks_json = os.path.realpath(workdir / self.settings_file)
        expected = self._trust_keys(workdir, hooks_json)
        reviewed = [
            key
            for key in expected
            if isinstance(state, dict)
            and isinstance(state.get(key), dict)
            and state[key].get("trusted_hash")
        ]
        if not expected or len(reviewed) < len(expected):
            return Trust(
                False,
                f"project trusted; {len(reviewed)} of {len(expected)} gitvault hooks reviewed "
                "(run /hooks in codex)",
            )
        return Trust(True, "project trusted, hooks reviewed (a changed hook needs /hooks again)")

    def _trust_keys(self, workdir: Path, hooks_json: str) -> list[str]:
        """Codex's hook-trust keys of gitvault's handlers: <hooks.json>:<event>:<group>:<n>."""
        from gitvault.agents.adapters.settings import is_ours

        try:
            table = self.load(workdir).get("hooks", {})
        except Exception:  # noqa: BLE001 - a broken file: nothing is reviewed
            return []
        keys = []
        for hook in self.hooks:
            snake = SNAKE_NAMES[hook.native]
            for gi, group in enumerate(table.get(hook.native, []) or []):
                handlers = group.get("hooks", []) if isinstance(group, dict) else []
                for hi, handler in enumerate(handlers if isinstance(handlers, list) else []):
                    if is_ours(handler, self.markers):
                        keys.append(f"{hooks_json}:{snake}:{gi}:{hi}")
        return keys


def patch_paths(patch: str) -> list[str]:
    """The files an apply_patch patch adds, changes, deletes or moves to, in order."""
    out = []
    for line in patch.splitlines()[:5000]:
        for head in _PATCH_PATHS:
            if line.startswith(head) and line[len(head) :].strip():
                out.append(line[len(head) :].strip())
    return list(dict.fromkeys(out))


def shell_reads(command: str) -> list[str]:
    """The files a shell command line reads with cat, head, sed -n …, as written (after a
    `cd DIR &&`, relative to DIR). Anything the parser cannot read names nothing."""
    import shlex

    lexer = shlex.shlex(
        _FD_BEFORE_REDIRECTION.sub("", command[:20_000]), posix=True, punctuation_chars=True
    )
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return []
    out: list[str] = []
    folder = ""
    words: list[str] = []
    redirected = False
    for token in [*tokens, ";"]:
        if token and set(token) <= set(";&|()<>"):
            if "<" in token or ">" in token:
                redirected = True  # the next word is the redirection's target
                continue
            folder, found = _simple_reads(words, folder)
            out += found
            words = []
            continue
        if redirected:
            redirected = False
        elif words or "=" not in token:  # FOO=1 before the command is no argument
            words.append(token)
    return list(dict.fromkeys(out))[:MAX_PATHS]


def _simple_reads(words: list[str], folder: str) -> tuple[str, list[str]]:
    """(the folder after this simple command, the files it reads)."""
    if not words:
        return folder, []
    name = os.path.basename(words[0])
    if name == "cd":
        targets = [w for w in words[1:] if not w.startswith("-")]
        return (os.path.join(folder, targets[0]) if len(targets) == 1 else folder), []
    valued = READERS.get(name)
    if valued is None:
        return folder, []
    args: list[str] = []
    given_script = False
    take_value = False
    for word in words[1:]:
        if take_value:
            take_value = False
            continue
        if word.startswith("-") and word != "-":
            short = word[:2]
            given_script |= short in ("-e", "-f") and name in SCRIPTED
            take_value = word in valued  # `-n 20`; `-n20` carries its value
            continue
        args.append(word)
    files = args[1:] if name in SCRIPTED and not given_script else args
    return folder, [os.path.join(folder, f) if folder else f for f in files if f != "-"]


ADAPTER = Codex()
