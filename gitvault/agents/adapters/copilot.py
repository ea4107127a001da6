"""GitHub Copilot CLI (npm @github/copilot; observed on 1.0.102).

- Hooks: every .github/hooks/*.json of the repository (found from subfolders too); gitvault
  owns .github/hooks/gitvault.json. Format `{"version": 1, "hooks": {event: [handler]}}`,
  camelCase events (sessionStart, agentStop, preCompact, sessionEnd), the command under
  "bash", timeouts in seconds (timeoutSec).
- Trust: a trusted folder (the first-start dialog, ~/.copilot/config.json "trustedFolders",
  --trust-folder, or COPILOT_ALLOW_ALL=true); untrusted, repository hooks silently do not run.
- Input: camelCase (sessionId, transcriptPath, timestamp in ms, source new|resume) except
  stop_hook_active; the hook runs in the repository's top folder, the session's folder is
  "cwd". In `-p` runs the transcript file does not exist yet at agentStop and sessionEnd.
- Tool events: postToolUse (view) and preToolUse (edit, create), the file in toolArgs.path;
  the input names no event (the command's word does).
- Output: sessionStart and tool-event context only as a TOP-LEVEL {"additionalContext"} (the nested
  Claude-style form and plain stdout are ignored); agentStop {"decision": "block", "reason"}
  becomes the next prompt.
- The agent's shell exports COPILOT_AGENT_SESSION_ID. Instructions: AGENTS.md (and
  .github/copilot-instructions.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from gitvault.agents.adapters.base import TOOL_EVENTS, Adapter, Hook, Payload, Trust

SOURCES = {"new": "startup", "resume": "resume"}


class Copilot(Adapter):
    name: ClassVar[str] = "copilot"
    agent: ClassVar[str] = "copilot"
    label: ClassVar[str] = "Copilot CLI"
    binary: ClassVar[str] = "copilot"
    settings_file: ClassVar[str] = ".github/hooks/gitvault.json"
    mcp_file: ClassVar[str | None] = ".mcp.json"  # read beside .github/mcp.json
    instruction_file: ClassVar[str] = "AGENTS.md"
    reads_instructions: ClassVar[tuple[str, ...]] = ("AGENTS.md", ".github/copilot-instructions.md")
    session_env: ClassVar[tuple[str, ...]] = ("COPILOT_AGENT_SESSION_ID",)
    session_field: ClassVar[str] = "sessionId"
    project_var: ClassVar[str] = "COPILOT_PROJECT_DIR"
    # toolArgs as an object (a JSON string holds no plain "path" member: Python answers).
    fast_path_field: ClassVar[str | None] = "path"
    fast_path_parent: ClassVar[str] = "toolArgs"
    hooks: ClassVar[tuple[Hook, ...]] = (
        Hook("sessionStart", "session-start", 15),
        Hook("agentStop", "turn-end", 30),
        Hook("preCompact", "pre-compact", 60),
        Hook("sessionEnd", "session-end", 30),
        # The matcher sits on the handler and must match the whole tool name.
        Hook("postToolUse", "file-read", 10, "view"),
        Hook("preToolUse", "file-edit", 10, "edit|create"),
    )
    trust_step: ClassVar[str] = (
        "trust the folder when copilot asks on first start (or add it to "
        '"trustedFolders" in ~/.copilot/config.json); untrusted, its hooks do not run'
    )

    def normalise(self, event: str, raw: Mapping[str, Any]) -> Payload:
        source = raw.get("source")
        prompt = raw.get("initialPrompt")
        payload: Payload = {
            "session_id": raw.get(self.session_field),
            "cwd": raw.get("cwd"),
            "source": SOURCES.get(source, source) if isinstance(source, str) else None,
            "stop_hook_active": bool(raw.get("stop_hook_active") or raw.get("stopHookActive")),
            "prompt": prompt if isinstance(prompt, str) else None,
        }
        if event in TOOL_EVENTS:
            tool = raw.get("toolName")
            payload["tool"] = tool if isinstance(tool, str) else None
            payload["paths"] = self.tool_paths(event, payload["tool"], raw)
        return payload

    def tool_paths(self, event: str, tool: str | None, raw: Mapping[str, Any]) -> list[str]:
        """view, edit, create: toolArgs.path (an object; a JSON string in some versions)."""
        args = raw.get("toolArgs")
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                return []
        path = args.get("path") if isinstance(args, dict) else None
        return [path] if isinstance(path, str) else []

    def shape(self, event: str, answer: Mapping[str, str] | None) -> str:
        if answer and "context" in answer:
            return json.dumps({"additionalContext": answer["context"][: self.context_limit]})
        return super().shape(event, answer)

    def _handler(self, hook: Hook) -> dict[str, Any]:
        handler = {"type": "command", "bash": self.command(hook), "timeoutSec": hook.timeout}
        return {**handler, "matcher": hook.matcher} if hook.matcher else handler

    def merged(self, current: dict[str, Any]) -> dict[str, Any]:
        from gitvault.agents.adapters import settings

        versioned = {**current}
        versioned.setdefault("version", 1)
        return settings.merge_listed(versioned, self.hooks, self._handler, self.markers, "bash")

    def cleaned(self, current: dict[str, Any]) -> dict[str, Any]:
        from gitvault.agents.adapters import settings

        def drop(handlers: list[Any]) -> list[Any]:
            return [h for h in handlers if not settings.is_ours(h, self.markers, "bash")]

        return settings.clean_table(current, drop)

    def empty(self, settings: dict[str, Any]) -> bool:
        return not {k: v for k, v in settings.items() if k != "version"}

    def ours_in(self, current: dict[str, Any]) -> list[str]:
        from gitvault.agents.adapters import settings

        return settings.listed_events(current, self.hooks, self.markers, "bash")

    def trust(self, workdir: Path, environ: Mapping[str, str]) -> Trust:
        if environ.get("COPILOT_ALLOW_ALL") == "true":
            return Trust(True, "COPILOT_ALLOW_ALL=true")
        from gitvault.agents.adapters.base import find_up
        from gitvault.agents.adapters.settings import read_lenient

        home = Path(environ.get("HOME", "~")).expanduser()
        path = home / ".copilot" / "config.json"
        data = read_lenient(path)
        folders = data.get("trustedFolders") if isinstance(data, dict) else None
        table = {str(f): True for f in folders or [] if isinstance(f, str)}
        if find_up(workdir, table, bool):
            return Trust(True, f"trusted in {path}")
        return Trust(False, f'the folder is not in "trustedFolders" of {path}')


ADAPTER = Copilot()
