"""`gitvault-hook`: the stable, typer-free entry that installed files call.

    gitvault-hook git drain <common git dir> [--detach|--wait]   (the git shims)
    gitvault-hook git sync <pre-push|post-merge> <repository> [REMOTE]  (sync.auto, detached)
    gitvault-hook fold <repository> [--merger M] [--model M]     (the background fold)
    gitvault-hook status --line                                  (Claude Code's statusLine)
    gitvault-hook <agent> <event>                                (every agent's hook settings)

It imports only what the called hook needs: a hook that imported the CLI (typer, rich) would
pay ~50 ms on every commit and session start, and an agent's hook imports that agent's adapter
alone (gitvault.agents.runtime). Every path exits 0 unless the arguments are not understood: a
hook never fails the git command or the session that ran it.

`gitvault-hook <event>` (no agent) is the form settings written by gitvault 0.1 use: the
registry's default agent's hook.
"""

from __future__ import annotations

import sys

USAGE = (
    "usage: gitvault-hook git drain DIR [--detach|--wait] | git sync EVENT REPO [REMOTE] "
    "| fold REPO | AGENT EVENT"
)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:2] == ["git", "drain"]:
        if "--detach" in args:
            _leave_gits_group()
            if args[2:3]:  # a burst of commits ends before the writers load (notes/burst)
                from gitvault.notes import burst
                from gitvault.resolve import STATE_DIRNAME
                from gitvault.vault.statedir import SPOOL

                burst.settle(f"{args[2]}/{STATE_DIRNAME}/{SPOOL}")
        from gitvault.notes import drain

        if args[2:]:
            from pathlib import Path

            from gitvault.resolve import STATE_DIRNAME
            from gitvault.vault import statedir

            statedir.keep_patterns(Path(args[2]) / STATE_DIRNAME)
        code = drain.main(args[2:])
        if args[2:]:
            _write_records(args[2])
            _update_path_index(args[2])
            # Detached (the shims' usual drainer): time for just-written settings to settle.
            _materialize(args[2], wait="--detach" in args)
        return code
    if args[:2] == ["git", "sync"]:
        from gitvault.sync import run

        return run.hook_main(args[2:])
    if args[:1] == ["fold"] and len(args) >= 2:
        return _fold(args[1:])
    if args[:2] == ["status", "--line"]:  # an agent's status line (Claude Code's statusLine)
        from gitvault.status.line import fast_status_line

        answered = fast_status_line(args)
        return 2 if answered is None else answered
    if len(args) in (1, 2):  # AGENT EVENT, or gitvault 0.1's EVENT
        from gitvault.agents import runtime

        return runtime.main(args)
    sys.stderr.write(USAGE + "\n")
    return 2


def _leave_gits_group() -> None:
    """The detached drainer's first act: a session of its own (out of git's process group and
    off the terminal), then the signals the shim had it ignore until now back to their defaults.
    Before any import, so the window in which only the ignored signals protect it is the
    interpreter's start."""
    import os
    import signal

    try:
        os.setsid()
    except OSError:
        pass  # already a group leader (started by something else): nothing to leave
    for sig in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    try:
        os.nice(10)  # background work: a cherry-pick or a build on the other core comes first
    except OSError:
        pass


def _fold(args: list[str]) -> int:
    """The detached fold (SessionEnd, `gitvault fold --background`): fold, then patch."""
    from gitvault.agents.agentfiles import fold_and_patch
    from gitvault.errors import Busy, GitvaultError
    from gitvault.fold.run import FoldOptions
    from gitvault.resolve import resolve
    from gitvault.vault.locking import log_failure

    repo, rest = args[0], args[1:]
    opts = FoldOptions(
        merger=_option(rest, "--merger"), model=_option(rest, "--model"), background=True
    )
    try:
        loc = resolve(repo)
    except GitvaultError as exc:
        sys.stderr.write(f"gitvault: {exc.message}\n")
        return 0
    try:
        from gitvault.agents import records

        records.written(loc)  # a session end's record first: the fold reads up to it
        result = fold_and_patch(loc, opts, say=lambda line: print(line, flush=True)).result
        print(result.summary(), flush=True)
    except Busy as exc:  # another fold holds the lease: it folds what this one would have
        print(f"fold: nothing done: {exc.message}", flush=True)
    except GitvaultError as exc:
        log_failure(loc.state_dir, f"background fold failed: {exc.message}")
    except Exception as exc:  # noqa: BLE001 - a background job logs, never raises
        log_failure(loc.state_dir, f"background fold failed: {type(exc).__name__}: {exc}")
    return 0


def _update_path_index(common: str) -> None:
    """After a drain wrote notes: the per-path index follows (in the drainer's own process,
    detached from the commit that started it). Never raises."""
    from pathlib import Path

    from gitvault.resolve import Location

    try:
        from gitvault.pathrecall.index import update_quietly

        update_quietly(Location(common_dir=Path(common), git_dir=Path(common), workdir=None))
    except Exception:  # noqa: BLE001 - a hook never fails
        pass


def _write_records(common: str) -> None:
    """The session records PreCompact and SessionEnd spooled (gitvault.agents.records): written
    by the drainer, as the notes are. Never raises."""
    from pathlib import Path

    from gitvault.resolve import Location

    try:
        from gitvault.agents import records

        loc = Location(common_dir=Path(common), git_dir=Path(common), workdir=None)
        records.written(loc, follow=False)
    except Exception:  # noqa: BLE001 - a hook never fails
        pass


def _materialize(common: str, *, wait: bool) -> None:
    """The recall blocks session starts are served from, built again (memory/ready). Never
    raises."""
    from pathlib import Path

    from gitvault.resolve import Location

    try:
        from gitvault.materialize import ready
        from gitvault.vault.launcher import SETTLE_NS

        loc = Location(common_dir=Path(common), git_dir=Path(common), workdir=None)
        ready.refresh(loc, wait=SETTLE_NS / 1e9 + 0.5 if wait else 0.0)
    except Exception:  # noqa: BLE001 - a hook never fails
        pass


def _option(args: list[str], name: str) -> str | None:
    if name in args:
        index = args.index(name)
        if index + 1 < len(args):
            return args[index + 1]
    return None


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
