"""Install, inspect and remove the git hook shims (post-commit, post-merge, post-rewrite, and
pre-push for sync.auto).

An existing foreign hook is moved aside to <name>.pre-gitvault and still runs first (chained,
as pre-commit's "migration mode" does); uninstall puts it back. core.hooksPath is honoured:
repository- and worktree-scoped paths are installed into; a global or system hooks path is
shared by every repository on the machine, so it is only written with --force and otherwise
reported by `gitvault status`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from gitvault.errors import Refused
from gitvault.resolve import Location
from gitvault.resources import hook_template
from gitvault.vault import gitcmd, statedir
from gitvault.vault.files import atomic_write

HOOKS = ("post-commit", "post-merge", "post-rewrite", "pre-push")
# Files earlier releases installed beside the shims; removed by install and uninstall.
LEGACY_FILES = ("gitvault-drain.sh",)
CHAINED_SUFFIX = ".pre-gitvault"
SHIM_ID = re.compile(r"^# gitvault-shim (\S+) v(\d+)$", re.M)


@dataclass(frozen=True)
class HooksDir:
    path: Path
    scope: str  # default | local | worktree | global | system | command


@dataclass(frozen=True)
class HookState:
    name: str
    installed: bool
    version: int | None
    chained: bool
    foreign: bool  # a hook that is not ours sits where ours should be


def hooks_dir(loc: Location) -> HooksDir:
    """The folder git runs this worktree's hooks from."""
    cwd = loc.workdir or loc.git_dir
    proc = gitcmd.run_git(["config", "--show-scope", "--get", "core.hooksPath"], cwd, check=False)
    line = proc.stdout.decode("utf-8", "replace").strip()
    if proc.returncode != 0 or not line:
        return HooksDir(loc.common_dir / "hooks", "default")
    scope, _, value = line.partition("\t")
    path = Path(os.path.expanduser(value))
    if not path.is_absolute():
        path = (loc.workdir or loc.git_dir) / path
    return HooksDir(path, scope)


_PLACEHOLDER = re.compile(r"@([A-Z_]+)@")


def render_shim(name: str) -> str:
    """A shim: its template with the shared parts (locate the repository, start the drainer)
    filled in, then the state files' names (vault/statedir) in place of `@SPOOL@` …, so the
    installed file is self-contained, names no machine-specific path and spells no name the
    Python side could rename alone."""
    text = hook_template("git", name).read_text(encoding="utf-8")
    for part in ("locate", "record", "drain"):
        body = hook_template("git", f"parts/{part}.sh").read_text(encoding="utf-8")
        text = text.replace(f"@{part.upper()}@\n", body)

    def name_of(match: re.Match[str]) -> str:
        return statedir.SHIM_NAMES[match.group(1)]  # a KeyError: a template names no state file

    return _PLACEHOLDER.sub(name_of, text)


def shipped_version(name: str) -> int:
    """The version of the shim this gitvault ships."""
    return shim_version(hook_template("git", name).read_text(encoding="utf-8")) or 0


def shim_version(text: str) -> int | None:
    match = SHIM_ID.search(text)
    return int(match.group(2)) if match else None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError):
        return None


def state(directory: Path) -> list[HookState]:
    out = []
    for name in HOOKS:
        text = _read(directory / name)
        version = shim_version(text) if text is not None else None
        out.append(
            HookState(
                name=name,
                installed=version is not None,
                version=version,
                chained=(directory / (name + CHAINED_SUFFIX)).exists(),
                foreign=text is not None and version is None,
            )
        )
    return out


def install(hdir: HooksDir, *, force: bool = False) -> list[str]:
    """Write the shims; returns what changed (empty when everything was already in place)."""
    if hdir.scope in ("global", "system") and not force:
        raise Refused(
            f"core.hooksPath is set in {hdir.scope} git config ({hdir.path}); every repository "
            "on this machine shares it",
            hint="install there anyway with `gitvault install --force` (the shims do nothing "
            "in repositories without a vault), or unset core.hooksPath",
        )
    try:
        hdir.path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise Refused(f"cannot create hooks folder {hdir.path}: {exc.strerror}") from exc
    changes: list[str] = []
    for name in HOOKS:
        target = hdir.path / name
        wanted = render_shim(name)
        current = _read(target)
        if current == wanted:
            continue
        if current is not None and shim_version(current) is None:
            chained = hdir.path / (name + CHAINED_SUFFIX)
            if chained.exists():
                raise Refused(
                    f"{target} is not gitvault's, and {chained.name} already exists",
                    hint="merge or remove one of them, then run install again",
                )
            os.replace(target, chained)
            changes.append(f"moved existing {name} hook to {chained.name} (it still runs first)")
        atomic_write(target, wanted.encode(), mode=0o755)
        changes.append(f"{'updated' if current is not None else 'wrote'} {target}")
    changes += _remove_legacy(hdir)
    return changes


def _remove_ours(target: Path) -> bool:
    """Delete target when it is a gitvault shim; whether it was."""
    text = _read(target)
    if text is None or shim_version(text) is None:
        return False
    target.unlink()
    return True


def _remove_legacy(hdir: HooksDir) -> list[str]:
    return [
        f"removed {hdir.path / name} (no longer used)"
        for name in LEGACY_FILES
        if _remove_ours(hdir.path / name)
    ]


def uninstall(hdir: HooksDir) -> list[str]:
    changes: list[str] = []
    for name in HOOKS:
        target = hdir.path / name
        if _remove_ours(target):
            changes.append(f"removed {target}")
        chained = hdir.path / (name + CHAINED_SUFFIX)
        if chained.exists() and not target.exists():
            os.replace(chained, target)
            changes.append(f"restored the original {name} hook")
    return changes + _remove_legacy(hdir)
