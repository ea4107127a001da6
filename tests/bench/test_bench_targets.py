"""A target compares a row's value the way it reads (≤, <, ≥, >, =), at its boundary too, and
the verdict says pass or miss accordingly; failed and skipped rows are neither."""

from __future__ import annotations

import pytest
from registry import Row, Target, verdict


@pytest.mark.parametrize(
    ("op", "limit", "value", "holds"),
    [
        ("<=", 10, 10.0, True),
        ("<=", 10, 10.01, False),
        ("<", 0.3, 0.3, False),
        ("<", 0.3, 0.29, True),
        (">=", 200, 200.0, True),
        (">=", 200, 199.9, False),
        (">", 1, 1.0, False),
        (">", 1, 1.5, True),
        ("==", 1, 1.0, True),
        ("==", 1, 0.95, False),
    ],
)
def test_a_target_holds_exactly_as_it_reads(
    op: str, limit: float, value: float, holds: bool
) -> None:
    target = Target(op, limit, "ms")
    row = Row("r", "r", value, "ms", target="t")

    assert target.holds(value) is holds
    assert verdict(row, {"t": target}) == ("pass" if holds else "miss")


@pytest.mark.parametrize(
    ("target", "text"),
    [
        (Target("<=", 10, "ms"), "≤ 10 ms"),
        (Target(">=", 1000, "commits/s"), "≥ 1,000 commits/s"),
        (Target("<=", 1.2, "×"), "≤ 1.2×"),
        (Target("<", 0.3, "ms"), "< 0.3 ms"),
        (Target("<=", 1536, "B"), "≤ 1,536 B"),
        (Target("==", 1), "= 1"),
    ],
)
def test_a_target_reads_as_a_person_writes_it(target: Target, text: str) -> None:
    assert target.text() == text


def test_an_unknown_comparison_is_refused() -> None:
    with pytest.raises(ValueError):
        Target("=<", 10, "ms")


def test_failed_skipped_and_reported_rows_are_neither_pass_nor_miss() -> None:
    targets = {"t": Target("<=", 10, "ms")}

    # the number would pass, but the measurement's own check failed
    assert verdict(Row("r", "r", 1.0, "ms", target="t", valid=False), targets) == "failed"
    assert verdict(Row("r", "r", None, "ms", target="t"), targets) == "failed"
    assert verdict(Row("r", "r", None, "ms", target="t", skipped="no CLI"), targets) == "skipped"
    assert verdict(Row("r", "r", 99.0, "ms"), targets) == "—"
    assert verdict(Row("r", "r", 99.0, "ms", valid=False), targets) == "failed"
