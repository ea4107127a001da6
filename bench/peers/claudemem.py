"""claude-mem as Claude Code runs it: the hook commands its plugin declares (plugin/hooks/
hooks.json, read from the installed package), with CLAUDE_PLUGIN_ROOT set as Claude Code sets it
for a plugin, and its worker daemon on 127.0.0.1, started and stopped here.

Everything it writes goes under the HOME it is given (its data folder, settings, logs); its
worker listens on a port chosen free here, so a claude-mem someone else runs on this machine
(default port 37700 + uid % 100) is never reached. stop() ends the worker through claude-mem's
own `stop`, then checks that no process running the installed package is left, and ends any
that is (by pid, only those whose command line names this install).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from peers.install import Peers

# The canonical hooks measured, as the command's last words name them.
CONTEXT = "hook claude-code context"  # SessionStart: what is injected
SESSION_INIT = "hook claude-code session-init"  # UserPromptSubmit: every prompt
OBSERVATION = "hook claude-code observation"  # PostToolUse "*": every tool call
SUMMARIZE = "hook claude-code summarize"  # Stop: every turn end
FILE_CONTEXT = "hook claude-code file-context"  # PreToolUse "Read": before every Read
START = 'worker-service.cjs" start'  # SessionStart: ensure the worker runs


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ClaudeMem:
    def __init__(self, peers: Peers, home: Path, base_env: Mapping[str, str]) -> None:
        self.peers = peers
        self.home = home
        self.port = free_port()
        self.data_dir = home / ".claude-mem"
        # Where Claude Code's plugin manager keeps an installed plugin, and where claude-mem's
        # hooks and worker look for their scripts (a link to the installed package's plugin).
        self.plugin_root = home / ".claude" / "plugins" / "cache" / "thedotmack" / "claude-mem"
        self.plugin_root /= peers.versions()["claude-mem"]
        if not self.plugin_root.exists():
            self.plugin_root.parent.mkdir(parents=True, exist_ok=True)
            self.plugin_root.symlink_to(peers.plugin, target_is_directory=True)
        path = f"{peers.bin_dir}{os.pathsep}{base_env.get('PATH', '')}"
        self.env = {
            **base_env,
            "HOME": str(home),
            "PATH": path,
            "CLAUDE_PLUGIN_ROOT": str(self.plugin_root),
            "CLAUDE_MEM_DATA_DIR": str(self.data_dir),
            "CLAUDE_MEM_WORKER_PORT": str(self.port),
        }
        self.hooks = json.loads((self.plugin_root / "hooks" / "hooks.json").read_text("utf-8"))
        self.worker_pid: int | None = None

    # -- the hooks ------------------------------------------------------------------------------

    def command(self, event: str, ending: str) -> list[str]:
        """argv of the hook claude-mem declares for `event` whose command ends with `ending`,
        run by the shell it names, as Claude Code runs it."""
        for group in self.hooks["hooks"].get(event, []):
            for hook in group.get("hooks", []):
                text = str(hook.get("command", "")).rstrip()
                if hook.get("type") == "command" and text.endswith(ending):
                    return [str(hook.get("shell") or "sh"), "-c", text]
        raise RuntimeError(f"claude-mem declares no {event} hook ending in {ending!r}")

    def is_async(self, event: str, ending: str) -> bool:
        """Whether Claude Code runs that hook without waiting for it (`"async": true`)."""
        for group in self.hooks["hooks"].get(event, []):
            for hook in group.get("hooks", []):
                if str(hook.get("command", "")).rstrip().endswith(ending):
                    return bool(hook.get("async", False))
        return False

    def _lifecycle(self, verb: str, timeout: float) -> subprocess.CompletedProcess[bytes]:
        scripts = self.plugin_root / "scripts"
        return subprocess.run(
            ["node", str(scripts / "bun-runner.js"), str(scripts / "worker-service.cjs"), verb],
            env=self.env,
            cwd=self.home,
            capture_output=True,
            timeout=timeout,
            check=False,
        )

    # -- the worker -----------------------------------------------------------------------------

    def health(self, timeout: float = 10.0) -> dict[str, Any] | None:
        try:
            with urllib.request.urlopen(self.url("/api/health"), timeout=timeout) as response:
                data = json.loads(response.read())
        except (OSError, ValueError, urllib.error.URLError):
            return None
        return data if isinstance(data, dict) else None

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self, timeout: float = 120.0) -> float:
        """Start the worker with claude-mem's own SessionStart `start` hook command; seconds
        until its health says initialized."""
        began = time.perf_counter()
        argv = self.command("SessionStart", START)
        subprocess.run(argv, env=self.env, cwd=self.home, capture_output=True, timeout=timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            health = self.health()
            if health and health.get("initialized") and health.get("status") == "ok":
                self.worker_pid = int(health["pid"])
                return time.perf_counter() - began
            time.sleep(0.1)
        raise RuntimeError(f"claude-mem's worker did not come up on port {self.port}")

    def settle(self, timeout: float = 300.0, idle: float = 0.05) -> float:
        """Wait until the worker is idle (its process group used less than `idle` CPU seconds
        in each of 3 consecutive seconds), e.g. after an import it works through in the
        background; returns the seconds waited."""
        began = time.monotonic()
        calm = 0
        last = self.cpu_seconds()
        while calm < 3 and time.monotonic() - began < timeout:
            time.sleep(1.0)
            now = self.cpu_seconds()
            calm = calm + 1 if now - last < idle else 0
            last = now
        return time.monotonic() - began

    def same_worker(self) -> bool:
        """Whether the worker that start() saw up still answers (not restarted, not down)."""
        health = self.health()
        return health is not None and health.get("pid") == self.worker_pid

    def post(self, path: str, body: object, timeout: float = 600.0) -> dict[str, Any]:
        request = urllib.request.Request(
            self.url(path),
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = json.loads(response.read())
        if not isinstance(data, dict):
            raise RuntimeError(f"claude-mem {path}: unexpected answer {data!r}")
        return data

    def cpu_seconds(self) -> float:
        """User + system CPU the worker's process group has used so far (the worker and the
        MCP server it runs), from /proc: the part of a hook's work done in the daemon."""
        if self.worker_pid is None:
            return 0.0
        try:
            group = os.getpgid(self.worker_pid)
        except ProcessLookupError:
            return 0.0
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as fh:
                    fields = fh.read().rpartition(")")[2].split()
            except OSError:
                continue
            # after the command: state ppid pgrp ... utime(12th) stime(13th)
            if len(fields) > 12 and int(fields[2]) == group:
                total += int(fields[11]) + int(fields[12])
        return total / tick

    def processes(self) -> list[int]:
        """Pids of processes running the installed package (worker, MCP server, hooks), by its
        path or the plugin link's."""
        needles = (str(self.peers.root).encode(), str(self.plugin_root).encode())
        found = []
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                    cmdline = fh.read()
            except OSError:
                continue
            if any(needle in cmdline for needle in needles):
                found.append(int(entry.name))
        return found

    def stop(self, grace: float = 30.0) -> list[int]:
        """Stop the worker with claude-mem's own `stop`; returns the pids that were still
        running the package afterwards and had to be ended here (empty when it stopped
        cleanly)."""
        if self.health() is not None:
            self._lifecycle("stop", timeout=grace + 30)
        deadline = time.monotonic() + grace
        while self.processes() and time.monotonic() < deadline:
            time.sleep(0.2)
        stray = self.processes()
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.processes():
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            end = time.monotonic() + 5
            while self.processes() and time.monotonic() < end:
                time.sleep(0.1)
        self.worker_pid = None
        left = self.processes()
        if left:
            raise RuntimeError(f"claude-mem processes still running after stop: {left}")
        return stray
