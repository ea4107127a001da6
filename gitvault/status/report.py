"""`gitvault status`: what is installed, the spool backlog, the last note, and warnings."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from gitvault.errors import GitvaultError
from gitvault.memory import history
from gitvault.notes import drain, quarantine, shims, walk
from gitvault.resolve import Location
from gitvault.vault import frontmatter, layout, repair, statedir
from gitvault.vault.locking import read_log
from gitvault.vault.store import Vault


@dataclass
class Status:
    repository: str
    vault_branch: str
    vault_tip: str | None
    vault_format: int | None
    hooks_dir: str
    hooks_scope: str
    hooks: list[dict[str, Any]]
    backlog: int
    last_note: dict[str, Any] | None
    last_fold: dict[str, Any] | None
    warnings: list[str] = field(default_factory=list)
    recent_failures: list[str] = field(default_factory=list)
    # Per agent adapter: served (git config gitvault.agents), hooks installed in this
    # worktree, trusted (True/False/None: cannot tell) and how to trust.
    agents: list[dict[str, Any]] = field(default_factory=list)
    sync: dict[str, Any] = field(default_factory=dict)
    # Commits without a note in the completeness check's window (notes/walk.unnoted).
    unnoted: dict[str, Any] = field(default_factory=dict)

    @property
    def installed(self) -> bool:
        return self.vault_tip is not None and all(h["installed"] for h in self.hooks)


def status(loc: Location) -> Status:
    vault = Vault(loc)
    tip = vault.tip()
    fmt = vault.format_version(tip) if tip else None
    hdir = shims.hooks_dir(loc)
    hooks = [h.__dict__ for h in shims.state(hdir.path)]
    warnings: list[str] = []
    if tip is None:
        warnings.append(f"no vault branch '{vault.branch}': run `gitvault install`")
    elif fmt is None:
        warnings.append(f"branch '{vault.branch}' is not a gitvault vault")
    elif fmt > layout.FORMAT_VERSION:
        warnings.append(f"vault format {fmt} is newer than this gitvault ({layout.FORMAT_VERSION})")
    missing = [h["name"] for h in hooks if not h["installed"]]
    stale = [
        h["name"]
        for h in hooks
        if h["installed"]
        and h["version"] is not None
        and h["version"] < shims.shipped_version(h["name"])
    ]
    if stale:
        warnings.append(
            f"{', '.join(stale)} shim(s) are older than this gitvault: run `gitvault install` "
            "to update them"
        )
    if tip is not None and missing:
        where = (
            f"core.hooksPath ({hdir.scope}) {hdir.path}"
            if hdir.scope != "default"
            else str(hdir.path)
        )
        warnings.append(
            f"hooks not active in this worktree: {', '.join(missing)} missing from {where}"
            + (
                "; run `gitvault install` here"
                if hdir.scope not in ("global", "system")
                else "; run `gitvault install --force` or unset core.hooksPath"
            )
        )
    for h in hooks:
        if h["foreign"]:
            warnings.append(f"{h['name']} in {hdir.path} is not gitvault's (install chains it)")
    state = loc.state_dir
    spool = state / statedir.SPOOL
    if tip is not None and state.is_dir() and not os.access(state, os.W_OK):
        warnings.append(
            f"cannot write to {state}: commits are not being recorded; make it writable, "
            "then `gitvault backfill` writes the missing notes"
        )
    elif spool.exists() and not spool.is_file():
        warnings.append(
            f"{spool} is not a file, so commits cannot be recorded; remove it, "
            "then `gitvault backfill` writes the missing notes"
        )
    lock_age = vault.stale_lock_age()
    if lock_age is not None:
        warnings.append(
            f"the vault branch is locked by {vault.ref_lock()} (taken {lock_age:.0f}s ago); "
            "the next write removes it once it is 5 seconds old, or remove it yourself if no git "
            f"or gitvault process is running: rm {vault.ref_lock()}"
        )
    set_aside = len(quarantine.entries(state))
    if set_aside:
        warnings.append(
            f"{set_aside} commit(s) set aside because their note could not be written: "
            "`gitvault quarantine` lists them, `--retry` tries again"
        )
    backlog = drain.spool_backlog(loc)
    if backlog:
        warnings.append(
            f"{backlog} commit(s) waiting in the spool (any gitvault command drains it)"
        )
    unnoted: dict[str, Any] = {}
    if tip is not None and fmt == layout.FORMAT_VERSION:
        unnoted = _unnoted(loc, vault, warnings)
    last_note = last_fold = None
    if tip is not None and fmt is not None:
        undone = repair.find(vault.git, loc.common_dir, tip)
        if undone is not None:
            warnings.append(
                f"{undone.found}; the next gitvault write (a commit's note, `gitvault fold`) "
                f"repairs it. {repair.ADVICE}"
            )
        for entry in history.entries(vault, limit=1, kind="note"):
            last_note = entry.as_json()
        digest = vault.read_text(layout.DIGEST, tip)
        if digest is not None:
            meta, _ = frontmatter.parse(digest)
            last_fold = {k: meta.get(k) for k in ("folded_at", "watermark", "merger", "items")}
        warnings += _fold_warnings(loc, vault, last_fold)
    agents = _agents(loc, warnings) if tip is not None else []
    failures = read_log(loc.state_dir)
    sharing: dict[str, Any] = {}
    if tip is not None and fmt is not None:
        sharing = _sharing(loc, vault, warnings)
    return Status(
        repository=str(loc.workdir or loc.common_dir),
        vault_branch=vault.branch,
        vault_tip=tip,
        vault_format=fmt,
        hooks_dir=str(hdir.path),
        hooks_scope=hdir.scope,
        hooks=hooks,
        backlog=backlog,
        last_note=last_note,
        last_fold=last_fold,
        warnings=warnings,
        recent_failures=failures,
        agents=agents,
        sync=sharing,
        unnoted=unnoted,
    )


def _unnoted(loc: Location, vault: Vault, warnings: list[str]) -> dict[str, Any]:
    """The completeness check: commits made since gitvault began watching that have no note
    (set-aside ones are reported on their own), with the command that writes them."""
    import time

    gap = walk.unnoted(loc, vault, drain.set_aside_shas(loc.state_dir))
    if gap.since is None:
        return {}
    since = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(gap.since))
    info = {"count": len(gap.shas), "shas": gap.shas[:20], "since": since, "window": gap.window}
    if gap.shas:
        examples = ", ".join(sha[:7] for sha in gap.shas[:3])
        warnings.append(
            f"{len(gap.shas)} commit(s) on local branches or worktree HEADs have no note "
            f"(e.g. {examples}; checked: the {gap.window:,} newest commits since {since} "
            f"that no remote-tracking ref has): `gitvault backfill --all --since {since}` "
            "writes them"
        )
    return info


def _fold_warnings(loc: Location, vault: Vault, last_fold: dict[str, Any] | None) -> list[str]:
    """Items waiting for a fold and why; the last fold failure with its fix."""
    from gitvault.errors import GitvaultError
    from gitvault.fold.run import describe

    try:
        info = describe(loc, vault)
    except GitvaultError as exc:
        return [f"cannot tell what waits for a fold: {exc.message}"]
    out: list[str] = []
    if last_fold is not None:
        last_fold.update(pending=info["pending"], pending_why=info["why"])
    failure = info["failure"]
    if failure and info["fallback"] and failure.get("unavailable"):
        out.append(
            f"the {failure.get('merger')} merger cannot run here ({failure.get('message')}); "
            f"the builtin fallback keeps the digest current; fix: {failure.get('fix')}"
        )
    elif failure:
        what = (
            "the builtin fallback keeps the digest current, but the last "
            if info["fallback"]
            else "the last "
        )
        out.append(
            f"{what}{failure.get('merger')} fold failed: {failure.get('message')}; "
            f"fix: {failure.get('fix')}"
        )
    # Items waiting in the ordinary way (the next session's end folds them) are no warning;
    # waiting for a reason (failure, spent budget, a backlog worked through day by day) is.
    if info["pending"] and (failure or info["stuck"]):
        out.append(f"{info['pending']} item(s) wait for a fold: {info['why']}")
    elif info["pending"] and last_fold is None:
        out.append(
            f"no digest yet: {info['pending']:,} item(s) wait for the first fold; run "
            "`gitvault fold` (offline, no model: `gitvault config fold.merger builtin` first)"
        )
    return out


def _agents(loc: Location, warnings: list[str]) -> list[dict[str, Any]]:
    """Each agent: whether this clone serves it, whether this worktree has its hooks, and
    whether the agent trusts them (where that can be read from its own configuration). A
    worktree lacking the wiring of an agent install wired (a new `git worktree add` of a
    repository whose agent folders are not committed) is told exactly what to run; nothing is
    said of agents install did not wire (`git config gitvault.agents`)."""
    from gitvault.agents import adapters

    if loc.workdir is None:
        return []
    chosen = adapters.configured(loc.workdir)
    out = []
    for name, adapter in adapters.all_adapters().items():
        events = adapter.installed(loc.workdir)
        served = name in chosen if chosen is not None else bool(events)
        trust = adapter.trust(loc.workdir, os.environ) if events else None
        out.append(
            {
                "name": name,
                "label": adapter.label,
                "served": served,
                "hooks": events,
                "mcp": adapter.has_mcp(loc.workdir),
                "trusted": trust.trusted if trust else None,
                "trust": trust.detail if trust else "",
            }
        )
        if not served:
            continue
        missing = adapter.missing_wiring(loc.workdir) if chosen is not None else []
        if missing:
            warnings.append(
                f"this worktree ({loc.workdir}) has no {', '.join(missing)}: run `gitvault "
                f"install` here (or commit {adapter.wiring_folder()} so every new worktree has "
                "them)"
            )
        elif trust is not None and trust.trusted is False and adapter.warns_untrusted:
            warnings.append(
                f"{adapter.label} will not run gitvault's hooks yet ({trust.detail}): "
                f"{adapter.trust_step}"
            )
    return out


def _sharing(loc: Location, vault: Vault, warnings: list[str]) -> dict[str, Any]:
    """The sync fields, and warnings for a failed last sync, quarantined files and CI that
    would run on a pushed vault branch."""
    from gitvault.sync import ci, run, state

    try:
        conf = run.settings(vault)
    except GitvaultError as exc:
        warnings.append(exc.message)
        return {}
    info = state.sharing(loc, vault.branch, conf.remote_ref, run.auto_mode(loc))
    if info["last_error"]:
        warnings.append(f"the last sync with {info['remote']} failed: {info['last_error']}")
    if info["quarantined"]:
        warnings.append(
            f"{len(info['quarantined'])} file(s) from a remote were quarantined (kept out of "
            f"the vault): see {statedir.path(loc, statedir.SYNC_QUARANTINE)}"
        )
    if info["shared"] or info["auto"] != "off":
        warnings += ci.warnings(loc.workdir, vault.branch, conf.remote_ref)
    return info
