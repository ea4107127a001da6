"""The ground floor every gitvault file goes through: one atomic writer, one bounded reader
that never follows a link or blocks on a FIFO, strict JSON, and one rule for reading times."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gitvault.vault import files
from gitvault.vault.times import parse_time


def test_atomic_write_replaces_whole_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_bytes(b"old")
    os.chmod(target, 0o600)
    files.atomic_write(target, b"new contents")
    assert target.read_bytes() == b"new contents"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # the replaced file's mode is kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


@pytest.mark.parametrize("durable", [True, False])
def test_atomic_write_is_durable_unless_told_otherwise(
    tmp_path: Path, fsyncs: list[int], durable: bool
) -> None:
    target = tmp_path / "state.json"
    target.write_bytes(b"old")
    files.atomic_write(target, b"new", durable=durable)
    assert target.read_bytes() == b"new"  # atomic either way
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]
    assert len(fsyncs) == (2 if durable else 0)  # the file and its folder, or neither


def test_atomic_write_replaces_a_planted_link_instead_of_writing_through_it(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.write_text("precious")
    (tmp_path / "dir").mkdir()
    link = tmp_path / "dir" / "state.json"
    link.symlink_to(outside)
    files.atomic_write(link, b"gitvault")
    assert outside.read_text() == "precious"
    assert not link.is_symlink() and link.read_bytes() == b"gitvault"


def test_a_new_file_is_never_group_or_world_writable(tmp_path: Path) -> None:
    old = os.umask(0o000)
    try:
        files.atomic_write(tmp_path / "f", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "f").stat().st_mode) == 0o644


def test_read_regular_refuses_links_fifos_folders_and_oversized_files(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.write_bytes(b"12345")
    assert files.read_regular(real) == b"12345"
    link = tmp_path / "link"
    link.symlink_to(real)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for bad in (link, fifo, tmp_path):
        with pytest.raises(files.NotRegular):
            files.read_regular(bad)  # a FIFO with no writer would hang a plain open()
    with pytest.raises(files.TooLarge):
        files.read_regular(real, limit=4)
    with pytest.raises(FileNotFoundError):
        files.read_regular(tmp_path / "missing")
    assert files.load_json_object(fifo) is None


def test_read_json_is_strict(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    for text in ('{"a": NaN}', '{"a": Infinity}', "[" * 100_000, "\xff"):
        path.write_bytes(text.encode("latin-1") if text == "\xff" else text.encode())
        with pytest.raises(ValueError):
            files.read_json(path)
        assert files.load_json_object(path) is None
    path.write_text('{"a": [1, 2.5, null]}')
    assert files.read_json(path) == {"a": [1, 2.5, None]}
    path.write_text("[1]")
    assert files.load_json_object(path) is None  # valid JSON, but not an object


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-01-02T03:04:05Z", 1767323045.0),
        ("2026-01-02T03:04:05+00:00", 1767323045.0),
        ("2026-01-02T04:04:05+01:00", 1767323045.0),
        ("2026-01-02T03:04:05", 1767323045.0),  # no offset: UTC, for every reader
        ("2026-01-02", 1767312000.0),
        ("not a time", None),
        ("", None),
        (None, None),
        (12, None),
    ],
)
def test_one_rule_for_reading_times(value: object, expected: float | None) -> None:
    assert parse_time(value) == expected
