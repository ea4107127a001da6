"""The builtin merger: deterministic and offline. A keyed, newest-wins merge of session sections
and note subjects into the six categories, under the same caps as a model fold.

It cannot consolidate meaning the way a model does; it sorts and deduplicates. Digests it
writes say `merger: builtin` so nobody mistakes them for a model's work.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gitvault.fold import digest as digest_mod
from gitvault.fold.digest import Digest, citations
from gitvault.fold.items import Item
from gitvault.memory import sections
from gitvault.vault.config import VaultConfig

# Session sections → category (by position in the configured list, so renamed caps still map).
_SECTION_TO_SLOT = {
    "architecture": 0,
    "design": 0,
    "key decisions": 1,
    "decisions": 1,
    "conventions": 2,
    "gotchas": 3,
    "pitfalls": 3,
    "summary": 4,
    "state": 4,
    "status": 4,
    "next steps": 5,
}
# Conventional-commit types ("feat(parser)!: …"); a fix or revert is also recognised by its
# first word. Anything else describes the current state.
_CC = r"(?:\([^)]*\))?!?:"
_NOTE_PREFIX_TO_SLOT = (
    (re.compile(rf"^(?:(?:fix|bugfix|hotfix|revert){_CC}|(?:fix|fixes|fixed|revert)\b)", re.I), 3),
    (re.compile(rf"^(?:docs?|style|lint|test|tests|ci|build|chore){_CC}", re.I), 2),
    (re.compile(rf"^(?:feat|refactor|perf|arch){_CC}", re.I), 0),
)
_FACT_CHARS = 160


def _key(text: str) -> str:
    """Facts with the same key are the same fact; the newer one wins."""
    words = re.sub(r"[^a-z0-9 ]", " ", text.lower()).split()
    return " ".join(words[:8])


def _line(text: str, cite: str) -> str:
    text = re.sub(r"\s+", " ", text).strip().rstrip(".")
    text = re.sub(r"\(([cs]:[^)]*)\)\s*$", "", text).strip()  # never copy foreign citations
    if len(text) > _FACT_CHARS:
        text = text[: _FACT_CHARS - 1].rstrip() + "…"
    return f"- {text} ({cite})"


def _put(bucket: dict[str, str], key: str, line: str) -> None:
    bucket.pop(key, None)  # re-insert so the newest version sits last
    bucket[key] = line


def _note_slot(subject: str) -> int:
    for pattern, slot in _NOTE_PREFIX_TO_SLOT:
        if pattern.search(subject):
            return slot
    return 4  # State: what changed recently


def builtin_merge(current: Digest, items: list[Item], config: VaultConfig) -> Digest:
    names = [c.name for c in config.categories]
    # keyed facts per category, oldest first; current digest lines come before new items
    facts: list[dict[str, str]] = [{} for _ in names]
    for slot, name in enumerate(names):
        for line in current.categories.get(name, []):
            if line.startswith("- [… "):
                continue
            body = re.sub(r"\s*\([^)]*\)\s*$", "", line[2:])
            _put(facts[slot], _key(body), line)
    next_steps_replaced = False
    for item in items:  # oldest first, so later items overwrite earlier keys: newest wins
        if item.kind == "session":
            found = sections.split_sections(item.text)
            for title, text in found.items():
                found_slot = _SECTION_TO_SLOT.get(title)
                if found_slot is None:
                    continue
                slot = found_slot
                entries = sections.bullets(text)
                # The newest session's next steps supersede older ones entirely.
                if slot == 5 and (not next_steps_replaced or entries):
                    facts[5] = {}
                    next_steps_replaced = True
                for entry in entries:
                    _put(facts[slot], _key(entry), _line(entry, item.cite))
        else:
            subject = item.text.split("] ", 1)[-1].split("\n", 1)[0]
            slot = _note_slot(subject)
            _put(facts[slot], _key(subject), _line(subject, item.cite))
    out: dict[str, list[str]] = {}
    for slot, name in enumerate(names):
        lines = list(facts[slot].values())
        lines.reverse()  # newest first, so a cap cuts the oldest
        out[name] = [ln for ln in lines if citations(ln)]
    return Digest(out)


class BuiltinMerger:
    """The builtin merger behind the Merger interface: no model, no budget."""

    name = "builtin"
    model: str | None = None
    spends_budget = False

    def prompt_chars(self, current: Digest, batch: list[Item], config: VaultConfig) -> int:
        return 0

    def merge(
        self,
        current: Digest,
        batch: list[Item],
        config: VaultConfig,
        exists: Callable[[str, str], bool],
    ) -> tuple[Digest, int]:
        new = builtin_merge(current, batch, config)
        digest_mod.check_citations(new, exists)
        digest_mod.enforce_caps(new, config)
        return new, 0
