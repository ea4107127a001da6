"""fold/items: what a fold and the truth checks read from the vault."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from gitvault.fold import items as items_mod
from gitvault.notes import render
from gitvault.resolve import resolve
from gitvault.vault.store import Vault
from tests.support.repos import Repo


def _note(i: int, when: int) -> tuple[str, bytes]:
    sha = hashlib.sha1(f"items-{i}".encode()).hexdigest()
    stamp = datetime.fromtimestamp(when, tz=UTC).isoformat()
    info = render.CommitInfo(
        sha=sha,
        parents=(hashlib.sha1(f"parent-{i}".encode()).hexdigest(),),
        author_name="A",
        author_email="a@example.com",
        authored=stamp,
        committed=stamp,
        commit_time=when,
        message=f"Change {i}",
        files=(render.FileStat(f"src/f{i}.py", 1, 0),),
    )
    text = render.render(info, render.NoteContext("main", "main", (), "hook"))
    return render.note_path(info), text.encode()


def test_items_at_reads_at_most_max_notes_even_inside_one_day(repo: Repo) -> None:
    day = 86_400
    newest, older = 1_750_000_000, 1_750_000_000 - 3 * day
    files = dict(_note(i, newest + i) for i in range(5))  # five notes on the newest day
    files.update(_note(10 + i, older + i) for i in range(3))
    vault = Vault(resolve(repo.path))
    vault.commit(dict(files), "note: a few")
    tip = vault.require_tip()
    newest_day = {p for p in files if p.startswith(next(iter(files)).rsplit("/", 1)[0])}
    got = items_mod.items_at(vault, tip, max_notes=4)
    assert len(got) == 4, "a day with more notes than were left read on into the whole vault"
    assert {i.path for i in got} <= newest_day
    assert len([i for i in items_mod.items_at(vault, tip) if i.kind == "note"]) == 8
