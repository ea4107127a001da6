"""`gitvault fold` (REWRITE): merge what the vault gained since the watermark into _master.md.

The watermark is a vault commit SHA in the digest's front matter; what is new is the git range
watermark..vault. Large backlogs fold in batches, each its own commit with its own watermark,
so a fold killed at any instant resumes where the last committed batch ended. The model only
merges meaning; categories, caps, citations and the watermark are enforced here.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import pygit2

from gitvault import digest as digest_mod
from gitvault import items, mergers, prompt
from gitvault.backfill import noted_shas
from gitvault.builtin_merge import builtin_merge
from gitvault.config import VaultConfig, parse_vault_toml
from gitvault.errors import FoldRejected, GitvaultError
from gitvault.lease import fold_lease
from gitvault.locking import atomic_write
from gitvault.resolve import Location
from gitvault.sessions import SESSIONS_DIR
from gitvault.store import Vault, state_dir

Say = Callable[[str], None]
PROMPT_OVERHEAD = 2500
MIN_BATCH_CHARS = 2000  # a batch always has room for at least a few items
BUDGET_FILE = "fold-budget.json"


@dataclass
class FoldResult:
    new_items: int = 0
    batches: int = 0
    commits: list[str] = field(default_factory=list)
    chars_sent: int = 0
    dropped: list[str] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)
    skipped_reason: str | None = None
    merger: str = ""
    dry_run_batches: list[tuple[int, int]] = field(default_factory=list)  # (items, chars)


@dataclass
class FoldOptions:
    merger: str | None = None
    model: str | None = None
    dry_run: bool = False
    rebuild: bool = False


def load_config(vault: Vault) -> VaultConfig:
    return parse_vault_toml(vault.read_text("vault.toml"))


def current_digest(vault: Vault, config: VaultConfig) -> digest_mod.Digest | None:
    text = vault.read_text(digest_mod.PATH)
    return None if text is None else digest_mod.parse(text, config, strict=False)


def _watermark(vault: Vault, cur: digest_mod.Digest | None, say: Say) -> str | None:
    if cur is None:
        return None
    mark = cur.meta.get("watermark")
    tip = vault.tip()
    if not isinstance(mark, str) or tip is None:
        return None
    try:
        ok = mark == tip or vault.repo.descendant_of(pygit2.Oid(hex=tip), pygit2.Oid(hex=mark))
    except (ValueError, KeyError, pygit2.GitError):
        ok = False
    if not ok:
        say(f"warning: watermark {mark[:7]} is not in the vault's history; folding everything")
        return None
    return mark


class SourceIndex:
    """Which citations exist: commit notes by short sha, sessions by slug."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.prefixes = {sha[:7] for sha in noted_shas(vault)}
        self.full = noted_shas(vault)

    def exists(self, kind: str, ident: str) -> bool:
        if kind == "c":
            ident = ident.lower()
            if len(ident) < 7:
                return False
            if len(ident) == 7:
                return ident in self.prefixes
            return any(sha.startswith(ident) for sha in self.full if sha[:7] == ident[:7])
        return self.vault.exists(f"{SESSIONS_DIR}/{ident}.md")


def _budget_spent(loc: Location) -> int:
    try:
        data = json.loads((loc.state_dir / BUDGET_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    return int(data.get("chars", 0)) if data.get("date") == time.strftime("%Y-%m-%d") else 0


def _budget_add(loc: Location, chars: int) -> None:
    spent = _budget_spent(loc) + chars
    payload = {"date": time.strftime("%Y-%m-%d"), "chars": spent}
    atomic_write(state_dir(loc) / BUDGET_FILE, json.dumps(payload).encode())


def _make_merger(name: str, config: VaultConfig, model: str | None) -> mergers.ModelMerger | None:
    timeout = float(config.fold_value("timeout_seconds"))
    if name == "builtin":
        return None
    if name == "claude":
        return mergers.claude_merger(
            model or config.fold_value("model"),
            timeout,
            use_api_key=bool(config.fold_value("use_api_key")),
        )
    if name == "command":
        return mergers.command_merger(str(config.fold_value("command")), timeout)
    raise GitvaultError(f"unknown merger {name!r}", hint="use claude, command or builtin")


def _merge_batch(
    merger: mergers.ModelMerger | None,
    cur: digest_mod.Digest,
    batch: list[items.Item],
    config: VaultConfig,
    sources: SourceIndex,
    result: FoldResult,
) -> digest_mod.Digest:
    if merger is None:
        new = builtin_merge(cur, batch, config)
    else:
        text = prompt.merge_prompt(
            cur.body() if any(cur.categories.values()) else None, batch, config
        )
        result.chars_sent += len(text)
        new = digest_mod.parse(merger.complete(text), config, strict=True)
    digest_mod.check_citations(new, sources.exists)
    over = digest_mod.over_caps(new, config)
    if over and merger is not None:
        # Ask once to compress; a bad answer here keeps the first one (then cut in code).
        text = prompt.compress_prompt(new.body(), over, config)
        result.chars_sent += len(text)
        try:
            again = digest_mod.parse(merger.complete(text), config, strict=True)
            digest_mod.check_citations(again, sources.exists)
            again.dropped = new.dropped + again.dropped
            new = again
        except FoldRejected:
            pass
    digest_mod.enforce_caps(new, config)
    return new


def fold(loc: Location, opts: FoldOptions, say: Say = lambda _: None) -> FoldResult:
    vault = Vault(loc)
    vault.check_format()
    config = load_config(vault)
    name = opts.merger or str(config.fold_value("merger"))
    if name not in mergers.NAMES:
        raise GitvaultError(f"unknown merger {name!r}", hint="use claude, command or builtin")
    result = FoldResult(merger=name)
    if opts.dry_run:
        return _plan_only(vault, config, opts, result, say)
    with fold_lease(loc):
        cur = None if opts.rebuild else current_digest(vault, config)
        mark = None if opts.rebuild else _watermark(vault, cur, say)
        read_tip = vault.require_tip()  # notes landing during the fold wait for the next one
        new_items = items.new_items(vault, mark, read_tip)
        result.new_items = len(new_items)
        if not new_items:
            result.skipped_reason = "nothing new since the last fold"
            return result
        minimum = int(config.fold_value("min_new_items"))
        if not opts.rebuild and len(new_items) < minimum:
            result.skipped_reason = f"{len(new_items)} new item(s); fold.min_new_items is {minimum}"
            return result
        # Only now, with work to do: a missing CLI fails here, before anything is written.
        merger = _make_merger(name, config, opts.model)
        sources = SourceIndex(vault)
        base = cur if cur is not None else digest_mod.empty(config)
        budget = _batch_budget(config, base)
        day_cap = int(config.fold_value("max_chars_per_day"))
        done: list[items.Item] = []
        pending: list[items.Item] = []
        planned = list(items.batches(new_items, budget))
        for index, batch in enumerate(planned):
            last = index == len(planned) - 1
            spent = _budget_spent(loc)
            estimate = len(prompt.merge_prompt(base.body(), batch, config))
            if merger is not None and day_cap and spent + estimate > day_cap:
                result.skipped_reason = (
                    f"today's fold budget is spent ({spent:,} of {day_cap:,} characters; "
                    f"the next call needs ~{estimate:,})"
                )
                break
            before = result.chars_sent
            base = _merge_batch(merger, base, batch, config, sources, result)
            if merger is not None:
                _budget_add(loc, result.chars_sent - before)
            result.batches += 1
            result.dropped += base.dropped
            result.cut += base.cut
            pending += batch
            # The watermark must cover exactly what was read: the tip after the last batch,
            # otherwise the last item's commit when everything read so far is its ancestor.
            mark_commit = read_tip if last else batch[-1].commit
            if not last and not _covers(vault, mark_commit, pending):
                continue
            done += pending
            sha = _commit_digest(
                vault,
                base,
                mark_commit,
                name,
                opts.model or (str(config.fold_value("model")) if name == "claude" else None),
                len(pending),
                len(done),
            )
            result.commits.append(sha)
            say(f"fold: batch {result.batches}/{len(planned)}: {len(pending)} items → {sha[:7]}")
            pending = []
            base = digest_mod.parse(base.render(), config, strict=False)
    return result


def _batch_budget(config: VaultConfig, base: digest_mod.Digest) -> int:
    """Characters of items per model call. Every call carries the rules and the current digest,
    and the digest grows as batches fold (up to its cap), so reserve room for a full digest:
    otherwise later calls would exceed fold.max_chars_per_call."""
    reserved = max(len(base.body()), config.digest_max_chars) + PROMPT_OVERHEAD
    return max(int(config.fold_value("max_chars_per_call")) - reserved, MIN_BATCH_CHARS)


def _covers(vault: Vault, mark: str, read: list[items.Item]) -> bool:
    target = pygit2.Oid(hex=mark)
    for item in read:
        if item.commit != mark and not vault.repo.descendant_of(
            target, pygit2.Oid(hex=item.commit)
        ):
            return False
    return True


def _commit_digest(
    vault: Vault,
    new: digest_mod.Digest,
    mark: str,
    merger: str,
    model: str | None,
    batch_items: int,
    total: int,
) -> str:
    new.meta = {
        "kind": "digest",
        "watermark": mark,
        "folded_at": datetime.now().astimezone().replace(microsecond=0).isoformat(),
        "merger": merger,
        "model": model,
        "items": new.counts(),
        "folded_items": batch_items,
    }
    from gitvault import schemas

    schemas.validate("digest.schema.json", new.meta, "digest front matter")
    return vault.commit(
        {digest_mod.PATH: new.render().encode()},
        f"fold {batch_items} items → watermark {mark[:7]} ({merger})",
    )


def _plan_only(
    vault: Vault, config: VaultConfig, opts: FoldOptions, result: FoldResult, say: Say
) -> FoldResult:
    cur = None if opts.rebuild else current_digest(vault, config)
    mark = None if opts.rebuild else _watermark(vault, cur, say)
    new_items = items.new_items(vault, mark)
    result.new_items = len(new_items)
    base = cur if cur is not None else digest_mod.empty(config)
    for batch in items.batches(new_items, _batch_budget(config, base)):
        current = base.body() if any(base.categories.values()) else None  # as _merge_batch
        chars = len(prompt.merge_prompt(current, batch, config))
        result.dry_run_batches.append((len(batch), chars))
        result.chars_sent += chars
    if not new_items:
        result.skipped_reason = "nothing new since the last fold"
    return result
