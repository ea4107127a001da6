"""Twenty rounds of writers killed at random points, five seeds: nothing a killed drainer or
backfill leaves behind wedges the next run or loses a note (three rounds run in the default
suite: tests/test_hardening.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.kill_points import kill_rounds
from tests.support.repos import Repo

pytestmark = pytest.mark.stress


@pytest.mark.parametrize("seed", range(5))
def test_stress_many_kill_points(repo_factory: Callable[..., Repo], seed: int) -> None:
    failures = kill_rounds(repo_factory(sync=False), rounds=20, seed=seed)
    for failure in failures:
        print("FAILED:", failure)
    assert failures == []
