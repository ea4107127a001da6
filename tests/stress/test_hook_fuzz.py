"""1,000 generated inputs per Claude Code hook, in process: every hook exits 0 within its time
bound and prints nothing but its JSON answer (the fast version is in tests/agents)."""

from __future__ import annotations

import pytest

from tests.support.hook_fuzz import fuzz
from tests.support.repos import Repo

pytestmark = [
    pytest.mark.stress,
    pytest.mark.repo(
        claude=True,
        config={"capture": {"fold_on_session_end": False}},
        git_config={"gitvault.capture.stopMinIntervalSeconds": "0"},
    ),
]


@pytest.mark.parametrize("seed", [1])
def test_stress_a_thousand_generated_inputs_per_hook(
    repo: Repo, special_files: dict[str, str], seed: int
) -> None:
    repo.commit("feat: unsaved work for the fuzzed sessions")
    assert fuzz(repo, special_files, per_hook=1000, seed=seed) == []
