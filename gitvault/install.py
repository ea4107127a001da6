"""`gitvault install` / `uninstall`: the vault branch and the git hook shims.

Install is idempotent (a second run changes nothing) and refuses, changing nothing, when a
branch of the vault's name exists that gitvault did not create.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field

from gitvault import git, githooks
from gitvault.errors import GitvaultError, Refused
from gitvault.resolve import Location
from gitvault.store import Vault, state_dir
from gitvault.vaultinit import initial_files


@dataclass
class Report:
    changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def patch_write(path: object, data: bytes) -> None:
    from pathlib import Path

    from gitvault.locking import atomic_write

    assert isinstance(path, Path)
    atomic_write(path, data, mode=path.stat().st_mode & 0o7777)


def _require_worktree(loc: Location) -> None:
    if loc.workdir is None:
        raise GitvaultError(
            "this is a bare repository: nothing is committed here, so there is nothing to note",
            hint="run gitvault install in a clone with a working tree",
        )


def _claude_preflight(loc: Location, local: bool) -> list[str]:
    """Everything that could refuse, checked before anything is written: settings.json must be
    valid JSON and every agent file's sentinels matched."""
    from gitvault import claude_install, patch

    assert loc.workdir is not None
    claude_install._load_settings(claude_install.settings_path(loc.workdir, local))
    files = ["CLAUDE.md"]
    vault = Vault(loc)
    if vault.tip() is not None:
        from gitvault.config import parse_vault_toml

        files = list(parse_vault_toml(vault.read_text("vault.toml")).patch_files)
    for name in files:
        path = loc.workdir / name
        if path.exists():
            patch.patch_bytes(path.read_bytes(), "", name=str(path))
    return files


def _claude_install(loc: Location, local: bool, files: list[str], report: Report) -> None:
    from gitvault import claude_install, claudemd
    from gitvault.config import parse_vault_toml

    assert loc.workdir is not None
    result = claude_install.install(loc, local=local)
    report.changes += result.changes
    report.notes += result.kept
    vault = Vault(loc)
    config = parse_vault_toml(vault.read_text("vault.toml"))
    patched = claudemd.refresh(loc.workdir, vault.read_text("_master.md"), config, files=files)
    report.changes += [f"wrote the gitvault section of {name}" for name in patched.written]


def install(
    loc: Location, *, force: bool = False, claude: bool = True, local: bool = False
) -> Report:
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
    agent_files = _claude_preflight(loc, local) if claude else []
    state_dir(loc)
    if tip is None:
        sha = vault.create(initial_files(), "init vault")
        report.changes.append(f"created vault branch '{vault.branch}' at {sha[:7]}")
    report.changes += githooks.install(hdir, force=force)
    if hdir.scope != "default":
        report.notes.append(f"hooks installed in core.hooksPath ({hdir.scope}): {hdir.path}")
    if claude:
        _claude_install(loc, local, agent_files, report)
    return report


def uninstall(loc: Location, *, purge: bool = False) -> Report:
    report = Report()
    if loc.workdir is not None:
        from gitvault import claude_install, patch

        result = claude_install.uninstall(loc)
        report.changes += result.changes
        report.notes += result.kept
        vault = Vault(loc)
        from gitvault.config import parse_vault_toml

        files = (
            parse_vault_toml(vault.read_text("vault.toml")).patch_files
            if vault.tip()
            else ("CLAUDE.md",)
        )
        for name in files:
            path = loc.workdir / name
            if not path.exists():
                continue
            try:
                original = path.read_bytes()
                cleaned = patch.remove_block(original, name=str(path))
            except Refused as exc:
                report.notes.append(f"{name}: {exc.message}; left as it is")
                continue
            if cleaned != original:
                if cleaned.strip(b"\r\n\xef\xbb\xbf"):
                    patch_write(path, cleaned)
                else:
                    path.unlink()  # it held only our section: gitvault created it
                report.changes.append(f"removed the gitvault section of {name}")
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
