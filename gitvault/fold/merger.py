"""What a merger is: the one interface every merger implements (Merger), what it may consult
besides the digest and the batch (MergeContext), and how it fails. The mergers themselves and
their registry are gitvault.fold.mergers; the builtin one is gitvault.fold.builtin.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from gitvault.errors import GitvaultError
from gitvault.fold import digest as digest_mod
from gitvault.fold.history import View
from gitvault.fold.items import Item
from gitvault.fold.truth import Ground
from gitvault.vault.config import VaultConfig

Exists = Callable[[str, str], bool]  # (kind, id) → whether a citation resolves


class MergerUnavailable(GitvaultError):
    pass


class MergerFailed(GitvaultError):
    pass


def _no_sessions() -> list[Item]:
    return []


def _no_mined() -> View | None:
    return None


def _no_ground() -> Ground | None:
    return None


@dataclass
class MergeContext:
    """What a merger may consult besides the current digest and the batch: which citations
    resolve, and (for the builtin merger, which mines history) what the digest will cover
    once this batch is folded — every session, and the mined history of the notes
    (gitvault.fold.history) — and the repository as it is now (the truth model's ground:
    HEAD's files, tags, reverts). `older`: the batch is older history than the digest's facts
    (a recent-first fold working through its backlog), so on a conflict the digest wins."""

    exists: Exists
    sessions: Callable[[], list[Item]] = field(default=_no_sessions)
    mined: Callable[[], View | None] = field(default=_no_mined)
    older: bool = False
    ground: Callable[[], Ground | None] = field(default=_no_ground)


class Merger(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str | None: ...

    @property
    def spends_budget(self) -> bool:
        """A model call: counted against fold.max_chars_per_day."""
        ...

    def prompt_chars(
        self, current: digest_mod.Digest, batch: list[Item], config: VaultConfig
    ) -> int:
        """Characters the merge of this batch will send (0 for an offline merger)."""
        ...

    def merge(
        self,
        current: digest_mod.Digest,
        batch: list[Item],
        config: VaultConfig,
        ctx: MergeContext,
    ) -> tuple[digest_mod.Digest, int]:
        """The new digest (citations checked, caps enforced) and the characters sent."""
        ...
