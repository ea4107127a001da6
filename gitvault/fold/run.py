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

from gitvault.fold import digest as digest_mod
from gitvault.fold import items, mergers
from gitvault.fold.lease import fold_lease
from gitvault.notes.index import noted_shas
from gitvault.resolve import Location
from gitvault.vault import layout
from gitvault.vault.config import VaultConfig, parse_vault_toml
from gitvault.vault.locking import atomic_write
from gitvault.vault.store import Vault, state_dir

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

    @property
    def merger_label(self) -> str:
        return "builtin (deterministic, not a model)" if self.merger == "builtin" else self.merger

    def summary(self) -> str:
        """One line saying what the fold did (the CLI and the background fold's log)."""
        if not self.commits:
            return f"fold: nothing done: {self.skipped_reason or 'nothing new'}"
        return (
            f"folded {self.new_items} items in {self.batches} batch(es) with "
            f"{self.merger_label} → {', '.join(c[:7] for c in self.commits)}"
        )


@dataclass
class FoldOptions:
    merger: str | None = None
    model: str | None = None
    dry_run: bool = False
    rebuild: bool = False


def load_config(vault: Vault) -> VaultConfig:
    return parse_vault_toml(vault.read_text(layout.CONFIG))


def current_digest(vault: Vault, config: VaultConfig) -> digest_mod.Digest | None:
    text = vault.read_text(layout.DIGEST)
    return None if text is None else digest_mod.parse(text, config, strict=False)


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


class SourceIndex:
    """Which citations exist: commit notes by short sha, sessions by slug."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.full = noted_shas(vault)
        self.prefixes = {sha[:7] for sha in self.full}

    def exists(self, kind: str, ident: str) -> bool:
        if kind == "c":
            ident = ident.lower()
            if len(ident) < 7:
                return False
            if len(ident) == 7:
                return ident in self.prefixes
            return any(sha.startswith(ident) for sha in self.full if sha[:7] == ident[:7])
        return layout.is_slug(ident) and self.vault.exists(layout.session_path(ident))


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


def fold(loc: Location, opts: FoldOptions, say: Say = lambda _: None) -> FoldResult:
    vault = Vault(loc)
    vault.check_format()
    config = load_config(vault)
    name = mergers.check_name(opts.merger or str(config.fold_value("merger")))
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
        merger = mergers.make(name, config, opts.model)
        sources = SourceIndex(vault)
        base = cur if cur is not None else digest_mod.empty(config)
        budget = _batch_budget(config, base)
        day_cap = int(config.fold_value("max_chars_per_day"))
        done: list[items.Item] = []
        pending: list[items.Item] = []
        planned = list(items.batches(new_items, budget))
        for index, batch in enumerate(planned):
            last = index == len(planned) - 1
            if merger.spends_budget and day_cap:
                spent = _budget_spent(loc)
                estimate = merger.prompt_chars(base, batch, config)
                if spent + estimate > day_cap:
                    result.skipped_reason = (
                        f"today's fold budget is spent ({spent:,} of {day_cap:,} characters; "
                        f"the next call needs ~{estimate:,})"
                    )
                    break
            base, sent = merger.merge(base, batch, config, sources.exists)
            result.chars_sent += sent
            if merger.spends_budget:
                _budget_add(loc, sent)
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
            sha = _commit_digest(vault, base, mark_commit, merger, len(pending))
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
    return all(vault.git.is_ancestor(item.commit, mark) for item in read)


def _commit_digest(
    vault: Vault, new: digest_mod.Digest, mark: str, merger: mergers.Merger, batch_items: int
) -> str:
    new.meta = {
        "kind": "digest",
        "watermark": mark,
        "folded_at": datetime.now().astimezone().replace(microsecond=0).isoformat(),
        "merger": merger.name,
        "model": merger.model,
        "items": new.counts(),
        "folded_items": batch_items,
    }
    from gitvault.vault import schemas

    schemas.validate("digest.schema.json", new.meta, "digest front matter")
    return vault.commit(
        {layout.DIGEST: new.render().encode()},
        f"fold {batch_items} items → watermark {mark[:7]} ({merger.name})",
    )


def _plan_only(
    vault: Vault, config: VaultConfig, opts: FoldOptions, result: FoldResult, say: Say
) -> FoldResult:
    cur = None if opts.rebuild else current_digest(vault, config)
    mark = None if opts.rebuild else _watermark(vault, cur, say)
    new_items = items.new_items(vault, mark)
    result.new_items = len(new_items)
    base = cur if cur is not None else digest_mod.empty(config)
    merger = mergers.make(result.merger, config, opts.model, check=False)
    for batch in items.batches(new_items, _batch_budget(config, base)):
        chars = merger.prompt_chars(base, batch, config)
        result.dry_run_batches.append((len(batch), chars))
        result.chars_sent += chars
    if not new_items:
        result.skipped_reason = "nothing new since the last fold"
    return result
