"""`gitvault fold` (REWRITE): merge what the vault gained since the watermark into _master.md.

The watermark is a vault commit SHA in the digest's front matter; what is new is the git range
watermark..vault. Large backlogs fold in batches, each its own commit with its own watermark,
so a fold killed at any instant resumes where the last committed batch ended. The model only
merges meaning; categories, caps, citations and the watermark are enforced here.

Recent first. A backlog bigger than what today's budget (fold.max_chars_per_day) allows, with
no older backlog pending (first use on a repository with history, `backfill --all`), is not
folded oldest-first: the whole range becomes the *backlog* — `backlog: {from, to, items}` in
the front matter, the vault range from..to read with the same rules as watermark ranges — and
the watermark moves to the read tip at once. Folds then take the backlog from its newest end:
each call folds the newest chunk still in it and commits `to` moved down to the chunk's first
commit, so an interrupted fold loses nothing and never reads an item twice. The invariant
after every commit: the items reachable from the watermark are exactly those folded, those in
the backlog, and those past the horizon. Newer items (watermark..tip) always fold before the
backlog; a backlog chunk is marked to the model as older history (the digest wins a conflict).
fold.horizon_days drops backlog items that much older than the newest item: never folded.

The builtin merger has no budget: it covers everything up to the read tip in one call and
clears the backlog (an offline digest is a function of the whole vault, see builtin.py).

Every fold attempt writes fold-state.json in gitvault's folder of the common git dir: items
waiting and why, and the last failure with its fix, for `status` and the recall block. A
background fold whose model merger cannot be reached falls back to the builtin merger when
fold.fallback = "builtin" (the default) and records that it did.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from gitvault.errors import FoldRejected, GitvaultError
from gitvault.fold import digest as digest_mod
from gitvault.fold import history, items, mergers, truth
from gitvault.fold.items import Item
from gitvault.fold.lease import fold_lease
from gitvault.fold.merger import MergeContext, Merger, MergerFailed, MergerUnavailable
from gitvault.memory import cites, forget
from gitvault.resolve import Location
from gitvault.scrub.engine import scrub_secrets
from gitvault.vault import layout, origin, repair, statedir
from gitvault.vault.config import (
    VaultConfig,
    check_fold_command,
    parse_vault_toml,
    read_local,
    with_local,
)
from gitvault.vault.store import Vault
from gitvault.vault.times import local_iso

Say = Callable[[str], None]
PROMPT_OVERHEAD = 2500
MIN_BATCH_CHARS = 2000  # a batch always has room for at least a few items
DAY = 86_400


@dataclass(frozen=True)
class Backlog:
    """Older items not folded yet: the vault range start..end (start None: from the root)."""

    start: str | None
    end: str
    items: int

    def as_meta(self) -> dict[str, object]:
        return {"from": self.start, "to": self.end, "items": self.items}


@dataclass
class Call:
    """One merger call of a plan: its batch, and what the digest records once it is done."""

    batch: list[items.Item]
    older: bool  # a backlog chunk: older history than the digest
    mark: str | None  # the watermark after it; None: not committable alone (joins the next)
    backlog: Backlog | None  # the backlog after it
    chars: int = 0  # characters it sends (estimate; 0 offline)
    allowed: bool = True  # within today's budget

    @property
    def span(self) -> str:
        days = sorted(datetime.fromtimestamp(i.when).strftime("%Y-%m-%d") for i in self.batch)
        return f"{days[0]} … {days[-1]}" if days else ""


@dataclass
class FoldResult:
    new_items: int = 0  # items waiting when the fold started (new since the watermark + backlog)
    folded: int = 0  # items folded into committed digests
    left: int = 0  # items still waiting afterwards
    past_horizon: int = 0
    batches: int = 0
    commits: list[str] = field(default_factory=list)
    chars_sent: int = 0
    dropped: list[str] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)
    skipped_reason: str | None = None  # why nothing, or not everything, was folded
    merger: str = ""
    fell_back: str | None = None  # the failure the builtin fallback stood in for
    buried: str | None = None  # nothing to fold, but digest lines citing forgotten items left
    calls: list[Call] = field(default_factory=list)  # the plan (dry run) or what ran
    verified: bool = False  # the committed digest's truth checks are recorded (verify.json)

    @property
    def dry_run_batches(self) -> list[tuple[int, int]]:
        return [(len(c.batch), c.chars) for c in self.calls]

    @property
    def merger_label(self) -> str:
        return "builtin (deterministic, not a model)" if self.merger == "builtin" else self.merger

    def summary(self) -> str:
        """What the fold did and what is left (the CLI and the background fold's log)."""
        if not self.commits:
            return f"fold: nothing done: {self.skipped_reason or 'nothing new'}"
        text = (
            f"folded {self.folded} of {self.new_items} items in {self.batches} batch(es) with "
            f"{self.merger_label} → {', '.join(c[:7] for c in self.commits)}"
        )
        if self.left:
            text += f"; {self.left} left"
        if self.past_horizon:
            text += f"; {self.past_horizon} past fold.horizon_days (never folded)"
        if self.fell_back:
            text += f" (fold.fallback: the model merger failed: {self.fell_back})"
        return text


@dataclass
class FoldOptions:
    merger: str | None = None
    model: str | None = None
    dry_run: bool = False
    rebuild: bool = False
    background: bool = False  # a background fold may fall back to the builtin merger


def load_config(vault: Vault) -> VaultConfig:
    """vault.toml as it applies on this clone (spending and running settings: local only)."""
    travelling = parse_vault_toml(vault.read_text(layout.CONFIG), vault.loc)
    return with_local(travelling, read_local(vault.loc.common_dir))


def current_digest(vault: Vault, config: VaultConfig) -> digest_mod.Digest | None:
    text = vault.read_text(layout.DIGEST)
    if text is None:
        return None
    cur = digest_mod.parse(text, config, strict=False)
    tombs = cites.forgotten(vault)  # lines citing a forgotten item never reach a merger
    if tombs:
        cur.categories = {n: cites.without_forgotten(ls, tombs) for n, ls in cur.categories.items()}
    origins = origin.load(vault.loc)
    if origins:  # lines of another clone's digest held for review (or rejected) are not folded on

        def kept(line: str) -> bool:
            found = origins.of_line(line, cites.cites_in(line))
            return found is None or not found.hidden

        cur.categories = {n: [ln for ln in ls if kept(ln)] for n, ls in cur.categories.items()}
    return cur


def _watermark(vault: Vault, cur: digest_mod.Digest | None, say: Say) -> str | None:
    if cur is None:
        return None
    mark = cur.meta.get("watermark")
    tip = vault.tip()
    if not isinstance(mark, str) or tip is None:
        return None
    if not vault.git.is_ancestor(mark, tip):
        say(f"warning: watermark {mark[:7]} is not in the vault's history; folding everything")
        return None
    return mark


def _backlog(
    vault: Vault, cur: digest_mod.Digest | None, mark: str | None, say: Say
) -> Backlog | None:
    raw = cur.meta.get("backlog") if cur is not None else None
    if not isinstance(raw, dict) or mark is None:
        return None
    start, end, count = raw.get("from"), raw.get("to"), raw.get("items")
    ok = (
        isinstance(end, str)
        and layout.is_full_sha(end)
        and vault.git.is_ancestor(end, mark)
        and (start is None or (isinstance(start, str) and vault.git.is_ancestor(start, end)))
    )
    if not ok:
        say("warning: the digest's backlog range is not in the vault's history; ignoring it")
        return None
    assert isinstance(end, str)
    return Backlog(start if isinstance(start, str) else None, end, int(count or 0))


class Mined:
    """The mined history one fold reads (gitvault.fold.history), opened on first use at the
    vault's tip, with the sessions that go with it; closed when the fold ends."""

    def __init__(
        self, loc: Location, vault: Vault, config: VaultConfig, *, rebuild: bool = False
    ) -> None:
        self.loc = loc
        self.vault = vault
        self.horizon = int(config.fold_value("horizon_days"))
        self.rebuild = rebuild  # `fold --rebuild`: the mined history is built anew too
        self._opened: tuple[history.View, list[Item]] | None = None

    def view(self) -> history.View:
        return self._open()[0]

    def sessions(self) -> list[Item]:
        return self._open()[1]

    def _open(self) -> tuple[history.View, list[Item]]:
        if self._opened is None:
            self._opened = history.open_at_tip(
                self.loc, self.vault, self.horizon, rebuild=self.rebuild
            )
        return self._opened

    def exists(self, kind: str, ident: str) -> bool:
        """Which citations exist: commit notes by (short) sha, sessions by slug."""
        if kind == "c":
            return self.view().has_note(ident)
        return layout.is_slug(ident) and self.vault.exists(layout.session_path(ident))

    def __enter__(self) -> Mined:
        return self

    def __exit__(self, *_: object) -> None:
        if self._opened is not None:
            self._opened[0].close()


# --------------------------------------------------------------------------- budget, state


def _budget_spent(loc: Location) -> int:
    return statedir.fold_budget(loc).today


def _write_state(loc: Location, **changes: Any) -> None:
    state = statedir.fold_state(loc)._replace(**changes, at=local_iso())
    statedir.write_fold_state(loc, state)


def fix_for(exc: GitvaultError) -> str:
    return exc.hint or "run `gitvault fold` to see the error; `--merger builtin` folds offline"


# --------------------------------------------------------------------------- the fold


def fold(loc: Location, opts: FoldOptions, say: Say = lambda _: None) -> FoldResult:
    vault = Vault(loc)
    tip = vault.check_format()
    # A hand-made vault commit that put an older digest back would have this fold read every
    # item since the old watermark again: repaired before anything is read (vault/repair).
    if opts.dry_run:
        found = repair.find(vault.git, loc.common_dir, tip)
        if found is not None:
            say(f"fold: {found.found}; the next fold repairs it first ({repair.ADVICE})")
    else:
        repaired = vault.repair()
        if repaired:
            say(f"fold: {repaired}")
    config = load_config(vault)
    name = mergers.check_name(opts.merger or str(config.fold_value("merger")))
    for line in config.held_back:
        say(line)
    if opts.dry_run:
        return _fold(loc, vault, config, name, opts, say)
    try:
        result = _fold(loc, vault, config, name, opts, say)
    except (MergerUnavailable, MergerFailed, FoldRejected) as exc:
        failure = statedir.FoldFailure(
            name, exc.message, fix_for(exc), isinstance(exc, MergerUnavailable)
        )
        fallback = str(config.fold_value("fallback"))
        can_fall_back = not isinstance(exc, FoldRejected) and name != "builtin"
        if opts.background and fallback == "builtin" and can_fall_back:
            say(f"fold: the {name} merger failed ({exc.message}); folding with the builtin merger")
            result = _fold(loc, vault, config, "builtin", replace(opts, merger="builtin"), say)
            result.fell_back = exc.message
            _write_state(loc, failure=failure, fallback="builtin", pending=result.left, reason=None)
            return result
        _write_state(loc, failure=failure, fallback=None, pending=_pending_now(vault, config))
        raise
    state: dict[str, Any] = {
        "merger": name,
        "pending": result.left,
        "reason": result.skipped_reason if result.left else None,
    }
    failed = statedir.fold_state(loc).failure
    if failed is None or failed.merger == name or result.commits:
        # The merger that failed works again, or another one folded: the digest is current,
        # so nothing is failing any more (whichever merger the user picked to get there).
        state.update(failure=None, fallback=None)
    _write_state(loc, **state)
    if result.commits:
        from gitvault.pathrecall.index import update_quietly

        update_quietly(loc, rebuild_here=False)  # the new digest's lines, for edit time
    from gitvault.materialize import ready

    ready.after_change(loc)  # the digest and the fold's state, for the next session start
    return result


def _pending_now(vault: Vault, config: VaultConfig) -> int:
    try:
        return pending(vault, config)[0]
    except GitvaultError:
        return 0


def pending(vault: Vault, config: VaultConfig | None = None) -> tuple[int, int]:
    """(items waiting for a fold, of which in the backlog): cheap, reads no item."""
    config = config or load_config(vault)
    cur = current_digest(vault, config)
    mark = _watermark(vault, cur, lambda _: None)
    backlog = _backlog(vault, cur, mark, lambda _: None)
    fresh = len(items.new_paths(vault, mark))
    old = backlog.items if backlog else 0
    return fresh + old, old


def _fold(
    loc: Location, vault: Vault, config: VaultConfig, name: str, opts: FoldOptions, say: Say
) -> FoldResult:
    result = FoldResult(merger=name)
    if opts.dry_run:
        return _plan_only(loc, vault, config, opts, result, say)
    with fold_lease(loc), Mined(loc, vault, config, rebuild=opts.rebuild) as mined:
        cur = None if opts.rebuild else current_digest(vault, config)
        mark = None if opts.rebuild else _watermark(vault, cur, say)
        backlog = None if opts.rebuild else _backlog(vault, cur, mark, say)
        read_tip, fresh, old = _waiting(vault, name, mined, mark, backlog)
        if cur is not None:  # what a forget took out of the digest with a forgotten item
            seen = {i.path for i in fresh + old}
            fresh = items.refold_items(vault, cur.meta, read_tip, mark, seen) + fresh
        fresh, old, accepted = _reviewed(loc, vault, fresh, old, read_tip)
        result.new_items = len(fresh) + len(old)
        if not result.new_items:
            result.skipped_reason = "nothing new since the last fold"
            result.buried = forget.bury_forgotten(vault)  # tombstones a sync brought
            return result
        minimum = int(config.fold_value("min_new_items"))
        if not opts.rebuild and result.new_items < minimum:
            result.skipped_reason = (
                f"{result.new_items} new item(s); fold.min_new_items is {minimum}"
            )
            result.left = result.new_items
            return result
        # Only now, with work to do: a missing CLI fails here, before anything is written.
        if name == "command":  # vault.toml's fold.command runs once confirmed here
            check_fold_command(loc.common_dir, str(config.fold_value("command")), config)
        merger = mergers.make(name, config, opts.model)
        base = cur if cur is not None else digest_mod.empty(config)
        plan = _plan(vault, config, merger, base, mark, backlog, fresh, old, read_tip, loc)
        result.past_horizon = plan.past_horizon
        _run(vault, loc, config, merger, base, plan, result, mined, say)
        if accepted and result.commits:
            origin.folded(loc, accepted)
    return result


def _waiting(
    vault: Vault, name: str, mined: Mined, mark: str | None, backlog: Backlog | None
) -> tuple[str, list[Item], list[Item]]:
    """(the read tip, the items new since the watermark, the backlog's items). Notes landing
    during the fold wait for the next one."""
    if name == mergers.BUILTIN:
        # It covers everything up to the read tip from the mined history: its items are
        # counted, never read (the mined history reads each new note once).
        view = mined.view()
        since = backlog.start if backlog else mark
        return view.mark, items.unread_items(vault, since, view.mark, view.dates), []
    read_tip = vault.require_tip()
    fresh = items.new_items(vault, mark, read_tip)
    old = items.new_items(vault, backlog.start, backlog.end) if backlog else []
    return read_tip, fresh, old


def _shown(loc: Location, found: list[Item], origins: origin.Origins | None = None) -> list[Item]:
    """Items without those of other clones held for review or rejected."""
    origins = origins if origins is not None else origin.load(loc)
    if not origins:
        return found
    out = []
    for item in found:
        came = origins.of(item.path)
        if came is None or not came.hidden:
            out.append(item)
    return out


def _reviewed(
    loc: Location, vault: Vault, fresh: list[Item], old: list[Item], tip: str
) -> tuple[list[Item], list[Item], list[str]]:
    """Items held for review (or rejected) stay out of the fold; items accepted after a fold
    passed them by come in now. Returns (fresh, old, the accepted paths read)."""
    origins = origin.load(loc)
    if not origins:
        return fresh, old, []
    fresh, old = _shown(loc, fresh, origins), _shown(loc, old, origins)
    have = {i.path for i in fresh + old}
    waiting = [p for p in origins.waiting_for_fold() if p not in have]
    for path in waiting:
        item = items.read_item(vault, path, tip)
        if item is not None:
            fresh.append(item)
    return fresh, old, waiting


@dataclass
class Plan:
    calls: list[Call]
    past_horizon: int = 0
    total: int = 0  # items the plan could fold


def _cutoff(config: VaultConfig, everything: list[items.Item]) -> int | None:
    days = int(config.fold_value("horizon_days"))
    if not days or not everything:
        return None
    return max(i.when for i in everything) - days * DAY


def _plan(
    vault: Vault,
    config: VaultConfig,
    merger: Merger,
    base: digest_mod.Digest,
    mark: str | None,
    backlog: Backlog | None,
    fresh: list[items.Item],
    old: list[items.Item],
    read_tip: str,
    loc: Location | None,
) -> Plan:
    cutoff = _cutoff(config, fresh + old)
    keep = (lambda i: i.when >= cutoff) if cutoff is not None else (lambda i: True)
    past = sum(1 for i in fresh + old if not keep(i))
    if not merger.spends_budget:
        # Offline: one call covers everything up to the read tip; no backlog is left.
        # (only items past the horizon: an empty call still records that they are covered)
        batch = [i for i in old + fresh if keep(i)]
        return Plan([Call(batch, False, read_tip, None)], past, len(batch))
    budget = _batch_budget(config, base)
    day_cap = int(config.fold_value("max_chars_per_day"))
    left_today = max(day_cap - _budget_spent(loc), 0) if (day_cap and loc) else None
    calls: list[Call] = []
    converted = False
    fresh_kept = [i for i in fresh if keep(i)]
    estimate = sum(merger.prompt_chars(base, b, config) for b in items.batches(fresh_kept, budget))
    recent_first = bool(config.fold_value("recent_first"))
    if (
        backlog is None
        and recent_first
        and left_today is not None
        and estimate > left_today
        and len(fresh_kept) > 1
    ):
        # First use: everything new becomes the backlog, folded from its newest end.
        backlog = Backlog(mark, read_tip, len(fresh_kept))
        old, fresh, fresh_kept = fresh, [], []
        converted = True
    pending: list[items.Item] = []
    planned = list(items.batches(fresh_kept, budget))
    for index, batch in enumerate(planned):
        last = index == len(planned) - 1
        pending += batch
        # The watermark must cover exactly what was read: the tip after the last batch,
        # otherwise the last item's commit when everything read so far is its ancestor.
        candidate = read_tip if last else batch[-1].commit
        ok = last or _covers(vault, candidate, pending)
        calls.append(Call(batch, False, candidate if ok else None, backlog))
        if ok:
            pending = []
    if not planned and fresh and not fresh_kept:
        calls.append(Call([], False, read_tip, backlog))  # only items past the horizon
    if backlog is not None:
        # mark..read_tip holds no unfolded item once the calls above ran (or when there were
        # none), so every backlog call records the read tip as the watermark
        chunks = _backlog_calls(vault, backlog, old, keep, budget, read_tip)
        if converted and chunks:
            chunks[0].older = False  # the newest history: nothing in the digest is newer
        calls += chunks
    total = sum(len(c.batch) for c in calls)
    for call in calls:
        call.chars = merger.prompt_chars(base, call.batch, config) if call.batch else 0
    if left_today is not None:
        room = left_today
        for call in calls:
            call.allowed = call.chars <= room
            if not call.allowed:
                room = -1  # calls run in order: nothing after a refused one runs today
            else:
                room -= call.chars
    return Plan(calls, past, total)


def _backlog_calls(
    vault: Vault,
    backlog: Backlog,
    old: list[items.Item],
    keep: Callable[[items.Item], bool],
    budget: int,
    mark: str,
) -> list[Call]:
    """The backlog from its newest end: each call takes the newest chunk that fits a call,
    cut at a commit boundary the vault range can express (everything below it, nothing
    above), and records the backlog shrunk to what is below it."""
    calls: list[Call] = []
    kept_from = next((k for k, i in enumerate(old) if keep(i)), len(old))
    top = len(old)
    while top > kept_from:
        size, low = 0, top
        while low > kept_from and (low == top or size + old[low - 1].size <= budget):
            low -= 1
            size += old[low].size
        low = _valid_cut(vault, backlog.start, old, low, kept_from)
        chunk = [i for i in old[low:top] if keep(i)]
        remaining = None
        if low > kept_from:
            waiting = sum(1 for i in old[:low] if keep(i))
            remaining = Backlog(backlog.start, old[low - 1].commit, waiting)
        if chunk:
            calls.append(Call(chunk, True, mark, remaining))
        top = low
    return calls


def _valid_cut(vault: Vault, start: str | None, old: list[items.Item], low: int, floor: int) -> int:
    """The highest cut at or below `low` such that the range start..old[cut-1].commit holds
    exactly old[:cut]; `floor` (everything below is past the horizon) or 0 when none is."""
    while low > floor:
        end = old[low - 1].commit
        if old[low].commit != end:
            inside = {c.sha for c in vault.git.walk(end, start)}
            if all(i.commit in inside for i in old[:low]) and not any(
                i.commit in inside for i in old[low:]
            ):
                return low
        low -= 1
    return floor


def _run(
    vault: Vault,
    loc: Location,
    config: VaultConfig,
    merger: Merger,
    base: digest_mod.Digest,
    plan: Plan,
    result: FoldResult,
    mined: Mined,
    say: Say,
) -> None:
    cwd = loc.workdir or loc.common_dir
    ground = truth.Ground(vault, cwd, mined.view, mined.exists)
    plans = config.categories[-1].name if config.categories else None
    checks: list[truth.LineCheck] | None = None  # the truth checks of `base`, once screened

    day_cap = int(config.fold_value("max_chars_per_day"))
    pending: list[items.Item] = []
    result.calls = plan.calls
    for call in plan.calls:
        if merger.spends_budget and day_cap and call.batch:
            spent = _budget_spent(loc)
            estimate = merger.prompt_chars(base, call.batch, config)
            if spent + estimate > day_cap:
                result.skipped_reason = (
                    f"today's fold budget is spent ({spent:,} of {day_cap:,} characters; "
                    f"the next call needs ~{estimate:,}); the rest folds tomorrow"
                )
                break
        if call.batch:
            ctx = MergeContext(
                exists=mined.exists,
                sessions=mined.sessions,
                mined=mined.view,
                older=call.older,
                ground=lambda: ground,
            )
            new, sent = merger.merge(base, call.batch, config, ctx)
            result.chars_sent += sent
            # Whichever merger wrote it (the builtin one copies its items' words, a model may
            # echo a secret an older vault still holds), no secret reaches the digest.
            new.categories = {n: _scrubbed(ls) for n, ls in new.categories.items()}
            # Whichever merger wrote it, a line the truth model flags is never committed.
            checks, dropped = truth.screen(new.categories, ground, plans)
            new.dropped += dropped
            if merger.spends_budget:
                statedir.add_fold_spend(loc, sent)
            result.batches += 1
            result.dropped += new.dropped
            result.cut += new.cut
            if not new.facts():
                raise FoldRejected(
                    f"the {merger.name} merger's digest holds no facts although "
                    f"{len(call.batch)} item(s) were read; the old digest is kept",
                    hint="run `gitvault fold --dry-run` to see the items; "
                    "`--merger builtin` folds offline",
                )
            base = new
        pending += call.batch
        if call.mark is None:
            continue
        sha = _commit_digest(
            vault, base, call.mark, merger, len(pending), call.backlog, plan.past_horizon
        )
        result.commits.append(sha)
        result.folded += len(pending)
        if checks is not None:
            _record_checks(loc, base, checks)
            result.verified = True
        label = " (older history)" if call.older else ""
        say(
            f"fold: batch {result.batches}: {len(pending)} items{label} → {sha[:7]}"
            + (f"; backlog {call.backlog.items} items" if call.backlog else "")
        )
        pending = []
        base = digest_mod.parse(base.render(), config, strict=False)
    result.left = max(plan.total - result.folded, 0)


def _scrubbed(lines: list[str]) -> list[str]:
    return [scrub_secrets(line)[0] for line in lines]


def _record_checks(
    loc: Location, committed: digest_mod.Digest, checks: list[truth.LineCheck]
) -> None:
    """What verify would record for the digest just committed (the fold ran the same checks),
    so recall and the agent files need not check it again."""
    blob = truth.blob_id(committed.render().encode())
    statedir.save_verify(loc, truth.results_json(blob, checks))


def _batch_budget(config: VaultConfig, base: digest_mod.Digest) -> int:
    """Characters of items per model call. Every call carries the rules and the current digest,
    and the digest grows as batches fold (up to its cap), so reserve room for a full digest:
    otherwise later calls would exceed fold.max_chars_per_call."""
    reserved = max(len(base.body()), config.digest_max_chars) + PROMPT_OVERHEAD
    return max(int(config.fold_value("max_chars_per_call")) - reserved, MIN_BATCH_CHARS)


def _covers(vault: Vault, mark: str, read: list[items.Item]) -> bool:
    return all(vault.git.is_ancestor(item.commit, mark) for item in read)


def _commit_digest(
    vault: Vault,
    new: digest_mod.Digest,
    mark: str,
    merger: Merger,
    batch_items: int,
    backlog: Backlog | None,
    past_horizon: int,
) -> str:
    meta: dict[str, object] = {
        "kind": "digest",
        "watermark": mark,
        "folded_at": local_iso(),
        "merger": merger.name,
        "model": merger.model,
        "items": new.counts(),
        "folded_items": batch_items,
    }
    if backlog is not None:
        meta["backlog"] = backlog.as_meta()
    if past_horizon:
        meta["past_horizon"] = past_horizon
    base_merger = new.meta.get("base_merger")
    if isinstance(base_merger, str) and base_merger:
        meta["base_merger"] = base_merger
    new.meta = meta
    from gitvault.vault import schemas

    schemas.validate("digest.schema.json", new.meta, "digest front matter")
    where = f" (backlog {backlog.items})" if backlog else ""
    return vault.commit(
        {layout.DIGEST: new.render().encode()},
        f"fold {batch_items} items → watermark {mark[:7]}{where} ({merger.name})",
    )


def _plan_only(
    loc: Location,
    vault: Vault,
    config: VaultConfig,
    opts: FoldOptions,
    result: FoldResult,
    say: Say,
) -> FoldResult:
    cur = None if opts.rebuild else current_digest(vault, config)
    mark = None if opts.rebuild else _watermark(vault, cur, say)
    backlog = None if opts.rebuild else _backlog(vault, cur, mark, say)
    if vault.tip() is None:
        result.skipped_reason = "nothing new since the last fold"
        return result
    with Mined(loc, vault, config) as mined:
        tip, fresh, old = _waiting(vault, result.merger, mined, mark, backlog)
    if cur is not None:
        seen = {i.path for i in fresh + old}
        fresh = items.refold_items(vault, cur.meta, tip, mark, seen) + fresh
    result.new_items = len(fresh) + len(old)
    if not result.new_items:
        result.skipped_reason = "nothing new since the last fold"
        return result
    base = cur if cur is not None else digest_mod.empty(config)
    merger = mergers.make(result.merger, config, opts.model, check=False)
    plan = _plan(vault, config, merger, base, mark, backlog, fresh, old, tip, loc)
    result.calls = [c for c in plan.calls if c.batch]
    result.past_horizon = plan.past_horizon
    result.chars_sent = sum(c.chars for c in result.calls)
    result.folded = sum(len(c.batch) for c in result.calls if c.allowed)
    result.left = result.new_items - result.folded - result.past_horizon
    return result


def describe(loc: Location, vault: Vault) -> dict[str, Any]:
    """For `status`: items waiting for a fold and why, and the last failure with its fix."""
    config = load_config(vault)
    waiting, in_backlog = pending(vault, config)
    state = statedir.fold_state(loc)
    configured = str(config.fold_value("merger"))
    failure = state.failure_of(configured)
    why: str | None = None
    stuck = False  # waiting for a reason, not just for the next fold
    minimum = int(config.fold_value("min_new_items"))
    if waiting:
        if failure and not state.fallback:
            why = f"the last fold failed: {failure.message}"
            stuck = True
        elif state.reason and state.pending:
            why = state.reason
            stuck = "budget" in why
        elif waiting < minimum:
            why = f"fewer than fold.min_new_items ({minimum})"
        elif in_backlog:
            why = "older history folds newest-first within fold.max_chars_per_day"
            stuck = True
        else:
            why = "not folded yet (a session's end folds in the background; or `gitvault fold`)"
    return {
        "pending": waiting,
        "backlog": in_backlog,
        "why": why,
        "stuck": stuck,
        "failure": failure.as_json() if failure else None,
        "fallback": state.fallback if failure else None,
        "merger": configured,
    }
