"""pin, unpin, pins, forget, redact, gc."""

from __future__ import annotations

import sys

import typer

from gitvault.agents import agentfiles
from gitvault.commands.common import emit_json, err, location, out
from gitvault.errors import GitvaultError, Refused
from gitvault.fold import history as mined_history
from gitvault.materialize import ready
from gitvault.memory import forget as forget_mod
from gitvault.memory import pins as pins_mod
from gitvault.pathrecall import index as index_mod
from gitvault.status import view as view_mod
from gitvault.vault.layout import PINS


def register(app: typer.Typer) -> None:
    app.command()(pin)
    app.command()(unpin)
    app.command("pins")(pins_cmd)
    app.command("forget")(forget_cmd)
    app.command()(redact)
    app.command()(gc)


def pin(
    ctx: typer.Context,
    text: list[str] = typer.Argument(..., metavar="TEXT", help="The rule, one line."),  # noqa: B008
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Add a standing rule every agent is told at session start (a line in the vault's
    patterns/pins.md, one commit). Recall shows at most 25 pattern lines; a pin beyond that is
    refused, never silently dropped."""
    loc = location(ctx)
    done = pins_mod.pin(loc, " ".join(text))
    if json_out:
        emit_json(
            "pin", {**done.pin.as_json(), "commit": done.commit, "redactions": done.redactions}
        )
        return
    if done.commit is None:
        out.print(f"already pinned: {done.pin.id}  {done.pin.text}", markup=False)
        return
    out.print(f"pinned {done.pin.id}  {done.pin.text}  ({done.commit[:7]})", markup=False)
    if done.redactions:
        out.print(f"  redacted {done.redactions} secret(s) before writing")


def unpin(
    ctx: typer.Context,
    ident: str = typer.Argument(
        ..., metavar="ID", help="p:<id> as `gitvault pins` shows, or the rule's text."
    ),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Remove a standing rule (from whichever patterns file holds it; one commit)."""
    loc = location(ctx)
    done = pins_mod.unpin(loc, ident)
    if json_out:
        emit_json("unpin", {**done.pin.as_json(), "commit": done.commit})
        return
    out.print(f"unpinned {done.pin.id}  {done.pin.text}", markup=False)


def pins_cmd(
    ctx: typer.Context,
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """List the standing rules recalled at every session start, with their IDs."""
    loc = location(ctx)
    found = pins_mod.pins(loc)
    if json_out:
        emit_json("pins", [p.as_json() for p in found])
        return
    if not found:
        out.print('no pins yet: `gitvault pin "a rule every agent should follow"`')
        return
    for p in found:
        where = "" if p.path == PINS else f"  [{p.path}]"
        out.print(f"{p.id}  {p.text}{where}", markup=False)


def forget_cmd(
    ctx: typer.Context,
    ident: str = typer.Argument(
        ..., metavar="ID", help="c:<sha>, s:<slug>, a commit or a session slug (as `show`)."
    ),
    reason: str = typer.Option(
        None, "--reason", metavar="TEXT", help="Why (kept in the tombstone)."
    ),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Tombstone a note or a session (APPEND, one commit): it is no longer recalled, searched
    or folded, and every digest line citing it is dropped in the same commit (the next fold
    re-reads the line's other items); agent files are patched again. The item stays in the
    history; `redact` removes text from the history."""
    loc = location(ctx)
    done = forget_mod.forget(loc, ident, reason=reason)
    if done.commit is not None:
        index_mod.update_quietly(loc)  # the forgotten item leaves the per-path index now
        ready.after_change(loc)  # and the next session start's recall block
    agentfiles.after_history_change(loc)
    pages = view_mod.refresh_pages(loc)
    if json_out:
        emit_json(
            "forget",
            {
                "id": done.cite,
                "path": done.path,
                "commit": done.commit,
                "already": done.commit is None,
                "digest_lines": done.digest_lines,
                "view_pages": _pages_json(pages),
            },
        )
        return
    if done.commit is None:
        out.print(f"{done.cite} was already forgotten", markup=False)
    else:
        out.print(f"forgot {done.cite} ({done.commit[:7]})", markup=False)
    if done.digest_lines:
        out.print(
            f"  {done.digest_lines} digest line(s) citing it dropped; the next fold re-reads "
            "the other items they cited"
        )
    for line in _pages_said(pages):
        out.print(f"  {line}", markup=False)


def _pages_json(pages: list[tuple[str, str | None]]) -> list[dict[str, str | None]]:
    return [{"path": path, "error": why} for path, why in pages]


def _pages_said(pages: list[tuple[str, str | None]]) -> list[str]:
    """What forget and redact say about the `gitvault view` pages they wrote again."""
    return [
        f"wrote the view page {path} again"
        if why is None
        else f"could not write the view page {path} again ({why}): delete it, it holds the old text"
        for path, why in pages
    ]


def redact(
    ctx: typer.Context,
    ident: str = typer.Argument(
        ..., metavar="ID", help="The item that holds the text (as `show`)."
    ),
    pattern: str = typer.Option(
        ..., "--pattern", metavar="TEXT", help="The exact text to remove (e.g. a leaked key)."
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """REWRITE the vault branch's history so TEXT is gone from every version of every file and
    every commit message (replaced by [REDACTED]), and of the private sessions' local ref. The
    one exception to append-only: it asks first, keeps the old history under
    refs/gitvault/backup/ until `gitvault gc`, and records the rewrite in a commit (without the
    text); remote-tracking copies of the old history are dropped and state files quoting the
    text rewritten. Clones that already fetched the vault keep it until they follow the hint."""
    loc = location(ctx)

    def confirm(plan: forget_mod.RedactPlan) -> bool:
        err.print(
            f"redact: the text occurs in {plan.versions} file version(s) and {plan.messages} "
            f"commit message(s); files: {', '.join(plan.paths[:8])}"
            f"{' …' if len(plan.paths) > 8 else ''}",
            markup=False,
        )
        err.print(
            f"  this rewrites all {plan.commits} commits of the vault branch (new shas); the old "
            "history stays under refs/gitvault/backup/ until `gitvault gc`",
            markup=False,
        )
        if plan.private_versions:
            err.print(
                f"  and {plan.private_versions} version(s) of private sessions "
                f"({', '.join(plan.private_paths[:8]) or 'commit messages'}), never pushed",
                markup=False,
            )
        if yes:
            return True
        if not sys.stdin.isatty():
            raise Refused(
                "redact rewrites history and needs a confirmation; nothing changed",
                hint="run it in a terminal, or pass --yes",
            )
        return typer.confirm("rewrite the vault's history now?", default=False, err=True)

    done = forget_mod.redact(loc, ident, pattern, confirm=confirm, say=err.print)
    if done is None:
        out.print("nothing changed")
        return
    # The per-path index and the mined history hold text of the old history: gone now, rebuilt
    # from the new one (the mined history by the verify just below).
    index_mod.PathIndex(loc).drop()
    index_mod.update_quietly(loc)
    mined_history.drop(loc)
    # The agent files' sections and verify.json quote the digest: taken again from the new one.
    agentfiles.after_history_change(loc)
    ready.after_change(loc)  # the recall block, from the new history
    pages = view_mod.refresh_pages(loc)  # `gitvault view` pages quote the vault too
    plan = done.plan
    shared, private = done.shared, done.private
    if json_out:
        emit_json(
            "redact",
            {
                "target": plan.target,
                "versions": plan.versions,
                "messages": plan.messages,
                "commits": plan.commits,
                "paths": plan.paths,
                "old_tip": shared.old_tip if shared else None,
                "new_tip": shared.new_tip if shared else None,
                "backup_ref": shared.backup_ref if shared else None,
                "record": done.record_commit,
                "private": {
                    "ref": private.ref,
                    "versions": plan.private_versions,
                    "paths": plan.private_paths,
                    "backup_ref": private.backup_ref,
                }
                if private
                else None,
                "dropped_refs": done.copies.dropped,
                "kept_refs": done.copies.kept,
                "state_files": done.state_files,
                "view_pages": _pages_json(pages),
            },
        )
        return
    if shared is not None and done.record_commit is not None:
        out.print(
            f"redacted: {plan.versions} file version(s) and {plan.messages} commit message(s) "
            f"rewritten; recorded in {done.record_commit[:7]}",
            markup=False,
        )
    lines = []
    if shared is not None:
        lines.append(f"the old history is kept under {shared.backup_ref} until `gitvault gc`")
    if private is not None:
        lines.append(
            f"private sessions ({private.ref}, never pushed): {plan.private_versions} version(s) "
            f"rewritten in {', '.join(plan.private_paths[:8]) or 'commit messages'}; the old "
            f"ones are kept under {private.backup_ref} until `gitvault gc`"
        )
    lines += [f"dropped {ref}: it held the old history" for ref in done.copies.dropped]
    lines += [
        f"{ref} still holds the old history: delete it (git update-ref -d {ref}), then "
        "`gitvault gc --yes`"
        for ref in done.copies.kept
    ]
    if done.state_files:
        lines.append(f"replaced the text in state files: {', '.join(done.state_files[:8])}")
    lines += _pages_said(pages)
    lines.append(
        "here: `gitvault gc --yes` deletes the old history (the record keeps sync refusing it)"
    )
    if shared is not None:
        lines += [
            "each remote: `gitvault sync` refuses it and prints the `git push --force-with-lease` "
            "that publishes the rewritten vault",
            "each other clone: its `gitvault sync` refuses to push the old history back and "
            "prints the `git update-ref` that takes the rewritten one",
        ]
    lines.append("rotate the secret: one that left this machine must be treated as known")
    if shared is None:
        out.print("redacted: only private sessions held the text", markup=False)
    for line in lines:
        out.print(f"  {line}", markup=False)


def gc(
    ctx: typer.Context,
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete the backups `redact` kept (refs/gitvault/backup/*) and every other copy of the
    redacted history (remote-tracking refs a fetch brought again, reflog entries), expire the
    vault's reflogs and prune what only they held (`git gc --prune=now`)."""
    loc = location(ctx)
    found = forget_mod.backups(loc)
    if not found and not forget_mod.has_redactions(loc):
        out.print("no redaction backups; nothing to do")
        return
    if not yes:
        if not sys.stdin.isatty():
            raise Refused("gc deletes the redaction backups; nothing changed", hint="pass --yes")
        asked = f"delete {len(found)} backup(s) and the copies of redacted history, and prune?"
        if not typer.confirm(asked, default=False, err=True):
            raise GitvaultError("nothing changed")
    done = forget_mod.gc(loc)
    out.print(f"deleted {len(done.backups)} backup(s); pruned the old vault history", markup=False)
    for ref in done.copies.dropped:
        out.print(f"  dropped {ref}: it held the old history", markup=False)
    if done.reflog_entries:
        out.print(f"  deleted {done.reflog_entries} reflog entries naming it", markup=False)
    for ref in done.copies.kept:
        out.print(
            f"  {ref} still holds the old history: delete it (git update-ref -d {ref}), then "
            "run `gitvault gc --yes` again",
            markup=False,
        )
    for path in done.checkouts:
        out.print(
            f"  the worktree {path} has the vault checked out: its index holds the old files "
            f"until `git -C {path} reset --hard vault`",
            markup=False,
        )
