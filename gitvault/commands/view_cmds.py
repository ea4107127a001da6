"""view."""

from __future__ import annotations

from pathlib import Path

import typer

from gitvault.commands.common import err, location, out
from gitvault.status import view as view_mod
from gitvault.vault import gitcmd, processes


def register(app: typer.Typer) -> None:
    app.command()(view)


def view(
    ctx: typer.Context,
    out_path: str = typer.Option(
        None,
        "--out",
        "-o",
        metavar="FILE",
        help="Write the page here (default: a file per repository in ~/.cache/gitvault/view/, "
        "never inside a worktree).",
    ),
    open_it: bool = typer.Option(False, "--open", help="Open the page in a web browser."),
) -> None:
    """Write the memory as one static HTML page that opens from disk (no server, no network):
    the digest with every citation a link to its commit, verify's marks, a timeline of
    sessions, decisions, reverts and folds, the paths the memory knows most about, and a
    search box. Redacted and fenced like recall: it may be shared."""
    loc = location(ctx)
    written = view_mod.write(loc, Path(out_path) if out_path else None)
    out.print(str(written), markup=False)
    if loc.workdir is not None and _tracked_by_accident(loc.workdir, written):
        err.print(
            f"note: {written} is inside the worktree and not ignored: `git add -A` would commit it",
            markup=False,
        )
    if open_it and not processes.open_in_browser(written):
        err.print("no web browser found: open the path above", markup=False)


def _tracked_by_accident(workdir: Path, path: Path) -> bool:
    try:
        rel = path.resolve().relative_to(workdir.resolve())
    except ValueError:
        return False
    ignored = gitcmd.run_git(["check-ignore", "-q", "--", str(rel)], workdir, check=False)
    return ignored.returncode != 0
