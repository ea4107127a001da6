"""`gitvault install` / `uninstall`: the vault branch and the git hook shims.

Install is idempotent (a second run changes nothing) and refuses, changing nothing, when a
branch of the vault's name exists that gitvault did not create.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field

from gitvault import githooks, git
from gitvault.errors import GitvaultError, Refused
from gitvault.resolve import Location
from gitvault.store import Vault, state_dir
from gitvault.vaultinit import initial_files


@dataclass
class Report:
    changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _require_worktree(loc: Location) -> None:
    if loc.workdir is None:
        raise GitvaultError(
            "this is a bare repository: nothing is committed here, so there is nothing to note",
            hint="run gitvault install in a clone with a working tree",
        )


def install(loc: Location, *, force: bool = False) -> Report:
    _require_worktree(loc)
    report = Report()
    vault = Vault(loc)
    tip = vault.tip()
    if tip is not None and not vault.is_gitvault(tip):
        raise Refused(
            f"a branch named '{vault.branch}' already exists and gitvault did not create it",
            hint="keep it and use another name: git config gitvault.branch memory",
        )
    if tip is not None:
        vault.check_format()
    hdir = githooks.hooks_dir(loc)
    if hdir.scope in ("global", "system") and not force:
        githooks.install(hdir, force=False)  # raises Refused before anything is written
    state_dir(loc)
    if tip is None:
        sha = vault.create(initial_files(), "init vault")
        report.changes.append(f"created vault branch '{vault.branch}' at {sha[:7]}")
    report.changes += githooks.install(hdir, force=force)
    if hdir.scope != "default":
        report.notes.append(f"hooks installed in core.hooksPath ({hdir.scope}): {hdir.path}")
    return report


def uninstall(loc: Location, *, purge: bool = False) -> Report:
    report = Report()
    hdir = githooks.hooks_dir(loc)
    report.changes += githooks.uninstall(hdir)
    default = githooks.HooksDir(loc.common_dir / "hooks", "default")
    if default.path != hdir.path:
        report.changes += githooks.uninstall(default)
    if purge:
        vault = Vault(loc)
        if vault.tip() is not None and vault.is_gitvault():
            git.delete_ref(vault.repo, vault.ref)
            report.changes.append(f"deleted vault branch '{vault.branch}'")
        if loc.state_dir.exists():
            shutil.rmtree(loc.state_dir, ignore_errors=True)
            report.changes.append(f"removed {loc.state_dir}")
    else:
        report.notes.append("the vault branch is kept (use --purge to delete it)")
    return report
