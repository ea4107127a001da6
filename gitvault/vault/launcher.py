"""The launcher: <common git dir>/gitvault/bin/gitvault-hook, the one place that knows which
gitvault this repository's hooks run. Installed files (the git shims, agent hook settings)
call the launcher or `gitvault-hook` on PATH, never an interpreter or a module path, so they
hold nothing machine-specific and survive upgrades and refactors; `gitvault install` points
the launcher at the gitvault that ran it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from gitvault.resolve import STATE_DIRNAME, Location
from gitvault.vault import statedir
from gitvault.vault.files import atomic_write, make_dirs

RELATIVE = statedir.LAUNCHER  # below the state folder
# From the launcher's folder back to the state folder's failure log.
_LOG_FROM_LAUNCHER = "/".join([".."] * RELATIVE.count("/") + [statedir.LOG])
ENTRY = "gitvault-hook"


def path(loc: Location) -> Path:
    return loc.state_dir / RELATIVE


def target() -> str:
    """The `gitvault-hook` of the running gitvault: beside this interpreter (a venv), else on
    PATH."""
    beside = Path(sys.executable).parent / ENTRY
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(ENTRY) or ""


def script(entry: str) -> str:
    """The launcher: this gitvault's entry, else gitvault-hook on PATH, else a logged line and
    exit 0 (the gitvault it pointed at was uninstalled: a hook must never fail)."""
    if entry:
        run = f'[ -x {shlex.quote(entry)} ] && exec {shlex.quote(entry)} "$@"'
    else:  # a source tree without the console script: the stable module entry
        py = shlex.quote(sys.executable)
        run = f'[ -x {py} ] && exec {py} -m gitvault.hook "$@"'
    return (
        "#!/bin/sh\n"
        "# gitvault launcher: which gitvault this repository's hooks run "
        "(`gitvault install` rewrites it).\n"
        f"{run}\n"
        f'command -v {ENTRY} >/dev/null 2>&1 && exec {ENTRY} "$@"\n'
        'echo "$(date +%Y-%m-%dT%H:%M:%S) hook: the gitvault this repository was installed '
        f'with is gone; run gitvault install again" >> "${{0%/*}}/{_LOG_FROM_LAUNCHER}"\n'
        "exit 0\n"
    )


def install(loc: Location) -> list[str]:
    """Write (or repoint) the launcher; what changed."""
    where = path(loc)
    wanted = script(target()).encode()
    try:
        if where.read_bytes() == wanted:
            return []
    except OSError:
        pass
    make_dirs(where.parent)
    atomic_write(where, wanted, mode=0o755)
    return [f"pointed {where} at this gitvault"]


def shell_command(args: str, project_var: str) -> str:
    """A shell command line running `gitvault-hook ARGS` from a hook an agent runs in the
    project (found from the variable the agent sets to the project folder, else the current
    one): the repository's launcher first, else gitvault-hook on PATH, else nothing (a
    missing tool must never break a session). Names no machine-specific path."""
    common = (
        f'd=$(git -C "${{{project_var}:-.}}" rev-parse --path-format=absolute '
        "--git-common-dir 2>/dev/null)"
    )
    hook = f"$d/{STATE_DIRNAME}/{RELATIVE}"
    return (
        f'{common}; [ -x "{hook}" ] && exec "{hook}" {args}; '
        f"command -v {ENTRY} >/dev/null 2>&1 && exec {ENTRY} {args}; exit 0"
    )


def remove(loc: Location) -> list[str]:
    where = path(loc)
    if not where.exists():
        return []
    where.unlink()
    return [f"removed {where}"]
