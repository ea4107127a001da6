"""The agent adapters: one module per coding agent that knows its settings file and format,
event names, input fields, output shape, instruction file and transcript, and maps them onto
gitvault's one set of behaviours (gitvault.agents.behaviours, run by gitvault.agents.runtime).
This module is the registry; nothing outside this package names an agent.

Adding an agent = one module here whose ADAPTER is an Adapter subclass, its name in NAMES, and
its tests. The registry imports an adapter only when asked for it (get): a hook loads the one
adapter it serves, nothing else.

Which agents a clone serves is `git config gitvault.agents`: a comma-separated list of adapter
names, or "none" (install --agent none / --no-<DEFAULT> with nothing else). Unset (installs
before agents were configurable): every agent whose hooks are present.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from gitvault.named import TYPE_CHECKING

if TYPE_CHECKING:
    from gitvault.agents.adapters.base import Adapter
    from gitvault.vault.launcher import SessionStart, ToolEvent, TurnEnd

# Registry order: how lists are rendered and parsed, which agent's session a shell belongs to
# when several variables are set.
NAMES = ("claude", "codex", "gemini", "copilot")
# The agent gitvault 0.1 served alone: install wires it whether or not it is on PATH (unless
# --no-<it>), and the 0.1 hook forms (`gitvault-hook EVENT`, `python -m gitvault.claude_hooks`)
# are its hooks.
DEFAULT = "claude"
NONE = "none"


def get(name: str) -> Adapter:
    """The adapter called `name` (KeyError for no such agent); imports its module only."""
    if name not in NAMES:
        raise KeyError(name)
    adapter: Adapter = importlib.import_module(f"{__name__}.{name}").ADAPTER
    return adapter


def all_adapters() -> dict[str, Adapter]:
    """Every adapter, in registry order (imports them all: install, status, the fold)."""
    return {name: get(name) for name in NAMES}


def turn_ends() -> list[TurnEnd]:
    """Every agent's turn-end hook as the launcher's quiet fast path answers it."""
    from gitvault.vault.launcher import TurnEnd

    return [
        TurnEnd(adapter.name, hook.word or hook.event, adapter.session_field)
        for adapter in all_adapters().values()
        for hook in adapter.hooks
        if hook.event == "turn-end"
    ]


def _envelope(adapter: Adapter, event: str) -> tuple[str, str] | None:
    """What the adapter prints around a block at EVENT (the block as the inside of a JSON
    string), read from its own shape(); None when it is not one string's inside."""
    import json

    mark = "gitvault:block\u2028"  # a character JSON escapes: found only where the block goes
    around = adapter.shape(event, {"context": mark}).split(json.dumps(mark)[1:-1])
    return (around[0], around[1]) if len(around) == 2 else None


def session_starts() -> list[SessionStart]:
    """Every agent's session-start hook as the launcher serves it from a materialized recall:
    what the adapter prints around the block, read from its own shape()."""
    from gitvault.vault.launcher import SessionStart

    out = []
    for adapter in all_adapters().values():
        around = _envelope(adapter, "session-start")
        if around is None:
            continue
        needs = _required(adapter.input_schemas.get("session-start"), adapter.session_field)
        for hook in adapter.hooks:
            if hook.event == "session-start":
                out.append(
                    SessionStart(
                        adapter.name,
                        hook.word or hook.event,
                        adapter.session_field,
                        around[0],
                        around[1],
                        adapter.context_limit,
                        adapter.resume_sources,
                        adapter.project_var if adapter.project_var_wins else "",
                        adapter.start_env_file or "",
                        needs,
                    )
                )
    return out


def _required(schema: str | None, session_field: str) -> tuple[tuple[str, str], ...]:
    """The members an adapter's input schema requires besides the session id, each with the
    string it must equal ("" when any string will do)."""
    if not schema:
        return ()
    import json

    from gitvault.resources import schema_path

    data = json.loads(schema_path(schema).read_text(encoding="utf-8"))
    props = data.get("properties", {})
    out = []
    for name in data.get("required", []):
        if name == session_field:
            continue
        const = props.get(name, {}).get("const", "")
        out.append((str(name), const if isinstance(const, str) else ""))
    return tuple(out)


def tool_events() -> list[ToolEvent]:
    """The edit-time hooks the launcher's sh answers when there is nothing to say, and (with
    the adapter's envelope, read from its own shape()) from a materialized block. Where the
    path comes out of a shell command line (the adapter's readers), only for the tool the
    adapter's fast_path_needs name."""
    from gitvault.vault.launcher import ToolEvent

    out = []
    for adapter in all_adapters().values():
        if not adapter.fast_path_field:
            continue
        for hook in adapter.hooks:
            if hook.event not in adapter.fast_path_events:
                continue
            around = _envelope(adapter, hook.event) or ("", "")
            served = bool(around[0]) and (
                not adapter.fast_path_readers or bool(adapter.fast_path_needs)
            )
            out.append(
                ToolEvent(
                    adapter.name,
                    hook.word or hook.event,
                    adapter.session_field,
                    adapter.fast_path_field,
                    adapter.project_var,
                    adapter.fast_path_others,
                    adapter.fast_path_parent,
                    adapter.fast_path_readers,
                    adapter.fast_path_tail,
                    around[0] if served else "",
                    around[1] if served else "",
                    adapter.context_limit if served else 0,
                    adapter.fast_path_needs,
                )
            )
    return out


def names() -> list[str]:
    return list(NAMES)


def parse(text: str) -> list[str]:
    """`--agent claude,codex` → ["claude", "codex"] (registry order); "none" → []."""
    from gitvault.errors import GitvaultError

    wanted = [w.strip().lower() for w in text.split(",") if w.strip()]
    if wanted == [NONE]:
        return []
    unknown = [w for w in wanted if w not in NAMES]
    if unknown or not wanted:
        raise GitvaultError(
            f"unknown agent {', '.join(unknown) or repr(text)}",
            hint=f"use a comma-separated list of {', '.join(NAMES)}, or none",
        )
    return [name for name in NAMES if name in wanted]


def render(chosen: Iterable[str]) -> str:
    listed = [name for name in NAMES if name in set(chosen)]
    return ",".join(listed) or NONE


def from_config(value: str | None) -> list[str] | None:
    """The agents `git config gitvault.agents` names (None when unset)."""
    from gitvault.vault import layout

    listed = layout.agents_listed(value)
    return None if listed is None else [w for w in listed if w in NAMES]


def configured(cwd: Path) -> list[str] | None:
    from gitvault.vault import gitcmd, layout

    return from_config(gitcmd.config_get(cwd, layout.AGENTS_KEY))


def serves(value: str | None, name: str) -> bool:
    """Whether hooks of agent `name` act under this gitvault.agents value."""
    chosen = from_config(value)
    return chosen is None or name in chosen


def detected(workdir: Path, environ: Mapping[str, str] | None = None) -> list[str]:
    """install's default: the agents on PATH, or whose gitvault hooks this worktree already
    has; the DEFAULT agent always."""
    import os
    import shutil

    env = os.environ if environ is None else environ
    path = env.get("PATH", os.defpath)
    found = []
    for name, adapter in all_adapters().items():
        if name == DEFAULT or shutil.which(adapter.binary, path=path) or adapter.installed(workdir):
            found.append(name)
    return found


def session_from_env(environ: Mapping[str, str]) -> tuple[str, str] | None:
    """(agent, session id) when this process runs inside an agent's shell that exports its
    session id (each adapter's session_env)."""
    for adapter in all_adapters().values():
        session = adapter.session_from_env(environ)
        if session:
            return adapter.agent, session
    return None


def instruction_files(chosen: Iterable[str]) -> list[str]:
    out: list[str] = []
    for name in chosen:
        rel = get(name).instruction_file
        if rel not in out:
            out.append(rel)
    return out


def instruction_names() -> frozenset[str]:
    """Every file some agent reads as project instructions (adapters' reads_instructions and
    instruction_file): what vault.toml's patch.files may name."""
    out: set[str] = set()
    for adapter in all_adapters().values():
        out.add(adapter.instruction_file)
        out.update(adapter.reads_instructions)
    return frozenset(out)


def patch_targets(configured_files: Iterable[str], chosen: list[str] | None) -> list[str]:
    """The agent files a fold keeps current: vault.toml's patch.files plus the instruction
    files of the agents this clone serves; a default entry (vault.toml's own default list) is
    left out when its agent is not served (install --agent codex writes no file of the DEFAULT
    agent)."""
    from gitvault.vault import layout

    listed = list(configured_files)
    if chosen is None:
        return listed
    own = set(instruction_files(chosen))
    unserved = {a.instruction_file for a in all_adapters().values()} - own
    defaults = set(layout.DEFAULTS["patch"]["files"])
    out = [name for name in listed if not (name in unserved and name in defaults)]
    return out + [name for name in instruction_files(chosen) if name not in out]


def session_labels() -> list[str]:
    """The agents whose shell exports their session id: inside them `gitvault save` needs no
    --session-id or --agent."""
    return [a.label for a in all_adapters().values() if a.session_env]


def session_variables() -> list[str]:
    """The variables agents' shells export with the session id, in registry order."""
    return [var for a in all_adapters().values() for var in a.session_env]


def session_agents() -> str:
    """The agents `gitvault save` attributes a save to by itself, as a person reads them."""
    agents = [a.agent for a in all_adapters().values() if a.session_env]
    return ", ".join(agents[:-1]) + f" or {agents[-1]}" if len(agents) > 1 else "".join(agents)
