"""sync: share the vault through the project's own git remotes."""

from __future__ import annotations

import typer

from gitvault.agents import agentfiles
from gitvault.commands.common import emit_json, err, location, out, print_lines
from gitvault.sync import run as sync_run


def register(app: typer.Typer) -> None:
    app.command()(sync)


def sync(
    ctx: typer.Context,
    remote: str = typer.Argument(
        None,
        metavar="[REMOTE]",
        help="Remote (default: git config gitvault.syncRemote, else the current branch's "
        "upstream remote, else origin).",
    ),
    no_push: bool = typer.Option(
        False, "--no-push", help="Fetch and merge the remote's vault; push nothing."
    ),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """FETCH the remote's vault, MERGE it into the local one, PUSH the result (never forced)."""
    loc = location(ctx)
    result = sync_run.sync(
        loc, remote, push=not no_push, say=lambda line: err.print(line, markup=False)
    )
    if result.buried:
        agentfiles.after_history_change(loc)
    if json_out:
        emit_json("sync", result.as_json())
        return
    out.print(result.summary(), markup=False)
    print_lines(result.report, "  ", to_err=True)
    if result.quarantine_record:
        err.print(f"  quarantine record: {result.quarantine_record}", markup=False)
    print_lines(result.ci_warnings, "  warning: ", to_err=True)
