"""BENCHMARKS.md's sections: the splice that keeps every other section byte for byte, the
markers, the README summary block, and that the committed files are what results.json renders
to (as `just lint` checks)."""

from __future__ import annotations

import pytest
import report
from registry import Measure, Row, Target

TEMPLATE = f"# Title\n\nintro text\n\n{report.SLOT}\n\ncoda\n"


def block(name: str, body: str) -> str:
    return f"{report.begin_marker(name)}\n{body}\n{report.end_marker(name)}"


def outside(text: str) -> str:
    """The document with its sections cut out: what the template contributes."""
    for section in report.parse_sections(text).values():
        text = text.replace(section, "<section>")
    return text


def test_splice_replaces_only_the_fresh_section_and_keeps_the_others_byte_for_byte() -> None:
    odd_a = block("a", "## A\n\nhand-kept\ttab, trailing space \n| old | table |\r\nünïcode")
    odd_c = block("c", "## C\n\n\n\nthree blank lines above, no renderer makes this")
    current = f"stale header\n\n{odd_a}\n\n{block('b', '## B old')}\n\n{odd_c}\nstale coda\n"
    fresh_b = block("b", "## B new")

    out = report.splice(current, TEMPLATE, ["a", "b", "c"], {"b": fresh_b}, lambda n: "unused")

    sections = report.parse_sections(out)
    assert sections == {"a": odd_a, "b": fresh_b, "c": odd_c}
    # everything around the sections is the template's, not the old file's
    assert outside(out) == TEMPLATE.replace(report.SLOT, "\n\n".join(["<section>"] * 3))


def test_splice_renders_missing_sections_and_drops_unknown_ones() -> None:
    current = f"{block('gone', 'a measure that was removed')}\n\n{block('a', 'kept')}\n"

    out = report.splice(current, TEMPLATE, ["a", "new"], {}, lambda n: block(n, "fallback"))

    assert report.parse_sections(out) == {"a": block("a", "kept"), "new": block("new", "fallback")}


def test_splice_of_a_file_without_markers_is_the_template_with_fresh_sections() -> None:
    handwritten = "# Benchmarks\n\n| pasted | table |\n\n## A section pasted by hand\n"

    out = report.splice(handwritten, TEMPLATE, ["a"], {}, lambda n: block(n, "placeholder"))

    assert "pasted" not in out
    assert out == TEMPLATE.replace(report.SLOT, block("a", "placeholder"))


@pytest.mark.parametrize(
    "text",
    [
        f"{report.begin_marker('a')}\nno end",
        f"{report.end_marker('a')}\nno beginning",
        f"{report.begin_marker('a')}\n{report.begin_marker('b')}\n{report.end_marker('b')}\n"
        f"{report.end_marker('a')}",
        f"{block('a', 'one')}\n{block('a', 'two')}",
        f"{report.begin_marker('a')}\n{report.end_marker('b')}",
    ],
    ids=["unterminated", "end-only", "nested", "twice", "mismatched"],
)
def test_markers_that_do_not_pair_up_are_refused(text: str) -> None:
    with pytest.raises(report.Malformed):
        report.parse_sections(text)


def test_a_template_needs_exactly_one_slot() -> None:
    with pytest.raises(report.Malformed):
        report.fill("no slot here\n", [])
    with pytest.raises(report.Malformed):
        report.fill(f"{report.SLOT}\n{report.SLOT}\n", [])


def _record(rows: list[dict[str, object]]) -> dict[str, object]:
    return {
        "title": "Thing",
        "about": "",
        "command": "just bench --only thing",
        "commit": "0123456789ab",
        "dirty": False,
        "date": "2026-12-01 10:00 UTC",
        "seconds": 60.0,
        "machine": {
            "cpu": "Test CPU",
            "cores": 2,
            "usable_cores": 2,
            "ram": "1.0 GiB",
            "os": "TestOS",
            "python": "CPython 3.11",
            "git": "2.39",
            "pygit2": "1.0",
            "gitvault": "0.0",
            "scratch": "/tmp",
        },
        "load": {"before": 0.5, "after": 3.5},
        "sizes": {},
        "rows": rows,
        "markdown": "",
    }


def test_a_section_states_command_commit_date_machine_and_load() -> None:
    text = report.render_section("thing", _record([]))

    for fact in (
        "`just bench --only thing`",
        "`0123456789ab`",
        "2026-12-01 10:00 UTC",
        "Test CPU, 2 logical cores, 1.0 GiB RAM",
        "load average 0.5 before, 3.5 after",
        "busy with other work",  # 3.5 > 0.75 × 2 cores
    ):
        assert fact in text


def test_the_readme_summary_is_spliced_between_its_markers_only() -> None:
    measure = Measure(section="thing", title="Thing", run=lambda ctx: [], summary=("p50",))
    row = {
        "key": "p50",
        "metric": "thing, median",
        "shown": "3.0 ms",
        "target": {"text": "≤ 5 ms"},
        "result": "pass",
    }
    results = {"format": report.FORMAT, "sections": {"thing": _record([row])}}
    readme = f"before\n{report.SUMMARY_BEGIN}\nold\n{report.SUMMARY_END}\nafter\n"

    out = report.with_summary(readme, report.render_summary([measure], results))

    assert out.startswith("before\n") and out.endswith("\nafter\n")
    assert "old" not in out
    assert "| thing, median | 3.0 ms | ≤ 5 ms | pass | 2026-12-01, load 0.5–3.5 |" in out


def test_a_summary_row_not_measured_yet_says_how_to_measure_it() -> None:
    measure = Measure(section="thing", title="Thing", run=lambda ctx: [], summary=("p50",))

    text = report.render_summary([measure], {"format": report.FORMAT, "sections": {}})

    assert "| Thing: p50 | not measured yet | | | `just bench --only thing` |" in text


def test_rows_of_a_record_render_with_their_target_and_verdict() -> None:
    rows = [
        {"metric": "fast", "shown": "3.0 ms", "target": {"text": "≤ 5 ms"}, "result": "pass"},
        {"metric": "slow", "shown": "7.0 ms", "target": {"text": "≤ 5 ms"}, "result": "miss"},
        {"metric": "report", "shown": "1.0 s", "target": None, "result": "—"},
        {"metric": "x", "shown": "1 ms", "target": None, "result": "failed", "note": "no block"},
    ]

    text = report.render_section("thing", _record(rows))

    assert "| fast | 3.0 ms | ≤ 5 ms | pass |" in text
    assert "| slow | 7.0 ms | ≤ 5 ms | miss |" in text
    assert "| report | 1.0 s | — | — |" in text
    assert "| x | 1 ms | — | failed (no block) |" in text


def test_a_pipe_in_a_figure_cannot_break_the_table() -> None:
    rows = [{"metric": "a | b\nc", "shown": "1|2", "target": None, "result": "—"}]

    text = report.render_section("thing", _record(rows))

    assert "| a \\| b c | 1\\|2 | — | — |" in text


def test_committed_benchmarks_and_readme_summary_are_what_results_json_renders_to() -> None:
    assert report.main(["--check"]) == 0, "run `just docs` (or `just bench`)"


def test_every_measure_module_declares_its_sections_and_targets() -> None:
    from registry import discover

    measures = discover()
    names = [m.section for m in measures]
    assert len(names) == len(set(names))
    assert {"hook", "hook_imports", "claude_hooks", "gitops", "secrets"} <= set(names)
    for measure in measures:
        assert measure.title and callable(measure.run)
        for target in measure.targets.values():
            assert isinstance(target, Target)


def test_rows_are_checked_against_their_measures_targets() -> None:
    from registry import check_rows

    measure = Measure(
        section="thing", title="T", run=lambda ctx: [], targets={"fast": Target("<=", 5, "ms")}
    )
    check_rows(measure, [Row("a", "a", 1.0, "ms", target="fast")])
    for bad in (
        [Row("a", "a", 1.0, "s", target="fast")],  # another unit than its target's
        [Row("a", "a", 1.0, "ms", target="other")],  # a target nobody declared
        [Row("a", "a", 1.0, "ms"), Row("a", "b", 2.0, "ms")],  # one key twice
    ):
        with pytest.raises(ValueError):
            check_rows(measure, bad)
