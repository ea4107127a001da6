"""search, stats."""

from __future__ import annotations

import typer

from gitvault.commands.common import emit_json, location, out, since_option
from gitvault.memory import search as search_mod
from gitvault.memory.dates import parse_since
from gitvault.status import charts
from gitvault.status import stats as stats_mod


def register(app: typer.Typer) -> None:
    # A query may hold words that look like options (`search add --interactive`): an unknown
    # option is a query word; `--` still ends the options, as everywhere. A plain search is
    # answered before typer loads (commands/search_fast); this is the command it defers to.
    app.command(context_settings={"ignore_unknown_options": True})(search)
    app.command()(stats)


def search(
    ctx: typer.Context,
    query: list[str] = typer.Argument(..., metavar="QUERY", help="Words to search for."),  # noqa: B008
    n: int = typer.Option(
        search_mod.DEFAULT_LIMIT,
        "-n",
        "--max-count",
        min=1,
        max=search_mod.MAX_LIMIT,
        help="At most N results.",
    ),
    kind: str = typer.Option(
        None, "--kind", metavar="KIND", help="Only note, session or digest (past digest lines)."
    ),
    since: str = since_option("notes are dated by their commit"),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Ranked full-text search (SQLite FTS5) over every note, session and past digest line.
    Words are matched stemmed (fix finds fixes, fixed), identifiers and paths also whole
    (click.prompt, core.hooksPath); rare words weigh more. A result missing some words is
    marked partial and says which it holds; a merge and the commits it brought in are one
    result. The text answer is at most 4,000 characters."""
    loc = location(ctx)
    text = " ".join(query)
    answer = search_mod.Index(loc).search(text, limit=n, kind=kind, since=parse_since(since))
    if json_out:
        emit_json("search", answer.as_json())
        return
    out.print(search_mod.render(answer), markup=False)


def stats(
    ctx: typer.Context,
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """How big the memory is and what it costs: notes, sessions, folds, raw vs digest
    characters and the compression ratio, estimated tokens, recall size, fold spend, digest
    age, pending items; in the terminal, charts of notes and sessions per week, the digest
    against raw memory at each fold, fold spend against the day's budget and the paths the
    memory talks about most (--json is the figures only)."""
    loc = location(ctx)
    report = stats_mod.stats(loc)
    if json_out:
        emit_json("stats", report.as_json())
        return
    for label, value in report.lines():
        out.print(f"{label:<22} {value}", markup=False)
    _draw_charts(stats_mod.charts_of(loc, report))


def _shown(text: str) -> str:
    """A path from the memory as plain text: no control character reaches the terminal."""
    return "".join(c if c.isprintable() else "?" for c in text)


def _draw_charts(found: charts.Charts) -> None:
    """Small bar charts under the figures (rich tables of block characters)."""
    from rich.table import Table

    def table(title: str) -> Table:
        grid = Table(title=title, title_justify="left", box=None, show_header=False, pad_edge=False)
        grid.add_column(no_wrap=True)
        grid.add_column(no_wrap=True)
        grid.add_column(justify="right", no_wrap=True)
        return grid

    if found.weeks:
        most = max(max(w.notes, w.sessions) for w in found.weeks)
        grid = table("notes █ and sessions ▒ per week")
        for week in found.weeks:
            notes = charts.bar(week.notes, most, 30)
            sessions = charts.bar(week.sessions, most, 30).replace("█", "▒")
            grid.add_row(
                f"{week.start:%Y-%m-%d}",
                f"{notes}\n{sessions}" if sessions else notes,
                f"{week.notes:,} / {week.sessions:,}",
            )
        out.print()
        out.print(grid)
    if found.folds:
        most = max(max(p.raw_chars, p.digest_chars) for p in found.folds)
        grid = table("digest █ against raw memory ▒ at each fold (chars)")
        for point in found.folds:
            grid.add_row(
                f"{point.day:%Y-%m-%d}",
                charts.bar(point.digest_chars, most, 30)
                + "\n"
                + charts.bar(point.raw_chars, most, 30).replace("█", "▒"),
                f"{point.digest_chars:,} / {point.raw_chars:,}",
            )
        out.print()
        out.print(grid)
    grid = table("fold spend (prompt chars)")
    grid.add_row(
        "today",
        charts.bar(found.spend_today, found.spend_budget, 30) or "·",
        f"{found.spend_today:,} of {found.spend_budget:,} a day",
    )
    grid.add_row("in total", "", f"{found.spend_total:,}")
    out.print()
    out.print(grid)
    if found.paths:
        most = found.paths[0][1]
        grid = table("paths the memory talks about most (noted commits)")
        for path, commits in found.paths:
            grid.add_row(_shown(path)[-40:], charts.bar(commits, most, 24), f"{commits:,}")
        out.print()
        out.print(grid)
