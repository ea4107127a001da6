"""notes/commits: the project's commits as git reports them. A backfill's stream is read ahead
(git keeps computing while notes are written) and yields every commit, oldest first; a reader
that stops early leaves no git process and no reading thread behind."""

from __future__ import annotations

import threading

import pytest

from gitvault.notes import commits
from tests.support.repos import Repo, fast_history, wait_until


def _git_logs(repo: Repo) -> list[int]:
    """Pids of `git log` processes running in this repository."""
    import os
    from pathlib import Path

    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if b"log" in cmdline and cmdline[0].endswith(b"git") and cwd == str(repo.path):
            found.append(int(entry.name))
    return found


def test_the_stream_yields_every_commit_oldest_first_through_a_small_read_ahead(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    shas = fast_history(repo, "main", 120)
    monkeypatch.setattr(commits, "READ_AHEAD", 1)  # git waits on the reader at every chunk
    streamed = list(commits.stream_commits(repo.path, ["HEAD"]))
    assert [c.sha for c in streamed][-120:] == shas
    again = commits.read_commits(repo.path, shas)
    assert all(c == again[c.sha] for c in streamed[-120:])


def test_a_reader_that_stops_early_leaves_nothing_running(repo: Repo) -> None:
    fast_history(repo, "main", 400)
    stream = commits.stream_commits(repo.path, ["HEAD"])
    first = next(stream)
    assert first.sha
    stream.close()  # as a caller that breaks out of its loop or raises
    wait_until(lambda: not _git_logs(repo), what="git log gone")
    wait_until(
        lambda: not [t for t in threading.enumerate() if t.name == "git-log-reader"],
        what="the reading thread gone",
    )
