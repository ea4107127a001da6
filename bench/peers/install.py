"""The peers, installed once into .cache/peers/ at pinned versions from the npm registry and
PyPI (their ordinary clients: npm, pip); a later run finds them there and needs no network.

    claude-mem 13.25.3   npm; its worker and hooks run on Bun, which is on the npm registry as
                         `bun`; its worker requires zod at run time (the plugin's own
                         package.json and bun.lock name zod 4.4.3), which its Setup hook would
                         install with `bun install` — pinned here instead, beside it
    agentlore 0.9.1      PyPI; one standard-library file, no dependencies

Install scripts are not run (`--ignore-scripts`) except Bun's own postinstall, which links the
platform binary npm already fetched (@oven/bun-<platform>). `npx claude-mem install` is not
used: it downloads tools from the web and fails offline.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

NPM = {"claude-mem": "13.25.3", "bun": "1.4.5", "zod": "4.4.3"}
PYPI = {"agentlore": "0.9.1"}
STAMP = "pins.json"


class Unavailable(RuntimeError):
    """A peer cannot be installed or run here (no npm, no network on the first run, ...)."""


@dataclass(frozen=True)
class Peers:
    """Where the installed peers are."""

    root: Path

    @property
    def node_modules(self) -> Path:
        return self.root / "npm" / "node_modules"

    @property
    def plugin(self) -> Path:
        """claude-mem's plugin folder: what Claude Code gets as CLAUDE_PLUGIN_ROOT."""
        return self.node_modules / "claude-mem" / "plugin"

    @property
    def bin_dir(self) -> Path:
        """The folder holding `bun` (put on PATH, as a user's Bun install would be)."""
        return self.node_modules / ".bin"

    @property
    def agentlore(self) -> Path:
        return self.root / "pypi" / "bin" / "agentlore"

    def versions(self) -> dict[str, str]:
        """What is installed, read back from the packages themselves."""
        found: dict[str, str] = {}
        for name in NPM:
            manifest = self.node_modules / name / "package.json"
            try:
                found[name] = str(json.loads(manifest.read_text(encoding="utf-8"))["version"])
            except (OSError, ValueError, KeyError):
                continue
        for name in PYPI:
            for info in (self.root / "pypi").glob(f"{name}-*.dist-info"):
                found[name] = info.name.removeprefix(f"{name}-").removesuffix(".dist-info")
        return found


def pins() -> dict[str, str]:
    return {**NPM, **PYPI}


def ensure(
    root: Path, env: Mapping[str, str], say: Callable[[str], None] = lambda _: None
) -> Peers:
    """The pinned peers under root, installed first when they are not there (or other versions
    are). env is the environment of the installers (a temporary HOME: npm's and pip's caches
    go there, never into the user's)."""
    peers = Peers(root)
    if _installed(peers):
        return peers
    for tool in ("node", "npm"):
        if shutil.which(tool, path=env.get("PATH")) is None:
            raise Unavailable(f"`{tool}` is not on PATH: claude-mem needs Node.js and npm")
    say(f"peers: installing {', '.join(f'{n} {v}' for n, v in pins().items())} into {root}")
    if root.exists():
        shutil.rmtree(root)
    (root / "npm").mkdir(parents=True)
    (root / "npm" / "package.json").write_text('{"private": true}\n', encoding="utf-8")
    _run(
        [
            "npm",
            "install",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--legacy-peer-deps",  # better-auth's optional peers (react, prisma, ...) stay out
            "--save-exact",
            *(f"{name}@{version}" for name, version in NPM.items()),
        ],
        root / "npm",
        env,
    )
    _run(["node", "install.js"], peers.node_modules / "bun", env)  # Bun's own postinstall
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(root / "pypi"),
            *(f"{name}=={version}" for name, version in PYPI.items()),
        ],
        root,
        env,
    )
    if peers.versions() != pins():
        raise Unavailable(f"installed {peers.versions()}, wanted {pins()}")
    (root / STAMP).write_text(json.dumps(pins(), sort_keys=True) + "\n", encoding="utf-8")
    return peers


def _installed(peers: Peers) -> bool:
    try:
        stamped = json.loads((peers.root / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        stamped == pins()
        and peers.versions() == pins()
        and os.access(peers.bin_dir / "bun", os.X_OK)
        and peers.agentlore.is_file()
    )


def _run(args: list[str], cwd: Path, env: Mapping[str, str]) -> None:
    proc = subprocess.run(args, cwd=cwd, env=dict(env), capture_output=True, check=False)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()[-1200:]
        raise Unavailable(f"{' '.join(args[:3])} … failed ({proc.returncode}) in {cwd}:\n{tail}")
