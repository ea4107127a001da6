"""The one set of behaviours every agent's hooks run (canonical events; each adapter maps its
agent's events onto them, and gitvault.agents.runtime calls them):

session-start → recall_at_start: the recall block (≤ 9,500 characters) as context. It opens the
                session's run in the ledger (when and in which worktree it runs: the basis of
                attribution), remembers a hash of each recall part it injected, and on `resume`
                injects only the parts that changed since this conversation last got them
                (nothing when none did); startup, clear and compact inject the whole block,
                the newest unconsumed handover of the worktree and branch first (consumed
                then: offered once).
turn-end      → ask_for_save_when_due: {"decision": "block", "reason": …} only when a save is
                due (gitvault.agents.capture).
pre-compact   → record_unsaved_work: a mechanical session record when this session has
                unsaved work (spooled; the drainer writes it, gitvault.agents.records).
session-end   → record_and_fold: the same record, closes the run, then a detached,
                lease-guarded fold.
file-read,    → recall_at_file: the edit-time block (gitvault.pathrecall.block) of each file
file-edit       the call names that the session has not been shown yet, within one block's
                budget, next to the tool's result. The cheap questions come first, before any
                git process (file_recall_due): is it a file inside the worktree, does the vault
                know anything about it (the path list), did the session get it already (its
                shown-paths file); then is this agent served, is edit-time recall on, does git
                ignore it, and the index. Nothing known, nothing said.

A HookCall carries what one call reads, each read once: the resolved location, the canonical
payload, the repository's gitvault settings (one git process), vault.toml's section, and the
session's ledger; the ledger is stored at most once, by the runtime, after the behaviour.
Nothing here names an agent: what differs between agents is asked of the adapter.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from gitvault.named import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from gitvault.agents.adapters.base import Adapter, Payload
    from gitvault.agents.ledger import SessionState
    from gitvault.agents.quiet import Observed
    from gitvault.resolve import Location
    from gitvault.vault.gitcmd import StartedGit

Answer = dict[str, str]


class HookCall:
    """One hook call of one agent, and what it read."""

    def __init__(
        self, adapter: Adapter, event: str, loc: Location, payload: Payload, raw: str = ""
    ) -> None:
        self.adapter = adapter
        self.event = event
        self.loc = loc
        self.payload = payload
        self.raw = raw  # the hook input as the agent sent it
        self.cwd: Path = loc.workdir or loc.common_dir
        self._config: dict[str, str] | None = None
        self._started: dict[str, StartedGit] = {}  # prefetch: running, answers not taken yet
        self._sections: dict[str, dict[str, Any]] = {}
        self._state: SessionState | None = None
        self.acted = False  # a behaviour ran (an unserved agent's call stores nothing)
        self.due: list[str] = []  # tool events: the files whose block may be due
        # The turn end's quiet stamp (gitvault.agents.quiet): what it observed before reading
        # anything, whether the check found nothing due with nothing left undecided.
        self.observed: Observed | None = None
        self.quiet = False
        self.undecided = False  # a commit may yet turn out to be this session's

    @property
    def session_id(self) -> str:
        return str(self.payload["session_id"])

    def config(self) -> dict[str, str]:
        """gitvault's keys of the repository's git config: remembered while the files git reads
        them from are as they were (vault/configcache), else one git process."""
        if self._config is None:
            from gitvault.vault import configcache

            started = self._started.pop("config", None)  # (prefetch found no cache: no 2nd read)
            self._config = configcache.read(self.loc) if started is None else None
            if self._config is None:
                from gitvault.vault import gitcmd

                self._config = (
                    gitcmd.parse_gitvault_config(started.result(check=False))
                    if started is not None
                    else gitcmd.gitvault_config(self.cwd)
                )
                configcache.store(self.loc, self._config)
        return self._config

    def config_cached(self) -> None:
        """Take the remembered git config keys, when they hold, before any git is started."""
        if self._config is None:
            from gitvault.vault import configcache

            self._config = configcache.read(self.loc)

    def prefetch(self, ignored: str | None = None) -> None:
        """Start, side by side, the git commands a tool event asks one after the other (~3 ms
        each): the git config, vault.toml at the default vault branch (used when the config
        names no other), and whether git ignores the worktree path `ignored`. Their answers
        are taken where they are asked (config, settings, is_ignored); `close` reaps what
        nobody took."""
        from gitvault.errors import GitvaultError
        from gitvault.pathrecall import gate
        from gitvault.vault import configcache, gitcmd, layout

        self.config_cached()
        wanted: dict[str, tuple[list[str], Path]] = {}
        if self._config is None:
            wanted["config"] = (list(gitcmd.GITVAULT_CONFIG), self.cwd)
        rev = self._toml_rev(layout.DEFAULT_BRANCH if self._config is None else self.branch())
        tip = rev.partition(":")[0]
        if "/" in tip or configcache.toml_at(self.loc, tip) is None:
            wanted["toml"] = (["cat-file", "blob", rev], self.cwd)
        if ignored is not None and self.loc.workdir is not None:
            wanted["ignored"] = (gate.check_ignore(ignored), self.loc.workdir)
        for key, (args, cwd) in wanted.items():
            try:
                self._started[key] = gitcmd.start_git(args, cwd)
            except GitvaultError:
                return  # no git: each answer is asked for where it is needed, as without

    def is_ignored(self, rel: str) -> bool:
        """Whether git ignores the worktree path `rel` (pathrecall.gate.ignored)."""
        from gitvault.pathrecall import gate

        started = self._started.get("ignored")
        if started is not None and started.cmd[-1] == rel:
            del self._started["ignored"]
            return gate.ignored_of(started.result(check=False))
        assert self.loc.workdir is not None
        return gate.ignored(self.loc.workdir, rel)

    def close(self) -> None:
        """Reap the git commands prefetch started whose answers nobody asked for."""
        for started in self._started.values():
            started.abandon()
        self._started.clear()

    def _toml_rev(self, branch: str) -> str:
        """vault.toml at the branch's tip: by the tip's name when its ref file gives it (then
        the answer can be remembered for that tip), else by the ref."""
        from gitvault.vault import configcache, layout

        tip = configcache.vault_tip(self.loc, branch)
        return f"{tip or layout.branch_ref(branch)}:{layout.CONFIG}"

    def branch(self) -> str:
        from gitvault.vault import layout

        return layout.branch_name(self.config().get(layout.BRANCH_KEY))

    def settings(self, section: str = "capture") -> dict[str, Any]:
        """A section of the vault's vault.toml, with the defaults (read from the branch tip)."""
        if section not in self._sections:
            from gitvault.vault import configcache, gitcmd, layout

            rev = self._toml_rev(self.branch())
            tip = rev.partition(":")[0]
            text = configcache.toml_at(self.loc, tip) if "/" not in tip else None
            started = self._started.pop("toml", None)
            if text is not None:
                if started is not None:
                    started.abandon()
            else:
                if started is not None and started.cmd[-1] == rev:
                    proc = started.result(check=False)
                else:
                    if started is not None:
                        started.abandon()  # read at the default branch; the config names another
                    proc = gitcmd.run_git(["cat-file", "blob", rev], self.cwd, check=False)
                text = proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None
                if text is not None and "/" not in tip:
                    configcache.remember_toml(self.loc, tip, text)
            values = layout.read_settings(text, section)
            # Spending settings: what a travelling vault.toml may ask for, git config over it.
            self._sections[section] = layout.resolve_local(section, values, self.config())[0]
        return self._sections[section]

    @property
    def state(self) -> SessionState:
        """The session's ledger, loaded on first use, once."""
        if self._state is None:
            from gitvault.agents import ledger

            self._state = ledger.load(self.loc, self.session_id)
            if self._state.sh_started and not self._state.cli:
                self._state.cli = self.adapter.shell_cli()  # what a Python start records
        return self._state

    def finish(self) -> None:
        """Store the ledger when a behaviour ran and used it (once per call); then a turn end
        leaves its quiet stamp, or none."""
        if self.acted and self._state is not None:
            from gitvault.agents import ledger

            ledger.store(self.loc, self._state)
        if self.acted and self.event == "turn-end":
            from gitvault.agents import quiet

            quiet.settle(self)

    def log(self, message: str) -> None:
        from gitvault.vault.locking import log_failure

        log_failure(self.loc.state_dir, message)


def respond(call: HookCall) -> Answer | None:
    """The behaviour for the call's event, when this clone serves its agent (`git config
    gitvault.agents`; "none" serves none): gitvault stays out of an unwired agent's
    sessions."""
    from gitvault.agents.adapters import serves
    from gitvault.vault import layout

    precheck = PRECHECKS.get(call.event)
    if precheck is not None and not precheck(call):
        return None
    if not serves(call.config().get(layout.AGENTS_KEY), call.adapter.name):
        return None
    call.acted = True
    return BEHAVIOURS[call.event](call)


def recall_at_start(call: HookCall) -> Answer | None:
    from gitvault.memory import recall
    from gitvault.memory.attribution import reflog_size
    from gitvault.vault import gitcmd

    loc, state = call.loc, call.state
    source = str(call.payload.get("source") or "startup")
    state.open_run(time.time(), reflog_size(loc.git_dir))
    state.git_dir = str(loc.git_dir)
    state.worktree = str(loc.workdir or "")
    state.branch = gitcmd.head_branch(loc.git_dir) or ""
    # A resumed conversation still holds what it was given (the agent replays it): only what
    # changed since. compact and clear dropped it: everything again.
    known = state.recall if source == "resume" and state.recall else None
    # A handover (`gitvault checkpoint`) goes first into a fresh context (startup, clear,
    # compact), once: a resumed conversation holds what it had.
    fresh = source != "resume"
    result = recall.build(
        call.cwd, call.branch(), here=state.branch, known=known, loc=loc, handover=fresh
    )
    for problem in result.problems:
        call.log(f"{call.adapter.name} hook session-start: {problem}")
    if result.handovers:
        from gitvault.memory import handovers

        handovers.consume(loc, result.handovers, call.session_id)
    state.recall = {**(known or {}), **result.parts}
    state.cli = call.adapter.shell_cli()
    from gitvault.materialize import ready

    ready.want(loc)  # the next change of the vault materializes this worktree's block
    return {"context": result.text} if result.text else None


def ask_for_save_when_due(call: HookCall) -> Answer | None:
    from gitvault.agents import capture

    return capture.decide_stop(call)


def record_unsaved_work(call: HookCall) -> Answer | None:
    from gitvault.agents import capture, ledger

    capture.auto_record(call, call.event)  # the drainer writes it (gitvault.agents.records)
    ledger.prune(call.loc)
    return None


def record_and_fold(call: HookCall) -> Answer | None:
    record_unsaved_work(call)
    if call.settings()["fold_on_session_end"]:
        from gitvault.fold import background

        background.spawn_fold(call.loc)
    return None


def file_recall_due(call: HookCall) -> bool:
    """Whether any file the tool call names may get its block: inside the worktree, known to
    the vault, not shown to this session yet. No git process, no SQLite: a small file read
    or two (the path list, the session's shown paths). Sets call.due."""
    from gitvault.agents import shown
    from gitvault.pathrecall import gate, known
    from gitvault.vault import statedir

    workdir = call.loc.workdir
    if workdir is None:
        return False
    cwd = call.payload.get("cwd")
    base = Path(cwd) if isinstance(cwd, str) and cwd else None
    listing = known.read(call.loc.state_dir / statedir.KNOWN_PATHS)
    for name in call.payload.get("paths") or []:
        rel = gate.project_path(name, workdir, base)
        if rel is None or rel in call.due or known.lists(listing, rel) is False:
            continue
        if not shown.shown(call.loc, call.session_id, rel):
            call.due.append(rel)
    if call.due:
        call.prefetch(ignored=call.due[0])
    return bool(call.due)


def recall_at_file(call: HookCall) -> Answer | None:
    from gitvault.agents import shown
    from gitvault.pathrecall.block import LIMIT, render
    from gitvault.pathrecall.index import PathIndex
    from gitvault.vault import origin

    if not call.settings("recall")["edit_time"]:
        return None
    assert call.loc.workdir is not None
    index = PathIndex(call.loc, call.branch())
    blocks: list[str] = []
    origins = origin.load(call.loc)
    room = LIMIT
    for rel in call.due:
        if room < 400 or call.is_ignored(rel):
            continue
        found = index.facts(rel)
        if found is None:
            continue
        text = render(found, call.loc.workdir, room, origins)
        # Claimed under the shown file's lock: a parallel call about the same file says
        # nothing; a file left out for lack of room is not claimed and gets its block later.
        if shown.claim(call.loc, call.session_id, rel):
            blocks.append(text)
            room -= len(text) + 2
    return {"context": "\n\n".join(blocks)} if blocks else None


BEHAVIOURS: dict[str, Callable[[HookCall], Answer | None]] = {
    "session-start": recall_at_start,
    "turn-end": ask_for_save_when_due,
    "pre-compact": record_unsaved_work,
    "session-end": record_and_fold,
    "file-read": recall_at_file,
    "file-edit": recall_at_file,
}


def observe_for_quiet(call: HookCall) -> bool:
    """A turn end's baseline for its quiet stamp, taken before the settings and the reflog
    are read (gitvault.agents.quiet); never a reason to stop."""
    from gitvault.agents import quiet

    call.observed = quiet.observe(call)
    return True


def forget_quiet(call: HookCall) -> bool:
    """A session start (a new run, a resumed conversation): its next turn end checks in Python.
    First of all, so that a start cut short by its time bound still does it."""
    from gitvault.agents import quiet

    quiet.clear(call.loc, call.session_id)
    return True


# Cheap gates run before anything else (the agents' config included): tool hooks fire on
# every read and edit.
PRECHECKS: dict[str, Callable[[HookCall], bool]] = {
    "file-read": file_recall_due,
    "file-edit": file_recall_due,
    "turn-end": observe_for_quiet,
    "session-start": forget_quiet,
}
