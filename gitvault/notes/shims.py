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
from gitvault.vault import gitcmd, layout, statedir
from gitvault.vault.files import atomic_write, make_dirs

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


# git's hook names (githooks(5), git 2.39). When core.hooksPath names a folder inside the working
# tree, each gets a forwarder in the shims' folder outside it, so the repository's own hooks
# all still run; the frequent ones only when the folder has them (a shell per ref update).
GIT_HOOKS = (
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
)
FREQUENT_HOOKS = ("reference-transaction", "post-index-change")
FORWARD_ID = "# gitvault-forward"


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


def inside_tree(loc: Location, hdir: HooksDir) -> bool:
    """Whether the hooks folder is inside the working tree (a tracked `.githooks/`): writing
    there would change the project's files."""
    if loc.workdir is None or hdir.scope == "default":
        return False
    path = hdir.path.resolve()
    if any(path.is_relative_to(d.resolve()) for d in (loc.git_dir, loc.common_dir)):
        return False  # under .git: no project file
    return path.is_relative_to(loc.workdir.resolve())


def chained_from(loc: Location) -> str | None:
    """The core.hooksPath gitvault moved aside, if it did."""
    return gitcmd.config_get(loc.workdir or loc.git_dir, layout.CHAINED_HOOKS_KEY) or None


def chain_outside(loc: Location, hdir: HooksDir) -> tuple[HooksDir, list[str]]:
    """core.hooksPath names a folder inside the working tree: gitvault never writes there.
    Its shims go to a folder of its own outside the tree (statedir.CHAINED_HOOKS), where every
    git hook forwards to the repository's own one (ours run it first, as with a chained hook);
    core.hooksPath is pointed at that folder in the same scope, and the value it had is kept
    for uninstall to put back."""
    cwd = loc.workdir or loc.git_dir
    outside = statedir.path(loc, statedir.CHAINED_HOOKS)
    original = chained_from(loc)
    if original is None:
        if hdir.scope not in ("local", "worktree"):
            raise Refused(
                f"core.hooksPath ({hdir.path}) is inside the working tree and set in "
                f"{hdir.scope} git config; gitvault does not write into the project's files",
                hint="set it in this repository's config instead (git config core.hooksPath "
                "DIR), then run install again",
            )
        proc = gitcmd.run_git(["config", f"--{hdir.scope}", "--get", "core.hooksPath"], cwd)
        original = proc.stdout.decode("utf-8", "replace").strip()
    if "\n" in original or "\0" in original:
        raise Refused("core.hooksPath holds a newline; gitvault cannot forward to it")
    make_dirs(outside)
    changes: list[str] = []
    present = {p.name for p in hdir.path.iterdir()} if hdir.path.is_dir() else set()
    for name in (*GIT_HOOKS, *(n for n in FREQUENT_HOOKS if n in present)):
        target = outside / (name + CHAINED_SUFFIX if name in HOOKS else name)
        text = _forwarder(name, original)
        if _read(target) != text:
            atomic_write(target, text.encode(), mode=0o755)
    scope = hdir.scope if hdir.scope in ("local", "worktree") else "local"
    if gitcmd.config_get(cwd, layout.CHAINED_HOOKS_KEY) is None:
        gitcmd.run_git(["config", f"--{scope}", layout.CHAINED_HOOKS_KEY, original], cwd)
        gitcmd.run_git(["config", f"--{scope}", "core.hooksPath", str(outside)], cwd)
        changes.append(
            f"core.hooksPath was {original} (inside the working tree, left untouched): the "
            f"hooks now run from {outside}, each forwarding to {original}'s own"
        )
    return HooksDir(outside, scope), changes


def _forwarder(name: str, original: str) -> str:
    quoted = "'" + original.replace("'", "'\\''") + "'"
    return (
        "#!/bin/sh\n"
        f"{FORWARD_ID} {name} v1\n"
        f"# core.hooksPath was {quoted}, a folder inside the working tree: gitvault runs the\n"
        "# repository's own hook from there (git runs hooks at the worktree's top). `gitvault\n"
        "# uninstall` puts core.hooksPath back.\n"
        f"h={quoted}; case $h in /*) ;; *) h=$PWD/$h ;; esac\n"
        f'[ -x "$h/{name}" ] || exit 0\n'
        f'exec "$h/{name}" "$@"\n'
    )


def unchain(loc: Location) -> list[str]:
    """Put back the core.hooksPath chain_outside moved aside, and remove its folder."""
    original = chained_from(loc)
    if original is None:
        return []
    cwd = loc.workdir or loc.git_dir
    proc = gitcmd.run_git(["config", "--show-scope", "--get", layout.CHAINED_HOOKS_KEY], cwd)
    scope = proc.stdout.decode("utf-8", "replace").partition("\t")[0] or "local"
    gitcmd.run_git(["config", f"--{scope}", "core.hooksPath", original], cwd)
    gitcmd.run_git(["config", f"--{scope}", "--unset", layout.CHAINED_HOOKS_KEY], cwd)
    outside = statedir.path(loc, statedir.CHAINED_HOOKS)
    for path in outside.iterdir() if outside.is_dir() else []:
        text = _read(path) or ""
        if FORWARD_ID in text or shim_version(text) is not None:
            path.unlink()
    try:
        outside.rmdir()
    except OSError:
        pass
    return [f"core.hooksPath is {original} again"]


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
