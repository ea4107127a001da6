"""Citations (`c:<sha>`, `s:<slug>`) and tombstones: which items are forgotten, and which digest
lines rest only on forgotten items. Standard library only: the SessionStart recall uses it.

A tombstone's file name says what it buries (`tombstones/c-<sha>.md`, `tombstones/s-<slug>.md`,
see vault.layout), so knowing what is forgotten costs one tree listing, never a blob read.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

from gitvault.vault import layout

if TYPE_CHECKING:
    from gitvault.vault.store import Vault

# The digest's citation syntax (fold.digest writes lines `- fact (c:1a2b3c4, s:slug)`).
_CITE = re.compile(r"\b([cs]):([A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]|[A-Za-z0-9])")


def cites_in(line: str) -> list[str]:
    """The citations a line makes, as `c:<sha…>` / `s:<slug>`, in order, without repeats."""
    found = [
        f"{m.group(1)}:{m.group(2).lower() if m.group(1) == 'c' else m.group(2)}"
        for m in _CITE.finditer(line)
    ]
    return list(dict.fromkeys(found))


def is_buried(cite: str, tombs: Collection[str]) -> bool:
    """Whether a citation names a tombstoned item. Commit citations match by prefix either way
    (a digest cites 7 characters, a tombstone names the full sha, or the reverse)."""
    if cite in tombs:
        return True
    if not cite.startswith("c:") or len(cite) < 9:  # `c:` + at least 7 hex digits
        return False
    ident = cite[2:]
    for tomb in tombs:
        if tomb.startswith("c:") and len(tomb) >= 9:
            other = tomb[2:]
            if ident.startswith(other) or other.startswith(ident):
                return True
    return False


def rests_only_on_buried(line: str, tombs: Collection[str]) -> bool:
    """A digest line whose every citation is forgotten (a line citing nothing is not judged
    here: the fold drops those for its own reason)."""
    cites = cites_in(line)
    return bool(cites) and bool(tombs) and all(is_buried(c, tombs) for c in cites)


def without_buried(lines: Iterable[str], tombs: Collection[str]) -> list[str]:
    """Digest lines minus those resting only on forgotten items."""
    return [ln for ln in lines if not rests_only_on_buried(ln, tombs)]


def forgotten(vault: Vault, at: str | None = None) -> set[str]:
    """The citations the vault's tombstones bury (one tree listing, no blob read)."""
    out = set()
    for name, is_dir in vault.listdir(layout.TOMBSTONES, at):
        cite = layout.tombstone_cite(f"{layout.TOMBSTONES}/{name}")
        if cite is not None and not is_dir:
            out.add(cite)
    return out


def item_cite(path: str) -> str | None:
    """The full citation of a note or session path (`c:<40 hex>` / `s:<slug>`), else None."""
    sha = layout.note_sha(path)
    if sha is not None:
        return f"c:{sha}"
    slug = layout.session_slug(path)
    return f"s:{slug}" if slug is not None else None


def path_is_buried(path: str, tombs: Collection[str]) -> bool:
    cite = item_cite(path)
    return cite is not None and bool(tombs) and is_buried(cite, tombs)
