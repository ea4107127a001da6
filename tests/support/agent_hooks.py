"""Agent hooks run as the agent runs them, for the launcher's fast paths: the command gitvault
wrote into the agent's settings file, through `sh -c`, with a recorded hook input on stdin.
Whether Python started is seen by a sitecustomize module on PYTHONPATH that records every
interpreter start (the `starts` fixture in tests/agents/conftest.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from gitvault.agents import adapters
from gitvault.agents.adapters.base import Adapter
from gitvault.vault import statedir
from tests.support.paths import DATA
from tests.support.repos import Repo

AGENTS = ("claude", "codex", "gemini", "copilot")
SAMPLES = DATA / "agent_hooks"
CLAUDE_SAMPLES: dict[str, Any] = json.loads((DATA / "claude-hook-inputs.json").read_text())
SID = "5e55a1d0-0000-4000-8000-00000000beef"
STARTS = {
    "codex": "codex-SessionStart",
    "gemini": "gemini-SessionStart",
    "copilot": "copilot-sessionStart",
}
TURN_ENDS = {"codex": "codex-Stop", "gemini": "gemini-AfterAgent", "copilot": "copilot-agentStop"}


def payload(agent: str, event: str, repo: Repo, **fields: Any) -> dict[str, Any]:
    if agent == "claude":
        key = "SessionStart:startup" if event == "session-start" else "Stop:False"
        data: dict[str, Any] = dict(CLAUDE_SAMPLES[key]["input"])
        data["transcript_path"] = "/nonexistent/transcript.jsonl"
    else:
        name = (STARTS if event == "session-start" else TURN_ENDS)[agent]
        data = json.loads((SAMPLES / f"{name}.json").read_text())
    data[adapters.get(agent).session_field] = SID
    data["cwd"] = str(repo.path)
    data.update(fields)
    return data


def installed_command(repo: Repo, adapter: Adapter, event: str) -> str:
    """The command line gitvault wrote into the agent's settings for a canonical event."""
    hook = next(h for h in adapter.hooks if h.event == event)
    wanted = f"gitvault-hook {adapter.name} {hook.word or hook.event}"
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str) and wanted in value:
            found.append(value)

    walk(json.loads((repo.path / adapter.settings_file).read_text()))
    assert found, f"no {wanted} in {adapter.settings_file}"
    return found[0]


class Hooks:
    def __init__(self, repo: Repo, starts: Path) -> None:
        self.repo, self.starts = repo, starts
        self.then = time.time() - 30  # when the watched files were last written, for settle

    def run(self, agent: str, event: str, payload: Any, **env: str) -> tuple[str, bool]:
        """(stdout, whether Python started) of the agent's installed hook."""
        command = ["sh", "-c", installed_command(self.repo, adapters.get(agent), event)]
        before = self._starts()
        site = {"PYTHONPATH": str(self.starts.parent / "site")}
        out = self._process(command, agent, payload, {**site, **env})
        return out, self._starts() > before

    def _process(self, argv: list[str], agent: str, payload: Any, env: dict[str, str]) -> str:
        """stdout of a hook process run as the agent runs it (exit 0, nothing on stderr)."""
        adapter = adapters.get(agent)
        full = {**os.environ, "PWD": str(self.repo.path), "GITVAULT_SYNC": "1", **env}
        if adapter.project_var != "PWD":
            full[adapter.project_var] = str(self.repo.path)
        done = subprocess.run(
            argv,
            input=payload if isinstance(payload, str) else json.dumps(payload),
            capture_output=True,
            text=True,
            cwd=self.repo.path,
            env=full,
            timeout=60,
        )
        assert done.returncode == 0 and done.stderr == "", done
        return done.stdout

    def _starts(self) -> int:
        try:
            return len(self.starts.read_text().splitlines())
        except FileNotFoundError:
            return 0

    def start(self, agent: str, sid: str = SID, **fields: Any) -> tuple[str, bool]:
        """The session start as the agent runs it: (stdout, whether Python started)."""
        key = adapters.get(agent).session_field
        data = payload(agent, "session-start", self.repo, **{key: sid, **fields})
        return self.run(agent, "session-start", data)

    def python_start(self, agent: str, sid: str, **fields: Any) -> str:
        """What Python answers a session start (gitvault-hook itself, no launcher)."""
        key = adapters.get(agent).session_field
        data = payload(agent, "session-start", self.repo, **{key: sid, **fields})
        argv = [sys.executable, "-m", "gitvault.hook", agent, "session-start"]
        return self._process(argv, agent, data, {})

    def materialize(self) -> int:
        """The vault changed a while ago: the files the ready file watches settled, and the
        refresh a vault change runs ran. How many worktrees can be served."""
        from gitvault.materialize import ready
        from gitvault.resolve import resolve

        self.settle()
        return ready.refresh(resolve(self.repo.path))

    def record(self, sid: str = SID) -> Path:
        """A session start the launcher answered, waiting for the ledger."""
        return self.repo.state_dir / statedir.QUIET / (sid + statedir.QUIET_START_SUFFIX)

    def turn_end(self, agent: str, **fields: Any) -> tuple[str, bool]:
        return self.run(agent, "turn-end", payload(agent, "turn-end", self.repo, **fields))

    def settle(self) -> None:
        """Time passes: every file a stamp watches was last written a while ago (the same
        moment at every call, as files nobody writes keep their time: what a refresh built
        from them stays comparable)."""
        then = self.then
        git = self.repo.git_dir
        for path in (git / "logs" / "HEAD", git / "config", git / "packed-refs"):
            if path.exists():
                os.utime(path, (then, then))
        glob = Path(os.environ["GIT_CONFIG_GLOBAL"])
        patterns = Path(os.environ["XDG_CONFIG_HOME"]) / "gitvault" / "patterns"
        ignores = [git / "info" / "exclude", Path(os.environ["XDG_CONFIG_HOME"]) / "git" / "ignore"]
        ignores += self.repo.path.rglob(".gitignore")
        for path in (glob, patterns, *patterns.glob("*.md"), *ignores):
            if path.exists():
                os.utime(path, (then, then))

    def quiet(self, agent: str) -> None:
        """A session that started and whose turn end found nothing due: the next is quiet."""
        self.start(agent)
        self.settle()
        out, python = self.turn_end(agent)
        assert (out, python) == ("", True)
        assert self.stamp.is_file(), "a turn end with nothing due leaves a stamp"

    @property
    def stamp(self) -> Path:
        return self.repo.state_dir / statedir.QUIET / SID

    @property
    def beat(self) -> Path:
        return self.repo.state_dir / statedir.QUIET / (SID + statedir.QUIET_BEAT_SUFFIX)

    def ledger(self, sid: str = SID) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(
            (self.repo.state_dir / statedir.LEDGER / f"{sid}.json").read_text()
        )
        return data
