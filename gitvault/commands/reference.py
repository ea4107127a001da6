"""README's command reference, generated from the CLI's own help so the two never drift.

python -m gitvault.commands.reference          rewrite the section in README.md
python -m gitvault.commands.reference --check  exit 1 when README.md is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

BEGIN = "<!-- BEGIN generated command reference: `just docs` rewrites it -->"
END = "<!-- END generated command reference -->"
README = Path(__file__).resolve().parents[2] / "README.md"


# Typer's command objects (a vendored click) are used by duck typing only.
Command = Any


def _context(cmd: Command, name: str, parent: Any = None) -> Any:
    return cmd.make_context(name, [], parent=parent, resilient_parsing=True)


def _commands(group: Command, ctx: Any) -> list[tuple[str, Command]]:
    out: list[tuple[str, Command]] = []
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None or cmd.hidden:
            continue
        if hasattr(cmd, "list_commands"):
            out += [(f"{name} {n}", c) for n, c in _commands(cmd, _context(cmd, name, ctx))]
        else:
            out.append((name, cmd))
    return out


def _is_option(param: Any) -> bool:
    return bool(param.param_type_name == "option")


def _option_row(param: Any, ctx: Any) -> str:
    """One table row from the option's own help record (what `--help` prints)."""
    record = param.get_help_record(ctx)
    names, helptext = record if record else ("/".join(param.opts), "")
    return f"| `{names}` | {helptext.replace('|', chr(92) + '|')} |"


def render() -> str:
    from gitvault.cli import app

    root = typer.main.get_command(app)
    ctx = _context(root, "gitvault")
    parts = [BEGIN, ""]
    global_opts = [p for p in root.params if _is_option(p)]
    parts += ["Options every command takes (before or after the command name):", ""]
    parts += ["| option | meaning |", "|---|---|"]
    parts += [_option_row(p, ctx) for p in global_opts]
    parts.append("")
    for name, cmd in _commands(root, ctx):
        sub = _context(cmd, name, ctx)
        usage = " ".join(cmd.collect_usage_pieces(sub))
        parts += [f"### `gitvault {name}`", ""]
        parts += [(cmd.help or "").strip(), ""]
        parts += ["```", f"gitvault {name} {usage}".rstrip(), "```", ""]
        options = [p for p in cmd.params if _is_option(p)]
        if options:
            parts += ["| option | meaning |", "|---|---|"]
            parts += [_option_row(p, sub) for p in options]
            parts.append("")
    parts.append(END)
    return "\n".join(parts)


def updated(readme: str) -> str:
    start, end = readme.index(BEGIN), readme.index(END) + len(END)
    return readme[:start] + render() + readme[end:]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    current = README.read_text(encoding="utf-8")
    wanted = updated(current)
    if "--check" in args:
        if wanted != current:
            sys.stderr.write("README.md's command reference is out of date: run `just docs`\n")
            return 1
        return 0
    if wanted != current:
        README.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
