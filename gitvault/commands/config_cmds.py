"""config."""

from __future__ import annotations

import json
from typing import Any

import typer

from gitvault import configure
from gitvault.commands.common import emit_json, err, location, out


def register(app: typer.Typer) -> None:
    app.command("config")(config_cmd)


def _text(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return json.dumps(value)
    return str(value)


def config_cmd(
    ctx: typer.Context,
    key: str = typer.Argument(
        None, metavar="KEY", help="fold.merger, recall.sessions, gitvault.syncAuto, …"
    ),
    value: str = typer.Argument(None, metavar="VALUE", help="The new value."),
    unset: bool = typer.Option(False, "--unset", help="Back to the default (or unset it here)."),
    shared: bool = typer.Option(
        False,
        "--shared",
        help="For a setting that spends money or runs code: write it to vault.toml (it "
        "travels, and applies only as far as it narrows the default) instead of this clone's "
        "git config.",
    ),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> None:
    """Show or change a setting where it lives: vault.toml on the vault branch (travels with
    the vault; a change is one vault commit that changes only vault.toml, validated first) or
    this clone's git config. No KEY: every setting, its value and where it comes from.
    `gitvault config fold.merger builtin` folds offline, without Claude."""
    loc = location(ctx)
    if key is None:
        found = configure.settings(loc)
        if json_out:
            emit_json("config", [s.as_json() for s in found])
            return
        width = max(len(s.key) for s in found)
        for s in found:
            out.print(f"{s.key:<{width}}  {_text(s.value)}  [{s.where}]", markup=False)
        return
    if value is None and not unset:
        setting = configure.get(loc, key)
        if json_out:
            emit_json("config", setting.as_json())
            return
        out.print(_text(setting.value), markup=False)
        err.print(f"  from {setting.where}" + (f": {setting.about}" if setting.about else ""))
        return
    if value is not None and unset:
        raise typer.BadParameter("give a VALUE or --unset, not both")
    change = configure.set_value(loc, key, None if unset else value, shared=shared)
    if json_out:
        emit_json("config", change.as_json())
        return
    for line in change.repaired:
        err.print(line, markup=False)
    if not change.changed:
        out.print(f"{change.key} is already {_text(change.new)} ({change.where})", markup=False)
    else:
        where = change.where + (f", vault commit {change.commit[:7]}" if change.commit else "")
        out.print(
            f"{change.key}: {_text(change.old)} → {_text(change.new)}  ({where})", markup=False
        )
    for line in change.notes:
        err.print(f"  note: {line}", markup=False)
    if change.changed and change.key == "fold.merger":
        _merger_outlook(loc)


def _merger_outlook(loc: Any) -> None:
    """Say at once when the merger just chosen cannot run here (a free check, no model call)."""
    from gitvault.fold import mergers
    from gitvault.fold.run import load_config
    from gitvault.vault.store import Vault

    seen = mergers.outlook(load_config(Vault(loc)))
    err.print(f"  fold: {seen.text}", markup=False)
