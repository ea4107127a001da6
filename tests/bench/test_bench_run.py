"""run.py end to end with stand-in measures (nothing slow is measured): a full run writes
every section, the record and README's summary; a partial run rewrites only its sections and
keeps every other byte, even of sections no renderer would produce today."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import report
import run
from registry import Measure, Row, Target


def stand_in(name: str, values: list[float], order: int) -> Measure:
    """A measure whose rows take the next of `values` each run (target ≤ 5 ms)."""
    figures: Iterator[float] = iter(values)

    def measure(ctx: Any) -> list[Row]:
        value = next(figures)
        return [Row("p50", f"{name} median", value, "ms", target="fast", how=f"{name} timed")]

    return Measure(
        section=name,
        title=f"Section {name}",
        run=measure,
        targets={"fast": Target("<=", 5, "ms")},
        summary=("p50",),
        order=order,
    )


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    readme = tmp_path / "README.md"
    readme.write_text(f"# Readme\n\n{report.SUMMARY_BEGIN}\n{report.SUMMARY_END}\n\nend\n")
    return {
        "--output": tmp_path / "BENCHMARKS.md",
        "--results": tmp_path / "results.json",
        "--readme": readme,
    }


def bench(files: dict[str, Path], measures: list[Measure], *args: str) -> int:
    paths = [str(part) for flag, path in files.items() for part in (flag, path)]
    return run.main([*args, *paths], measures)


def test_a_partial_run_rewrites_only_its_sections(files: dict[str, Path]) -> None:
    measures = [stand_in("a", [1.0], 1), stand_in("b", [3.0, 7.0], 2), stand_in("c", [4.0], 3)]
    assert bench(files, measures) == 0
    document = files["--output"]
    first = document.read_text(encoding="utf-8")
    first_results = json.loads(files["--results"].read_text(encoding="utf-8"))
    # A section as an older renderer wrote it must survive a partial run untouched.
    old_a = report.parse_sections(first)["a"]
    aged_a = old_a.replace("## Section a", "## Section a\n\n(an older renderer's line)  ")
    document.write_text(first.replace(old_a, aged_a), encoding="utf-8")

    assert bench(files, measures, "--only", "b") == 0

    second = document.read_text(encoding="utf-8")
    before, after = report.parse_sections(first), report.parse_sections(second)
    assert after["a"] == aged_a
    assert after["c"] == before["c"]
    assert "| b median | 3.0 ms | ≤ 5 ms | pass |" in before["b"]
    assert "| b median | 7.0 ms | ≤ 5 ms | miss |" in after["b"]
    assert "`just bench --only b" in after["b"]
    results = json.loads(files["--results"].read_text(encoding="utf-8"))
    assert results["sections"]["a"] == first_results["sections"]["a"]
    assert results["sections"]["c"] == first_results["sections"]["c"]
    assert results["sections"]["b"]["rows"][0]["value"] == 7.0
    readme = files["--readme"].read_text(encoding="utf-8")
    assert readme.startswith("# Readme\n\n") and readme.endswith("\n\nend\n")
    assert "| b median | 7.0 ms | ≤ 5 ms | miss |" in readme


def test_only_takes_several_sections_and_leaves_the_rest(files: dict[str, Path]) -> None:
    measures = [stand_in("a", [1.0, 2.0], 1), stand_in("b", [3.0], 2), stand_in("c", [4.0, 6.0], 3)]
    assert bench(files, measures) == 0
    first = report.parse_sections(files["--output"].read_text(encoding="utf-8"))

    assert bench(files, measures, "--only", "a", "--only", "c") == 0

    second = report.parse_sections(files["--output"].read_text(encoding="utf-8"))
    assert second["b"] == first["b"]
    assert "2.0 ms" in second["a"] and "6.0 ms | ≤ 5 ms | miss" in second["c"]


def test_a_full_run_records_every_section_with_its_provenance(files: dict[str, Path]) -> None:
    measures = [stand_in("a", [1.0], 1), stand_in("b", [9.0], 2)]

    assert bench(files, measures, "--check") == 1  # b misses its target

    text = files["--output"].read_text(encoding="utf-8")
    assert list(report.parse_sections(text)) == ["a", "b"]
    record = json.loads(files["--results"].read_text(encoding="utf-8"))["sections"]["a"]
    assert record["command"].startswith("just bench --check")
    assert record["machine"]["cores"] >= 1 and record["machine"]["cpu"]
    assert set(record["load"]) == {"before", "after"}
    assert record["commit"] and record["date"].endswith("UTC")
    # what the file says is what results.json renders to
    template = report.TEMPLATE.read_text(encoding="utf-8")
    results = report.load_results(files["--results"])
    assert text == report.render_document(measures, results, template)


def test_a_failing_measure_keeps_its_old_section_and_the_run_says_so(
    files: dict[str, Path],
) -> None:
    measures = [stand_in("a", [1.0], 1), stand_in("b", [2.0], 2)]  # b has one figure only
    assert bench(files, measures) == 0
    kept = report.parse_sections(files["--output"].read_text(encoding="utf-8"))["b"]

    assert bench(files, measures, "--only", "b") == 2  # StopIteration inside the measure

    assert report.parse_sections(files["--output"].read_text(encoding="utf-8"))["b"] == kept


def test_an_unknown_section_or_size_is_refused(files: dict[str, Path]) -> None:
    measures = [stand_in("a", [1.0], 1)]
    with pytest.raises(SystemExit):
        bench(files, measures, "--only", "nope")
    assert bench(files, measures, "--set", "no_such_size=3") == 2
    assert not files["--output"].exists()


def test_an_optional_section_runs_only_when_named_and_a_whole_run_keeps_it(
    files: dict[str, Path],
) -> None:
    peers = dataclasses.replace(stand_in("peers", [2.0, 3.0], 3), optional=True)
    measures = [stand_in("a", [1.0, 1.5, 1.7], 1), peers]

    assert bench(files, measures) == 0  # a whole run: every section but the optional one
    first = report.parse_sections(files["--output"].read_text(encoding="utf-8"))
    assert "just bench --only peers" in first["peers"] and "1.0 ms" in first["a"]

    assert bench(files, measures, "--only", "peers") == 0
    assert bench(files, measures) == 0

    last = report.parse_sections(files["--output"].read_text(encoding="utf-8"))
    assert "2.0 ms" in last["peers"] and "1.5 ms" in last["a"]  # measured once, then kept
    results = json.loads(files["--results"].read_text(encoding="utf-8"))
    assert results["sections"]["peers"]["command"].startswith("just bench --only peers ")
    assert "| peers median | 2.0 ms |" in files["--readme"].read_text(encoding="utf-8")
