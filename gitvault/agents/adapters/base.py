"""What an agent adapter is, and what the adapters share.

An adapter knows one agent's facts and nothing else: where its hook configuration lives and in
which format, its event names, the field names of its hook input (mapped onto one canonical
payload), the shape of its hook output, the transcript it writes (when gitvault can read it),
its instruction file, the variable its shell exports with the session id, and how to tell
whether the agent trusts the project. The behaviours (recall at start, ask for a save at turn
end, records at compaction and session end, the background fold) are gitvault.agents.behaviours,
one copy for every agent, run by gitvault.agents.runtime.

Canonical events: session-start, turn-end, pre-compact, session-end, and the tool events
file-read (the agent read a file) and file-edit (it is about to change one, or just did where
the agent has no earlier event that reaches the model). The canonical payload
(schemas/agent-hook-input.json): session_id (required), cwd, transcript_path, source,
stop_hook_active, prompt, agent_id; for the tool events, tool (the agent's tool name) and
paths (the files the call names, as the agent wrote them: the adapter finds them in its
tool's input).

Imported on every hook, so it holds no dataclass (dataclasses pulls in inspect) and leaves what
only install needs to be imported when install runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from gitvault.named import TYPE_CHECKING, NamedTuple
from gitvault.vault import layout
from gitvault.vault.launcher import ENTRY

if TYPE_CHECKING:
    from typing import Any, ClassVar

    from gitvault.agents.behaviours import HookCall
    from gitvault.resolve import Location

EVENTS = ("session-start", "turn-end", "pre-compact", "session-end", "file-read", "file-edit")
TOOL_EVENTS = ("file-read", "file-edit")
MAX_PATHS = 16  # files one tool call may name (a patch of many files: the first ones)
MARKER = ENTRY  # every hook command gitvault writes names gitvault-hook
# gitvault's own hook bounds (seconds), per canonical event; an adapter may lower them.
TIME_BOUNDS = {
    "session-start": 2.0,
    "turn-end": 20.0,
    "pre-compact": 45.0,
    "session-end": 25.0,
    # Tool hooks answer in tens of milliseconds; the bound only guards a starved machine (the
    # agents' own handler timeout is 10 s). A block cut off is not claimed: the next read of
    # the file gets it.
    "file-read": 5.0,
    "file-edit": 5.0,
}
CANONICAL_SCHEMA = "agent-hook-input.json"

if TYPE_CHECKING:
    Payload = dict[str, Any]
else:
    Payload = dict  # typing stays unloaded in a hook


class Hook(NamedTuple):
    """One hook gitvault installs: the agent's event name, the canonical event it maps to, the
    agent's timeout for it (in the agent's own unit), the matcher of its group, and the event
    word its command passes to `gitvault-hook <agent>` (the canonical event unless set)."""

    native: str
    event: str
    timeout: int
    matcher: str | None = None
    word: str | None = None


class Trust(NamedTuple):
    """Whether the agent will run the project's hooks: True, False, or None (cannot tell)."""

    trusted: bool | None
    detail: str


class AdapterReport:
    """What an install or uninstall of one agent changed, and what a person should know."""

    def __init__(self) -> None:
        self.changes: list[str] = []
        self.notes: list[str] = []


class Adapter:
    """One agent. Subclasses fill in the class attributes, normalise (when the agent's field
    names differ), and the settings merge; everything else is shared."""

    name: ClassVar[str]  # the --agent value, the hook command's argument, git config
    agent: ClassVar[str]  # recorded in saves: `agent: codex`
    label: ClassVar[str]  # shown to people
    binary: ClassVar[str]  # detected on PATH
    settings_file: ClassVar[str]  # relative to the worktree
    local_settings_file: ClassVar[str | None] = None  # install --local writes the hooks there
    # The agent's project-level MCP configuration (gitvault.agents.adapters.mcpconfig), where
    # `gitvault install` registers `gitvault mcp`; its format (json or toml), and what the
    # entry carries besides the command.
    mcp_file: ClassVar[str | None] = None
    mcp_format: ClassVar[str] = "json"
    mcp_extra: ClassVar[Mapping[str, Any]] = {}
    instruction_file: ClassVar[str]  # gets gitvault's managed section
    # Every file the agent reads as project instructions (a bare name: in any folder of the
    # worktree; with a folder: that path only). vault.toml's patch.files may name only these.
    reads_instructions: ClassVar[tuple[str, ...]] = ()
    session_env: ClassVar[tuple[str, ...]] = ()  # the agent's shell: the session id
    session_field: ClassVar[str] = "session_id"  # the hook input's member with the session id
    # The member naming the file of an edit-time call, when it always holds an absolute path and
    # the project folder resolves the session's repository: the launcher's sh then answers
    # "nothing known / already shown" itself. A member of fast_path_others in the input means
    # the call may name more files (Python answers).
    fast_path_field: ClassVar[str | None] = None
    fast_path_others: ClassVar[tuple[str, ...]] = ()
    # The object member (the tool's arguments) fast_path_field must be a plain member of ("":
    # anywhere, once); fast_path_readers: the field holds a shell command line, and these are
    # the commands whose every argument is a file read (gitvault.vault.launcher.ToolEvent);
    # fast_path_events: the edit-time events the sh answers.
    fast_path_parent: ClassVar[str] = ""
    fast_path_readers: ClassVar[tuple[str, ...]] = ()
    fast_path_events: ClassVar[tuple[str, ...]] = ("file-read", "file-edit")
    # (member, value) pairs a tool event's input must hold for the sh to serve its block from
    # the materialized file (a field's meaning that depends on the tool: the tool's name).
    fast_path_needs: ClassVar[tuple[tuple[str, str], ...]] = ()
    # A member the agent writes after every member the sh reads (the tool's result, as large as
    # the file): the sh scans only the input before it ("": the whole input).
    fast_path_tail: ClassVar[str] = ""
    project_var: ClassVar[str] = "PWD"  # hook env: the project folder, when the agent sets one
    # The project variable names the project whose settings ran the hook, even when the input's
    # cwd is elsewhere (else the input's cwd comes first).
    project_var_wins: ClassVar[bool] = False
    # The values of the session start's `source` that mean a resumed conversation.
    resume_sources: ClassVar[tuple[str, ...]] = ("resume",)
    # A variable the agent sets at session start to a file the hook may write the session's
    # environment into (shell_cli may put gitvault's folder on the session's PATH there).
    start_env_file: ClassVar[str | None] = None
    context_limit: ClassVar[int] = layout.RECALL_MAX_CHARS
    hooks: ClassVar[tuple[Hook, ...]] = ()
    bounds: ClassVar[Mapping[str, float]] = {}
    trust_step: ClassVar[str] = ""
    # The agent HTML-escapes `<` and `>` in a turn-end reason (Codex): hand it a save command
    # without them.
    escapes_angles: ClassVar[bool] = False
    # Schemas of the agent's own hook input per canonical event, checked before normalise
    # (the canonical payload is always checked against CANONICAL_SCHEMA after it).
    input_schemas: ClassVar[Mapping[str, str]] = {}
    # What names gitvault in a hook command of this agent's settings.
    markers: ClassVar[tuple[str, ...]] = (MARKER,)
    # An untrusted verdict is worth a status warning (False: the agent runs the hooks anyway in
    # some of its modes, so "not trusted" would be a false alarm there).
    warns_untrusted: ClassVar[bool] = True

    # -- the hook runtime ------------------------------------------------------------------
    def event_for(self, word: str) -> str | None:
        """The canonical event a `gitvault-hook <agent> WORD` call means (None: not one)."""
        if word in EVENTS:
            return word
        return next((h.event for h in self.hooks if h.word == word), None)

    def time_bound(self, event: str) -> float:
        return float(self.bounds.get(event, TIME_BOUNDS.get(event, 10.0)))

    def normalise(self, event: str, raw: Mapping[str, Any]) -> Payload:
        """The agent's hook input as the canonical payload."""
        payload: Payload = {
            "session_id": raw.get(self.session_field),
            "cwd": raw.get("cwd"),
            "source": raw.get("source"),
            "stop_hook_active": bool(raw.get("stop_hook_active")),
        }
        if event in TOOL_EVENTS:
            tool = raw.get("tool_name")
            payload["tool"] = tool if isinstance(tool, str) else None
            payload["paths"] = self.tool_paths(event, payload["tool"], raw)[:MAX_PATHS]
        return payload

    def tool_paths(self, event: str, tool: str | None, raw: Mapping[str, Any]) -> list[str]:
        """The files a tool call names, from the agent's hook input (as written: relative
        names are taken from the session's folder later). An agent without tool hooks names
        none."""
        return []

    def native(self, event: str) -> str:
        """The agent's own name of a canonical event (what its output must repeat)."""
        return next((h.native for h in self.hooks if h.event == event), event)

    def project_dir(self, payload: Payload | None, environ: Mapping[str, str]) -> str:
        """Where the session runs: the payload's cwd, else the agent's project variable (PWD
        may be inherited stale: the process's own folder then)."""
        cwd = payload.get("cwd") if payload else None
        from_env = environ.get(self.project_var) if self.project_var != "PWD" else None
        if self.project_var_wins and from_env:
            return from_env
        return str(cwd or from_env or os.getcwd())

    def shape(self, event: str, answer: Mapping[str, str] | None) -> str:
        """What to print for a canonical answer: {"context": …} at session-start and the tool
        events, {"decision": "block", "reason": …} at turn-end; "" for nothing. Context goes
        where the agent shows it to the model next to the tool result (never as a "block"
        decision, which some agents put in the place of the tool's real output)."""
        if not answer:
            return ""
        if "context" in answer:
            return json.dumps(
                {
                    "hookSpecificOutput": {
                        "hookEventName": self.native(event),
                        "additionalContext": answer["context"][: self.context_limit],
                    }
                }
            )
        return json.dumps({"decision": answer["decision"], "reason": answer["reason"]})

    def wanted(self, call: HookCall) -> bool:
        """A cheap gate before any git work (True: run the behaviour)."""
        return True

    def after(self, call: HookCall) -> None:
        """Agent-specific follow-up once the behaviour ran (e.g. notes for commits no git hook
        saw)."""

    def shell_cli(self) -> str:
        """How the agent's shell runs gitvault, for the save command a turn-end hands it:
        this gitvault's script by absolute path (the agent's shell may be a login shell whose
        PATH lacks a virtualenv's gitvault), else this interpreter. Only ever put into
        transient text, never into a shared file."""
        import shlex
        import shutil
        import sys

        beside = Path(sys.executable).parent / "gitvault"
        if beside.is_file() and os.access(beside, os.X_OK):
            return shlex.quote(str(beside))
        found = shutil.which("gitvault")
        if found:
            return shlex.quote(str(Path(found).absolute()))
        return f"{shlex.quote(sys.executable)} -m gitvault"

    def session_from_env(self, environ: Mapping[str, str]) -> str | None:
        for var in self.session_env:
            value = environ.get(var)
            if value:
                return value
        return None

    # -- the transcript (only agents whose transcript format gitvault reads) -------------
    def transcript_start(self, payload: Payload) -> float | None:
        """When the session's transcript began (a session whose start no hook saw)."""
        return None

    def commits_shown(self, payload: Payload, candidates: list[str]) -> list[str]:
        """The candidate commits the session's transcript shows in its tool output ([]: none,
        or no readable transcript)."""
        return []

    def prompt_facts(self, payload: Payload, seen: dict[str, Any]) -> dict[str, Any]:
        """The typed prompts of the transcript, read on from `seen` (offset, prompts, first,
        last)."""
        return seen

    # -- install ---------------------------------------------------------------------------
    @property
    def opt_out(self) -> str:
        """How a person leaves this agent out of an install (the end of every refusal hint)."""
        from gitvault.agents.adapters import DEFAULT

        if self.name == DEFAULT:
            return f"install with --no-{self.name}"
        return f"leave {self.name} out of --agent"

    def command(self, hook: Hook) -> str:
        from gitvault.vault import launcher

        return launcher.shell_command(f"{self.name} {hook.word or hook.event}", self.project_var)

    def preflight(self, workdir: Path, *, local: bool = False) -> None:
        """Everything about this agent's files that could refuse, before anything is
        written."""
        from gitvault.agents.adapters import settings

        settings.check_writable(workdir, self.settings_file, self.opt_out)
        self.load(workdir)

    def load(self, workdir: Path, rel: str | None = None) -> dict[str, Any]:
        from gitvault.agents.adapters import settings

        path = workdir / (rel or self.settings_file)
        data = settings.load(path, self.opt_out)
        self.check_shape(path, data)
        return data

    def check_shape(self, path: Path, data: dict[str, Any]) -> None:
        """Refuse settings whose other keys gitvault touches are not shaped as it needs."""

    def merged(self, current: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def cleaned(self, current: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def ours_in(self, current: dict[str, Any]) -> list[str]:
        """The canonical events gitvault's hooks in these settings serve."""
        raise NotImplementedError

    def install(self, loc: Location, *, local: bool = False) -> AdapterReport:
        from gitvault.agents.adapters import settings

        assert loc.workdir is not None
        report = AdapterReport()
        self.preflight(loc.workdir, local=local)
        path = loc.workdir / self.settings_file
        current = self.load(loc.workdir)
        merged = self.merged(current)
        if merged != current:
            settings.write(path, merged)
            report.changes.append(f"added gitvault's {self.label} hooks to {self.settings_file}")
        report.notes.append(f"{self.label}: {self.trust_step}")
        return report

    def uninstall(self, loc: Location) -> AdapterReport:
        from gitvault.agents.adapters import settings
        from gitvault.errors import Refused

        report = AdapterReport()
        if loc.workdir is None:
            return report
        path = loc.workdir / self.settings_file
        if not path.exists():
            return report
        try:
            settings.check_writable(loc.workdir, self.settings_file, self.opt_out)
            current = self.load(loc.workdir)
        except Refused as exc:
            report.notes.append(exc.message)
            return report
        cleaned = self.cleaned(current)
        if cleaned == current:
            return report
        if self.empty(cleaned):
            path.unlink()
            for folder in (path.parent, path.parent.parent):
                if folder == loc.workdir:
                    break
                try:
                    folder.rmdir()  # only when empty: a folder gitvault created
                except OSError:
                    break
        else:
            settings.write(path, cleaned)
        report.changes.append(f"removed gitvault's {self.label} hooks from {self.settings_file}")
        return report

    def empty(self, settings: dict[str, Any]) -> bool:
        return not settings

    def install_mcp(self, workdir: Path) -> AdapterReport:
        """Register `gitvault mcp` in the agent's MCP configuration (merged beside the
        user's servers; a second install changes nothing)."""
        from gitvault.agents.adapters import mcpconfig

        report = AdapterReport()
        if self.mcp_file is None:
            return report
        if self.mcp_format == "toml":
            changed = mcpconfig.install_toml(workdir, self.mcp_file, self.opt_out)
        else:
            changed = mcpconfig.install_json(
                workdir, self.mcp_file, self.opt_out, dict(self.mcp_extra)
            )
        if changed:
            report.changes.append(f"registered the gitvault MCP server in {self.mcp_file}")
        return report

    def uninstall_mcp(self, workdir: Path) -> AdapterReport:
        from gitvault.agents.adapters import mcpconfig
        from gitvault.errors import Refused

        report = AdapterReport()
        if self.mcp_file is None:
            return report
        try:
            if self.mcp_format == "toml":
                changed = mcpconfig.uninstall_toml(workdir, self.mcp_file, self.opt_out)
            else:
                changed = mcpconfig.uninstall_json(workdir, self.mcp_file, self.opt_out)
        except Refused as exc:
            report.notes.append(exc.message)
            return report
        if changed:
            report.changes.append(f"removed the gitvault MCP server from {self.mcp_file}")
        return report

    def has_mcp(self, workdir: Path) -> bool:
        from gitvault.agents.adapters import mcpconfig

        if self.mcp_file is None:
            return False
        if self.mcp_format == "toml":
            return mcpconfig.has_toml(workdir, self.mcp_file)
        return mcpconfig.has_json(workdir, self.mcp_file)

    def installed(self, workdir: Path) -> list[str]:
        """The canonical events this worktree's settings hand to gitvault ([]: none)."""
        from gitvault.errors import Refused

        try:
            return self.ours_in(self.load(workdir))
        except Refused:
            return []

    def missing_wiring(self, workdir: Path) -> list[str]:
        """What of this agent's wiring the worktree lacks (a new `git worktree add` has only
        the files the team committed)."""
        return [] if self.installed(workdir) else [f"{self.label} hooks"]

    def wiring_folder(self) -> str:
        """What a team commits so that every new worktree has the wiring."""
        return self.settings_file

    def trust(self, workdir: Path, environ: Mapping[str, str]) -> Trust:
        return Trust(None, "")


def find_up(workdir: Path, table: Mapping[str, Any], accept: Callable[[Any], bool]) -> str | None:
    """The nearest folder from workdir upwards that `table` (path → value) accepts."""
    here = workdir.resolve()
    for folder in (here, *here.parents):
        for key in (str(folder), str(folder) + "/"):
            if key in table and accept(table[key]):
                return str(folder)
    return None
