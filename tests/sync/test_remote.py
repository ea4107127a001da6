"""The fetch (sync/remote): what a remote sent waits in a throwaway repository until git fsck
passed it, then enters this one as git's receive-pack takes its own quarantine in (linked,
a pack before its index), or, when it cannot be linked, through git fetch; either way the
repository stays whole and the throwaway one is gone."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitvault.resolve import resolve
from gitvault.sync import remote as sync_remote
from gitvault.vault import layout
from tests.support.remotes import bare_remote, clone, fsck, seed
from tests.support.repos import Repo


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    path = bare_remote(tmp_path / "remote.git")
    seed(path, tmp_path / "seed")
    return path


def _behind(remote: Path, tmp_path: Path) -> tuple[Repo, str]:
    """A clone whose vault is behind the remote's by a teammate's notes; the remote's tip."""
    a = clone(remote, tmp_path / "a")
    a.commit("feat: first")
    assert a.gv("sync").code == 0
    b = clone(remote, tmp_path / "b")
    for i in range(3):
        a.commit(f"feat: change {i}")
    assert a.gv("sync").code == 0
    return b, a.git("rev-parse", "vault").strip()


def _packs(repo: Repo) -> set[str]:
    return {p.name for p in (repo.git_dir / "objects" / "pack").iterdir()}


def test_what_fsck_passed_is_linked_in_pack_and_index(remote: Path, tmp_path: Path) -> None:
    b, tip = _behind(remote, tmp_path)
    loc = resolve(b.path)
    tracking = layout.tracking_ref("origin")
    seen: list[str] = []

    def screen(where: Path, _tip: str) -> None:
        seen.extend(p.name for p in (where / "objects" / "pack").iterdir())

    before = _packs(b)
    with sync_remote.fetch(loc, "origin", "refs/heads/vault", tracking, screen) as got:
        assert got.clean and got.tip == tip
    assert {n for n in seen if n.endswith((".pack", ".idx"))} <= _packs(b) - before
    assert any(n.endswith(".pack") for n in seen)
    assert b.git("rev-parse", tracking).strip() == tip
    assert list((b.git_dir / "gitvault" / "incoming").iterdir()) == []
    fsck(b.path)


def test_objects_that_cannot_be_linked_are_fetched_and_none_stays_half_linked(
    remote: Path, tmp_path: Path
) -> None:
    b, tip = _behind(remote, tmp_path)
    loc = resolve(b.path)
    tracking = layout.tracking_ref("origin")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("not an object\n")

    def screen(where: Path, _tip: str) -> None:
        # a pack's pack file links, then its companion cannot (not a regular file)
        (where / "objects" / "pack" / "pack-0.rev").symlink_to(elsewhere)

    before = _packs(b)
    with sync_remote.fetch(loc, "origin", "refs/heads/vault", tracking, screen) as got:
        assert got.clean and got.tip == tip
    after = _packs(b)
    assert "pack-0.rev" not in after
    assert elsewhere.read_text() == "not an object\n"
    new = after - before
    assert new  # git fetch brought them
    assert all(Path(n).with_suffix(".idx").name in after for n in new if n.endswith(".pack"))
    assert b.git("rev-parse", tracking).strip() == tip
    fsck(b.path)
    assert b.gv("sync").code == 0


def test_a_link_that_fails_leaves_nothing_of_the_fetch_linked(tmp_path: Path) -> None:
    where, objects = tmp_path / "incoming", tmp_path / "objects"
    (where / "objects" / "pack").mkdir(parents=True)
    (where / "objects" / "ab").mkdir()
    (objects / "pack").mkdir(parents=True)
    (where / "objects" / "pack" / "pack-1.pack").write_bytes(b"PACK")
    (where / "objects" / "pack" / "pack-1.idx").write_bytes(b"IDX")
    (where / "objects" / "ab" / "cdef").write_bytes(b"loose")
    assert sync_remote._move_objects(where, objects)
    assert sorted(p.name for p in (objects / "pack").iterdir()) == ["pack-1.idx", "pack-1.pack"]
    assert (objects / "ab" / "cdef").read_bytes() == b"loose"
    (where / "objects" / "pack" / "pack-2.pack").write_bytes(b"PACK")
    (where / "objects" / "pack" / "pack-2.rev").symlink_to(tmp_path / "elsewhere")
    (where / "objects" / "pack" / "pack-2.idx").write_bytes(b"IDX")
    assert not sync_remote._move_objects(where, objects)
    assert sorted(p.name for p in (objects / "pack").iterdir()) == ["pack-1.idx", "pack-1.pack"]
