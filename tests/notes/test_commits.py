"""notes/commits: the project's commits as git reports them. A backfill's commits are read in
chunks by several git processes at once and come back in the order asked, exactly as one
`git log` reports them; a reader that stops early, or a git that fails, leaves no git process
and no file behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from gitvault.errors import GitvaultError
from gitvault.notes import commits
from tests.support.repos import Repo, fast_history, wait_until


def _git_logs(repo: Repo) -> list[int]:
    """Pids of `git log` processes running in this repository."""
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


def _leftovers() -> list[str]:
    return [n for n in os.listdir(tempfile.gettempdir()) if n.startswith("gitvault-backfill-")]


@pytest.fixture(autouse=True)
def _private_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This test's own temporary folder: a backfill another test runs at the same time (the
    suite runs on two workers) leaves its folder in the shared one while it runs."""
    own = tmp_path / "tmp"
    own.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(own))


def test_chunks_read_side_by_side_come_back_in_order_as_one_git_log_reports_them(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    shas = fast_history(repo, "main", 120)
    before = _leftovers()
    monkeypatch.setattr(commits, "LISTED_CHUNK", 7)  # 18 chunks, two of them ahead at a time
    listed = list(commits.read_listed(repo.path, shas))
    assert [c.sha for c in listed] == shas
    whole = commits.read_commits(repo.path, shas)  # one git process for them all
    assert listed == [whole[sha] for sha in shas]
    assert _leftovers() == before


def test_a_reader_that_stops_early_leaves_nothing_running_or_written(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    shas = fast_history(repo, "main", 400)
    before = _leftovers()
    monkeypatch.setattr(commits, "LISTED_CHUNK", 50)
    stream = commits.read_listed(repo.path, shas)
    assert next(stream).sha == shas[0]
    stream.close()  # as a caller that breaks out of its loop or raises
    wait_until(lambda: not _git_logs(repo), what="git log gone")
    assert _leftovers() == before


def test_a_commit_git_cannot_read_is_an_error_not_a_short_backfill(repo: Repo) -> None:
    shas = fast_history(repo, "main", 5)
    before = _leftovers()
    with pytest.raises(GitvaultError, match="git log failed"):
        list(commits.read_listed(repo.path, [*shas, "0" * 40]))
    assert _leftovers() == before
