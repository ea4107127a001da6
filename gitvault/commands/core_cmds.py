"""install, uninstall, status, backfill, demo."""

from __future__ import annotations

from datetime import datetime

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from gitvault import install as install_mod
from gitvault.agents import adapters
from gitvault.commands.common import emit_json, err, location, out, print_lines
from gitvault.notes import backfill as backfill_mod
from gitvault.status import report as status_mod


def register(app: typer.Typer) -> None:
    app.command()(install)
    app.command()(uninstall)
    app.command()(status)
    app.command()(backfill)
    app.command()(demo)
    app.command()(quarantine)


_DEFAULT = adapters.get(adapters.DEFAULT)


def install(
    ctx: typer.Context,
    force: bool = typer.Option(
        False, "--force", help="Also write into a global/system core.hooksPath."
    ),
    no_default: bool = typer.Option(
        False,
        f"--no-{_DEFAULT.name}",
        help=f"Leave {_DEFAULT.label} out (no {_DEFAULT.label} hooks, no "
        f"{_DEFAULT.instruction_file}); with no other agent, only the vault and git hooks.",
    ),
    local: bool = typer.Option(
        False,
        "--local",
        help=f"{_DEFAULT.label} hooks go to {_DEFAULT.local_settings_file}.",
    ),
    agent: str = typer.Option(
        None,
        "--agent",
        metavar="LIST",
        help=f"Agents to wire: a comma-separated list of {', '.join(adapters.NAMES)}, or none "
        f"(default: {_DEFAULT.label} and the agents found on PATH or already wired here).",
    ),
) -> None:
    """Create the vault branch, install the git hook shims and wire the coding agents (Claude
    Code: hooks, /save and /recall skills, CLAUDE.md section; Codex, Gemini, Copilot: hooks
    and the AGENTS.md section). Safe to run again."""
    loc = location(ctx, drain_spool=False)
    chosen = None if agent is None else adapters.parse(agent)
    report = install_mod.install(
        loc, force=force, default_agent=not no_default, local=local, agents=chosen
    )
    _print_report(report)
    if not report.changes:
        out.print("gitvault is already installed; nothing changed.")
    else:
        out.print("gitvault installed: every commit in every worktree now gets a note.")


def _print_report(report: install_mod.Report) -> None:
    print_lines(report.changes)
    print_lines(report.notes, "  note: ")


def uninstall(
    ctx: typer.Context,
    purge: bool = typer.Option(
        False, "--purge", help="Also delete the vault branch and gitvault's state."
    ),
) -> None:
    """Remove what install added; chained hooks are restored. The vault is kept unless --purge."""
    loc = location(ctx, drain_spool=not purge)
    report = install_mod.uninstall(loc, purge=purge)
    _print_report(report)
    if not report.changes:
        out.print("nothing to remove.")


def status(
    ctx: typer.Context,
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
    one_line: bool = typer.Option(
        False,
        "--line",
        help="One short line for a shell prompt or an agent's status line: STALE when the "
        "digest is behind (status.stale_items / stale_days in vault.toml) or the last fold "
        "with the configured merger failed and nothing folded since; CHECKPOINT first when "
        "the status-line JSON an agent passes on stdin says 85% or "
        "more of the context window is used. Prints nothing outside a repository.",
    ),
) -> None:
    """What is installed, the spool backlog, the last note, and warnings."""
    if one_line:
        from gitvault.commands.common import Ctx
        from gitvault.status import line as line_mod

        state = ctx.obj if isinstance(ctx.obj, Ctx) else Ctx()
        raise typer.Exit(line_mod.print_line(state.repo, json_out=json_out))
    loc = location(ctx)
    st = status_mod.status(loc)
    if json_out:
        data = dict(st.__dict__)
        data["installed"] = st.installed
        emit_json("status", data)
        return
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_row("repository", st.repository)
    tip = st.vault_tip[:12] if st.vault_tip else "-"
    table.add_row("vault", f"{st.vault_branch} @ {tip} (format {st.vault_format or '-'})")
    hooks = ", ".join(f"{h['name']}{'' if h['installed'] else ' (missing)'}" for h in st.hooks)
    table.add_row("hooks", f"{hooks}  [{st.hooks_scope}: {st.hooks_dir}]")
    table.add_row("backlog", str(st.backlog))
    for a in st.agents:
        if not (a["served"] or a["hooks"]):
            continue
        trust = {True: "trusted", False: "NOT trusted", None: "trust unknown"}[a["trusted"]]
        hooks_text = f"hooks: {', '.join(a['hooks'])}" if a["hooks"] else "no hooks here"
        table.add_row(
            a["label"], f"{hooks_text}; {trust}" + (f" ({a['trust']})" if a["trust"] else "")
        )
    if st.last_note:
        table.add_row("last note written", f"{st.last_note['time']}  {st.last_note['title']}")
    if st.last_fold:
        table.add_row(
            "digest", f"folded {st.last_fold.get('folded_at')} by {st.last_fold.get('merger')}"
        )
    if st.sync:
        table.add_row("shared", _sharing_line(st.sync))
    out.print(table)
    for w in st.warnings:
        err.print(f"warning: {w}")
    for line in st.recent_failures:
        err.print(f"logged: {line}")


def _sharing_line(info: dict[str, object]) -> str:
    if not info.get("shared"):
        return f"no (local only; `gitvault sync` shares it)  [sync.auto {info.get('auto')}]"
    where = f"{info.get('remote')} {info.get('remote_ref')}"
    counts = f"{info.get('ahead')} ahead, {info.get('behind')} behind"
    return (
        f"yes: {where}; {counts}; last sync {info.get('last_sync')}  [sync.auto {info.get('auto')}]"
    )


def backfill(
    ctx: typer.Context,
    since: str = typer.Option(
        None, "--since", metavar="DATE", help="Only commits after this date (git date syntax)."
    ),
    branch: str = typer.Option(
        None, "--branch", metavar="BRANCH", help="Backfill this branch instead of HEAD."
    ),
    all_branches: bool = typer.Option(False, "--all", help="Every local branch."),
) -> None:
    """Write notes for commits that have none. Resumable and idempotent."""
    loc = location(ctx)
    with Progress(
        TextColumn("backfill"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,  # no stray output when stderr is a file or a pipe
    ) as bar:
        task = bar.add_task("notes", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        result = backfill_mod.backfill(
            loc, branch=branch, all_branches=all_branches, since=since, progress=progress
        )
    if result.written:
        from gitvault.pathrecall.index import update_quietly

        update_quietly(loc)  # a backfill is long work the user waits for: built with it
        from gitvault.materialize import ready

        ready.after_change(loc)
    out.print(
        f"backfill: {result.written} notes written, {result.already} already noted "
        f"({result.considered} commits considered)"
    )
    if result.set_aside:
        err.print(
            f"backfill: {result.set_aside} commit(s) set aside (see `gitvault quarantine`)",
            markup=False,
        )


def quarantine(
    ctx: typer.Context,
    retry: bool = typer.Option(False, "--retry", help="Put them back in the spool and drain."),
    drop: bool = typer.Option(False, "--drop", help="Forget them (their commits get no note)."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Commits whose note could not be written, set aside so they never block the others."""
    from gitvault.notes import drain
    from gitvault.notes import quarantine as quarantine_mod

    loc = location(ctx)
    state = loc.state_dir
    if retry:
        lines = quarantine_mod.take_all(state)
        drain.respool(loc, lines)
        written = drain.drain(loc, block=True)
        left = len(quarantine_mod.entries(state))
        out.print(f"retried {len(lines)}: {written} note(s) written, {left} still set aside")
        return
    if drop:
        out.print(f"dropped {quarantine_mod.drop_all(state)} set-aside commit(s)")
        return
    found = quarantine_mod.entries(state)
    if json_out:
        emit_json("quarantine", found)
        return
    for record in found:
        fields = str(record["line"]).split("\t")
        sha = fields[1] if len(fields) > 1 else "?"
        out.print(f"{record.get('at', '')}  {sha[:12]}  {record.get('reason', '')}", markup=False)
    if not found:
        out.print("nothing set aside")


def demo(
    keep: bool = typer.Option(False, "--keep", help="Keep the scratch repository."),
) -> None:
    """Run the whole loop on a scratch repository, offline, and print what happened."""
    from gitvault import demo as demo_mod

    started = datetime.now()
    demo_mod.run(out.print, keep=keep)
    out.print(f"demo finished in {(datetime.now() - started).total_seconds():.1f}s")
