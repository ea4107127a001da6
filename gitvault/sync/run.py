"""`gitvault sync`: fetch the remote's vault, merge it in, push the result — never forced.

Order of one attempt: fetch into refs/gitvault/remotes/<remote>/vault → plan the merge
(merge.py) → when something must travel, build the commit to push (the merge commit, or the
local tip) and push it without force → only after the remote took it, move the local vault
(through the store's one compare-and-swap loop). A push the remote rejects because it moved
starts the next attempt (bounded, with jitter); any other rejection is an error and leaves
the local vault as it was. With nothing to send, the merge is published locally and nothing
is pushed; with nothing new at all, nothing is written.

[sync] share other than all kinds: the pushed commit is a projection (the remote's tree plus
this clone's shared kinds, parent: the remote's tip), so what is not shared never leaves.
"""

from __future__ import annotations

import os
import random
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitvault.errors import Busy, GitvaultError, Refused
from gitvault.memory import forget
from gitvault.resolve import Location
from gitvault.sync import ci, merge, remote, state
from gitvault.sync.remote import SyncError
from gitvault.vault import gitcmd, layout, origin, statedir
from gitvault.vault.config import fold_command_digest, parse_vault_toml
from gitvault.vault.locking import file_lock, log_failure
from gitvault.vault.store import Vault, Write, with_ci_skip

PUSH_ATTEMPTS = 12
LOCK_TIMEOUT = 120.0
HIDDEN_REF = "refs/gitvault/vault"  # the documented non-branch ref, tried when adopting

Say = Callable[[str], None]


@dataclass
class SyncResult:
    remote: str
    url: str
    remote_ref: str
    fetched: str | None = None
    committed: list[str] = field(default_factory=list)
    fast_forward: bool = False
    pushed: str | None = None
    created_remote: bool = False
    attempts: int = 0
    taken: int = 0
    report: list[str] = field(default_factory=list)
    quarantined: int = 0
    quarantine_record: str | None = None
    ci_warnings: list[str] = field(default_factory=list)
    buried: str | None = None  # the commit that dropped digest lines about forgotten items
    # (path, blob) this sync recorded as another clone's (the merge is planned again after
    # the push, on the commit pushed: what it takes is on record already)
    recorded: set[tuple[str, str]] = field(default_factory=set, repr=False)

    def summary(self) -> str:
        if not self.committed and not self.fast_forward and not self.pushed:
            return f"vault is up to date with {self.remote} ({self.remote_ref})"
        parts = []
        if self.fast_forward:
            parts.append(f"fast-forwarded to {self.remote}'s vault ({self.taken} files)")
        elif self.committed:
            parts.append(f"merged {self.taken} file(s) from {self.remote}")
        if self.pushed:
            what = "created" if self.created_remote else "pushed"
            parts.append(f"{what} {self.remote_ref} on {self.remote} at {self.pushed[:7]}")
        return "; ".join(parts)

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "recorded"}


@dataclass(frozen=True)
class Settings:
    share: tuple[str, ...]
    remote_ref: str
    auto: str

    @property
    def direct(self) -> bool:
        """Every kind is shared: the local history itself travels."""
        return set(self.share) >= set(layout.SHARE_KINDS)


def settings(vault: Vault) -> Settings:
    config = parse_vault_toml(vault.read_text(layout.CONFIG))
    share = tuple(str(k) for k in config.value("sync", "share"))
    ref = layout.remote_vault_ref(str(config.value("sync", "remote_ref")), vault.branch)
    return Settings(share, ref, str(config.value("sync", "auto")))


def auto_mode(loc: Location) -> str:
    """sync.auto for this clone (vault/origin.sync_auto)."""
    return origin.sync_auto(remote.cwd_of(loc))


# -- one sync ------------------------------------------------------------------------------


def sync(
    loc: Location, name: str | None = None, *, push: bool = True, say: Say = lambda _: None
) -> SyncResult:
    vault = Vault(loc)
    before = vault.check_format()
    chosen = name or remote.default_remote(loc)
    if not remote.is_known(loc, chosen):
        raise SyncError(
            f"no remote named {chosen!r}",
            hint="pass one (`gitvault sync REMOTE`), add it with `git remote add`, or set "
            f"`git config {layout.SYNC_REMOTE_KEY} NAME`",
        )
    conf = settings(vault)
    result = SyncResult(chosen, remote.remote_url(loc, chosen), conf.remote_ref)
    result.ci_warnings = ci.warnings(loc.workdir, vault.branch, conf.remote_ref)
    statedir.ensure(loc)
    key = layout.tracking_ref(chosen).removeprefix(layout.TRACKING_PREFIX).split("/")[0]
    lock = loc.state_dir / statedir.sync_lock(key)
    with file_lock(lock, block=True, timeout=LOCK_TIMEOUT) as got:
        if not got:
            raise Busy(f"another `gitvault sync` with {chosen} is running", hint="try again")
        try:
            _attempts(loc, vault, conf, result, push, say)
            # A teammate's `gitvault forget` reaches this clone's own digest too.
            result.buried = forget.bury_forgotten(vault)
        except GitvaultError as exc:
            state.record(loc, chosen, {"ok": False, "error": exc.message, "url": result.url})
            raise
        state.record(
            loc,
            chosen,
            {
                "ok": True,
                "error": None,
                "url": result.url,
                "remote_ref": result.remote_ref,
                "fetched": result.fetched,
                "pushed": result.pushed,
                "summary": result.summary(),
                "quarantined": result.quarantined,
            },
        )
    from gitvault.pathrecall.index import update_quietly

    update_quietly(loc, rebuild_here=False)  # what arrived, for the edit-time block
    if vault.tip() != before or result.recorded:
        from gitvault.materialize import ready

        ready.after_change(loc)  # and for the next session start (recall read nothing new else)
    return result


def _attempts(
    loc: Location, vault: Vault, conf: Settings, result: SyncResult, push: bool, say: Say
) -> None:
    cwd = remote.cwd_of(loc)
    tracking = layout.tracking_ref(result.remote)
    for attempt in range(PUSH_ATTEMPTS):
        result.attempts = attempt + 1
        result.committed = []

        def screen(where: Path, tip: str) -> None:
            _check_not_redacted(loc, vault, where, tip, result, conf.remote_ref)

        with remote.fetch(loc, result.remote, conf.remote_ref, tracking, screen) as got:
            tip_r = result.fetched = got.tip
            if tip_r is not None and not got.clean:
                _take_valid_files(loc, vault, conf, result, got, say)
                return
        if tip_r is not None:
            _check_remote_format(vault, tip_r, result)
            _check_own_history_redacted(vault, cwd, tip_r, result)
        local = vault.check_format()
        plan = None
        if tip_r is not None and not _has(vault, local, tip_r):
            plan = merge.plan(cwd, local, tip_r, conf.share)
            _note_plan(loc, result, plan, tip_r)
        outgoing = _outgoing_commit(vault, cwd, conf, local, tip_r, plan, result) if push else None
        if outgoing is None:
            _publish(vault, cwd, conf, tip_r, result, after_push=None)
            return
        say(f"pushing {outgoing[:7]} to {result.remote} {conf.remote_ref}")
        pushed = remote.push(loc, result.remote, outgoing, conf.remote_ref)
        if pushed.ok:
            gitcmd.run_git(["update-ref", tracking, outgoing], cwd, check=False)
            result.pushed = outgoing
            result.created_remote = tip_r is None
            _publish(vault, cwd, conf, tip_r, result, after_push=outgoing)
            return
        if not pushed.retry:
            raise SyncError(
                f"{result.remote} refused the vault push to {conf.remote_ref}: {pushed.reason}",
                hint="the local vault is unchanged; check the remote's rules for this ref "
                '(or publish elsewhere with [sync] remote_ref = "refs/gitvault/vault")',
            )
        say(f"{result.remote} moved ({pushed.reason}); fetching again")
        time.sleep(min(2.0, 0.05 * 2**attempt) * random.random())
    raise Busy(
        f"{result.remote}'s vault kept moving: gave up after {PUSH_ATTEMPTS} attempts",
        hint="other clones are syncing; run `gitvault sync` again",
    )


def _take_valid_files(
    loc: Location, vault: Vault, conf: Settings, result: SyncResult, got: remote.Fetched, say: Say
) -> None:
    """The remote's vault holds objects git fsck rejects: none of them enters this repository
    (a host that checks, as GitHub and GitLab do, would refuse the vault for good). Its valid
    files are taken as one ordinary commit on the local vault (its history is not merged), the
    rest is quarantined, nothing is pushed, and the user is told how to repair the remote."""
    assert got.tip is not None
    tip_r = got.tip
    bad = [merge.Quarantined("(history)", tip_r, f"git fsck: {p}") for p in got.problems[:50]]
    result.report = [f"{result.remote}'s vault fails git fsck: {p}" for p in got.problems[:20]]
    local = vault.check_format()
    plan: merge.Plan | None = None
    kind = gitcmd.run_git(["cat-file", "-t", tip_r], got.where, check=False).stdout.strip()
    if kind == b"commit":
        try:
            plan = merge.plan(got.where, local, tip_r, conf.share)
        except GitvaultError as exc:
            result.report.append(f"its files cannot be read: {exc.message}")
    if plan is not None:
        plan.changes.pop(layout.CONFIG, None)
        result.report += plan.lines()
        bad += plan.quarantined
        result.taken = len(plan.changes)
        if plan.changes:
            _record_origins(loc, got.where, result, local, tip_r, plan)
            made = vault.commit_many(
                [
                    Write(
                        plan.changes,
                        _message(result.remote, plan) + "\n\n(history not merged: "
                        "it fails git fsck)",
                    )
                ]
            )
            result.committed += made
    result.quarantined = len(bad)
    record = state.quarantine(loc, result.remote, tip_r, bad)
    result.quarantine_record = str(record) if record else None
    result.report.append(
        f"not merged as history and nothing pushed: repair {result.remote}'s vault by "
        f"publishing this clone's: git push --force-with-lease={conf.remote_ref}:{tip_r} "
        f"{result.remote} {vault.ref}:{conf.remote_ref}"
    )
    say(result.report[-1])


def _has(vault: Vault, local: str, tip_r: str) -> bool:
    return vault.git.is_ancestor(tip_r, local)


def _check_not_redacted(
    loc: Location, vault: Vault, where: Path, tip_r: str, result: SyncResult, remote_ref: str
) -> None:
    """A remote that still holds history this clone redacted would bring the redacted text back
    with the merge: refuse, and say how to publish the rewritten vault instead. Run on the
    fetch's throwaway repository (where), so a refused history never enters this one."""
    kind = gitcmd.run_git(["cat-file", "-t", tip_r], where, check=False).stdout.strip()
    if kind != b"commit":
        return  # not a vault at all: fsck's problems say so
    local = vault.require_tip()
    hint = (
        f"publish the rewritten vault: git push --force-with-lease={remote_ref}:{tip_r} "
        f"{result.remote} {vault.ref}:{remote_ref} — then every clone fetches it again "
        "(gitvault sync), and rotate the secret"
    )
    # The redaction records name the commits the rewrite replaced: a remote history holding
    # one holds the text, whether or not this clone's backups were gc'd.
    for old in sorted(forget.redacted_commits(vault, local)):
        if gitcmd.is_ancestor(where, old, tip_r):  # False: no such commit here
            raise Refused(
                f"{result.remote}'s vault still holds history that was redacted here "
                f"(`gitvault redact`); merging it would bring the redacted text back "
                "(nothing of it was kept)",
                hint=hint,
            )
    proc = gitcmd.run_git(
        ["for-each-ref", "--format=%(objectname)", layout.BACKUP_REFS], loc.common_dir, check=False
    )
    for old in proc.stdout.decode().split():
        # The remote shares a commit with the pre-redaction history that the rewritten one
        # does not have: it holds rewritten (unredacted) commits.
        base = gitcmd.run_git(["merge-base", old, tip_r], where, check=False).stdout.decode()
        base = base.strip()
        if base and not gitcmd.is_ancestor(where, base, local):
            raise Refused(
                f"{result.remote}'s vault still holds history that was redacted here "
                f"(`gitvault redact`); merging it would bring the redacted text back "
                "(nothing of it was kept)",
                hint=hint,
            )


def _check_own_history_redacted(vault: Vault, cwd: Path, tip_r: str, result: SyncResult) -> None:
    """The remote's vault was redacted by a teammate and this clone's still holds the old
    history: a merge would push the text back. Its rewritten history is in this repository
    now (the hint's update-ref takes it)."""
    local = vault.require_tip()
    for old in sorted(forget.redacted_commits(vault, tip_r)):
        if gitcmd.is_ancestor(cwd, old, local):
            raise Refused(
                f"{result.remote}'s vault was redacted (`gitvault redact`), and this clone's "
                "vault still holds the old history: syncing would push the redacted text back",
                hint=f"take the rewritten vault: git update-ref {vault.ref} {tip_r} {local} — "
                "then `gitvault backfill` writes again the notes of commits it lacks (sessions "
                f"saved here since the last sync stay in {local[:12]}: `git show "
                f"{local[:12]}:sessions/<name>.md`, then `gitvault save` them again); "
                "`gitvault gc --yes` then deletes the old history from this clone",
            )


def _check_remote_format(vault: Vault, tip_r: str, result: SyncResult) -> None:
    version = vault.format_version(tip_r)
    if version is None:
        raise Refused(
            f"{result.remote}'s {result.remote_ref} is not a gitvault vault (no valid "
            f"{layout.CONFIG})",
            hint='publish the vault elsewhere: [sync] remote_ref = "refs/gitvault/vault"',
        )
    if version > layout.FORMAT_VERSION:
        raise Refused(
            f"{result.remote}'s vault has format {version}; this gitvault understands up to "
            f"{layout.FORMAT_VERSION}",
            hint="upgrade gitvault (pip install -U gitvault)",
        )


def _note_plan(loc: Location, result: SyncResult, plan: merge.Plan, tip_r: str) -> None:
    result.report = plan.lines()
    result.quarantined = len(plan.quarantined)
    record = state.quarantine(loc, result.remote, tip_r, plan.quarantined)
    result.quarantine_record = str(record) if record else result.quarantine_record


def _message(remote_name: str, plan: merge.Plan) -> str:
    kinds: dict[str, int] = {}
    for path in [*plan.taken, *(copy for _, copy in plan.renamed)]:
        kind = layout.shared_kind(path) or "other files"
        kinds[kind] = kinds.get(kind, 0) + 1
    what = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "nothing new"
    lines = [f"sync {remote_name}: {what}"]
    lines += [f"- {line}" for line in plan.lines()[:20]]
    return "\n\n".join([lines[0], "\n".join(lines[1:])]) if len(lines) > 1 else lines[0]


def _merge_writes(
    vault: Vault, cwd: Any, conf: Settings, tip: str, other: str, result: SyncResult, *, force: bool
) -> list[Write]:
    """What merging `other` into `tip` writes: a fast-forward, a merge commit, or nothing."""
    if tip == other or vault.git.is_ancestor(other, tip):
        return []
    plan = merge.plan(cwd, tip, other, conf.share)
    result.taken = len(plan.taken) + len(plan.renamed)
    _record_origins(vault.loc, cwd, result, tip, other, plan)
    if plan.exact and vault.git.is_ancestor(tip, other):
        return [Write({}, f"sync {result.remote}: fast-forward", fast_forward=other)]
    if not plan.changes and not force:
        return []
    return [Write(plan.changes, _message(result.remote, plan), merge=(other,))]


def held_count(loc: Location) -> int:
    """Files from other clones waiting for `gitvault review`."""
    return len(origin.load(loc).held())


def review_mode(cwd: Any) -> bool:
    """`git config gitvault.syncReview true`: incoming files wait for `gitvault review`."""
    value = (gitcmd.config_get(cwd, origin.REVIEW_KEY) or "").strip().lower()
    return value in ("true", "yes", "on", "1")


def _record_origins(
    loc: Location, cwd: Any, result: SyncResult, local: str | None, other: str, plan: merge.Plan
) -> None:
    """Record what this merge takes from the remote before it lands (vault/origin): recall,
    the digest and the agent files mark it, and review mode holds it."""
    taking = {(p, plan.blobs.get(p, "")) for p, data in plan.changes.items() if data is not None}
    if taking <= result.recorded:
        return
    files = [
        f
        for f in merge.arrivals(cwd, local, other, plan)
        if (layout.is_item(f.path) or layout.is_pattern(f.path) or f.path == layout.DIGEST)
        and (f.path, f.blob) not in result.recorded
    ]
    result.recorded |= taking
    if not files:
        return
    lines: list[str] = []
    digest = plan.changes.get(layout.DIGEST)
    if digest and any(f.path == layout.DIGEST for f in files):
        lines = [ln for ln in digest.decode("utf-8", "replace").splitlines() if ln.startswith("- ")]
    origin.record(
        loc, result.remote, result.url, files, review=review_mode(cwd), digest_lines=lines
    )


def _outgoing_commit(
    vault: Vault,
    cwd: Any,
    conf: Settings,
    local: str,
    tip_r: str | None,
    plan: merge.Plan | None,
    result: SyncResult,
) -> str | None:
    """The commit to push, or None when the remote already has everything this clone shares."""
    if not conf.direct:
        return _projection(vault, cwd, conf, local, tip_r)
    if tip_r is None:
        return local
    # A quarantine travels too: the pushed merge takes the refused files out of the shared
    # tree, so the other clones do not have to refuse them again.
    if not _sends(cwd, tip_r, local, conf) and not (plan and plan.quarantined):
        return None
    if plan is None:  # the remote's tip is in the local history: push the tip as it is
        return local
    writes = _merge_writes(vault, cwd, conf, local, tip_r, result, force=True)
    w = writes[0]
    if w.fast_forward:
        return None
    tree = vault.git.write_tree(local, w.changes)
    made = vault.git.create_commit(tree, [local, *w.merge], with_ci_skip(w.message))
    result.committed.append(made)
    return made


def _sends(cwd: Any, tip_r: str, local: str, conf: Settings) -> bool:
    """Whether the local vault has something for the remote: a path (other than vault.toml,
    which stays per clone) that differs and that the remote's side would take."""
    for path, d in merge.diff(cwd, tip_r, local).items():
        if path == layout.CONFIG or d.new is None:
            continue
        kind = layout.shared_kind(path)
        if kind is None or kind in conf.share:
            return True
    return False


def _projection(
    vault: Vault, cwd: Any, conf: Settings, local: str, tip_r: str | None
) -> str | None:
    """A commit on the remote's tip that adds this clone's shared kinds (and nothing else)."""
    changes: dict[str, bytes | None] = {}
    delta = merge.diff(cwd, tip_r, local)
    wanted = {
        p: d.new
        for p, d in delta.items()
        if d.new is not None
        and (p != layout.CONFIG or tip_r is None)
        and (layout.shared_kind(p) is None or layout.shared_kind(p) in conf.share)
    }
    blobs = gitcmd.cat_blobs(cwd, [b for b in wanted.values() if b])
    for path, blob in wanted.items():
        if blob in blobs:
            changes[path] = blobs[blob]
    if not changes:
        return None
    tree = vault.git.write_tree(tip_r, changes)
    if tip_r is not None and tree == vault.git.tree_of(tip_r):
        return None
    host = socket.gethostname().split(".")[0] or "a clone"
    message = f"share {len(changes)} file(s) from {host}"
    return vault.git.create_commit(tree, [tip_r] if tip_r else [], with_ci_skip(message))


def _publish(
    vault: Vault,
    cwd: Any,
    conf: Settings,
    tip_r: str | None,
    result: SyncResult,
    *,
    after_push: str | None,
) -> None:
    """Move the local vault: to the pushed commit (or a merge with it, when a local writer got
    in meanwhile), or merge the fetched tip in."""
    other = after_push if after_push is not None and conf.direct else tip_r
    if other is None:
        return

    def build(tip: str) -> list[Write]:
        return _merge_writes(vault, cwd, conf, tip, other, result, force=False)

    made = vault.publish_merge(build)
    if not made:
        return
    if made[-1] == other:
        result.fast_forward = after_push is None
    else:
        result.committed += made


# -- adopting a remote's vault at install ----------------------------------------------------


def adopt(loc: Location, name: str | None = None, say: Say = lambda _: None) -> list[str]:
    """Create the local vault at a remote's vault tip (never a second orphan root). Returns
    what happened; empty when there is no remote vault to adopt (install then creates one)."""
    chosen = name or remote.default_remote(loc)
    if chosen not in remote.remotes(loc):
        return []
    vault = Vault(loc)
    if vault.tip() is not None:
        return []
    cwd = remote.cwd_of(loc)
    tracking = layout.tracking_ref(chosen)
    tip_r = None
    for ref in dict.fromkeys([layout.branch_ref(vault.branch), HIDDEN_REF]):
        try:
            with remote.fetch(loc, chosen, ref, tracking) as got:
                tip_r = got.tip
                if tip_r is not None and not got.clean:
                    return [
                        f"{chosen}'s vault fails git fsck ({got.problems[0]}); created a new "
                        "vault instead (`gitvault sync` takes its valid files and says how to "
                        "repair it)"
                    ]
        except SyncError as exc:
            return [
                f"could not reach {chosen} ({exc.message}); created a new vault instead "
                "(the first `gitvault sync` joins it with the remote's)"
            ]
        if tip_r is not None:
            break
    if tip_r is None or vault.format_version(tip_r) is None:
        return []
    if (vault.format_version(tip_r) or 0) > layout.FORMAT_VERSION:
        raise Refused(
            f"{chosen}'s vault has format {vault.format_version(tip_r)}; this gitvault "
            f"understands up to {layout.FORMAT_VERSION}",
            hint="upgrade gitvault (pip install -U gitvault)",
        )
    plan = merge.plan(cwd, None, tip_r, layout.SHARE_KINDS)
    if layout.CONFIG not in plan.changes:
        return []  # its vault.toml is invalid: nothing to adopt safely
    statedir.ensure(loc)
    adopted = SyncResult(chosen, remote.remote_url(loc, chosen), "")
    _record_origins(loc, cwd, adopted, None, tip_r, plan)
    vault.create({}, "", at=tip_r)
    lines = [f"adopted {chosen}'s vault at {tip_r[:7]} (vault branch '{vault.branch}')"]
    if plan.quarantined:
        vault.commit(
            {q.path: None for q in plan.quarantined},
            f"sync {chosen}: quarantine {len(plan.quarantined)} file(s)",
        )
        state.quarantine(loc, chosen, tip_r, plan.quarantined)
        lines += [f"quarantined {q.path}: {q.reason}" for q in plan.quarantined]
    gitcmd.run_git(["config", layout.ADOPTED_KEY, chosen], cwd)
    config = parse_vault_toml(plan.changes[layout.CONFIG].decode())  # type: ignore[union-attr]
    command = str(config.fold_value("command")).strip()
    if command:
        lines.append(
            f"the adopted vault.toml sets fold.command = {command!r}; it will not run until you "
            f"confirm it: git config {layout.TRUSTED_FOLD_KEY} {fold_command_digest(command)}"
        )
    if str(config.value("sync", "auto")) != "off":
        lines.append(
            f"the adopted vault.toml asks for sync.auto = {config.value('sync', 'auto')}; "
            f"it is off here until you choose: git config {layout.SYNC_AUTO_KEY} MODE"
        )
    state.record(
        loc,
        chosen,
        {
            "ok": True,
            "error": None,
            "fetched": tip_r,
            "adopted": True,
            "url": remote.remote_url(loc, chosen),
            "summary": lines[0],
        },
    )
    say(lines[0])
    return lines


# -- the hooks' entry: sync.auto ---------------------------------------------------------------


def hook_main(args: list[str]) -> int:
    """`gitvault-hook git sync <pre-push|post-merge> <repository> [REMOTE]`: run detached by
    the shims; syncs when sync.auto asks for it; logs failures; always exits 0."""
    from gitvault.resolve import resolve

    if len(args) < 2 or args[0] not in ("pre-push", "post-merge"):
        return 2
    event, repo = args[0], args[1]
    name = args[2] if len(args) > 2 and args[2] else None
    try:
        os.setsid()  # no controlling terminal: a credential prompt fails instead of hijacking it
    except OSError:
        pass
    try:
        loc = resolve(repo)
    except GitvaultError:
        return 0
    mode = auto_mode(loc)
    wanted = ("push", "both") if event == "pre-push" else ("pull", "both")
    if mode not in wanted:
        return 0
    try:
        sync(loc, name, push=event == "pre-push")
    except GitvaultError as exc:
        log_failure(
            loc.state_dir,
            f"auto sync ({event}) with {name or 'the default remote'} failed: {exc.message}",
        )
    except Exception as exc:  # noqa: BLE001 - a background job logs, never raises
        log_failure(loc.state_dir, f"auto sync ({event}) failed: {type(exc).__name__}: {exc}")
    return 0
