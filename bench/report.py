"""BENCHMARKS.md and README's benchmark summary, both rendered from bench/results.json.

    python bench/report.py            re-render both from bench/results.json (measures nothing)
    python bench/report.py --check    exit 1 when either is not what bench/results.json renders

BENCHMARKS.md is the template bench/templates/BENCHMARKS.md with every measure's section put
in place of its `<!-- bench:sections -->` line, in the registry's order. A section runs from
`<!-- bench:section NAME -->` to `<!-- bench:end NAME -->`; everything between the markers is
rendered from that section's record in bench/results.json, everything outside them comes from
the template. A partial run (run.py --only NAME) splices only its own sections and leaves every
other byte of the file as it was (splice()).

Standard library only (besides the measure registry), so `just lint` can check the files
without measuring anything.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from registry import Measure, discover  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS = BENCH_DIR / "results.json"
TEMPLATE = BENCH_DIR / "templates" / "BENCHMARKS.md"
DOCUMENT = REPO_ROOT / "BENCHMARKS.md"
README = REPO_ROOT / "README.md"
FORMAT = 1

SLOT = "<!-- bench:sections -->"
SUMMARY_BEGIN = (
    "<!-- BEGIN generated benchmark summary: `just bench` rewrites it from bench/results.json -->"
)
SUMMARY_END = "<!-- END generated benchmark summary -->"
_MARKER = re.compile(r"^<!-- bench:(section|end) ([a-z][a-z0-9_-]*) -->$", re.M)


class Malformed(ValueError):
    """A document whose section markers do not pair up."""


def begin_marker(name: str) -> str:
    return f"<!-- bench:section {name} -->"


def end_marker(name: str) -> str:
    return f"<!-- bench:end {name} -->"


# -- the sections of a document ---------------------------------------------------------------


def parse_sections(text: str) -> dict[str, str]:
    """name → the section's text, from its begin marker through its end marker."""
    found: dict[str, str] = {}
    open_name: str | None = None
    open_at = 0
    for match in _MARKER.finditer(text):
        kind, name = match.group(1), match.group(2)
        if kind == "section":
            if open_name is not None:
                raise Malformed(f"section {name!r} begins inside section {open_name!r}")
            if name in found:
                raise Malformed(f"section {name!r} appears twice")
            open_name, open_at = name, match.start()
        else:
            if open_name != name:
                raise Malformed(f"end of section {name!r} without its beginning")
            found[name] = text[open_at : match.end()]
            open_name = None
    if open_name is not None:
        raise Malformed(f"section {open_name!r} has no end marker")
    return found


def fill(template: str, blocks: Sequence[str]) -> str:
    """The template with its sections slot replaced by the blocks."""
    if template.count(SLOT) != 1:
        raise Malformed(f"the template must hold the line {SLOT} exactly once")
    if parse_sections(template):
        raise Malformed("the template must not hold sections of its own")
    return template.replace(SLOT, "\n\n".join(blocks))


def splice(
    current: str | None,
    template: str,
    order: Sequence[str],
    fresh: Mapping[str, str],
    fallback: Callable[[str], str],
) -> str:
    """The document with `fresh` sections (name → rendered text) in place; every other section
    kept byte for byte from `current`, or fallback(name) when current has none; the text
    around the sections from the template."""
    kept = parse_sections(current) if current else {}
    return fill(template, [fresh.get(n) or kept.get(n) or fallback(n) for n in order])


# -- rendering one section ---------------------------------------------------------------------


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _load(value: float | None) -> str:
    return "unknown" if value is None or math.isnan(value) else f"{value:.1f}"


def provenance(record: Mapping[str, Any]) -> str:
    """Command, commit, date, machine and load of one section, in one paragraph."""
    machine = record["machine"]
    load = record["load"]
    commit = f"`{record['commit']}`" + (" with uncommitted changes" if record["dirty"] else "")
    cores = machine["cores"]
    text = (
        f"Measured by `{record['command']}` at commit {commit} on {record['date']} (took "
        f"{record['seconds'] / 60:.1f} min). Machine: {machine['cpu']}, {cores} logical cores"
        + (
            f" ({machine['usable_cores']} usable)"
            if machine.get("usable_cores") not in (None, cores)
            else ""
        )
        + f", {machine['ram']} RAM; {machine['os']}; {machine['python']}, git {machine['git']}, "
        f"pygit2 {machine['pygit2']}, gitvault {machine['gitvault']}; scratch disk "
        f"{machine['scratch']}. 1-minute load average {_load(load['before'])} before, "
        f"{_load(load['after'])} after."
    )
    peak = max((v for v in (load["before"], load["after"]) if v is not None), default=0.0)
    if cores and peak > 0.75 * cores:
        text += (
            " The machine was busy with other work: wall-clock figures are inflated, ratios "
            "taken within the run less so."
        )
    return text


def render_section(name: str, record: Mapping[str, Any]) -> str:
    rows = record["rows"]
    lines = [begin_marker(name), f"## {record['title']}", "", provenance(record), ""]
    if record.get("about"):
        lines += [record["about"], ""]
    lines += ["| metric | measured | target | result |", "|---|---:|---:|---|"]
    for row in rows:
        result = row["result"] + (f" ({row['note']})" if row.get("note") else "")
        target = row["target"]["text"] if row.get("target") else "—"
        lines.append(f"| {_cell(row['metric'])} | {_cell(row['shown'])} | {target} | {result} |")
    hows = [row for row in rows if row.get("how")]
    if hows:
        lines += ["", "How each row was measured:", ""]
        lines += [f"- **{row['metric']}.** {' '.join(row['how'].split())}" for row in hows]
    if record.get("markdown"):
        lines += ["", record["markdown"].strip("\n")]
    lines.append(end_marker(name))
    return "\n".join(lines)


def placeholder(measure: Measure) -> str:
    return "\n".join(
        [
            begin_marker(measure.section),
            f"## {measure.title}",
            "",
            f"Not measured yet: `just bench --only {measure.section}` measures it.",
            end_marker(measure.section),
        ]
    )


# -- the whole files ---------------------------------------------------------------------------


def load_results(path: Path = RESULTS) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"format": FORMAT, "sections": {}}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise Malformed(f"{path}: not a format-{FORMAT} results file")
    return data


def dump_results(results: Mapping[str, Any]) -> str:
    return json.dumps(results, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def section_text(measure: Measure, results: Mapping[str, Any]) -> str:
    record = results["sections"].get(measure.section)
    return render_section(measure.section, record) if record else placeholder(measure)


def render_document(measures: Sequence[Measure], results: Mapping[str, Any], template: str) -> str:
    """BENCHMARKS.md as results.json alone renders it (every section re-rendered)."""
    return fill(template, [section_text(m, results) for m in measures])


def render_summary(measures: Sequence[Measure], results: Mapping[str, Any]) -> str:
    """README's block: the rows each measure names in its summary."""
    lines = [
        SUMMARY_BEGIN,
        "| measure | measured | target | result | when |",
        "|---|---:|---:|---|---|",
    ]
    for measure in measures:
        record = results["sections"].get(measure.section)
        rows = {row["key"]: row for row in record["rows"]} if record else {}
        for key in measure.summary:
            row = rows.get(key)
            if row is None:
                lines.append(
                    f"| {measure.title}: {key} | not measured yet | | | "
                    f"`just bench --only {measure.section}` |"
                )
                continue
            assert record is not None
            target = row["target"]["text"] if row.get("target") else "—"
            when = (
                f"{record['date'][:10]}, load {_load(record['load']['before'])}–"
                f"{_load(record['load']['after'])}"
            )
            lines.append(
                f"| {_cell(row['metric'])} | {_cell(row['shown'])} | {target} | "
                f"{row['result']} | {when} |"
            )
    lines += [
        "",
        "Each figure's command, machine, load average and commit, and every other row: "
        "[BENCHMARKS.md](BENCHMARKS.md).",
        SUMMARY_END,
    ]
    return "\n".join(lines)


def with_summary(readme: str, block: str) -> str:
    start, end = readme.find(SUMMARY_BEGIN), readme.find(SUMMARY_END)
    if start < 0 or end < start:
        raise Malformed("README.md has no generated benchmark summary block")
    return readme[:start] + block + readme[end + len(SUMMARY_END) :]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    measures = discover()
    results = load_results()
    template = TEMPLATE.read_text(encoding="utf-8")
    wanted = {
        DOCUMENT: render_document(measures, results, template),
        README: with_summary(README.read_text(encoding="utf-8"), render_summary(measures, results)),
    }
    stale = [p for p, text in wanted.items() if not p.exists() or p.read_text("utf-8") != text]
    if "--check" in args:
        for path in stale:
            sys.stderr.write(
                f"{path.name} is not what bench/results.json renders to: run `just docs` "
                "(re-renders, measures nothing) or `just bench`\n"
            )
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path], encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
