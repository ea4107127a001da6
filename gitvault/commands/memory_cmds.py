"""save, fold, patch."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from gitvault.agents import adapters, agentfiles, capture
from gitvault.commands.common import emit_json, err, location, out, print_lines
from gitvault.errors import GitvaultError
from gitvault.fold import run as fold_mod


def register(app: typer.Typer) -> None:
    app.command()(save)
    app.command()(checkpoint)
    app.command()(fold)
    app.command()(patch)


def save(
    ctx: typer.Context,
    file: str = typer.Argument("-", metavar="[FILE|-]", help="Session text (default: stdin)."),
    title: str = typer.Option(
        None, "--title", "-t", metavar="TITLE", help="Title (default: the text's # heading)."
    ),
    session_id: str = typer.Option(
        None,
        "--session-id",
        metavar="ID",
        help="The agent session's id (default: the one the agent's shell exports: "
        f"{', '.join(adapters.session_variables())}).",
    ),
    agent: str = typer.Option(
        None,
        "--agent",
        metavar="AGENT",
        help=f"Who saved it (default: {adapters.session_agents()} inside that agent).",
    ),
    private: bool = typer.Option(
        False, "--private", help="Keep it on this machine: never pushed by `gitvault sync`."
    ),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """APPEND a session summary to the vault (## Summary, ## Key Decisions, ## Next Steps)."""
    loc = location(ctx)
    if file == "-":
        if sys.stdin.isatty():
            err.print("reading the session from stdin; end with Ctrl-D")
        raw = sys.stdin.read()
    else:
        raw = _read_text_file(file)
    sid, who = _session_defaults(session_id, agent)
    saved = capture.save(loc, raw, title=title, session_id=sid, agent=who, private=private)
    if json_out:
        emit_json(
            "save",
            {
                "slug": saved.slug,
                "path": saved.path,
                "commit": saved.commit,
                "redactions": saved.redactions,
                "private": saved.private,
            },
        )
        return
    where = " (private: this machine only)" if saved.private else ""
    out.print(f"saved {saved.path} ({saved.commit[:7]}){where}")
    if saved.redactions:
        out.print(f"  redacted {saved.redactions} secret(s) before writing")


def checkpoint(
    ctx: typer.Context,
    file: str = typer.Argument(
        "-",
        metavar="[FILE|-]",
        help="The handover text: ## Asked, ## Open Threads, ## Next Step (default: stdin).",
    ),
    asked: str = typer.Option(None, "--asked", metavar="TEXT", help="What the user asked."),
    open_threads: str = typer.Option(
        None, "--open", metavar="TEXT", help="What is unfinished or undecided."
    ),
    next_step: str = typer.Option(
        None, "--next", metavar="TEXT", help="What the next session should do first."
    ),
    title: str = typer.Option(
        None, "--title", "-t", metavar="TITLE", help="Title (default: what was asked)."
    ),
    session_id: str = typer.Option(
        None, "--session-id", metavar="ID", help="The agent session's id (as for `save`)."
    ),
    agent: str = typer.Option(None, "--agent", metavar="AGENT", help="Who saved it."),
    private: bool = typer.Option(
        False, "--private", help="Keep it on this machine: never pushed by `gitvault sync`."
    ),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """SAVE a handover before the context runs out: what was asked, what this session
    committed (from its worktree's HEAD reflog), open threads, next step. The next session
    started here gets it first in its recall, once."""
    from gitvault.agents import checkpoint as checkpoint_mod

    loc = location(ctx)
    raw = ""
    if file != "-":
        raw = _read_text_file(file)
    elif asked is None or next_step is None:
        if sys.stdin.isatty():
            err.print("reading the handover from stdin; end with Ctrl-D")
        raw = sys.stdin.read()
    sid, who = _session_defaults(session_id, agent)
    overrides = {"Asked": asked, "Open Threads": open_threads, "Next Step": next_step}
    saved, made = checkpoint_mod.checkpoint(
        loc, raw, overrides=overrides, title=title, session_id=sid, agent=who, private=private
    )
    if json_out:
        emit_json(
            "checkpoint",
            {
                "slug": saved.slug,
                "path": saved.path,
                "commit": saved.commit,
                "redactions": saved.redactions,
                "private": saved.private,
                "commits": [c.sha for c in made],
            },
        )
        return
    where = " (private: this machine only)" if saved.private else ""
    out.print(f"saved handover {saved.path} ({saved.commit[:7]}){where}", markup=False)
    out.print(
        f"  lists {len(made)} commit(s) this session made; the next session here starts from it",
        markup=False,
    )
    if saved.redactions:
        out.print(f"  redacted {saved.redactions} secret(s) before writing")


def _read_text_file(file: str) -> str:
    try:
        return Path(file).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise GitvaultError(f"cannot read {file}: {exc.strerror}") from exc


def _session_defaults(session_id: str | None, agent: str | None) -> tuple[str | None, str | None]:
    """Inside an agent whose shell exports its session id (the adapters know which variable) a
    save belongs to the running session with no id typed: it clears that session's turn-end
    condition."""
    from gitvault.agents.ledger import valid_session_id

    if session_id is not None and not valid_session_id(session_id):
        raise GitvaultError(
            f"--session-id {session_id!r} is not a session id",
            hint="use letters, digits, '.', '_' and '-' (agents' session ids are UUIDs)",
        )
    if session_id is None or agent is None:
        found = adapters.session_from_env(os.environ)
        if found and valid_session_id(found[1]):
            env_agent, env_session = found
            if session_id is None and agent in (None, env_agent):
                session_id = env_session
            if agent is None and session_id == env_session:
                agent = env_agent
    return session_id, agent


def fold(
    ctx: typer.Context,
    dry_run: bool = typer.Option(False, "--dry-run", help="Show what would be sent; call nothing."),
    rebuild: bool = typer.Option(
        False, "--rebuild", help="Rebuild from the notes and sessions alone."
    ),
    merger: str = typer.Option(
        None, "--merger", metavar="MERGER", help="claude (default), command or builtin."
    ),
    model: str = typer.Option(
        None, "--model", metavar="MODEL", help="Model for the claude merger."
    ),
    background: bool = typer.Option(
        False, "--background", help="Detach and fold in the background."
    ),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """REWRITE the digest _master.md from what the vault gained since its watermark."""
    loc = location(ctx)
    if background:
        from gitvault.fold import background as bg

        pid = bg.spawn_fold(loc, merger=merger, model=model)
        out.print(
            f"fold started in the background (pid {pid})" if pid else "a fold is already running"
        )
        return
    opts = fold_mod.FoldOptions(merger=merger, model=model, dry_run=dry_run, rebuild=rebuild)
    result, patched = agentfiles.fold_and_patch(loc, opts, say=lambda s: err.print(s, markup=False))
    if json_out:
        emit_json(
            "fold",
            {
                "merger": result.merger,
                "new_items": result.new_items,
                "batches": result.batches,
                "commits": result.commits,
                "chars_sent": result.chars_sent,
                "estimated_tokens": result.chars_sent // 4,
                "dropped": result.dropped,
                "cut": result.cut,
                "skipped": result.skipped_reason,
                "dry_run": dry_run,
                "folded": result.folded,
                "left": result.left,
                "past_horizon": result.past_horizon,
                "fell_back": result.fell_back,
                "planned": [
                    {
                        "items": len(c.batch),
                        "chars": c.chars,
                        "older": c.older,
                        "allowed_today": c.allowed,
                    }
                    for c in result.calls
                ]
                if dry_run
                else [],
                "patched": patched.__dict__ if patched else None,
            },
        )
        return
    if dry_run:
        out.print(
            f"dry run{' ' + result.merger_label if result.merger == 'builtin' else ''}: "
            f"{result.new_items} new items in {len(result.dry_run_batches)} "
            f"call(s), {result.chars_sent:,} characters ≈ {result.chars_sent // 4:,} tokens; "
            "nothing sent"
        )
        for i, call in enumerate(result.calls, 1):
            what = " (older history)" if call.older else ""
            when = "today" if call.allowed else "waits: over today's fold.max_chars_per_day"
            out.print(
                f"  call {i}: {len(call.batch)} items, {call.chars:,} characters{what}, "
                f"from {call.span} — {when}",
                markup=False,
            )
        if result.calls:
            out.print(f"  today's budget allows {result.folded} of {result.new_items} items")
        if result.past_horizon:
            out.print(f"  {result.past_horizon} items are past fold.horizon_days: never folded")
        return
    out.print(result.summary(), markup=False)
    if result.fell_back:
        out.print(f"  the builtin merger stood in: {result.fell_back}", markup=False)
    if not result.commits:
        return
    if result.skipped_reason:
        out.print(f"  stopped early: {result.skipped_reason}", markup=False)
    for line in result.dropped:
        err.print(f"  dropped: {line}", markup=False)  # model text: no rich markup
    for name in dict.fromkeys(result.cut):
        err.print(f"  cut to its cap: {name}")
    if patched:
        print_lines(patched.written, "  patched ")
        print_lines(patched.refused, "  warning: not patched: ", to_err=True)


def patch(
    ctx: typer.Context,
    file: str = typer.Argument(
        None, metavar="[FILE]", help="File to patch (default: vault.toml patch.files)."
    ),
) -> None:
    """PATCH the managed section of CLAUDE.md (exit 3 when a sentinel is unmatched)."""
    loc = location(ctx)
    if loc.workdir is None:
        raise GitvaultError("a bare repository has no agent file to patch")
    # FILE is relative to where the user stands, like any other command-line path.
    files = [os.path.relpath(Path.cwd() / file, loc.workdir)] if file else None
    report = agentfiles.refresh_from_vault(loc, files=files, explicit=files is not None)
    for name in report.written:
        out.print(f"patched {name}", markup=False)
    for name in report.unchanged:
        out.print(f"{name} is up to date", markup=False)
