"""log, show."""

from __future__ import annotations

import typer
from rich.table import Table

from gitvault.commands.common import emit_json, location, out
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
    since: str = typer.Option(
        None,
        "--since",
        metavar="DATE",
        help="Only entries after this date (YYYY-MM-DD or '3 days ago').",
    ),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """The vault's history, newest first: one line per note, session and fold."""
    if kind is not None and kind not in history.KINDS:
        raise GitvaultError(f"unknown kind {kind!r}", hint="use note, session or fold")
    loc = location(ctx)
    vault = Vault(loc)
    vault.check_format()
    items = list(history.entries(vault, limit=n, kind=kind, since=parse_since(since)))
    if json_out:
        emit_json("log", [i.as_json() for i in items])
        return
    table = Table(box=None, pad_edge=False)
    table.add_column("commit")
    table.add_column("kind")
    table.add_column("time")
    table.add_column("title", overflow="fold")
    for i in items:
        table.add_row(i.commit[:10], i.kind, i.time, i.title)
    out.print(table)
    if not items:
        out.print("(nothing yet)")


def show(
    ctx: typer.Context,
    ident: str = typer.Argument(
        ..., metavar="ID", help="Commit sha (full or short), session slug or vault path."
    ),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Print a note, a session or the digest."""
    loc = location(ctx)
    vault = Vault(loc)
    vault.check_format()
    shown = history.show(vault, ident)
    if json_out:
        emit_json("show", {"path": shown.path, "meta": shown.meta, "text": shown.text})
        return
    out.print(f"[bold]{shown.path}[/bold]", markup=True)
    out.print(shown.text, markup=False)
