"""Gemini CLI (npm @google/gemini-cli; observed on 0.61.0).

- Hooks: "hooks" in <cwd>/.gemini/settings.json (Claude Code's layout plus a handler "name";
  timeouts in MILLISECONDS). Gemini reads project settings from the folder it starts in only,
  not from the git root: sessions started in a subfolder run no project hooks.
- Trust: a trusted workspace (the first-start dialog, ~/.gemini/trustedFolders.json
  TRUST_FOLDER, or GEMINI_CLI_TRUST_WORKSPACE=true); untrusted, project settings are ignored.
- Events: SessionStart (source startup|resume), AfterAgent = turn end (prompt,
  prompt_response, stop_hook_active), PreCompress (fires before EVERY model request with
  trigger "auto", compression or not), SessionEnd.
- Output: SessionStart context only nested in hookSpecificOutput; AfterAgent
  {"decision": "block", "reason"} becomes the next user message.
- The agent's shell exports no session id (the save command carries it), hides the global git
  config and empties core.hooksPath: commits Gemini makes run no git hook, so they get their
  notes here, from the turn-end and session-end hooks (the drainer's catch-up walk).
- Tool events: AfterTool only (BeforeTool's additionalContext reaches no request); read_file,
  replace, write_file name their file in tool_input.file_path (relative stays relative).
- Instructions: GEMINI.md by default; gitvault adds AGENTS.md to context.fileName instead of
  writing a second copy of its section (Copilot reads GEMINI.md too and would get it twice).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from gitvault.agents.adapters.base import Adapter, AdapterReport, Hook, Payload, Trust
from gitvault.vault import statedir

if TYPE_CHECKING:
    from gitvault.agents.behaviours import HookCall
    from gitvault.resolve import Location

DEFAULT_CONTEXT = "GEMINI.md"
# PreCompress fires before every model request: a record is written there only for commits the
# turn-end hook asked about this long ago, and the agent still did not save (the record then
# covers them, so the next call finds nothing: idempotent).
ASKED_GRACE_SECONDS = 300.0
ORIGINS = statedir.agent_file("gemini", "context-origin")  # worktrees where install added AGENTS.md


class Gemini(Adapter):
    name: ClassVar[str] = "gemini"
    agent: ClassVar[str] = "gemini"
    label: ClassVar[str] = "Gemini CLI"
    binary: ClassVar[str] = "gemini"
    settings_file: ClassVar[str] = ".gemini/settings.json"
    mcp_file: ClassVar[str | None] = ".gemini/settings.json"
    # Without trust (or --yolo) a headless Gemini does not offer the server's tools at all.
    mcp_extra: ClassVar[Mapping[str, Any]] = {"trust": True}
    instruction_file: ClassVar[str] = "AGENTS.md"
    reads_instructions: ClassVar[tuple[str, ...]] = ("GEMINI.md", "AGENTS.md")
    project_var: ClassVar[str] = "GEMINI_PROJECT_DIR"
    fast_path_field: ClassVar[str | None] = "file_path"
    fast_path_parent: ClassVar[str] = "tool_input"
    hooks: ClassVar[tuple[Hook, ...]] = (
        Hook("SessionStart", "session-start", 15_000, "*"),
        Hook("AfterAgent", "turn-end", 30_000, "*"),
        Hook("PreCompress", "pre-compact", 60_000, "*"),
        Hook("SessionEnd", "session-end", 30_000, "*"),
        # Only AfterTool's context reaches the model (appended inside the tool's result):
        # BeforeTool's is dropped, so an edit gets its block right after the change.
        Hook("AfterTool", "file-read", 10_000, "^read_file$"),
        Hook("AfterTool", "file-edit", 10_000, "^(replace|write_file)$"),
    )
    trust_step: ClassVar[str] = (
        "trust the folder when gemini asks on first start (or list it as TRUST_FOLDER in "
        "~/.gemini/trustedFolders.json); start gemini at the repository's top level: it reads "
        "project hooks from the folder it starts in only"
    )

    def normalise(self, event: str, raw: Mapping[str, Any]) -> Payload:
        payload = super().normalise(event, raw)
        prompt = raw.get("prompt")
        if isinstance(prompt, str):
            payload["prompt"] = prompt
        return payload

    def tool_paths(self, event: str, tool: str | None, raw: Mapping[str, Any]) -> list[str]:
        """read_file, replace, write_file: tool_input.file_path, as the model wrote it."""
        given = raw.get("tool_input")
        path = given.get("file_path") if isinstance(given, dict) else None
        return [path] if isinstance(path, str) else []

    def _handler(self, hook: Hook) -> dict[str, Any]:
        return {
            "type": "command",
            "name": f"gitvault-{hook.event}",
            "command": self.command(hook),
            "timeout": hook.timeout,
        }

    def merged(self, current: dict[str, Any]) -> dict[str, Any]:
        from gitvault.agents.adapters import settings

        out = settings.merge_grouped(current, self.hooks, self._handler, self.markers)
        context = out.setdefault("context", {})
        if isinstance(context, dict):
            names = context.get("fileName")
            listed = [names] if isinstance(names, str) else list(names or [DEFAULT_CONTEXT])
            if self.instruction_file not in listed:
                context["fileName"] = listed + [self.instruction_file]
        return out

    def cleaned(self, current: dict[str, Any]) -> dict[str, Any]:
        from gitvault.agents.adapters import settings

        return settings.clean_table(current, lambda g: settings.drop_grouped(g, self.markers))

    def ours_in(self, current: dict[str, Any]) -> list[str]:
        from gitvault.agents.adapters import settings

        return settings.grouped_events(current, self.hooks, self.markers)

    def check_shape(self, path: Path, data: dict[str, Any]) -> None:
        if not isinstance(data.get("context", {}), dict):
            from gitvault.errors import Refused

            raise Refused(
                f'{path}: "context" is not an object', hint=f"fix the file, or {self.opt_out}"
            )

    # install also remembers whether AGENTS.md was its own addition to context.fileName, so
    # uninstall takes back only that.
    def install(self, loc: Location, *, local: bool = False) -> AdapterReport:
        assert loc.workdir is not None
        before = self.load(loc.workdir)
        report = super().install(loc, local=local)
        if self.instruction_file not in _names(before) and self.instruction_file in _names(
            self.load(loc.workdir)
        ):
            _set_origin(loc, loc.workdir, True)
            report.changes.append(
                f"listed {self.instruction_file} in context.fileName of {self.settings_file} "
                "(Gemini reads gitvault's section there)"
            )
        return report

    def uninstall(self, loc: Location) -> AdapterReport:
        report = super().uninstall(loc)
        if loc.workdir is None or not _origin(loc, loc.workdir):
            return report
        from gitvault.agents.adapters import settings

        path = loc.workdir / self.settings_file
        data = settings.read_lenient(path)
        if isinstance(data, dict) and isinstance(data.get("context"), dict):
            names = _names(data)
            if self.instruction_file in names:
                left = [n for n in names if n != self.instruction_file]
                if left == [DEFAULT_CONTEXT]:
                    del data["context"]["fileName"]
                else:
                    data["context"]["fileName"] = left
                if not data["context"]:
                    del data["context"]
                if data:
                    settings.write(path, data)
                else:
                    path.unlink()
                    try:
                        path.parent.rmdir()
                    except OSError:
                        pass
                report.changes.append(
                    f"removed {self.instruction_file} from context.fileName in {self.settings_file}"
                )
        _set_origin(loc, loc.workdir, False)
        return report

    def wanted(self, call: HookCall) -> bool:
        """PreCompress runs before every model request: one ledger read, no git, unless the
        agent left work it was asked to save unsaved for ASKED_GRACE_SECONDS."""
        if call.event != "pre-compact":
            return True
        state = call.state
        if not state.known or not state.last_ask:
            return False
        unsaved = set(state.asked) - set(state.saved)
        return bool(unsaved) and time.time() - state.last_ask >= ASKED_GRACE_SECONDS

    def after(self, call: HookCall) -> None:
        """Notes for the commits this session made: Gemini's shell runs no git hook."""
        if call.event in ("turn-end", "session-end"):
            catch_up_notes(call)

    def trust(self, workdir: Path, environ: Mapping[str, str]) -> Trust:
        if environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
            return Trust(True, "GEMINI_CLI_TRUST_WORKSPACE=true")
        home = Path(environ.get("HOME", "~")).expanduser()
        path = Path(
            environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or home / ".gemini/trustedFolders.json"
        )
        from gitvault.agents.adapters.base import find_up
        from gitvault.agents.adapters.settings import read_lenient

        table = read_lenient(path)
        if not isinstance(table, dict):
            return Trust(False, f"the folder is not trusted ({path} lists no trust for it)")
        parents = {str(Path(k).parent): v for k, v in table.items() if v == "TRUST_PARENT"}
        if find_up(workdir, {k: v for k, v in table.items() if v == "DO_NOT_TRUST"}, bool):
            return Trust(False, f"the folder is marked DO_NOT_TRUST in {path}")
        if find_up(workdir, {**table, **parents}, lambda v: v in ("TRUST_FOLDER", "TRUST_PARENT")):
            return Trust(True, f"trusted in {path}")
        return Trust(False, f"the folder is not trusted ({path} does not list it)")


def _names(settings: dict[str, Any]) -> list[str]:
    context = settings.get("context")
    names = context.get("fileName") if isinstance(context, dict) else None
    if isinstance(names, str):
        return [names]
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def _origin(loc: Location, workdir: Path) -> bool:
    from gitvault.agents.adapters.settings import read_lenient

    data = read_lenient(loc.state_dir / ORIGINS)
    return isinstance(data, dict) and bool(data.get(str(workdir)))


def _set_origin(loc: Location, workdir: Path, added: bool) -> None:
    from gitvault.agents.adapters.settings import read_lenient
    from gitvault.vault.files import make_dirs, write_json

    data = read_lenient(loc.state_dir / ORIGINS)
    table = data if isinstance(data, dict) else {}
    if added:
        table[str(workdir)] = True
    else:
        table.pop(str(workdir), None)
    try:
        make_dirs(loc.state_dir)
        write_json(loc.state_dir / ORIGINS, table)
    except OSError:
        pass


def catch_up_notes(call: HookCall) -> None:
    """Note the commits on this session's worktree HEAD that have none (back to the first noted
    one), when the session made any: the drainer's catch-up walk, in this process. A turn end
    that had anything to catch up (or could not tell) leaves no quiet stamp: the next one
    checks again in Python."""
    from gitvault.agents import ledger
    from gitvault.memory import attribution

    loc, state = call.loc, call.state
    git_dir = ledger.session_git_dir(loc, state)
    settled, call.quiet = call.quiet, False
    try:
        made = attribution.made_in(git_dir, state.attribution_runs())
    except OSError:
        return
    if not made or not os.path.exists(os.path.join(git_dir, "HEAD")):
        call.quiet = settled
        return
    from gitvault.vault import gitcmd, layout

    # The common case, every turn after the session's first commit: its HEAD has its note
    # already. Two git processes say so; the drainer (and pygit2) only load when it has none.
    try:
        head = gitcmd.head_ref(git_dir)
    except OSError:
        return
    rev = head[5:] if head.startswith("ref: ") else head
    tip = gitcmd.first_parent_chain(loc.common_dir, rev, 1)
    vault = layout.branch_ref(call.branch())
    if tip and gitcmd.ref_exists(loc.common_dir, f"{vault}:{layout.note_path(*tip[0])}"):
        call.quiet = settled
        return
    from gitvault.notes.drain import Drainer, Entry

    branch = gitcmd.head_branch(git_dir)
    worktree = "main" if os.path.samefile(git_dir, loc.common_dir) else Path(git_dir).name
    Drainer(loc).catch_up(str(git_dir), Entry("commit", made[-1], branch, worktree, str(git_dir)))


ADAPTER = Gemini()
