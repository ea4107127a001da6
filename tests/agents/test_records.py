"""The mechanical session record off the agent's wait: PreCompact and SessionEnd spool a request
and answer; a drainer writes the record. Nothing is lost when the writer dies (the next drainer
writes it), nothing is written twice when it dies after its commit, and a request that is not
one is dropped with a log line."""

from __future__ import annotations

import json
import os
import signal
import uuid
from pathlib import Path

import pytest

from gitvault.agents import records
from gitvault.resolve import resolve
from gitvault.vault import statedir
from gitvault.vault.locking import file_lock
from tests.support.claude_hooks import (
    log_text,
    records_written,
    run_hook,
    sample,
    write_transcript,
)
from tests.support.memory import set_config
from tests.support.repos import Repo, wait_until

pytestmark = pytest.mark.repo(claude=True)


def _session_with_a_commit(repo: Repo, tmp_path: Path) -> tuple[str, Path, str]:
    set_config(repo, "capture", fold_on_session_end=False)
    sid = str(uuid.uuid4())
    transcript = tmp_path / f"{sid}.jsonl"
    begin = sample("SessionStart:startup", repo=repo, session_id=sid)
    assert run_hook("session-start", begin, repo=repo).returncode == 0
    sha = repo.commit("feat: the session's work")
    write_transcript(transcript, commit=(sha, "feat: the session's work"), session_id=sid)
    return sid, transcript, sha


def _records_of(repo: Repo, sid: str) -> list[str]:
    names = repo.git("ls-tree", "--name-only", "vault", "sessions/").split()
    return [n for n in names if sid in repo.git("show", f"vault:{n}")]


def _writers(repo: Repo) -> list[int]:
    """Live drainers of this repository (the record writers a hook starts)."""
    needle = str(repo.common_dir).encode()
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        parts = cmdline.split(b"\0")
        if b"drain" in parts and needle in parts and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def test_the_hook_answers_before_the_record_is_written_and_a_dead_writer_loses_nothing(
    repo: Repo, tmp_path: Path
) -> None:
    sid, transcript, sha = _session_with_a_commit(repo, tmp_path)
    loc = resolve(repo.path)
    lock = repo.state_dir / statedir.RECORDS / statedir.RECORDS_LOCK
    lock.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(lock, block=False) as held:  # the writer cannot write while this is held
        assert held
        done = run_hook(
            "pre-compact",
            sample("PreCompact:manual", repo=repo, transcript=transcript, session_id=sid),
            repo=repo,
        )
        assert (done.returncode, done.stdout) == (0, "")
        assert records.pending(loc), "spooled before the hook answered"
        assert not _records_of(repo, sid)
        wait_until(lambda: bool(_writers(repo)), timeout=30, what="the writer the hook started")
        for pid in _writers(repo):
            os.kill(pid, signal.SIGKILL)  # the writer dies before it wrote anything
        wait_until(lambda: not _writers(repo), timeout=30, what="the writer to be gone")
    assert records.pending(loc) and not _records_of(repo, sid), "nothing written, nothing lost"
    repo.commit("feat: later work")  # its drainer writes what the dead writer left
    records_written(repo)
    (name,) = _records_of(repo, sid)
    assert sha[:7] in repo.git("show", f"vault:{name}")
    assert "hook pre-compact: wrote the mechanical record" in log_text(repo)


def test_a_record_its_writer_committed_before_dying_is_not_written_twice(
    repo: Repo, tmp_path: Path
) -> None:
    sid, transcript, _ = _session_with_a_commit(repo, tmp_path)
    loc = resolve(repo.path)
    folder = repo.state_dir / statedir.RECORDS
    done = run_hook(
        "session-end",
        sample("SessionEnd:", repo=repo, transcript=transcript, session_id=sid),
        repo=repo,
        env={"GITVAULT_SYNC": "1"},  # written before the hook returns: the request is gone
    )
    assert done.returncode == 0 and not records.pending(loc)
    assert len(_records_of(repo, sid)) == 1
    # The same request again, as a writer that died between its commit and the removal left it.
    request = {
        "format": records.FORMAT,
        "session_id": sid,
        "agent": "claude",
        "trigger": "session-end",
        "at": _saved_at(repo, sid),
        "commits": _commits(repo, sid),
        "turns": False,
        "cwd": str(repo.path),
        "transcript": str(transcript),
        "seen": {},
        "branch": "main",
        "worktree": "main",
    }
    (folder / f"{0:020d}-1{statedir.RECORD_SUFFIX}").write_text(json.dumps(request))
    assert records.written(loc), "taken as written"
    assert not records.pending(loc) and len(_records_of(repo, sid)) == 1


def _meta(repo: Repo, sid: str) -> dict[str, object]:
    from gitvault.vault import frontmatter

    (name,) = _records_of(repo, sid)
    meta, _ = frontmatter.parse(repo.git("show", f"vault:{name}"))
    return meta


def _saved_at(repo: Repo, sid: str) -> float:
    from gitvault.vault.times import parse_time

    when = parse_time(_meta(repo, sid)["saved_at"])
    assert when is not None
    return when


def _commits(repo: Repo, sid: str) -> list[str]:
    shas = _meta(repo, sid)["commits"]
    assert isinstance(shas, list)
    return [str(sha) for sha in shas]


@pytest.mark.parametrize("content", ["{not json", '{"format": 1}', '{"format": 99}', "[]"])
def test_a_request_that_is_not_one_is_dropped_and_logged(repo: Repo, content: str) -> None:
    loc = resolve(repo.path)
    folder = repo.state_dir / statedir.RECORDS
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{1:020d}-1{statedir.RECORD_SUFFIX}").write_text(content)
    tip = repo.vault_tip()
    assert records.written(loc) == []
    assert not records.pending(loc) and repo.vault_tip() == tip
    assert "unreadable: dropped" in log_text(repo)


def test_a_request_is_never_read_through_a_link(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"format": 1}')
    folder = repo.state_dir / statedir.RECORDS
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{2:020d}-1{statedir.RECORD_SUFFIX}").symlink_to(outside)
    records.written(resolve(repo.path))
    assert outside.read_text() == '{"format": 1}'


def test_a_spooled_request_is_durable_and_the_sessions_bookkeeping_is_not(
    repo: Repo, fsyncs: list[int]
) -> None:
    """What a crash must not lose (the record request) is fsynced; the ledger, which a crash may
    lose at the cost of a question asked again, is not: its fsyncs cost a hook milliseconds."""
    from gitvault.agents import ledger

    loc = resolve(repo.path)
    state = ledger.load(loc, "a-session")
    ledger.store(loc, state)
    assert fsyncs == []
    assert ledger.load(loc, "a-session").first_seen == state.first_seen  # stored all the same
    records.spool(loc, {"session_id": "a-session", "event": "pre-compact"})
    assert len(fsyncs) == 2  # the request and its folder
