"""What a measure is, and how run.py finds them.

A measure module in bench/measures/ declares, at module level,

    MEASURES = (Measure(section="NAME", title=..., run=function, targets={...}, ...),)

and `run(ctx)` returns the rows it measured (a list of Row), or a Measured when the section
also carries free markdown of its own (a table of scenarios, a chart in text). Each target is
declared once, in the measure that owns it; a row names the target it is judged by and
carries its value in that target's unit, and the harness alone decides pass or miss.

Standard library only: bench/report.py renders and checks BENCHMARKS.md with it, without
gitvault's dependencies and without measuring anything.
"""

from __future__ import annotations

import importlib
import operator
import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SECTION_NAME = re.compile(r"[a-z][a-z0-9_-]{0,40}")

# op → (how it reads, the comparison)
OPS: dict[str, tuple[str, Callable[[float, float], bool]]] = {
    "<=": ("≤", operator.le),
    "<": ("<", operator.lt),
    ">=": ("≥", operator.ge),
    ">": (">", operator.gt),
    "==": ("=", operator.eq),
}
# Units printed without a space before them (1.2×, not 1.2 ×).
_TIGHT_UNITS = ("×",)
# Decimals a value of this unit is shown with, when the measure gives no text of its own.
_DECIMALS = {"ms": 1, "s": 2, "×": 2, "%": 1, "MB": 0, "B": 0}


def number(value: float) -> str:
    """A target's number as a person writes it: 10, 1.2, 0.3, 1,536."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.6g}"


def with_unit(text: str, unit: str) -> str:
    if not unit:
        return text
    return f"{text}{unit}" if unit in _TIGHT_UNITS else f"{text} {unit}"


def show(value: float, unit: str) -> str:
    """A measured value in its unit, with the unit's usual precision."""
    decimals = _DECIMALS.get(unit, 0 if abs(value) >= 100 else 2)
    return with_unit(f"{value:,.{decimals}f}", unit)


@dataclass(frozen=True)
class Target:
    """What a row must reach: `value` compared by `op` ("<=", "<", ">=", ">", "==") in `unit`."""

    op: str
    value: float
    unit: str = ""

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise ValueError(f"unknown comparison {self.op!r}: use one of {', '.join(OPS)}")

    def holds(self, measured: float) -> bool:
        return OPS[self.op][1](measured, self.value)

    def text(self) -> str:
        return f"{OPS[self.op][0]} {with_unit(number(self.value), self.unit)}"

    def as_json(self) -> dict[str, Any]:
        return {"op": self.op, "value": self.value, "unit": self.unit}


@dataclass
class Row:
    """One measured figure.

    key: stable name of the row inside its section (results.json, README's summary).
    value: the figure in `unit` (None when there is no number, e.g. a skipped row).
    shown: how to print it when more than the number says (e.g. "1.06× (8.6 ms vs 8.1 ms)").
    target: the key of the measure's target the row is judged by (None: reported only).
    valid: False when the measurement's own check failed (no recall block in the output, notes
        missing): the row is "failed" whatever its number, and `note` says why.
    skipped: why the row could not be measured here (it then neither passes nor misses).
    """

    key: str
    metric: str
    value: float | None
    unit: str = ""
    shown: str = ""
    target: str | None = None
    valid: bool = True
    note: str = ""
    skipped: str = ""
    how: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Measured:
    """What a measure returns when its section has markdown besides the rows."""

    rows: list[Row]
    markdown: str = ""


RunResult = list[Row] | Measured


@dataclass(frozen=True)
class Measure:
    """One section of BENCHMARKS.md.

    section: its name (`just bench --only NAME`, the markers in BENCHMARKS.md).
    run: ctx → rows (or Measured); ctx is measures.common.Context.
    targets: every target its rows are judged by, by key.
    about: what the section measures and how, rendered above its table.
    summary: keys of the rows README's benchmark summary shows.
    order: where the section sits in BENCHMARKS.md (smaller first).
    optional: measured only when named (`--only NAME`, a recipe of its own), never by a whole
        `just bench`, which keeps its last record (e.g. one that installs other tools).
    """

    section: str
    title: str
    run: Callable[[Any], RunResult]
    targets: Mapping[str, Target] = field(default_factory=dict)
    about: str = ""
    summary: tuple[str, ...] = ()
    order: int = 100
    optional: bool = False

    def __post_init__(self) -> None:
        if not SECTION_NAME.fullmatch(self.section):
            raise ValueError(f"bad section name {self.section!r}: {SECTION_NAME.pattern}")


def verdict(row: Row, targets: Mapping[str, Target]) -> str:
    """pass or miss (against its target), failed (the measurement's own check failed, target
    or not), skipped, or — (reported only)."""
    if row.skipped:
        return "skipped"
    if not row.valid:
        return "failed"
    if row.target is None:
        return "—"
    if row.value is None:
        return "failed"
    return "pass" if targets[row.target].holds(row.value) else "miss"


def check_rows(measure: Measure, rows: list[Row]) -> None:
    """A harness bug, not a measurement: a row judged by a target its measure does not declare,
    in another unit than that target's, or two rows with one key."""
    seen: set[str] = set()
    for row in rows:
        if row.key in seen:
            raise ValueError(f"{measure.section}: two rows with key {row.key!r}")
        seen.add(row.key)
        if row.target is None:
            continue
        target = measure.targets.get(row.target)
        if target is None:
            raise ValueError(f"{measure.section}: row {row.key!r} names no declared target")
        if row.unit != target.unit:
            raise ValueError(
                f"{measure.section}: row {row.key!r} is in {row.unit!r}, its target in "
                f"{target.unit!r}"
            )


def discover(package: str = "measures", where: Path | None = None) -> list[Measure]:
    """Every Measure in the modules of `package` (bench/measures), in section order. Modules
    without MEASURES (shared helpers) are skipped."""
    folder = where or Path(__file__).resolve().parent / package
    found: dict[str, Measure] = {}
    for info in sorted(pkgutil.iter_modules([str(folder)]), key=lambda m: m.name):
        module = importlib.import_module(f"{package}.{info.name}")
        for measure in getattr(module, "MEASURES", ()):
            if measure.section in found:
                raise ValueError(f"two measures claim section {measure.section!r}")
            found[measure.section] = measure
    return sorted(found.values(), key=lambda m: (m.order, m.section))
