"""Claude Code, as one adapter among four.

Its facts: hooks in .claude/settings.json (written with the /save and /recall skills and the
save permission by gitvault.agents.claude), events SessionStart, Stop, PreCompact, SessionEnd,
input validated against schemas/claude-hook-*.json, output nested in hookSpecificOutput,
CLAUDE.md, CLAUDE_CODE_SESSION_ID in the Bash tool. Its hook runtime is
gitvault.agents.hooks.main (`gitvault-hook claude <event>`), which runs the same shared
behaviours (hooks.behave) as every other adapter.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from gitvault.agents.adapters.base import (
    Adapter,
    AdapterReport,
    Hook,
    Trust,
    find_up,
    read_json_file,
)
from gitvault.resolve import Location


class Claude(Adapter):
    name: ClassVar[str] = "claude"
    agent: ClassVar[str] = "claude-code"
    label: ClassVar[str] = "Claude Code"
    binary: ClassVar[str] = "claude"
    settings_file: ClassVar[str] = ".claude/settings.json"
    instruction_file: ClassVar[str] = "CLAUDE.md"
    session_env: ClassVar[tuple[str, ...]] = ("CLAUDE_CODE_SESSION_ID",)
    project_var: ClassVar[str] = "CLAUDE_PROJECT_DIR"
    hooks: ClassVar[tuple[Hook, ...]] = (
        Hook("SessionStart", "session-start", 15),
        Hook("Stop", "turn-end", 30),
        Hook("PreCompact", "pre-compact", 60),
        Hook("SessionEnd", "session-end", 30),
    )
    trust_step: ClassVar[str] = (
        "accept the workspace trust dialog when claude first starts here (the hooks in "
        ".claude/settings.json run once the workspace is trusted)"
    )

    def session_from_env(self, environ: Mapping[str, str]) -> str | None:
        return super().session_from_env(environ) if environ.get("CLAUDECODE") == "1" else None

    def install(self, loc: Location, *, local: bool = False) -> AdapterReport:
        from gitvault.agents import claude

        done = claude.install(loc, local=local)
        return AdapterReport(changes=list(done.changes), notes=list(done.kept))

    def uninstall(self, loc: Location) -> AdapterReport:
        from gitvault.agents import claude

        done = claude.uninstall(loc)
        return AdapterReport(changes=list(done.changes), notes=list(done.kept))

    def preflight(self, workdir: Path) -> None:
        from gitvault.agents import claude

        claude.preflight(workdir, False)

    def installed(self, workdir: Path) -> list[str]:
        from gitvault.agents import claude

        if "Claude Code hooks" in claude.wiring_missing(workdir):
            return []
        return [h.event for h in self.hooks]

    def merged(self, current: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError("Claude Code settings are merged by gitvault.agents.claude")

    def cleaned(self, current: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError("Claude Code settings are cleaned by gitvault.agents.claude")

    def ours_in(self, current: dict[str, Any]) -> list[str]:
        return []

    def trust(self, workdir: Path, environ: Mapping[str, str]) -> Trust:
        home = Path(environ.get("HOME", "~")).expanduser()
        data = read_json_file(home / ".claude.json")
        projects = data.get("projects") if isinstance(data, dict) else None
        if not isinstance(projects, dict):
            return Trust(None, "")
        if find_up(
            workdir,
            projects,
            lambda v: isinstance(v, dict) and v.get("hasTrustDialogAccepted") is True,
        ):
            return Trust(True, "workspace trusted in ~/.claude.json")
        return Trust(False, "the workspace trust dialog was not accepted yet")
