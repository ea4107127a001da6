"""What every command shares: the resolved location, output consoles, the JSON envelope."""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.segment import Segment

from gitvault.commands.jsonout import envelope
from gitvault.errors import GitvaultError
from gitvault.notes import drain, heads
from gitvault.resolve import Location, resolve
from gitvault.vault import statedir
from gitvault.vault.controls import ControlSafeStream, neutralise_controls
from gitvault.vault.files import atomic_write
from gitvault.vault.locking import log_failure


class SafeConsole(Console):
    """A rich console whose content is neutralised (vault/controls) as it is rendered, whatever
    renderable carried it (a table cell, a progress label): only rich's own styling and cursor
    codes reach the terminal. Nothing it prints is read as rich markup either: a table cell
    holds a commit subject or a file name, and `[/x]` in one would end the command
    (MarkupError) or restyle what follows."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("markup", False)
        super().__init__(*args, **kwargs)

    def _render_buffer(self, buffer: Any) -> str:
        safe = (
            segment
            if segment.control
            else Segment(neutralise_controls(segment.text), segment.style)
            for segment in buffer
        )
        return super()._render_buffer(safe)


out = SafeConsole(highlight=False, soft_wrap=True)
err = SafeConsole(stderr=True, highlight=False, soft_wrap=True)


@contextlib.contextmanager
def control_safe_streams() -> Iterator[None]:
    """sys.stdout and sys.stderr neutralised for one command: whatever prints — typer's and
    click's own messages, a raw `sys.stdout.write`, a traceback — carries no control sequence."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ControlSafeStream(saved[0]), ControlSafeStream(saved[1])
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        sys.stdout, sys.stderr = saved


@dataclass
class Ctx:
    repo: str | None = None
    loc: Location | None = None


REPO_HELP = "Repository to use (default: the one around the current directory)."


def _take_repo(ctx: Any, value: str | None) -> str | None:
    """--repo given after the command name: the same setting as before it (the last wins)."""
    if value:
        root = ctx.find_root()
        if not isinstance(root.obj, Ctx):
            root.obj = Ctx()
        root.obj.repo, root.obj.loc = value, None
        ctx.obj = root.obj
    return value


def repo_option() -> Any:
    """`--repo/-C PATH` for a command (the root callback takes it before the command name)."""
    return typer.Option(
        None,
        "--repo",
        "-C",
        metavar="PATH",
        help=REPO_HELP,
        callback=_take_repo,
        expose_value=False,
        is_eager=True,
    )


def since_option(dated: str) -> Any:
    """--since DATE of the commands that list vault items (read by memory.dates.parse_since);
    `dated` says what date an item is filtered by."""
    return typer.Option(
        None,
        "--since",
        metavar="DATE",
        help=f"Only items dated after this (YYYY-MM-DD or '3 days ago'): {dated}.",
    )


def accepts_repo(func: Callable[..., Any]) -> Callable[..., Any]:
    """func with a `--repo/-C` option of its own, so the option works wherever the user types
    it. One resolver still answers: the option only records the path in the shared Ctx."""
    sig = inspect.signature(func, eval_str=True)
    if any(p.name == "repo_" for p in sig.parameters.values()):
        return func

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        kwargs.pop("repo_", None)
        return func(*args, **kwargs)

    extra = inspect.Parameter(
        "repo_", inspect.Parameter.KEYWORD_ONLY, default=repo_option(), annotation=str | None
    )
    params = list(sig.parameters.values())
    wrapper.__signature__ = sig.replace(parameters=[*params, extra])  # type: ignore[attr-defined]
    return wrapper


def location(ctx: Any, *, drain_spool: bool = True) -> Location:
    """Resolve the vault once per invocation and drain any spooled commits first — and note
    the commits a worktree's HEAD log shows that ran no hook (notes/walk) — so what a command
    reads is current (nothing is lost if a drainer died). The drain waits at most a second for
    a running drainer and is skipped while the vault branch is locked: a command answers
    quickly whatever state the write side is in (status names what is stuck)."""
    state: Ctx = ctx.obj if isinstance(ctx.obj, Ctx) else Ctx()
    if state.loc is None:
        state.loc = resolve(state.repo)
        statedir.keep_patterns(state.loc.state_dir)
    loc = state.loc
    if (
        drain_spool
        and loc.state_dir.is_dir()
        and (
            (loc.state_dir / statedir.SPOOL).exists()
            or (loc.state_dir / statedir.SPOOL_WORK).is_dir()
            or heads.due(loc)
        )
        and not drain.vault_locked(loc)
    ):
        try:
            drain.drain(loc, block=True, timeout=1.0)
        except OSError:
            pass  # a read-only repository still answers read-only commands
        except GitvaultError as exc:
            # The spool stays on disk for later; the command itself still runs (status shows
            # the logged failure, and commands that write refuse with their own message).
            log_failure(loc.state_dir, f"drain failed: {type(exc).__name__}: {exc.message}")
    return loc


def print_lines(lines: list[str], prefix: str = "  ", *, to_err: bool = False) -> None:
    """Lines of a report, indented, never read as rich markup (they may hold paths or model
    text)."""
    console = err if to_err else out
    for line in lines:
        console.print(f"{prefix}{line}", markup=False)


def emit_json(kind: str, data: Any) -> None:
    """The versioned envelope every --json output uses."""
    sys.stdout.write(envelope(kind, data) + "\n")


def wants_json(argv: list[str]) -> bool:
    """Whether a command line asked for --json (before any `--`)."""
    args = argv[: argv.index("--")] if "--" in argv else argv
    return "--json" in args


def emit_error_json(message: str, hint: str | None, code: int) -> None:
    """An error under --json: the same envelope, kind "error", on stdout (the message is also
    printed on stderr for a person)."""
    emit_json("error", {"message": message, "hint": hint, "exit_code": code})


def print_error(message: str, hint: str | None) -> None:
    sys.stderr.write(f"gitvault: error: {message}\n")
    if hint:
        sys.stderr.write(f"  hint: {hint}\n")


def crash_report(trace: str, repo: str | None) -> str:
    """What a maintainer needs in a bug report: versions first, then the traceback."""
    import platform

    from gitvault import __version__
    from gitvault.vault import gitcmd

    try:
        git_version = gitcmd.run_git(["--version"], Path.cwd(), check=False).stdout.decode().strip()
    except GitvaultError:
        git_version = "git: not found"
    from importlib.metadata import PackageNotFoundError, version

    try:
        pygit2_version = f"pygit2 {version('pygit2')}"
    except PackageNotFoundError:
        pygit2_version = "pygit2: not installed"
    lines = [
        f"gitvault {__version__}",
        git_version,
        pygit2_version,
        f"Python {platform.python_version()} on {platform.platform()}",
        f"argv: {sys.argv!r}",
        "",
        trace,
    ]
    return "\n".join(lines)


def log_internal_error(trace: str, repo: str | None) -> Path | None:
    """Write the crash log to the repository's gitvault folder (the temp dir when there is no
    repository or it is not writable); its path, or None when nothing could be written."""
    text = crash_report(trace, repo)
    name = f"{statedir.CRASH_LOG_PREFIX}{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
    targets: list[Path] = []
    try:
        targets.append(resolve(repo).state_dir / name)
    except GitvaultError:
        pass
    targets.append(Path(tempfile.gettempdir()) / f"gitvault-{name}")
    for path in targets:
        try:
            path.parent.mkdir(exist_ok=True)
            atomic_write(path, text.encode("utf-8"))
            return path
        except OSError:
            continue
    return None
