"""Claude Code, as one adapter among four.

Its facts: hooks in .claude/settings.json (or .claude/settings.local.json with --local), written
with the /save and /recall skills and a narrow save permission (wiring.py); events
SessionStart, Stop, PreCompact, SessionEnd, and PostToolUse (Read) / PreToolUse (Edit, Write,
NotebookEdit) for the edit-time block, whose output must name the event it answers
(hookSpecificOutput.hookEventName); its input checked against its own recorded schemas
(schemas/claude-hook-*.json) before it is normalised; output nested in hookSpecificOutput;
CLAUDE.md; CLAUDE_CODE_SESSION_ID (with CLAUDECODE=1) in the Bash tool; CLAUDE_PROJECT_DIR in
the hook's environment; a JSONL transcript gitvault reads (transcript.py).

Settings written by gitvault 0.1 run `python -m gitvault.claude_hooks EVENT`, and the 0.2
ones `gitvault-hook claude stop` at turn end: both keep working (the registry's DEFAULT, and
the Stop hook's word).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from gitvault.agents.adapters.base import MARKER, Adapter, AdapterReport, Hook, Payload, Trust
from gitvault.agents.adapters.claude.names import AGENT, PROJECT_VAR, SETTINGS_LOCAL
from gitvault.named import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, ClassVar

    from gitvault.resolve import Location


class Claude(Adapter):
    name: ClassVar[str] = "claude"
    agent: ClassVar[str] = AGENT
    label: ClassVar[str] = "Claude Code"
    binary: ClassVar[str] = "claude"
    settings_file: ClassVar[str] = ".claude/settings.json"
    mcp_file: ClassVar[str | None] = ".mcp.json"
    local_settings_file: ClassVar[str | None] = SETTINGS_LOCAL
    instruction_file: ClassVar[str] = "CLAUDE.md"
    reads_instructions: ClassVar[tuple[str, ...]] = (
        "CLAUDE.md",
        "CLAUDE.local.md",
        ".claude/CLAUDE.md",
    )
    session_env: ClassVar[tuple[str, ...]] = ("CLAUDE_CODE_SESSION_ID",)
    project_var: ClassVar[str] = PROJECT_VAR
    # The project whose settings ran the hook, even when the session cd'd elsewhere.
    project_var_wins: ClassVar[bool] = True
    start_env_file: ClassVar[str | None] = "CLAUDE_ENV_FILE"  # shell_cli writes PATH there
    fast_path_field: ClassVar[str | None] = "file_path"
    fast_path_others: ClassVar[tuple[str, ...]] = ("notebook_path",)
    # PostToolUse's input: …, tool_name, tool_input, tool_response, tool_use_id (observed).
    fast_path_tail: ClassVar[str] = "tool_response"
    hooks: ClassVar[tuple[Hook, ...]] = (
        Hook("SessionStart", "session-start", 15, "startup|resume|clear|compact"),
        Hook("Stop", "turn-end", 30, word="stop"),
        Hook("PreCompact", "pre-compact", 60),
        Hook("SessionEnd", "session-end", 30),
        # The file-read block goes after the Read result; the file-edit one before a change
        # (it reaches the model next to the tool's result either way). MultiEdit is offered
        # by no current version: harmless in the matcher, there for older ones.
        Hook("PostToolUse", "file-read", 10, "Read"),
        Hook("PreToolUse", "file-edit", 10, "Edit|Write|MultiEdit|NotebookEdit"),
    )
    input_schemas: ClassVar[Mapping[str, str]] = {
        "session-start": "claude-hook-session-start.json",
        "turn-end": "claude-hook-stop.json",
        "pre-compact": "claude-hook-pre-compact.json",
        "session-end": "claude-hook-session-end.json",
    }
    # The module path settings written by gitvault 0.1 run.
    markers: ClassVar[tuple[str, ...]] = (MARKER, "gitvault.claude_hooks")
    # `claude -p` and SDK sessions never show the trust dialog and run the hooks anyway.
    warns_untrusted: ClassVar[bool] = False
    trust_step: ClassVar[str] = (
        "accept the workspace trust dialog when claude first starts here (the hooks in "
        ".claude/settings.json run once the workspace is trusted)"
    )

    # -- the hook runtime ------------------------------------------------------------------
    def normalise(self, event: str, raw: Mapping[str, Any]) -> Payload:
        payload = super().normalise(event, raw)
        payload["transcript_path"] = raw.get("transcript_path")
        payload["agent_id"] = raw.get("agent_id")  # set in a subagent's hooks
        return payload

    def tool_paths(self, event: str, tool: str | None, raw: Mapping[str, Any]) -> list[str]:
        """Read, Edit, Write: tool_input.file_path (absolute); NotebookEdit: notebook_path."""
        given = raw.get("tool_input")
        if not isinstance(given, dict):
            return []
        found = [given.get(key) for key in ("file_path", "notebook_path")]
        return [p for p in found if isinstance(p, str)]

    def session_from_env(self, environ: Mapping[str, str]) -> str | None:
        return super().session_from_env(environ) if environ.get("CLAUDECODE") == "1" else None

    def shell_cli(self) -> str:
        """Make plain `gitvault` work in the session's Bash tool: when it is not on PATH but
        this gitvault's own `gitvault` script is (a virtualenv), put that folder on the
        session's PATH through CLAUDE_ENV_FILE (machine-specific, outside the repository).
        Returns how the Bash tool runs gitvault."""
        import shlex
        import shutil
        import sys

        if shutil.which("gitvault"):
            return "gitvault"
        folder = os.path.dirname(sys.executable)
        script = os.path.join(folder, "gitvault")
        env_file = os.environ.get("CLAUDE_ENV_FILE")
        if env_file and os.access(script, os.X_OK):
            line = f'export PATH={shlex.quote(folder)}:"$PATH"\n'
            try:
                try:
                    with open(env_file, encoding="utf-8") as fh:
                        present = line in fh.read(1_000_000)
                except FileNotFoundError:
                    present = False
                if not present:
                    with open(env_file, "a", encoding="utf-8") as fh:
                        fh.write(line)
                return "gitvault"
            except OSError:
                pass
        return f"{shlex.quote(sys.executable)} -m gitvault"

    # -- the transcript --------------------------------------------------------------------
    def transcript_start(self, payload: Payload) -> float | None:
        from gitvault.agents.adapters.claude.transcript import first_timestamp

        return first_timestamp(str(payload.get("transcript_path") or "/nonexistent"))

    def commits_shown(self, payload: Payload, candidates: list[str]) -> list[str]:
        from gitvault.agents.adapters.claude.transcript import commits_in, read_transcript

        summary = read_transcript(Path(str(payload.get("transcript_path") or "/nonexistent")))
        return commits_in(summary, candidates)

    def prompt_facts(self, payload: Payload, seen: dict[str, Any]) -> dict[str, Any]:
        from gitvault.agents.adapters.claude.transcript import scan_prompts

        path = str(payload.get("transcript_path") or "")
        return scan_prompts(path, seen) if path else seen

    # -- install ---------------------------------------------------------------------------
    def preflight(self, workdir: Path, *, local: bool = False) -> None:
        from gitvault.agents.adapters.claude import wiring

        wiring.preflight(self, workdir, local)

    def install(self, loc: Location, *, local: bool = False) -> AdapterReport:
        from gitvault.agents.adapters.claude import wiring

        return wiring.install(self, loc, local=local)

    def uninstall(self, loc: Location) -> AdapterReport:
        from gitvault.agents.adapters.claude import wiring

        return wiring.uninstall(self, loc)

    def check_shape(self, path: Path, data: dict[str, Any]) -> None:
        from gitvault.errors import Refused

        permissions = data.get("permissions", {})
        if not isinstance(permissions, dict) or not isinstance(permissions.get("allow", []), list):
            raise Refused(
                f'{path}: "permissions" is not an object with an "allow" list',
                hint=f"fix the file, or {self.opt_out}",
            )

    def merged(self, current: dict[str, Any]) -> dict[str, Any]:
        from gitvault.agents.adapters import settings

        return settings.merge_grouped(current, self.hooks, self.handler, self.markers)

    def handler(self, hook: Hook) -> dict[str, Any]:
        return {"type": "command", "command": self.command(hook), "timeout": hook.timeout}

    def cleaned(self, current: dict[str, Any]) -> dict[str, Any]:
        from gitvault.agents.adapters import settings

        return settings.clean_table(current, lambda g: settings.drop_grouped(g, self.markers))

    def ours_in(self, current: dict[str, Any]) -> list[str]:
        from gitvault.agents.adapters import settings

        return settings.grouped_events(current, self.hooks, self.markers)

    def installed(self, workdir: Path) -> list[str]:
        """The events gitvault's hooks serve in either settings file (shared or local)."""
        from gitvault.errors import Refused

        found: set[str] = set()
        for rel in (self.settings_file, SETTINGS_LOCAL):
            try:
                found.update(self.ours_in(self.load(workdir, rel)))
            except Refused:
                continue
        return [h.event for h in self.hooks if h.event in found]

    def missing_wiring(self, workdir: Path) -> list[str]:
        from gitvault.agents.adapters.claude import wiring

        return super().missing_wiring(workdir) + wiring.missing_skills(workdir)

    def wiring_folder(self) -> str:
        return ".claude/"  # the settings and the skills

    def trust(self, workdir: Path, environ: Mapping[str, str]) -> Trust:
        from gitvault.agents.adapters.base import find_up
        from gitvault.agents.adapters.settings import read_lenient

        home = Path(environ.get("HOME", "~")).expanduser()
        data = read_lenient(home / ".claude.json")
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            # Claude Code has not run here yet: its first start asks to trust the folder
            return Trust(None, "no ~/.claude.json yet: Claude Code asks at its first start here")
        if find_up(
            workdir,
            projects,
            lambda v: isinstance(v, dict) and v.get("hasTrustDialogAccepted") is True,
        ):
            return Trust(True, "workspace trusted in ~/.claude.json")
        return Trust(False, "the workspace trust dialog was not accepted yet")


ADAPTER = Claude()
