"""verify."""

from __future__ import annotations

import typer

from gitvault.commands.common import emit_json, location, out, print_lines


def register(app: typer.Typer) -> None:
    app.command()(verify)


def verify(
    ctx: typer.Context,
    fix: bool = typer.Option(
        False, "--fix", help="Remove stale and dangling lines, re-point rewritten citations."
    ),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Check every digest line against the code: citations exist, cited commits are still on
    a branch (or re-pointed after a rebase or squash), not reverted, and the files and
    `symbols` a line names still exist. The agent files' sections leave out what it flags.
    Exit 1 when anything is stale or dangling."""
    from gitvault.agents import agentfiles
    from gitvault.fold import verify as verify_mod

    loc = location(ctx)
    report = verify_mod.run(loc, fix=fix)
    agentfiles.after_verify(loc)
    if json_out:
        emit_json("verify", report.as_json())
    else:
        lines = list(verify_mod.summary(report))
        print_lines(lines, "")
        checked = len(report.lines)
        out.print(
            f"verify: {checked} digest line(s) checked, {len(lines)} with a problem"
            + (" (fixed in one vault commit)" if fix and lines else ""),
            markup=False,
        )
    if report.failing:
        raise typer.Exit(1)
