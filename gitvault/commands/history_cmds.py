"""log, show."""

from __future__ import annotations

import typer
from rich.table import Table

from gitvault.commands.common import emit_json, location, out, since_option
from gitvault.errors import GitvaultError
from gitvault.memory import history
from gitvault.memory.dates import parse_since
from gitvault.vault.store import Vault


def register(app: typer.Typer) -> None:
    app.command("log")(log_cmd)
    app.command()(show)


def log_cmd(
    ctx: typer.Context,
    n: int = typer.Option(20, "-n", "--max-count", min=1, help="Show at most N entries."),
    kind: str = typer.Option(None, "--kind", metavar="KIND", help="Only note, session or fold."),
    since: str = since_option("a note by its project commit's date, a session by its save"),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """The vault's history, the newest vault commit first: one line per note (with the project
    commit it describes and that commit's date; a backfill writes old commits' notes after
    newer ones), session (by title) and fold."""
    if kind is not None and kind not in history.KINDS:
        raise GitvaultError(f"unknown kind {kind!r}", hint="use note, session or fold")
    moment = parse_since(since)
    loc = location(ctx)
    vault = Vault(loc)
    vault.check_format()
    items = list(history.entries(vault, limit=n, kind=kind, since=moment))
    if json_out:
        emit_json("log", [i.as_json() for i in items])
        return
    table = Table(box=None, pad_edge=False)
    table.add_column("date")
    table.add_column("kind")
    table.add_column("id", overflow="fold")
    table.add_column("title", overflow="fold")
    for i in items:
        table.add_row(i.date[:16].replace("T", " "), i.kind, i.id, i.title)
    out.print(table, markup=False)
    if not items:
        out.print("(nothing yet)")


def show(
    ctx: typer.Context,
    ident: str = typer.Argument(
        ...,
        metavar="ID",
        help="c:<sha>, s:<slug>, digest[:<vault commit>], a commit (sha, HEAD, HEAD~2, a "
        "branch), a session slug or a vault path.",
    ),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Print a note, a session or the digest: anything a digest or `gitvault search` cites, or
    a commit of the project (its note). An abbreviation that fits several items lists them."""
    loc = location(ctx)
    vault = Vault(loc)
    vault.check_format()
    shown = history.show(vault, ident)
    if json_out:
        emit_json(
            "show",
            {
                "id": shown.id,
                "path": shown.path,
                "at": shown.at,
                "meta": shown.meta,
                "text": shown.text,
                "origin": shown.origin,
                "held": shown.held,
            },
        )
        return
    where = f" (at vault commit {shown.at[:7]})" if shown.at else ""
    out.print(f"{shown.path}{where}", markup=False, style="bold")
    if shown.origin:
        out.print(f"{shown.origin}: {history.FOREIGN}", markup=False)
    out.print(shown.text, markup=False)
