"""The agent adapters: one module per coding agent (claude, codex, gemini, copilot) that knows
its settings file and format, event names, input fields and output shape, and maps them onto
gitvault's one set of behaviours (gitvault.agents.hooks.behave). This module is the registry.

Adding an agent = one module with an Adapter subclass, listed in ADAPTERS, plus its tests.

Which agents a clone serves is `git config gitvault.agents`: a comma-separated list of adapter
names, or "none" (install --agent none / --no-claude with nothing else). Unset (installs
before agents were configurable): every agent whose hooks are present.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from gitvault.agents.adapters.base import Adapter
from gitvault.agents.adapters.claude import Claude
from gitvault.agents.adapters.codex import Codex
from gitvault.agents.adapters.copilot import Copilot
from gitvault.agents.adapters.gemini import Gemini
from gitvault.errors import GitvaultError
from gitvault.vault import layout

ADAPTERS: dict[str, Adapter] = {a.name: a for a in (Claude(), Codex(), Gemini(), Copilot())}
NONE = "none"


def get(name: str) -> Adapter:
    return ADAPTERS[name]


def names() -> list[str]:
    return list(ADAPTERS)


def parse(text: str) -> list[str]:
    """`--agent claude,codex` → ["claude", "codex"] (registry order); "none" → []."""
    wanted = [w.strip().lower() for w in text.split(",") if w.strip()]
    if wanted == [NONE]:
        return []
    unknown = [w for w in wanted if w not in ADAPTERS]
    if unknown or not wanted:
        raise GitvaultError(
            f"unknown agent {', '.join(unknown) or repr(text)}",
            hint=f"use a comma-separated list of {', '.join(ADAPTERS)}, or none",
        )
    return [name for name in ADAPTERS if name in wanted]


def render(chosen: Iterable[str]) -> str:
    listed = [name for name in ADAPTERS if name in set(chosen)]
    return ",".join(listed) or NONE


def from_config(value: str | None) -> list[str] | None:
    """The agents `git config gitvault.agents` names (None when unset)."""
    if value is None or not value.strip():
        return None
    return [w for w in (p.strip().lower() for p in value.split(",")) if w in ADAPTERS]


def configured(cwd: Path) -> list[str] | None:
    from gitvault.vault import gitcmd

    return from_config(gitcmd.config_get(cwd, layout.AGENTS_KEY))


def serves(value: str | None, name: str) -> bool:
    """Whether hooks of agent `name` act under this gitvault.agents value."""
    chosen = from_config(value)
    return chosen is None or name in chosen


def detected(workdir: Path, environ: Mapping[str, str] | None = None) -> list[str]:
    """install's default: the agents on PATH, or whose gitvault hooks this worktree already
    has; Claude Code always."""
    env = os.environ if environ is None else environ
    path = env.get("PATH", os.defpath)
    found = []
    for name, adapter in ADAPTERS.items():
        if (
            name == "claude"
            or shutil.which(adapter.binary, path=path)
            or adapter.installed(workdir)
        ):
            found.append(name)
    return found


def session_from_env(environ: Mapping[str, str]) -> tuple[str, str] | None:
    """(agent, session id) when this process runs inside an agent's shell that exports its
    session id (CLAUDE_CODE_SESSION_ID, CODEX_SESSION_ID, COPILOT_AGENT_SESSION_ID)."""
    for adapter in ADAPTERS.values():
        session = adapter.session_from_env(environ)
        if session:
            return adapter.agent, session
    return None


def instruction_files(chosen: Iterable[str]) -> list[str]:
    out: list[str] = []
    for name in chosen:
        rel = ADAPTERS[name].instruction_file
        if rel not in out:
            out.append(rel)
    return out


def patch_targets(configured_files: Iterable[str], chosen: list[str] | None) -> list[str]:
    """The agent files a fold keeps current: vault.toml's patch.files plus the instruction
    files of the agents this clone serves; a default entry (CLAUDE.md) is left out when its
    agent is not served (install --agent codex writes no CLAUDE.md)."""
    listed = list(configured_files)
    if chosen is None:
        return listed
    own = set(instruction_files(chosen))
    unserved = {a.instruction_file for a in ADAPTERS.values()} - own
    defaults = set(layout.DEFAULTS["patch"]["files"])
    out = [name for name in listed if not (name in unserved and name in defaults)]
    return out + [name for name in instruction_files(chosen) if name not in out]
