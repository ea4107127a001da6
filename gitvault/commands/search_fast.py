"""`gitvault search` answered before typer and rich load (their import is most of a warm
search's time): the CLI calls `fast_search` first, as it does for `status --line`.

Only a command line this module reads exactly as the typer command would is answered here;
anything else (--help, a malformed option, an error of any kind, a spool a drain must take
first) returns None and the typer command runs instead, so usage and error messages, exit
codes and the crash log keep their one home in the full CLI.
"""

from __future__ import annotations

import sys

from gitvault.commands.fastpath import repo_option, settled
from gitvault.commands.jsonout import envelope
from gitvault.errors import GitvaultError
from gitvault.memory import search
from gitvault.memory.dates import parse_since
from gitvault.resolve import resolve
from gitvault.vault.controls import neutralise_controls

_VALUED = {"-n": "limit", "--max-count": "limit", "--kind": "kind", "--since": "since"}
_SHORT_OPTIONS = frozenset("nCh")  # short option letters the command or its parents know


class _Args:
    def __init__(self) -> None:
        self.repo: str | None = None
        self.words: list[str] = []
        self.values: dict[str, str] = {}
        self.json = False


def parse(argv: list[str]) -> _Args | None:
    """What `[--repo PATH] search [OPTIONS] QUERY...` asks for, or None when the command line
    is anything else or anything this reader is not sure of."""
    args = _Args()
    index = 0
    while index < len(argv) and argv[index] != "search":  # the root's own options
        step = _repo_option(argv, index, args)
        if not step:
            return None
        index += step
    index += 1  # "search"
    if index > len(argv):
        return None
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            args.words += argv[index + 1 :]
            break
        step = _repo_option(argv, index, args)
        if step:
            index += step
            continue
        name, _, inline = arg.partition("=")
        if arg == "--json":
            args.json = True
        elif name in _VALUED:
            if inline or "=" in arg:
                args.values[_VALUED[name]] = inline
            elif index + 1 < len(argv):
                index += 1
                args.values[_VALUED[name]] = argv[index]
            else:
                return None
        elif arg.startswith("--"):
            if "=" in arg or arg == "--help" or arg.startswith("--json"):
                return None
            args.words.append(arg)  # an unknown option is a query word (--interactive)
        elif arg.startswith("-") and len(arg) > 1:
            if _SHORT_OPTIONS & set(arg[1:]):
                return None  # a cluster holding a real option: the option parser's call
            args.words.append(arg)
        else:
            args.words.append(arg)
        index += 1
    return args if args.words else None


def _repo_option(argv: list[str], index: int, args: _Args) -> int:
    step, value = repo_option(argv, index)
    if step:
        args.repo = value
    return step


def fast_search(argv: list[str]) -> int | None:
    """The exit code when this answered `gitvault search …`, else None (the typer command
    runs)."""
    args = parse(argv)
    if args is None:
        return None
    limit_text = args.values.get("limit", str(search.DEFAULT_LIMIT))
    if not limit_text.isdigit() or not 1 <= int(limit_text) <= search.MAX_LIMIT:
        return None
    try:
        loc = resolve(args.repo)
        if not settled(loc):
            return None  # commits to drain or walk first: the full command does that
        answer = search.Index(loc).search(
            " ".join(args.words),
            limit=int(limit_text),
            kind=args.values.get("kind"),
            since=parse_since(args.values.get("since")),
        )
    except GitvaultError:
        return None  # said, with its hint and exit code, by the full command
    try:
        if args.json:
            sys.stdout.write(envelope("search", answer.as_json()) + "\n")
        else:
            # It writes past the CLI's neutralised streams: the same neutraliser, here.
            sys.stdout.write(neutralise_controls(search.render(answer)) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    return 0
