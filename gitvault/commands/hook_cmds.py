"""recall, and the hidden `hook` entry points."""

from __future__ import annotations

import sys

import typer

from gitvault.agents import adapters
from gitvault.commands.common import emit_json, err, location, out
from gitvault.memory import recall as recall_mod
from gitvault.resolve import Location

hook_app = typer.Typer(help="Entry points for git and agent hooks (called by gitvault's shims).")


def register(app: typer.Typer) -> None:
    app.command()(recall)
    app.command()(mcp)
    app.add_typer(hook_app, name="hook", hidden=True)


def recall(
    ctx: typer.Context,
    for_path: str = typer.Option(
        None,
        "--for",
        metavar="PATH",
        help="The block an agent gets when it first reads or edits PATH (≤ 3,200 characters).",
    ),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Print the recall block an agent's session-start hook injects (≤ 9,500 characters), or
    with --for the edit-time block about one file."""
    loc = location(ctx)
    if for_path is not None:
        _recall_for(loc, for_path, json_out)
        return
    result = recall_mod.build(loc.workdir or loc.common_dir, loc=loc)
    for problem in result.problems:
        err.print(f"warning: {problem}", markup=False)
    if json_out:
        emit_json(
            "recall",
            {
                "text": result.text,
                "chars": len(result.text),
                "omitted": result.omitted,
                "has_digest": result.has_digest,
                "sessions": result.sessions,
            },
        )
        return
    if not result.text:
        out.print("(no vault here: run `gitvault install`)", markup=False)
        return
    # Written raw, not through rich: the block must be byte for byte what the hook injects
    # (rich would turn ":rocket:" into an emoji and could wrap or restyle text).
    sys.stdout.write(result.text + "\n")


def mcp(ctx: typer.Context) -> None:
    """Serve the memory to an agent over MCP (stdio): search, show, file_memory, recall,
    save_session, verify_line. `gitvault install` registers it in each agent's MCP
    configuration."""
    from gitvault import mcpserver

    raise typer.Exit(mcpserver.serve(location(ctx, drain_spool=False)))


def _recall_for(loc: Location, name: str, json_out: bool) -> None:
    from pathlib import Path

    from gitvault.pathrecall.block import edit_block

    # PATH is relative to where the person stands, like any other command-line path.
    block = edit_block(loc, name, cwd=Path.cwd(), update=True)
    if json_out:
        emit_json(
            "recall-for",
            {
                "path": block.path,
                "text": block.text,
                "chars": len(block.text),
                "reason": block.reason or None,
                "commits": block.facts.commits if block.facts else 0,
            },
        )
        return
    if not block.text:
        out.print(f"(nothing: {block.reason})", markup=False)
        return
    sys.stdout.write(block.text + "\n")


def _agent_hook(name: str) -> None:
    def run_hook(
        event: str = typer.Argument(
            ..., help="session-start, turn-end, pre-compact or session-end."
        ),
    ) -> None:
        from gitvault import hook

        raise typer.Exit(hook.main([name, event]))

    run_hook.__doc__ = f"Run a {name} hook (reads the hook input on stdin; always exits 0)."
    hook_app.command(name)(run_hook)


for _name in adapters.NAMES:
    _agent_hook(_name)


@hook_app.command("git")
def hook_git(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="drain: turn the spool into notes now."),
) -> None:
    """Run gitvault's side of a git hook: `drain` writes the spooled notes now."""
    from gitvault.notes import drain

    loc = location(ctx, drain_spool=False)
    if name != "drain":
        raise typer.BadParameter("only `drain` is supported")
    written = drain.drain(loc, block=True)
    out.print(f"drained: {written} note(s) written")
