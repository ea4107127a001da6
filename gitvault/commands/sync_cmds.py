"""sync: share the vault through the project's own git remotes."""

from __future__ import annotations

import typer

from gitvault.agents import agentfiles
from gitvault.commands.common import emit_json, err, location, out, print_lines
from gitvault.sync import run as sync_run
from gitvault.vault import layout


def register(app: typer.Typer) -> None:
    app.command()(sync)
    app.command()(review)


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
    held = sync_run.held_count(location(ctx))
    if held:
        err.print(
            f"  {held} file(s) from other clones wait for review: gitvault review", markup=False
        )


def review(
    ctx: typer.Context,
    action: str = typer.Argument(
        "list", metavar="[list|accept|reject]", help="What to do (default: list)."
    ),
    paths: list[str] = typer.Argument(None, metavar="[PATH]...", help="Vault paths, or all."),  # noqa: B008
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """REVIEW what came from other clones: list it, accept it into recall, the fold, search and
    the agent files, or reject it (git config gitvault.syncReview true holds it until then)."""
    from gitvault.errors import GitvaultError
    from gitvault.sync import review as review_mod

    loc = location(ctx)
    if action == "list":
        rows = review_mod.listing(loc)
        if json_out:
            emit_json("review", {"files": rows})
            return
        notes: dict[str, int] = {}
        for row in rows:
            if layout.note_sha(str(row["path"])) is not None:  # one line per kind, not per note
                state = str(row["review"] or "shown")
                notes[state] = notes.get(state, 0) + 1
                continue
            out.print(f"{row['review'] or 'shown'}\t{row['path']}\t{row['label']}", markup=False)
        for state, count in sorted(notes.items()):
            out.print(
                f"{state}\t{count:,} commit note(s)\t(`gitvault review --json` lists each; "
                "`gitvault review accept all` accepts everything)",
                markup=False,
            )
        if not rows:
            out.print("nothing came from another clone", markup=False)
        return
    if action not in ("accept", "reject"):
        raise GitvaultError(f"unknown review action {action!r}", hint="use list, accept or reject")
    changed = review_mod.decide(loc, paths or [], action)
    if json_out:
        emit_json("review", {"changed": changed, "action": action})
        return
    for path in changed:
        out.print(f"{action}ed {path}", markup=False)
    if not changed:
        out.print("nothing changed", markup=False)
