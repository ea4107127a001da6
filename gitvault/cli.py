"""The command line: parse, dispatch, and map errors to exit codes at this one boundary."""

from __future__ import annotations

import errno
import os
import sys

from gitvault.status.line import fast_status_line


def _fast_path() -> None:
    """`gitvault status --line` runs at every prompt and status-line refresh (≤ 50 ms), an
    agent's `gitvault search` (and a person's `gitvault recall`, checking what an agent gets)
    should answer as fast, and `gitvault mcp` must answer its client
    at once: when this process is the gitvault command and was asked one of those, answer before
    typer and rich load (~200 ms). Anything else (or what the fast readers are not sure of), or
    an import of this module, goes on."""
    name = os.path.basename(sys.argv[0]) if sys.argv else ""
    args = sys.argv[1:]
    if name not in ("gitvault", "__main__.py"):
        return
    if args == ["mcp"] or (len(args) == 3 and args[0] in ("--repo", "-C") and args[2] == "mcp"):
        # An MCP client waits for `initialize` (some ≈1 s): answered before typer loads.
        from gitvault import mcpserver

        sys.exit(mcpserver.main(args[1] if len(args) == 3 else None))
    code: int | None = None
    if "status" in args:
        from gitvault.errors import GitvaultError

        try:
            code = fast_status_line(args)
        except GitvaultError as exc:
            from gitvault.vault.controls import neutralise_controls

            sys.stderr.write(neutralise_controls(f"gitvault: error: {exc.message}") + "\n")
            code = exc.exit_code
    if code is None and "search" in args:
        from gitvault.commands.search_fast import fast_search

        code = fast_search(args)
    if code is None and "recall" in args:
        from gitvault.commands.recall_fast import fast_recall

        code = fast_recall(args)
    if code is not None:
        sys.stdout.flush()
        sys.exit(code)


_fast_path()

# The rest loads only when the fast path did not answer.
import traceback  # noqa: E402

import typer  # noqa: E402

from gitvault import __version__, errors  # noqa: E402
from gitvault.commands import (  # noqa: E402
    common,
    config_cmds,
    control_cmds,
    core_cmds,
    history_cmds,
    hook_cmds,
    memory_cmds,
    search_cmds,
    sync_cmds,
    verify_cmds,
    view_cmds,
)
from gitvault.vault.files import NotRegular  # noqa: E402

app = typer.Typer(
    name="gitvault",
    help="Git-native memory for coding agents: per-commit notes, saved sessions and a folded "
    "digest on an orphan `vault` branch of this repository.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        print(f"gitvault {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    repo: str = typer.Option(
        None,
        "--repo",
        "-C",
        metavar="PATH",
        envvar="GITVAULT_REPO",
        help="Repository to use (default: the one around the current directory).",
    ),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    ctx.obj = common.Ctx(repo=repo)


core_cmds.register(app)
history_cmds.register(app)
memory_cmds.register(app)
hook_cmds.register(app)
sync_cmds.register(app)
search_cmds.register(app)
control_cmds.register(app)
verify_cmds.register(app)
config_cmds.register(app)
view_cmds.register(app)
# --repo/-C works after the command name too (the README says every command takes it).
for _info in app.registered_commands:
    if _info.callback is not None:
        _info.callback = common.accepts_repo(_info.callback)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; every exception is turned into a message and a documented exit code, and
    nothing it prints carries a control sequence (commands/common.control_safe_streams)."""
    with common.control_safe_streams():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    try:
        # Standalone mode: typer reports usage errors itself (exit 2) and raises SystemExit.
        app(args=argv, prog_name="gitvault", standalone_mode=True)
        return errors.OK
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (errors.OK if code is None else errors.ERROR)
    except errors.GitvaultError as exc:
        return _expected(exc, argv)
    except KeyboardInterrupt:
        print("gitvault: interrupted", file=sys.stderr)
        return errors.INTERRUPTED
    except BrokenPipeError:
        return errors.OK
    except Exception as exc:  # noqa: BLE001 - the one place a bug becomes a message + log
        if isinstance(exc, NotRegular):
            # Something not gitvault's stands where it keeps a file (a folder, a link, a FIFO):
            # not a bug, and the message says what it is.
            return _expected(
                errors.GitvaultError(
                    str(exc.strerror or exc),
                    hint="gitvault's files in .git/gitvault are regular files; move what stands "
                    "there away (gitvault never removes a folder)",
                ),
                argv,
            )
        if isinstance(exc, OSError) and exc.errno in _UNWRITABLE:
            # Not a bug: a read-only or full filesystem, or permissions (any command, any path).
            where = f" {exc.filename}" if exc.filename else ""
            return _expected(
                errors.GitvaultError(
                    f"cannot write{where}: {exc.strerror}",
                    hint="check that the repository and its .git directory are writable "
                    "(not a read-only mount, not full)",
                ),
                argv,
            )
        path = common.log_internal_error(traceback.format_exc(), _repo_arg(argv))
        message = f"internal error: {type(exc).__name__}: {exc}"
        hint = f"this is a bug; details in {path}" if path else "this is a bug"
        common.print_error(message, hint)
        if common.wants_json(sys.argv[1:] if argv is None else argv):
            common.emit_error_json(message, hint, errors.INTERNAL)
        return errors.INTERNAL


_UNWRITABLE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT})


def _expected(exc: errors.GitvaultError, argv: list[str] | None) -> int:
    common.print_error(exc.message, exc.hint)
    if common.wants_json(sys.argv[1:] if argv is None else argv):
        common.emit_error_json(exc.message, exc.hint, exc.exit_code)
    return exc.exit_code


def _repo_arg(argv: list[str] | None) -> str | None:
    """The --repo/-C value of a command line (for the crash log's location)."""
    args = sys.argv[1:] if argv is None else argv
    for index, arg in enumerate(args):
        if arg in ("--repo", "-C") and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith("--repo="):
            return arg.split("=", 1)[1]
    return None


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
