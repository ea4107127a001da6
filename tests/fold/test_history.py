"""fold/history: the mined history, brought forward note by note, equals a rebuild at the same
tip; what cannot be brought forward is rebuilt, and says why; a forward update reads only the
notes that are new. Real vaults (notes rendered as the drainer renders them, committed to the
vault branch), a real SQLite cache."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gitvault.fold import history
from gitvault.notes import render
from gitvault.notes.commits import CommitInfo, FileStat
from gitvault.resolve import resolve
from gitvault.vault import layout, statedir
from gitvault.vault.store import Vault
from tests.support.deadline import deadline
from tests.support.repos import Repo

DAY = 86_400
START = 1_750_000_000


def sha_of(name: str) -> str:
    return hashlib.sha1(name.encode()).hexdigest()


def note(
    name: str,
    subject: str,
    files: Iterable[str],
    when: int,
    parents: Iterable[str] = (),
    *,
    replaces: Iterable[str] = (),
    body: str = "",
) -> tuple[str, bytes]:
    """(path, text) of the note the drainer would write for such a commit."""
    stamp = datetime.fromtimestamp(when, tz=UTC).isoformat()
    info = CommitInfo(
        sha=sha_of(name),
        parents=tuple(sha_of(p) for p in parents),
        author_name="Dev",
        author_email="dev@example.com",
        authored=stamp,
        committed=stamp,
        commit_time=when,
        message=subject + (f"\n\n{body}" if body else ""),
        files=tuple(FileStat(f, 1, 1) for f in files),
    )
    ctx = render.NoteContext("main", "main", tuple(sha_of(r) for r in replaces))
    return render.note_path(info), render.render(info, ctx).encode()


def add(vault: Vault, *notes: tuple[str, bytes]) -> str:
    return vault.commit(dict(notes), f"note: {len(notes)}")


def snapshot(path: Path) -> dict[str, Any]:
    """What the cache holds, without its row ids or what it remembers of git."""
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        ids = {i: p for i, p in conn.execute("SELECT id, path FROM notes")}
        notes = sorted(
            tuple(row)
            for row in conn.execute(
                "SELECT path, sha, depth, past, counted, copy_key, files FROM notes"
            )
        )
        return {
            "notes": notes,
            "counts": sorted(conn.execute("SELECT kind, a, b, n FROM counts")),
            "files": sorted((ids[n], f) for n, f in conn.execute("SELECT note, path FROM files")),
            "parents": sorted(conn.execute("SELECT parent FROM parents")),
            "replaced": sorted(conn.execute("SELECT old, by, path FROM replaced")),
            "ever": sorted(conn.execute("SELECT path FROM ever")),
            "present": sorted(conn.execute("SELECT sha FROM present")),
            "meta": sorted(
                (k, v) for k, v in conn.execute("SELECT key, value FROM meta") if k not in ("head",)
            ),
        }
    finally:
        conn.close()


class Mined:
    """One repository's mined history, opened the way a fold opens it."""

    def __init__(self, repo: Repo) -> None:
        self.loc = resolve(repo.path)
        self.vault = Vault(self.loc)
        self.file = statedir.path(self.loc, statedir.MINED)

    def forward(self, settings: history.Settings | None = None) -> tuple[str | None, Any]:
        """Bring the cache to the vault's tip; (why it rebuilt or None, its content)."""
        cache = history.History(self.loc, self.vault)
        cache.open(settings=settings).close()
        return cache.rebuilt, snapshot(self.file)

    def rebuilt(self, settings: history.Settings | None = None) -> Any:
        """What a cache built from nothing at the same tip holds."""
        self.file.unlink()
        cache = history.History(self.loc, self.vault)
        cache.open(settings=settings).close()
        assert cache.rebuilt == "no mined history yet"
        return snapshot(self.file)


def test_notes_arriving_batch_by_batch_give_what_a_rebuild_gives(repo: Repo) -> None:
    """Plain commits, a cherry-picked copy, an amend (`replaces`), a merge, reverts named by
    sha and by subject, a replacement that arrives before the commit it replaces: brought
    forward each time, never rebuilt, and equal to a rebuild at every step."""
    mined = Mined(repo)
    steps: list[list[tuple[str, bytes]]] = [
        [
            note(
                f"c{i}",
                f"{'fix' if i % 3 == 0 else 'add'} thing {i}",
                [f"src/m{i % 4}.py", "src/core.py", f"tests/test_m{i % 4}.py", "CHANGES.md"][
                    : 1 + i % 4
                ],
                START + i * DAY,
                [f"c{i - 1}"] if i else [],
            )
            for i in range(12)
        ],
        # a copy of c5 (same subject and files, a cherry-pick later): the newest copy counts
        [note("pick5", "add thing 5", ["src/m1.py", "src/core.py"], START + 20 * DAY, ["c11"])],
        # c11 amended: the rewrite replaces it
        [
            note(
                "c11b",
                "add thing 11, amended",
                ["src/m3.py", "README.md"],
                START + 21 * DAY,
                ["c10"],
                replaces=["c11"],
            )
        ],
        # a merge commit, a revert by sha, a revert by quoted subject
        [
            note("m1", "Merge branch 'topic'", ["src/m2.py"], START + 22 * DAY, ["c11b", "c9"]),
            note(
                "r1",
                'Revert "add thing 7"',
                ["src/m3.py", "src/core.py"],
                START + 23 * DAY,
                ["m1"],
                body=f"This reverts commit {sha_of('c7')}.",
            ),
            note("r2", 'Revert "fix thing 6"', ["src/m2.py"], START + 24 * DAY, ["r1"]),
        ],
        # a rewrite whose note arrives before the note of the commit it replaces
        [
            note(
                "n2",
                "add thing new, rebased",
                ["src/new.py"],
                START + 26 * DAY,
                ["r2"],
                replaces=["n1"],
            )
        ],
        [note("n1", "add thing new", ["src/new.py"], START + 25 * DAY, ["r2"])],
    ]
    for index, step in enumerate(steps):
        add(mined.vault, *step)
        why, forward = mined.forward()
        assert why == ("no mined history yet" if index == 0 else None), why
        assert forward == mined.rebuilt()
    counted = {row[1]: row[4] for row in forward["notes"]}
    assert counted[sha_of("pick5")] == 1 and counted[sha_of("c5")] == 0  # one change, once
    assert counted[sha_of("c11")] == 0 and counted[sha_of("c11b")] == 1  # the amend replaced it
    assert counted[sha_of("m1")] == 0  # a merge repeats its branch's commits
    assert counted[sha_of("n1")] == 0 and counted[sha_of("n2")] == 1  # replaced, whenever noted


def test_a_rebuild_summing_a_few_counts_at_a_time_holds_what_one_summing_all_at_once_does(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild hands its counts to SQLite COUNT_KEYS distinct keys at a time (a whole
    history's Counter was most of a first fold's memory): the sums are the same however the
    notes fall into flushes, the same pair or path counted in several."""
    mined = Mined(repo)
    add(
        mined.vault,
        *(
            note(
                f"c{i}",
                f"{'fix' if i % 2 else 'add'} part {i}",
                [f"src/m{i % 3}.py", "src/core.py", f"tests/test_m{i % 3}.py", "CHANGES.md"][
                    : 2 + i % 3
                ],
                START + i * DAY,
                [f"c{i - 1}"] if i else [],
            )
            for i in range(30)
        ),
    )
    whole = mined.forward()[1]
    assert any(n > 1 for *_, n in whole["counts"])  # keys met in many notes
    monkeypatch.setattr(history, "COUNT_KEYS", 3)
    assert mined.rebuilt() == whole


def test_what_cannot_be_brought_forward_is_rebuilt_and_equals_a_rebuild(repo: Repo) -> None:
    mined = Mined(repo)
    add(
        mined.vault,
        *(
            note(f"c{i}", f"Change {i}", [f"a{i}.py"], START + i, [f"c{i - 1}"])
            for i in range(1, 6)
        ),
    )
    assert mined.forward()[0] == "no mined history yet"
    # the note of an ancestor of a held note: depths change
    add(mined.vault, note("c0", "Change 0", ["a0.py"], START, []))
    why, forward = mined.forward()
    assert why == "a note came in for an ancestor of noted commits"
    assert forward == mined.rebuilt()
    # a tombstone burying a held note: it leaves the record and the counts
    gone = sha_of("c3")
    mined.vault.commit({layout.tombstone_path(f"c:{gone[:9]}"): b"forgotten\n"}, "forget")
    why, forward = mined.forward()
    assert why == "a note it holds was forgotten"
    assert gone not in {row[1] for row in forward["notes"]}
    assert gone in {row[0] for row in forward["present"]}  # still a note of the vault
    assert forward == mined.rebuilt()
    # a history rewritten under it (redact rewrites the vault branch)
    tip = mined.vault.require_tip()
    base = mined.vault.git.walk(tip).__next__().parents[0]
    mined.vault.git.cas_ref(mined.vault.ref, base, tip, "test: rewind")
    add(mined.vault, note("x1", "Other change", ["b.py"], START + 50, ["c5"]))
    why, forward = mined.forward()
    assert why == "the vault's history was rewritten"
    assert forward == mined.rebuilt()
    # a horizon: notes older than it leave the record, and it moves with the newest note
    settings = history.Settings(horizon_days=1)
    add(mined.vault, note("late", "Much later", ["c.py"], START + 3 * DAY, ["x1"]))
    why, forward = mined.forward(settings)
    assert why == "the horizon moved"
    past = {row[1] for row in forward["notes"] if row[3]}
    assert past >= {sha_of(f"c{i}") for i in (0, 1, 2, 4, 5)} | {sha_of("x1")}
    assert sha_of("late") not in past
    assert forward == mined.rebuilt(settings)
    # a cache that cannot be read
    mined.file.write_bytes(b"not a database at all" * 100)
    why, forward = mined.forward(settings)
    assert why is not None and why.startswith("the cache could not be read")
    assert forward == mined.rebuilt(settings)


def test_a_forward_update_reads_only_the_new_notes(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cost of bringing it forward follows what is new, not the history."""
    mined = Mined(repo)
    add(
        mined.vault,
        *(
            note(f"c{i}", f"Change {i}", [f"f{i % 7}.py"], START + i, [f"c{i - 1}"])
            for i in range(300)
        ),
    )
    mined.forward()
    read: list[int] = []
    real = history._read_notes

    def counting(cwd: Path, blobs: Any) -> Any:
        read.append(len(blobs))
        return real(cwd, blobs)

    monkeypatch.setattr(history, "_read_notes", counting)
    add(
        mined.vault,
        *(note(f"d{i}", f"More {i}", ["f1.py"], START + 400 + i, ["c299"]) for i in range(3)),
    )
    why, forward = mined.forward()
    assert why is None and read == [3]
    assert ("file", "f1.py", "", 43 + 3) in forward["counts"]
    read.clear()
    assert mined.forward()[0] is None and read == []  # nothing new: nothing read


def test_a_rebuild_reads_the_vault_with_gits_delta_cache_bounded(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild lists and reads every note (`ls-tree -r`, `cat-file --batch`): with git's
    default 96 MB cache of delta bases, those children outgrew the fold itself on git/git
    (171 and 180 MB against its 148 MB). Every such git run here carries the bound."""
    mined = Mined(repo)
    add(
        mined.vault,
        *(
            note(f"c{i}", f"Change {i}", [f"f{i % 5}.py"], START + i, [f"c{i - 1}"])
            for i in range(20)
        ),
    )
    real = shutil.which("git")
    assert real is not None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "git.log"
    wrapper = bin_dir / "git"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    why, built = mined.forward()
    assert why == "no mined history yet" and built["present"], "a rebuild read the notes"
    runs = log.read_text().splitlines()
    readers = [r for r in runs if " cat-file --batch" in r or (" ls-tree " in r and " -r " in r)]
    assert any("cat-file" in r for r in readers) and any("ls-tree" in r for r in readers), runs
    assert all("core.deltaBaseCacheLimit=32m" in r for r in readers), readers


def test_notes_whose_parents_loop_are_mined_and_do_not_hang_a_fold(repo: Repo) -> None:
    """A note names its commit's parents, and a hostile teammate's notes can name each other
    (a's parent b, b's parent a) or themselves: no real history can, so the depth walk and the
    parents-first order pass over such a parent. A rebuild and a forward update both finish,
    agree, and give every note a depth; the honest notes beside them keep theirs."""
    mined = Mined(repo)
    honest = [
        note(f"h{i}", f"Add h{i}", ["h.py"], START + i, [f"h{i - 1}"] if i else [])
        for i in range(3)
    ]
    looping = [
        note("a", "Add a", ["a.py"], START + 10, ["b"]),
        note("b", "Add b", ["b.py"], START + 10, ["a"]),
        note("s", "Add s", ["s.py"], START + 11, ["s", "h2"]),
    ]
    add(mined.vault, *honest, *looping)
    with deadline(30):  # a loop grows its stack fast: the suite's 600 s would exhaust memory
        why, built = mined.forward()
        assert why == "no mined history yet"
        add(
            mined.vault,
            note("x", "Add x", ["x.py"], START + 20, ["y", "h2"]),
            note("y", "Add y", ["y.py"], START + 20, ["x"]),
        )
        _, forward = mined.forward()
        assert forward == mined.rebuilt()
    depth = {sha: d for _path, sha, d, *_ in forward["notes"]}
    assert [depth[sha_of(f"h{i}")] for i in range(3)] == [1, 2, 3]
    assert all(d >= 1 for d in depth.values()) and len(depth) == 8
    assert depth[sha_of("s")] == 4  # its own name passed over, its honest parent counted
