"""fold/items: what a fold and the truth checks read from the vault."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from gitvault.fold import items as items_mod
from gitvault.notes import render
from gitvault.resolve import resolve
from gitvault.vault import layout
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


def test_an_offline_fold_counts_what_is_new_without_reading_a_note(repo: Repo) -> None:
    """unread_items: the items at a tip that were not at an earlier one, forgotten ones left
    out, each note known by its path and the commit date the caller knows (else its date
    folder's): what the builtin merger's fold counts while it mines the mined history."""
    day = 86_400
    when = 1_750_000_000
    vault = Vault(resolve(repo.path))
    first = dict(_note(i, when + i * day) for i in range(3))
    vault.commit(dict(first), "note: three")
    mark = vault.require_tip()
    second = dict(_note(10 + i, when + (10 + i) * day) for i in range(2))
    vault.commit(dict(second), "note: two")
    tip = vault.require_tip()
    asked: list[list[str]] = []

    def dates(paths: list[str]) -> dict[str, int]:
        asked.append(sorted(paths))
        return {paths[0]: int(datetime(2025, 6, 15, 12, tzinfo=UTC).timestamp())}

    new = items_mod.unread_items(vault, mark, tip, dates)
    assert sorted(i.path for i in new) == sorted(second) == asked[0]
    assert all(i.kind == "note" and i.text == "" for i in new)  # counted, not read
    dated = {i.path: i.when for i in new}
    assert dated[asked[0][0]] == int(datetime(2025, 6, 15, 12, tzinfo=UTC).timestamp())
    other = asked[0][1]
    assert dated[other] == items_mod.folder_time(other)  # its date folder's day
    everything = items_mod.unread_items(vault, None, tip, lambda paths: {})
    assert sorted(i.path for i in everything if i.kind == "note") == sorted(first | second)
    gone = sorted(second)[0]
    vault.commit({layout.tombstone_path(f"c:{layout.note_sha(gone)}"): b"forgotten\n"}, "forget")
    later = items_mod.unread_items(vault, mark, vault.require_tip(), lambda paths: {})
    assert [i.path for i in later] == sorted(second)[1:]  # a forgotten note is never counted
