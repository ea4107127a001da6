"""What an agent adapter is, and the pieces the adapters share.

An adapter knows one agent's facts and nothing else: where its hook configuration lives and in
which format, its event names, the field names of its hook input (mapped onto one canonical
payload), the shape of its hook output, its instruction file, the variable its shell exports
with the session id, and how to tell whether the agent trusts the project. The behaviours
(recall at start, ask for a save at turn end, records at compaction and session end, the
background fold) are gitvault.agents.hooks.behave, one copy for every agent.

Canonical events: session-start, turn-end, pre-compact, session-end. The canonical payload:
session_id (required), cwd, transcript_path (only where gitvault can read the format: Claude
Code's), source, stop_hook_active, prompt.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from gitvault.errors import Refused
from gitvault.resolve import Location
from gitvault.vault import launcher, layout
from gitvault.vault.files import atomic_write

EVENTS = ("session-start", "turn-end", "pre-compact", "session-end")
MARKER = launcher.ENTRY  # every hook command gitvault writes names gitvault-hook
# gitvault's own hook bounds (seconds), per canonical event; an adapter may lower them.
TIME_BOUNDS = {"session-start": 2.0, "turn-end": 20.0, "pre-compact": 45.0, "session-end": 25.0}


@dataclass(frozen=True)
class Hook:
    """One hook gitvault installs: the agent's event name, the canonical event it maps to, and
    the agent's timeout for it (in the agent's own unit)."""

    native: str
    event: str
    timeout: int
    matcher: str | None = None


@dataclass(frozen=True)
class Trust:
    """Whether the agent will run the project's hooks: True, False, or None (cannot tell)."""

    trusted: bool | None
    detail: str


@dataclass
class AdapterReport:
    changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


Payload = dict[str, Any]


class Adapter:
    """One agent. Subclasses fill in the class attributes and the three agent-specific
    methods (normalise, shape, and the settings merge); everything else is shared."""

    name: ClassVar[str]  # the --agent value, the hook command's argument, git config
    agent: ClassVar[str]  # recorded in saves: `agent: codex`
    label: ClassVar[str]  # shown to people
    binary: ClassVar[str]  # detected on PATH
    settings_file: ClassVar[str]  # relative to the worktree
    instruction_file: ClassVar[str]  # gets gitvault's managed section
    session_env: ClassVar[tuple[str, ...]] = ()  # the agent's shell: the session id
    project_var: ClassVar[str] = "PWD"  # hook env: the project folder, when the agent sets one
    context_limit: ClassVar[int] = layout.RECALL_MAX_CHARS
    hooks: ClassVar[tuple[Hook, ...]] = ()
    bounds: ClassVar[Mapping[str, float]] = {}
    trust_step: ClassVar[str] = ""
    # The agent HTML-escapes `<` and `>` in a turn-end reason (Codex): hand it a save command
    # without them.
    escapes_angles: ClassVar[bool] = False

    # -- the hook runtime ------------------------------------------------------------------
    def time_bound(self, event: str) -> float:
        return float(self.bounds.get(event, TIME_BOUNDS.get(event, 10.0)))

    def normalise(self, event: str, raw: Mapping[str, Any]) -> Payload:
        """The agent's hook input as the canonical payload."""
        return {
            "session_id": raw.get("session_id"),
            "cwd": raw.get("cwd"),
            "source": raw.get("source"),
            "stop_hook_active": bool(raw.get("stop_hook_active")),
        }

    def shape(self, event: str, answer: Mapping[str, str] | None) -> str:
        """What to print for a canonical answer: {"context": …} at session-start,
        {"decision": "block", "reason": …} at turn-end; "" for nothing."""
        if not answer:
            return ""
        if event == "session-start":
            return json.dumps(
                {
                    "hookSpecificOutput": {
                        "hookEventName": "SessionStart",
                        "additionalContext": answer["context"][: self.context_limit],
                    }
                }
            )
        return json.dumps({"decision": answer["decision"], "reason": answer["reason"]})

    def wanted(self, loc: Location, event: str, payload: Payload) -> bool:
        """A cheap gate before any git work (True: run the behaviour)."""
        return True

    def after(self, loc: Location, event: str, payload: Payload) -> None:
        """Agent-specific follow-up once the behaviour ran (e.g. notes for commits no git hook
        saw)."""

    def session_from_env(self, environ: Mapping[str, str]) -> str | None:
        for var in self.session_env:
            value = environ.get(var)
            if value:
                return value
        return None

    # -- install ---------------------------------------------------------------------------
    def command(self, event: str) -> str:
        return launcher.shell_command(f"{self.name} {event}", self.project_var)

    def preflight(self, workdir: Path) -> None:
        check_writable(workdir, self.settings_file, self.name)
        self.load(workdir)

    def load(self, workdir: Path) -> dict[str, Any]:
        return load_json(workdir / self.settings_file, self.name)

    def merged(self, current: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def cleaned(self, current: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def ours_in(self, current: dict[str, Any]) -> list[str]:
        """The canonical events gitvault's hooks in these settings serve."""
        raise NotImplementedError

    def install(self, loc: Location) -> AdapterReport:
        assert loc.workdir is not None
        report = AdapterReport()
        self.preflight(loc.workdir)
        path = loc.workdir / self.settings_file
        current = self.load(loc.workdir)
        merged = self.merged(current)
        if merged != current:
            write_json(path, merged)
            report.changes.append(f"added gitvault's {self.label} hooks to {self.settings_file}")
        report.notes.append(f"{self.label}: {self.trust_step}")
        return report

    def uninstall(self, loc: Location) -> AdapterReport:
        report = AdapterReport()
        if loc.workdir is None:
            return report
        path = loc.workdir / self.settings_file
        if not path.exists():
            return report
        try:
            check_writable(loc.workdir, self.settings_file, self.name)
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
            write_json(path, cleaned)
        report.changes.append(f"removed gitvault's {self.label} hooks from {self.settings_file}")
        return report

    def empty(self, settings: dict[str, Any]) -> bool:
        return not settings

    def installed(self, workdir: Path) -> list[str]:
        """The canonical events this worktree's settings hand to gitvault ([]: none)."""
        try:
            return self.ours_in(self.load(workdir))
        except Refused:
            return []

    def trust(self, workdir: Path, environ: Mapping[str, str]) -> Trust:
        return Trust(None, "")


# -- shared helpers --------------------------------------------------------------------------


def is_ours(handler: Any, key: str = "command") -> bool:
    return isinstance(handler, dict) and MARKER in str(handler.get(key, ""))


def absolute_cli() -> str:
    """How the agent's shell runs gitvault, independent of its PATH (Codex may run a login
    shell whose PATH lacks a virtualenv's gitvault): this gitvault's script, by absolute path,
    else this interpreter. Only ever put into transient text (a turn-end reason), never into a
    shared file."""
    beside = Path(sys.executable).parent / "gitvault"
    if beside.is_file() and os.access(beside, os.X_OK):
        return shlex.quote(str(beside))
    found = shutil.which("gitvault")
    if found:
        return shlex.quote(str(Path(found).absolute()))
    return f"{shlex.quote(sys.executable)} -m gitvault"


def check_writable(workdir: Path, rel: str, name: str) -> None:
    """Refuse (exit 3) to write through a symbolic link or outside the worktree."""
    from gitvault.agents import claude

    try:
        claude.check_writable(workdir, rel)
    except Refused as exc:
        raise Refused(exc.message, hint=f"fix it, or leave {name} out of --agent") from exc


def load_json(path: Path, name: str) -> dict[str, Any]:
    """A settings file as a JSON object ({} when missing); refuses anything gitvault could only
    rewrite by losing what is there (not UTF-8, not strict JSON, not an object)."""
    hint = f"fix the file, or leave {name} out of --agent"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise Refused(f"{path} cannot be read as UTF-8 text", hint=hint) from exc
    try:
        data = json.loads(text, parse_constant=_no_constant) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise Refused(f"{path} is not valid JSON (line {exc.lineno})", hint=hint) from exc
    except (ValueError, RecursionError) as exc:
        raise Refused(f"{path} is not strict JSON ({exc})", hint=hint) from exc
    if not isinstance(data, dict):
        raise Refused(f"{path} is not a JSON object", hint=hint)
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
        raise Refused(f'{path}: "hooks" is not an object of lists', hint=hint)
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())


Handler = Callable[[Hook], dict[str, Any]]


def merge_grouped(
    settings: dict[str, Any], hooks: tuple[Hook, ...], handler: Handler
) -> dict[str, Any]:
    """Claude Code's layout (Codex and Gemini use it too): {"hooks": {Event: [{"matcher"?,
    "hooks": [handler, …]}]}}. Foreign groups and handlers are kept in place; gitvault's group
    is replaced when it differs, so a second install changes nothing."""
    out = copy.deepcopy(settings)
    table = out.setdefault("hooks", {})
    for hook in hooks:
        group: dict[str, Any] = {"hooks": [handler(hook)]}
        if hook.matcher is not None:
            group = {"matcher": hook.matcher, **group}
        existing = table.get(hook.native, [])
        ours = [g for g in existing if _group_is_ours(g)]
        if ours == [group]:
            continue
        table[hook.native] = _drop_grouped(existing) + [group]
    return out


def clean_grouped(settings: dict[str, Any]) -> dict[str, Any]:
    return clean_table(settings, _drop_grouped)


def clean_table(settings: dict[str, Any], drop: Callable[[list[Any]], list[Any]]) -> dict[str, Any]:
    """settings without gitvault's entries: `drop` keeps the rest of one event's list; an
    event left empty goes, and the "hooks" table when nothing is left in it."""
    out = copy.deepcopy(settings)
    table = out.get("hooks")
    if not isinstance(table, dict):
        return out
    for event in list(table):
        if isinstance(table[event], list):
            left = drop(table[event])
            if left:
                table[event] = left
            else:
                del table[event]
    if not table:
        del out["hooks"]
    return out


def grouped_events(settings: dict[str, Any], hooks: tuple[Hook, ...]) -> list[str]:
    table = settings.get("hooks")
    if not isinstance(table, dict):
        return []
    return [
        h.event
        for h in hooks
        if any(_group_is_ours(g) for g in table.get(h.native, []) or [] if isinstance(g, dict))
    ]


def _group_is_ours(group: Any) -> bool:
    return isinstance(group, dict) and any(is_ours(h) for h in group.get("hooks", []) or [])


def _drop_grouped(groups: list[Any]) -> list[Any]:
    kept = []
    for group in groups:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            kept.append(group)
            continue
        handlers = [h for h in group["hooks"] if not is_ours(h)]
        if handlers:
            kept.append({**group, "hooks": handlers})
        elif not any(is_ours(h) for h in group["hooks"]):
            kept.append(group)
    return kept


def find_up(workdir: Path, table: Mapping[str, Any], accept: Callable[[Any], bool]) -> str | None:
    """The nearest folder from workdir upwards that `table` (path → value) accepts."""
    here = workdir.resolve()
    for folder in (here, *here.parents):
        for key in (str(folder), str(folder) + "/"):
            if key in table and accept(table[key]):
                return str(folder)
    return None


def read_json_file(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
