"""`gitvault recall` (and `recall --for PATH`) answered before typer and rich load, as
`search` is (commands/search_fast): a person or a script checking what an agent gets should not
wait for the CLI's imports. Only a command line read exactly as the typer command reads it, on
a settled vault, with a block to print, is answered here; anything else (--help, an unknown
option, warnings to show, nothing to print, any error) returns None and the typer command runs,
so messages, exit codes and the crash log keep their one home in the full CLI.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gitvault.commands.fastpath import repo_option, settled
from gitvault.commands.jsonout import envelope
from gitvault.errors import GitvaultError
from gitvault.resolve import resolve
from gitvault.vault.controls import neutralise_controls


class _Args:
    def __init__(self) -> None:
        self.repo: str | None = None
        self.json = False
        self.for_path: str | None = None


def parse(argv: list[str]) -> _Args | None:
    """What `[--repo PATH] recall [--json] [--for PATH]` asks for, or None."""
    args = _Args()
    index = 0
    while index < len(argv) and argv[index] != "recall":
        step, value = repo_option(argv, index)
        if not step:
            return None
        args.repo = value
        index += step
    if index >= len(argv):
        return None
    index += 1
    while index < len(argv):
        arg = argv[index]
        step, value = repo_option(argv, index)
        if step:
            args.repo = value
            index += step
            continue
        if arg == "--json" and not args.json:
            args.json = True
        elif arg == "--for" and args.for_path is None and index + 1 < len(argv):
            index += 1
            args.for_path = argv[index]
        elif arg.startswith("--for=") and args.for_path is None:
            args.for_path = arg.split("=", 1)[1]
        else:
            return None
        index += 1
    if args.for_path is not None and (not args.for_path or args.for_path.startswith("-")):
        return None
    return args


def fast_recall(argv: list[str]) -> int | None:
    """The exit code when this answered `gitvault recall …`, else None."""
    args = parse(argv)
    if args is None:
        return None
    try:
        loc = resolve(args.repo)
        if not settled(loc):
            return None
        if args.for_path is not None:
            from gitvault.pathrecall.block import edit_block

            block = edit_block(loc, args.for_path, cwd=Path.cwd(), update=True)
            if not block.text:
                return None
            data: dict[str, object] = {
                "path": block.path,
                "text": block.text,
                "chars": len(block.text),
                "reason": block.reason or None,
                "commits": block.facts.commits if block.facts else 0,
            }
            kind, text = "recall-for", block.text
        else:
            from gitvault.memory import recall

            result = recall.build(loc.workdir or loc.common_dir, loc=loc)
            if result.problems or not result.text:
                return None
            data = {
                "text": result.text,
                "chars": len(result.text),
                "omitted": result.omitted,
                "has_digest": result.has_digest,
                "sessions": result.sessions,
            }
            kind, text = "recall", result.text
    except GitvaultError:
        return None
    try:
        if args.json:
            sys.stdout.write(envelope(kind, data) + "\n")
        else:
            sys.stdout.write(neutralise_controls(text) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    return 0
