"""Citations (`c:<sha>`, `s:<slug>`) and tombstones: which items are forgotten. Standard
library only: the SessionStart recall uses it.

A tombstone's file name says what it buries (`tombstones/c-<sha>.md`, `tombstones/s-<slug>.md`,
see vault.layout), so knowing what is forgotten costs one tree listing, never a blob read.

"Forgotten" is one property every reader checks the same way: load the tombstones once
(`tombstones`, one `git ls-tree`; `forgotten` with a Vault at hand), then ask
`is_forgotten(text, tombs)` of anything it is about to show or index — a citation, an item's
path, or a digest line. A line that cites a forgotten item is forgotten with it, whatever else it
cites: its words may quote the forgotten item, so no reader shows it and no fold keeps it (the
fold re-reads the line's other items instead, see memory/forget).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path

from gitvault import lazyre
from gitvault.named import TYPE_CHECKING
from gitvault.vault import gitcmd, layout

if TYPE_CHECKING:
    from gitvault.vault.store import Vault

# The digest's citation syntax (fold.digest writes lines `- fact (c:1a2b3c4, s:slug)`).
_CITE = lazyre.compile(r"\b([cs]):([A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]|[A-Za-z0-9])")


def cites_in(line: str) -> list[str]:
    """The citations a line makes, as `c:<sha…>` / `s:<slug>`, in order, without repeats."""
    found = [
        f"{m.group(1)}:{m.group(2).lower() if m.group(1) == 'c' else m.group(2)}"
        for m in _CITE.finditer(line)
    ]
    return list(dict.fromkeys(found))


def cite_spans(line: str) -> list[tuple[int, int, str]]:
    """(start, end, citation) of each citation in a line, in order (a reader that links them:
    the same syntax cites_in reads)."""
    return [
        (
            m.start(),
            m.end(),
            f"{m.group(1)}:{m.group(2).lower() if m.group(1) == 'c' else m.group(2)}",
        )
        for m in _CITE.finditer(line)
    ]


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


def is_forgotten(text: str, tombs: Collection[str]) -> bool:
    """Whether text is about a forgotten item: a citation or an item's path that a tombstone
    buries, or a line (a digest line, a search document) citing at least one such item."""
    if not tombs:
        return False
    if layout.note_sha(text) or layout.session_slug(text):
        return path_is_buried(text, tombs)
    return any(is_buried(cite, tombs) for cite in cites_in(text))


def without_forgotten(lines: Iterable[str], tombs: Collection[str]) -> list[str]:
    """Lines minus those citing a forgotten item."""
    return [ln for ln in lines if not is_forgotten(ln, tombs)]


def tombstones(cwd: Path, rev: str) -> frozenset[str]:
    """The citations the tombstones at rev bury, read with one `git ls-tree` (no pygit2, no
    blob): what a hook or any other reader of the vault calls once before is_forgotten."""
    return tombstones_from(e.path for e in gitcmd.ls_tree(cwd, rev, [layout.TOMBSTONES + "/"]))


def tombstones_from(paths: Iterable[str]) -> frozenset[str]:
    """The citations buried by the tombstones among these vault paths."""
    return frozenset(c for path in paths if (c := layout.tombstone_cite(path)))


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
