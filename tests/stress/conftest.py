"""The long runs: every test here is marked stress and runs only when selected with -m stress
(`just stress`); in the default suite each is collected and skipped with that reason."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def only_when_selected(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("stress"), "a test in tests/stress is marked stress"
    if "stress" not in (request.config.option.markexpr or ""):
        pytest.skip("a long run: selected by -m stress (just stress)")
