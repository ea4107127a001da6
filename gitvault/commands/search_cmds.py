"""search, stats."""

from __future__ import annotations

import typer

from gitvault.commands.common import emit_json, location, out, since_option
from gitvault.memory import search as search_mod
from gitvault.memory.dates import parse_since
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
    age, pending items."""
    loc = location(ctx)
    report = stats_mod.stats(loc)
    if json_out:
        emit_json("stats", report.as_json())
        return
    for label, value in report.lines():
        out.print(f"{label:<22} {value}", markup=False)
