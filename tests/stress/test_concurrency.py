"""Eight worktrees making fifty commits each, all at once, beside two CPU-bound processes:
every commit gets exactly one note (the default suite runs four worktrees x 25:
tests/vault/test_store.py). `just stress` runs it ten rounds in a row."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.concurrency import commit_at_once, cpu_burners
from tests.support.repos import Repo

pytestmark = pytest.mark.stress


def test_eight_worktrees_committing_fifty_each_at_once_lose_no_note(
    repo_factory: Callable[..., Repo],
) -> None:
    repo = repo_factory(sync=False)  # background drainers, as in real use
    with cpu_burners(2):
        commit_at_once(repo, worktrees=8, commits=50)
