"""Which project commits have a note: one walk over the date folders of the vault's tip."""

from __future__ import annotations

from gitvault.vault import layout
from gitvault.vault.store import SkipIf, Vault, Write


def noted_shas(vault: Vault, at: str | None = None) -> set[str]:
    """Every commit sha that has a note."""
    out: set[str] = set()
    root = layout.NOTES
    for year, is_dir in vault.listdir(root, at):
        if not is_dir:
            continue
        for month, _ in vault.listdir(f"{root}/{year}", at):
            for day, _ in vault.listdir(f"{root}/{year}/{month}", at):
                for name, _ in vault.listdir(f"{root}/{year}/{month}/{day}", at):
                    sha = layout.note_sha(f"{root}/{year}/{month}/{day}/{name}")
                    if sha:
                        out.add(sha)
    return out


def already_written(vault: Vault) -> SkipIf:
    """skip_if for note writes: a note that exists at the tip is never written again, so the
    first version of a note wins (a backfilled note is not replaced by the drainer's)."""

    def skip(tip: str, write: Write) -> bool:
        return all(vault.exists(path, tip) for path in write.changes)

    return skip
