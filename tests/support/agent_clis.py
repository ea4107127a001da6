"""Find (or install once) the real Codex CLI, Gemini CLI and Copilot CLI for end-to-end tests,
and run each one headless and offline against a local mock of its model API.

Lookup order, per agent:
1. ``GITVAULT_TEST_CODEX`` / ``GITVAULT_TEST_GEMINI`` / ``GITVAULT_TEST_COPILOT``: path to an
   executable of that CLI.
2. ``<repo>/.cache/agents/<name>/node_modules/.bin/<name>``, installed there (pinned version,
   ``npm install --ignore-scripts``) when missing. A file lock makes parallel pytest workers
   (xdist) install it once.

``agent_binary(CODEX)`` (or GEMINI, COPILOT) returns ``(path, "")`` or ``(None, reason)``;
tests/e2e/conftest.py turns the reason into a printed skip.

Mocks: tests/support/mock_openai.py (Codex: Responses API; Copilot: Chat Completions) and
tests/support/mock_gemini.py. Facts behind the settings used here (checked by running codex-cli
0.171.0, gemini-cli 0.61.0 and copilot 1.0.102 against those mocks):

- Codex reads ``$HOME/.codex/config.toml``; a custom provider with ``wire_api = "responses"``
  reaches the mock. Project hooks (``<repo>/.codex/hooks.json``) run only when the project is
  trusted (``[projects."<dir>"] trust_level = "trusted"``) *and* hook trust is given
  (``--dangerously-bypass-hook-trust``, or hashes persisted by ``/hooks``). User hooks
  (``~/.codex/hooks.json``) need only the latter. ``allow_login_shell = false`` keeps the
  caller's PATH in the agent's shell commands (a login shell resets it from /etc/profile).
- Gemini needs ``security.auth.selectedType = "gemini-api-key"`` in the user settings (else
  exit 41 "Invalid auth method selected"), ``GEMINI_CLI_TRUST_WORKSPACE=true`` for project
  settings/hooks (``--skip-trust`` runs but ignores project settings; untrusted: exit 55), and
  ``--yolo`` for ``run_shell_command`` to be offered at all in headless mode.
- Copilot: ``COPILOT_OFFLINE=true`` + ``COPILOT_PROVIDER_BASE_URL``; ``--trust-folder`` (not
  allowed with ``--continue``/``--resume``) or ``COPILOT_ALLOW_ALL=true`` (exactly "true") for
  repo hooks; ``--allow-all-tools`` for commands that write. Its native binary unpacks ~235 MB
  into ``$XDG_CACHE_HOME/copilot`` on first start: a shared ``XDG_CACHE_HOME`` under the
  install cache avoids doing that for every temporary HOME.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.claude_cli import file_lock
from tests.support.paths import ROOT

CACHE_ROOT = ROOT / ".cache" / "agents"
INSTALL_TIMEOUT = 600.0
RUN_TIMEOUT = 180.0
FAKE_API_KEY = "sk-fake-test-key"
MOCK_MODEL = "mock-model"
GEMINI_MODEL = "gemini-2.5-flash"  # pass -m: the default "auto" model adds router calls


@dataclass(frozen=True)
class AgentCli:
    name: str  # cache folder and binary name
    package: str  # npm package
    version: str  # pinned
    env_var: str  # explicit binary override
    platform_package: str | None = None  # optional dep that carries the native binary

    @property
    def cache_dir(self) -> Path:
        return CACHE_ROOT / self.name

    def cached_binary(self, cache_dir: Path | None = None) -> Path:
        return (cache_dir or self.cache_dir) / "node_modules" / ".bin" / self.name


CODEX = AgentCli(
    "codex", "@openai/codex", "0.171.0", "GITVAULT_TEST_CODEX", "@openai/codex-linux-x64"
)
GEMINI = AgentCli("gemini", "@google/gemini-cli", "0.61.0", "GITVAULT_TEST_GEMINI")
COPILOT = AgentCli(
    "copilot", "@github/copilot", "1.0.102", "GITVAULT_TEST_COPILOT", "@github/copilot-linux-x64"
)
AGENTS: dict[str, AgentCli] = {a.name: a for a in (CODEX, GEMINI, COPILOT)}


# --- finding / installing -----------------------------------------------------------------


@functools.cache
def agent_binary(agent: AgentCli) -> tuple[Path | None, str]:
    """(binary, "") or (None, why not), installing into the cache on first use."""
    explicit = os.environ.get(agent.env_var)
    if explicit:
        path = Path(explicit).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            return None, f"{agent.env_var}={explicit} is not an executable file"
        return _checked(agent, path, f"{agent.env_var}={explicit}")
    return install_into(agent, agent.cache_dir)


def agent_version(binary: Path) -> str:
    """``--version`` output, e.g. "codex-cli 0.171.0", "0.61.0", "GitHub Copilot CLI 1.0.102."."""
    return _version(binary)[0]


def install_into(
    agent: AgentCli, cache_dir: Path, *, timeout: float = INSTALL_TIMEOUT
) -> tuple[Path | None, str]:
    """Make sure ``cache_dir`` holds the pinned npm install of ``agent``; (binary, reason)."""
    binary = agent.cached_binary(cache_dir)
    if _runs(binary):
        return binary, ""
    npm = shutil.which("npm")
    node = shutil.which("node")
    if npm is None or node is None:
        missing = " and ".join(n for n, p in (("npm", npm), ("node", node)) if p is None)
        return None, (
            f"{agent.name} CLI not available: {missing} not found on PATH, so "
            f"`npm install {agent.package}@{agent.version}` into {cache_dir} is impossible "
            f"(or set {agent.env_var} to a {agent.name} executable)"
        )
    cache_dir.mkdir(parents=True, exist_ok=True)
    spec = f"{agent.package}@{agent.version}"
    command = [
        npm, "install", "--prefix", str(cache_dir), "--ignore-scripts", "--no-audit", "--no-fund",
        "--include=optional", spec,
    ]  # fmt: skip
    with file_lock(cache_dir / ".install.lock", timeout=timeout + 60):
        if _runs(binary):  # another worker installed it while we waited
            return binary, ""
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
                cwd=cache_dir,
            )
        except subprocess.TimeoutExpired:
            return None, f"`{' '.join(command)}` timed out after {timeout:.0f} s"
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-15:]
            return None, (
                f"`{' '.join(command)}` failed with exit code {done.returncode}:\n"
                + "\n".join(tail)
            )
        if agent.platform_package is not None:
            native = cache_dir / "node_modules" / agent.platform_package
            if not native.is_dir():
                return None, (
                    f"`{' '.join(command)}` did not install the platform package "
                    f"{agent.platform_package} (optional dependencies skipped?)"
                )
        _version.cache_clear()
        result = _checked(agent, binary, f"npm install into {cache_dir}")
        if result[0] is not None and agent is COPILOT:
            _warm_copilot_cache(binary)  # unpack once, under the lock
        return result


def _checked(agent: AgentCli, binary: Path, origin: str) -> tuple[Path | None, str]:
    version, error = _version(binary)
    if error:
        return None, f"{agent.name} CLI from {origin} ({binary}) does not run: {error}"
    return binary, ""


def _runs(binary: Path) -> bool:
    return binary.exists() and not _version(binary)[1]


@functools.cache
def _version(binary: Path) -> tuple[str, str]:
    """(version text, error text); exactly one is non-empty."""
    try:
        with tempfile.TemporaryDirectory(prefix="agent-version-") as home:
            done = subprocess.run(
                [str(binary), "--version"],
                capture_output=True,
                text=True,
                timeout=120,
                env=base_env(Path(home)),
                stdin=subprocess.DEVNULL,
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "", str(exc)
    if done.returncode != 0 or not done.stdout.strip():
        return "", f"`{binary.name} --version` exit {done.returncode}: {done.stderr.strip()[:500]}"
    return done.stdout.strip().splitlines()[0], ""


def _warm_copilot_cache(binary: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="copilot-warm-") as home:
        subprocess.run(
            [str(binary), "--version"],
            capture_output=True,
            timeout=300,
            env=base_env(Path(home)),
            stdin=subprocess.DEVNULL,
            check=False,
        )


# --- environment --------------------------------------------------------------------------


def copilot_xdg_cache() -> Path:
    """Shared XDG_CACHE_HOME: Copilot unpacks its package there once, not per HOME."""
    return COPILOT.cache_dir / "xdg-cache"


def base_env(home: Path, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """A from-scratch environment: nothing from the real HOME or the caller's agent setup."""
    path = os.environ.get("PATH", os.defpath)
    env = {
        # Hook scripts in tests run under this interpreter's directory first.
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), path]),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "XDG_CACHE_HOME": str(copilot_xdg_cache()),
        "COPILOT_AUTO_UPDATE": "false",
    }
    if extra_env:
        env.update(extra_env)
    return env


def _run(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv),
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def _toml_str(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


# --- Codex --------------------------------------------------------------------------------


def write_codex_config(
    home: Path,
    base_url: str,
    *,
    trusted_projects: Sequence[Path] = (),
    login_shell: bool = False,
    model: str = MOCK_MODEL,
    extra_toml: str = "",
) -> Path:
    """``$HOME/.codex/config.toml`` pointing at the mock (``base_url`` ends in ``/v1``).

    ``extra_toml`` goes before the tables (top-level keys such as
    ``model_auto_compact_token_limit = 1000``, which makes Codex compact mid-turn)."""
    lines = [
        f"model = {_toml_str(model)}",
        'model_provider = "mock"',
        f"allow_login_shell = {'true' if login_shell else 'false'}",
        extra_toml,
        "",
        "[model_providers.mock]",
        'name = "mock"',
        f"base_url = {_toml_str(base_url)}",
        'wire_api = "responses"',
        "",
    ]
    for project in trusted_projects:
        lines += [f"[projects.{_toml_str(str(project))}]", 'trust_level = "trusted"', ""]
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    return path


def run_codex(
    binary: Path,
    prompt: str,
    *,
    cwd: Path,
    home: Path,
    base_url: str,
    args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    trust_project: bool = True,
    bypass_hook_trust: bool = True,
    full_access: bool = True,
    login_shell: bool = False,
    write_config: bool = True,
    timeout: float = RUN_TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    """``codex exec <prompt>`` in ``cwd`` against the mock, with HOME=``home``.

    ``full_access`` adds ``--dangerously-bypass-approvals-and-sandbox`` (without it the agent's
    commands run in Codex's sandbox: read-only by default, and even ``--sandbox
    workspace-write`` keeps ``.git`` read-only, so git commits fail). Hooks run unsandboxed.
    ``write_config=False`` keeps a config.toml the test wrote itself."""
    home.mkdir(parents=True, exist_ok=True)
    if write_config:
        write_codex_config(
            home,
            base_url,
            trusted_projects=[cwd.resolve()] if trust_project else [],
            login_shell=login_shell,
        )
    argv = [str(binary), "exec", "--skip-git-repo-check"]
    if full_access:
        argv.append("--dangerously-bypass-approvals-and-sandbox")
    if bypass_hook_trust:
        argv.append("--dangerously-bypass-hook-trust")
    argv += [*args, "--", prompt]
    return _run(argv, cwd=cwd, env=base_env(home, extra_env), timeout=timeout)


def trust_codex_hooks(
    binary: Path, *, home: Path, cwd: Path, timeout: float = 60
) -> list[dict[str, Any]]:
    """Persist hook trust the way Codex's own ``/hooks`` review does, through the
    (experimental) ``codex app-server``: ``hooks/list`` gives each hook's ``key`` and
    ``currentHash``; ``config/batchWrite`` stores them as ``[hooks.state."<key>"]
    trusted_hash = "sha256:…"`` in ``$HOME/.codex/config.toml``. Afterwards the hooks run
    without ``--dangerously-bypass-hook-trust`` (until their definition changes). Returns the
    hooks/list entries as seen before trusting."""
    proc = subprocess.Popen(
        [str(binary), "app-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=base_env(home),
        cwd=cwd,
    )
    assert proc.stdin is not None and proc.stdout is not None
    deadline = time.monotonic() + timeout

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        proc.stdin.flush()

    def call(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        send({"id": request_id, "method": method, "params": params})
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"codex app-server exited during {method}")
            message = json.loads(line)
            if message.get("id") == request_id:
                if "error" in message:
                    raise RuntimeError(f"codex app-server {method}: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result
        raise TimeoutError(f"codex app-server: no answer to {method}")

    try:
        call(1, "initialize", {"clientInfo": {"name": "gitvault-tests", "version": "0"}})
        send({"method": "initialized"})
        listed = call(2, "hooks/list", {"cwds": [str(cwd)]})
        hooks = [h for entry in listed["data"] for h in entry.get("hooks", [])]
        state = {h["key"]: {"trusted_hash": h["currentHash"]} for h in hooks}
        if state:
            edit = {"keyPath": "hooks.state", "value": state, "mergeStrategy": "upsert"}
            call(3, "config/batchWrite", {"edits": [edit]})
        return hooks
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def write_codex_hooks(
    directory: Path, commands: Mapping[str, str], *, timeout: int | None = None
) -> Path:
    """``<directory>/.codex/hooks.json`` with one command hook per event (Claude Code layout).
    ``directory`` is a project (needs project trust) or a HOME (user hooks)."""
    hooks: dict[str, Any] = {}
    for event, command in commands.items():
        handler: dict[str, Any] = {"type": "command", "command": command}
        if timeout is not None:
            handler["timeout"] = timeout  # seconds; SessionEnd and Interrupt are clamped to 3
        hooks[event] = [{"hooks": [handler]}]
    path = directory / ".codex" / "hooks.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}, indent=2) + "\n")
    return path


# --- Gemini -------------------------------------------------------------------------------

GEMINI_USER_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
}


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _update_json(path: Path, extra: Mapping[str, Any]) -> Path:
    current: dict[str, Any] = {}
    if path.exists():
        loaded = json.loads(path.read_text() or "{}")
        current = loaded if isinstance(loaded, dict) else {}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_merge(current, extra), indent=2) + "\n")
    return path


def write_gemini_user_settings(home: Path, extra: Mapping[str, Any] | None = None) -> Path:
    """``$HOME/.gemini/settings.json``: API-key auth, no update checks or usage statistics."""
    return _update_json(
        home / ".gemini" / "settings.json", _merge(GEMINI_USER_SETTINGS, extra or {})
    )


def run_gemini(
    binary: Path,
    prompt: str,
    *,
    cwd: Path,
    home: Path,
    base_url: str,
    model: str = GEMINI_MODEL,
    args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    output_format: str | None = "json",
    yolo: bool = True,
    trust_workspace: bool = True,
    timeout: float = RUN_TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    """``gemini -m <model> -p <prompt>`` in ``cwd`` against the mock, with HOME=``home``."""
    home.mkdir(parents=True, exist_ok=True)
    write_gemini_user_settings(home)
    env = {"GEMINI_API_KEY": FAKE_API_KEY, "GOOGLE_GEMINI_BASE_URL": base_url}
    if trust_workspace:
        env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
    env.update(extra_env or {})
    argv = [str(binary), "-m", model]
    if yolo:
        argv.append("--yolo")
    if output_format:
        argv += ["--output-format", output_format]
    argv += [*args, "-p", prompt]
    return _run(argv, cwd=cwd, env=base_env(home, env), timeout=timeout)


def write_gemini_hooks(
    directory: Path,
    commands: Mapping[str, str],
    *,
    timeout_ms: int | None = None,
    settings: Mapping[str, Any] | None = None,
) -> Path:
    """Merge hooks into ``<directory>/.gemini/settings.json`` (project, or a HOME for user
    hooks); one command hook per event, named ``gitvault-<Event>``. ``settings`` merges too
    (e.g. ``{"context": {"fileName": ["AGENTS.md", "GEMINI.md"]}}``)."""
    hooks: dict[str, Any] = {}
    for event, command in commands.items():
        handler: dict[str, Any] = {
            "type": "command",
            "name": f"gitvault-{event}",
            "command": command,
        }
        if timeout_ms is not None:
            handler["timeout"] = timeout_ms  # milliseconds
        hooks[event] = [{"matcher": "*", "hooks": [handler]}]
    return _update_json(
        directory / ".gemini" / "settings.json", _merge(dict(settings or {}), {"hooks": hooks})
    )


# --- Copilot ------------------------------------------------------------------------------


def run_copilot(
    binary: Path,
    prompt: str,
    *,
    cwd: Path,
    home: Path,
    base_url: str,
    model: str = MOCK_MODEL,
    args: Sequence[str] = (),
    extra_env: Mapping[str, str] | None = None,
    allow_all_tools: bool = True,
    trust_folder: bool = True,
    silent: bool = True,
    timeout: float = RUN_TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    """``copilot -p <prompt>`` in ``cwd`` against the mock (``base_url`` ends in ``/v1``).

    ``trust_folder`` uses ``COPILOT_ALLOW_ALL=true`` rather than ``--trust-folder``, because
    the flag is refused together with ``--continue`` / ``--resume``; it also allows all tools.
    """
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": base_url,
        "COPILOT_PROVIDER_API_KEY": FAKE_API_KEY,
        "COPILOT_MODEL": model,
    }
    if trust_folder:
        env["COPILOT_ALLOW_ALL"] = "true"
    env.update(extra_env or {})
    argv = [str(binary)]
    if silent:
        argv.append("-s")
    if allow_all_tools:
        argv.append("--allow-all-tools")
    argv += [*args, "-p", prompt]
    return _run(argv, cwd=cwd, env=base_env(home, env), timeout=timeout)


def write_copilot_hooks(
    directory: Path,
    commands: Mapping[str, str],
    *,
    name: str = "gitvault",
    timeout_sec: int | None = None,
    user: bool = False,
) -> Path:
    """Repo hooks ``<directory>/.github/hooks/<name>.json`` (need folder trust), or with
    ``user=True`` user hooks ``<directory>/.copilot/hooks/<name>.json`` for ``directory=HOME``
    (run without folder trust). ``version: 1``, camelCase events, ``bash`` command key."""
    folder = directory / (".copilot" if user else ".github") / "hooks"
    path = folder / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(copilot_hooks_json(commands, timeout_sec=timeout_sec))
    return path


def copilot_hooks_json(commands: Mapping[str, str], *, timeout_sec: int | None = None) -> str:
    hooks: dict[str, Any] = {}
    for event, command in commands.items():
        handler: dict[str, Any] = {"type": "command", "bash": command}
        if timeout_sec is not None:
            handler["timeoutSec"] = timeout_sec
        hooks[event] = [handler]
    return json.dumps({"version": 1, "hooks": hooks}, indent=2) + "\n"
