"""`gitvault install` / `uninstall`: the vault branch and the git hook shims.

Install is idempotent (a second run changes nothing) and refuses, changing nothing, when a
branch of the vault's name exists that gitvault did not create.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from gitvault.agents import agentfiles, sentinel
from gitvault.errors import GitvaultError, Refused
from gitvault.notes import shims
from gitvault.resolve import Location
from gitvault.vault import launcher, layout, statedir
from gitvault.vault.config import initial_files, parse_vault_toml
from gitvault.vault.files import atomic_write
from gitvault.vault.store import Vault


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


def _agent_files(vault: Vault) -> list[str]:
    return list(parse_vault_toml(vault.read_text(layout.CONFIG), vault.loc).patch_files)


def _preflight(loc: Location, local: bool, chosen: list[str]) -> list[str]:
    """Everything that could refuse, checked before anything is written: each chosen agent's
    settings (strict JSON, real files inside the worktree) and every agent file's sentinels
    matched. Returns the agent files to patch (vault.toml's, with the chosen agents'
    instruction files)."""
    from gitvault.agents import adapters

    assert loc.workdir is not None
    for name in chosen:
        adapters.get(name).preflight(loc.workdir, local=local)
    vault = Vault(loc)
    files = (
        _agent_files(vault) if vault.tip() is not None else list(parse_vault_toml(None).patch_files)
    )
    files = adapters.patch_targets(files, chosen)
    for name in agentfiles.allowed_targets(loc.workdir, files)[0]:
        path = loc.workdir / name
        if path.exists():
            sentinel.patch_bytes(path.read_bytes(), "", name=str(path))
    return files


def install(
    loc: Location,
    *,
    force: bool = False,
    default_agent: bool = True,
    local: bool = False,
    agents: list[str] | None = None,
) -> Report:
    """`agents`: the adapters to wire (None: those detected, see adapters.detected);
    default_agent=False (--no-<adapters.DEFAULT>) takes the default agent out of the set.
    local: the agents' hooks go to their machine-local settings file, where they have one."""
    from gitvault.agents import adapters

    _require_worktree(loc)
    assert loc.workdir is not None
    chosen = adapters.detected(loc.workdir) if agents is None else list(agents)
    if not default_agent:
        chosen = [name for name in chosen if name != adapters.DEFAULT]
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
    hdir = shims.hooks_dir(loc)
    if hdir.scope in ("global", "system") and not force:
        shims.install(hdir, force=False)  # raises Refused before anything is written
    agent_files = _preflight(loc, local, chosen) if chosen else []
    statedir.ensure(loc)
    if statedir.walk_state(loc) is None:
        from gitvault.notes import walk

        walk.begin(loc)  # commits from now on are noted even when they run no hook
    if tip is None:
        _adopt_or_create(loc, vault, report)
    from gitvault.pathrecall import known

    report.changes += launcher.install(
        loc, adapters.turn_ends(), adapters.tool_events(), known.HEADER, adapters.session_starts()
    )
    if shims.inside_tree(loc, hdir) or shims.chained_from(loc) is not None:
        hdir, moved = shims.chain_outside(loc, hdir)  # never into the project's own files
        report.changes += moved
    report.changes += shims.install(hdir, force=force)
    if hdir.scope != "default":
        report.notes.append(f"hooks installed in core.hooksPath ({hdir.scope}): {hdir.path}")
    for name in chosen:
        done = adapters.get(name).install(loc, local=local)
        report.changes += done.changes
        report.notes += done.notes
        report.changes += adapters.get(name).install_mcp(loc.workdir).changes
    if agent_files:
        patched = agentfiles.refresh_from_vault(loc, files=agent_files, raise_on_refusal=False)
        report.changes += [f"wrote the gitvault section of {name}" for name in patched.written]
        report.notes += [f"not patched (patch.files): {line}" for line in patched.refused]
    from gitvault.vault import gitcmd

    before = gitcmd.config_get(loc.workdir, layout.AGENTS_KEY)
    remembered = _remember_agents(loc, adapters.render(chosen))
    if not remembered and before not in (None, adapters.render(chosen)):
        remembered = [f"set git config {layout.AGENTS_KEY} {adapters.render(chosen)}"]
    report.changes += remembered
    report.notes += fold_outlook(loc, vault)
    from gitvault.materialize import ready

    ready.want(loc)  # the next change of the vault materializes this worktree's recall block
    return report


def _remember_agents(loc: Location, value: str) -> list[str]:
    """Persist the agents wired (git config gitvault.agents; "none" for none) so every later
    command honours it: the hooks of an unwired agent stay silent, fold patches no file of
    it, status says nothing of it is missing."""
    from gitvault.vault import gitcmd

    cwd = loc.workdir or loc.common_dir
    if gitcmd.config_get(cwd, layout.AGENTS_KEY) == value:
        return []
    gitcmd.run_git(["config", layout.AGENTS_KEY, value], cwd)
    if value == "none":
        return [f"set git config {layout.AGENTS_KEY} none (no agent wiring, no agent file)"]
    return []


def _adopt_or_create(loc: Location, vault: Vault, report: Report) -> None:
    """A clone whose remote has a vault adopts it (never a second orphan root); otherwise a
    new vault branch is created."""
    from gitvault.sync import run as sync_run

    lines = sync_run.adopt(loc)
    if vault.tip() is not None:
        report.changes.append(lines[0])
        report.notes += lines[1:]
        return
    report.notes += lines
    sha = vault.create(initial_files(), "init vault")
    report.changes.append(f"created vault branch '{vault.branch}' at {sha[:7]}")


def uninstall(loc: Location, *, purge: bool = False) -> Report:
    report = Report()
    if loc.workdir is not None:
        from gitvault.agents import adapters

        for adapter in adapters.all_adapters().values():
            # The MCP entry first: it may share the hooks' file (Gemini), which an uninstall
            # that leaves it empty removes.
            mcp = adapter.uninstall_mcp(loc.workdir)
            report.changes += mcp.changes
            report.notes += mcp.notes
            done = adapter.uninstall(loc)
            report.changes += done.changes
            report.notes += done.notes
        vault = Vault(loc)
        files = _agent_files(vault) if vault.tip() else list(parse_vault_toml(None).patch_files)
        files += [f for f in adapters.instruction_files(adapters.names()) if f not in files]
        for name in files:
            path = loc.workdir / name
            if not path.exists():
                continue
            try:
                original = path.read_bytes()
                cleaned = sentinel.remove_block(original, name=str(path))
            except Refused as exc:
                report.notes.append(f"{name}: {exc.message}; left as it is")
                continue
            if cleaned != original:
                if cleaned.strip(b"\r\n\xef\xbb\xbf"):
                    atomic_write(path, cleaned, mode=path.stat().st_mode & 0o7777)
                else:
                    path.unlink()  # it held only our section: gitvault created it
                report.changes.append(f"removed the gitvault section of {name}")
    chained = shims.hooks_dir(loc)
    report.changes += shims.unchain(loc)  # before: its forwarders are no chained hooks
    hdir = shims.hooks_dir(loc)
    if chained.path != hdir.path:
        report.changes += shims.uninstall(chained)
    report.changes += shims.uninstall(hdir)
    report.changes += launcher.remove(loc)
    default = shims.HooksDir(loc.common_dir / "hooks", "default")
    if default.path != hdir.path:
        report.changes += shims.uninstall(default)
    if purge:
        vault = Vault(loc)
        if vault.tip() is not None and vault.is_gitvault():
            vault.git.delete_ref(vault.ref)
            report.changes.append(f"deleted vault branch '{vault.branch}'")
        if loc.state_dir.exists():
            shutil.rmtree(loc.state_dir, ignore_errors=True)
            report.changes.append(f"removed {loc.state_dir}")
    else:
        report.notes.append("the vault branch is kept (use --purge to delete it)")
    from gitvault.vault import gitcmd

    gitcmd.run_git(
        ["config", "--unset", layout.AGENTS_KEY], loc.workdir or loc.common_dir, check=False
    )
    return report


# What folding history costs, from the click project: 3,329 commits ≈ 207k tokens of prompt
# for the claude merger (~250 characters a commit) and 698 bytes a note after `git gc`.
PROMPT_CHARS_PER_COMMIT = 250
NOTE_BYTES = 700
RECENT_DAYS = 90
RECENT = f"{RECENT_DAYS}.days.ago"
BUILTIN_OFFER = "gitvault config fold.merger builtin"


def fold_outlook(loc: Location, vault: Vault) -> list[str]:
    """What folds will do (the merger checked once, without a model call; when it cannot run,
    the one command that makes folds work offline) and, on a repository with history, what a
    backfill would cost and how to bound it."""
    from gitvault.fold import mergers
    from gitvault.fold.run import load_config
    from gitvault.notes.index import noted_shas

    config = load_config(vault)
    seen = mergers.outlook(config)
    out = [f"fold: {seen.text}"]
    if not seen.runs:  # one note: what is wrong, then the one command (not two fixes to weigh)
        told = seen.text.replace(f", or {mergers.OFFLINE_FIX}", "")
        out = [
            f"fold: {told}; fold offline from now on with one command: "
            f"`{BUILTIN_OFFER}` (deterministic, no model, no cost)"
        ]
    cwd = loc.workdir or loc.common_dir
    history = _history(cwd)
    if history is None:
        return out  # no commit yet
    total, recent, newest = history
    missing = total - len(noted_shas(vault))
    if missing <= 0:
        return out
    if missing <= 20:  # too few to cost anything worth weighing
        out.append(
            f"history: {missing:,} commit{' has' if missing == 1 else 's have'} no notes. "
            f"`gitvault backfill --all` notes {'it' if missing == 1 else 'them'}"
        )
        return out
    chars = missing * PROMPT_CHARS_PER_COMMIT
    per_day = int(config.fold_value("max_chars_per_day"))
    days = -(-chars // per_day) if per_day else 1
    merger = str(config.fold_value("merger"))
    cost = (
        "folding them with the builtin merger costs nothing"
        if merger == "builtin"
        else f"folding them with the {merger} merger sends ~{chars // 4:,} tokens, "
        f"{days} day(s) of fold.max_chars_per_day, newest history first"
    )
    out.append(
        f"history: {missing:,} commits have no notes. `gitvault backfill --all` notes them "
        f"(~{max(missing * NOTE_BYTES // 1024, 1):,} KB in the vault); {cost}. "
        f"{_bound_advice(cwd, recent, newest)}; "
        "`gitvault fold --merger builtin` folds any amount offline"
    )
    return out


def _history(cwd: Path) -> tuple[int, int, int] | None:
    """(commits on HEAD, of which in the last RECENT_DAYS days, HEAD's committer time), or
    None before the first commit."""
    from gitvault.vault import gitcmd

    try:
        total = int(gitcmd.run_git(["rev-list", "--count", "HEAD"], cwd).stdout or 0)
        recent = int(
            gitcmd.run_git(["rev-list", "--count", f"--since={RECENT}", "HEAD"], cwd).stdout or 0
        )
        newest = int(gitcmd.run_git(["log", "-1", "--format=%ct", "HEAD"], cwd).stdout or 0)
    except (GitvaultError, ValueError):
        return None
    return total, recent, newest


def _bound_advice(cwd: Path, recent: int, newest: int) -> str:
    """How to note only recent history. When nothing was committed in the last RECENT_DAYS
    days (an older project), `--since 90.days.ago` would note nothing: the advice is the
    RECENT_DAYS days before the newest commit instead, with their count."""
    from datetime import UTC, datetime, timedelta

    from gitvault.vault import gitcmd

    if recent:
        return f"`gitvault backfill --since {RECENT}` bounds it to the {recent:,} recent commits"
    start = datetime.fromtimestamp(newest, tz=UTC) - timedelta(days=RECENT_DAYS)
    day = start.strftime("%Y-%m-%d")
    try:
        count = int(
            gitcmd.run_git(["rev-list", "--count", f"--since={day}", "HEAD"], cwd).stdout or 0
        )
    except (GitvaultError, ValueError):
        count = 0
    last = datetime.fromtimestamp(newest, tz=UTC).strftime("%Y-%m-%d")
    return (
        f"nothing was committed in the last {RECENT_DAYS} days (the newest commit is from "
        f"{last}): `gitvault backfill --since {day}` notes the {count:,} commits of the "
        f"{RECENT_DAYS} days before it"
    )
