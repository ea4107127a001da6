"""The record of what came from another clone (vault/origin): a snapshot and a log appended to.
A sync records in time that follows what came, never rewriting the record whole; what was
recorded survives review decisions, the fold's mark, a crash between a rewrite and the log's
removal, a torn append, concurrent recorders, things planted at the log, and a redaction."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
from pathlib import Path

from gitvault.resolve import Location, resolve
from gitvault.vault import layout, origin, statedir
from tests.support.repos import Repo

REMOTE, URL = "origin", "/srv/team.git"


def _note(i: int) -> str:
    return layout.note_path(hashlib.sha1(str(i).encode()).hexdigest(), 1_714_521_600)


def _incoming(paths: list[str], author: str = "") -> list[origin.Incoming]:
    return [origin.Incoming(p, f"{n:040x}", author, "laptop") for n, p in enumerate(paths)]


def _record(loc: Location, paths: list[str], *, review: bool = False, author: str = "") -> None:
    origin.record(loc, REMOTE, URL, _incoming(paths, author), review=review)


def _log(loc: Location) -> Path:
    return statedir.ORIGINS_LOG_FILE.path(loc)


def _snapshot(loc: Location) -> Path:
    return statedir.ORIGINS_FILE.path(loc)


def test_a_record_appends_what_came_and_leaves_the_snapshot_as_it_was(repo: Repo) -> None:
    loc = resolve(repo.path)
    many = [_note(i) for i in range(2000)]
    _record(loc, many[:1])
    origin.decide(loc, many[:1], origin.ACCEPTED)  # a rewrite: the snapshot takes the log in
    assert not _log(loc).exists()
    _record(loc, many[1:])
    before = _snapshot(loc).read_bytes()
    stat = os.stat(_snapshot(loc))
    _record(loc, [_note(5000)])
    assert _snapshot(loc).read_bytes() == before
    assert os.stat(_snapshot(loc)).st_mtime_ns == stat.st_mtime_ns
    lines = _log(loc).read_bytes().splitlines()
    assert len(lines) == 1 + 1999 + 1  # the header, then one line per file taken
    record = origin.load(loc)
    assert len(record.files) == 2001
    assert record.of(many[0]) is not None and record.of(many[0]).review == origin.ACCEPTED  # type: ignore[union-attr]
    found = record.of(_note(5000))
    assert found is not None and found.remote == REMOTE and found.url == URL
    assert found.clone == "laptop"


def test_a_decision_is_kept_when_the_same_path_comes_again(repo: Repo) -> None:
    loc = resolve(repo.path)
    kept, open_ = _note(1), _note(2)
    _record(loc, [kept, open_], review=True)
    assert [o.path for o in origin.load(loc).held()] == sorted([kept, open_])
    assert origin.decide(loc, [kept], origin.REJECTED) == [kept]
    _record(loc, [kept, open_], review=True)  # the log replays on the rewritten snapshot
    record = origin.load(loc)
    assert record.of(kept).review == origin.REJECTED  # type: ignore[union-attr]
    assert record.of(open_).review == origin.HELD  # type: ignore[union-attr]


def test_a_log_the_snapshot_took_in_is_never_replayed_after_a_crash(repo: Repo) -> None:
    """decide() writes the snapshot, then removes the log: killed in between, the log is
    still there, and replaying it would undo what the rewrite recorded (an accepted item's
    wait for the fold)."""
    loc = resolve(repo.path)
    path = _note(1)
    _record(loc, [path], review=True)
    log = _log(loc).read_bytes()
    origin.decide(loc, [path], origin.ACCEPTED)
    assert origin.load(loc).waiting_for_fold() == [path]
    _log(loc).write_bytes(log)  # as the crash left it
    record = origin.load(loc)
    assert record.waiting_for_fold() == [path]
    assert record.of(path).review == origin.ACCEPTED  # type: ignore[union-attr]
    _record(loc, [_note(2)])  # a log of its own: the taken-in one is not replayed after it
    assert origin.load(loc).waiting_for_fold() == [path]


def test_a_torn_append_loses_no_later_record(repo: Repo) -> None:
    loc = resolve(repo.path)
    _record(loc, [_note(1)])
    with open(_log(loc), "ab") as out:
        out.write(b'{"path": "notes/2024/05/01/torn')  # a sync killed mid-write
    assert set(origin.load(loc).files) == {_note(1)}
    _record(loc, [_note(2)])
    assert set(origin.load(loc).files) == {_note(1), _note(2)}


def _record_in_process(args: tuple[str, int]) -> None:
    where, start = args
    loc = resolve(Path(where))
    for i in range(start, start + 20):
        _record(loc, [_note(i)])


def test_concurrent_recorders_lose_nothing(repo: Repo) -> None:
    """Syncs of different remotes record at once (each its own process)."""
    loc = resolve(repo.path)
    _record(loc, [_note(10_000)])
    origin.decide(loc, [_note(10_000)], origin.ACCEPTED)  # a snapshot, and no log yet
    jobs = [(str(repo.path), k * 100) for k in range(4)]
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        pool.map(_record_in_process, jobs)
    expected = {_note(i) for k in range(4) for i in range(k * 100, k * 100 + 20)}
    assert set(origin.load(loc).files) == expected | {_note(10_000)}


def test_what_is_planted_at_the_log_is_neither_followed_nor_waited_on(
    repo: Repo, tmp_path: Path
) -> None:
    loc = resolve(repo.path)
    _record(loc, [_note(1)])
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("theirs\n")
    _log(loc).unlink()
    _log(loc).symlink_to(outside)
    assert set(origin.load(loc).files) == set()  # a link is not read through
    assert not origin.solo(loc)
    _record(loc, [_note(2)])
    assert outside.read_text() == "theirs\n"
    assert _note(2) in origin.load(loc).files
    _log(loc).unlink()
    os.mkfifo(_log(loc))
    assert not origin.solo(loc)
    _record(loc, [_note(3)])  # would block forever on a FIFO opened for reading
    assert _note(3) in origin.load(loc).files


def test_a_newer_gitvaults_log_is_left_alone(repo: Repo) -> None:
    loc = resolve(repo.path)
    statedir.ensure(loc)
    newer = b'{"format": 9, "id": "later"}\n{"path": "x", "review": "accepted"}\n'
    _log(loc).write_bytes(newer)
    assert origin.load(loc).files == {}
    assert not origin.solo(loc)
    _record(loc, [_note(1)])
    assert _log(loc).read_bytes() == newer
    _record(loc, [_note(1)], review=True)
    origin.decide(loc, [_note(1)], origin.ACCEPTED)
    assert _log(loc).read_bytes() == newer


def test_only_the_log_on_record_is_enough_to_distrust(repo: Repo) -> None:
    loc = resolve(repo.path)
    assert origin.solo(loc)
    _record(loc, [_note(1)])
    _snapshot(loc).unlink()
    assert not origin.solo(loc)
    assert _note(1) in origin.load(loc).files


def test_a_redaction_reaches_the_log(repo: Repo) -> None:
    """`gitvault redact` rewrites every text state file holding the secret (statedir
    .replace_text): what a file claims about its author is on record in the log."""
    loc = resolve(repo.path)
    secret = 'ghp_"quoted"\\sekrit'
    _record(loc, [_note(1)], author=f"dev {secret}")
    assert json.dumps(secret)[1:-1].encode() in _log(loc).read_bytes()
    rewritten = statedir.replace_text(loc, secret.encode(), b"[REDACTED]")
    assert statedir.ORIGINS_LOG in rewritten
    assert b"sekrit" not in _log(loc).read_bytes()
    assert origin.load(loc).of(_note(1)).author == "dev [REDACTED]"  # type: ignore[union-attr]


def _redact_in_process(where: str) -> None:
    from gitvault.memory.forget import scrub_state_files

    loc = resolve(Path(where))
    for _ in range(40):
        scrub_state_files(loc, b"sekrit")


def test_a_redaction_loses_no_record_a_sync_appends_meanwhile(repo: Repo) -> None:
    """A redaction rewrites the log whole (read, replace, rename) while syncs append to it:
    it does so under the syncs' lock, or a record appended in between is lost (without the
    lock: lost in 1 of 3 runs here)."""
    loc = resolve(repo.path)
    _record(loc, [_note(10_000)], author="dev sekrit")  # the log holds what is redacted
    ctx = multiprocessing.get_context("spawn")
    redactor = ctx.Process(target=_redact_in_process, args=(str(repo.path),))
    recorders = [
        ctx.Process(target=_record_in_process, args=((str(repo.path), k * 100),)) for k in range(3)
    ]
    redactor.start()
    for proc in recorders:
        proc.start()
    for proc in [redactor, *recorders]:
        proc.join(120)
        assert proc.exitcode == 0
    expected = {_note(i) for k in range(3) for i in range(k * 100, k * 100 + 20)}
    assert set(origin.load(loc).files) == expected | {_note(10_000)}
    assert b"sekrit" not in _log(loc).read_bytes()
