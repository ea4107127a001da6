"""The launcher: <common git dir>/gitvault/bin/gitvault-hook, the one place that knows which
gitvault this repository's hooks run. Installed files (the git shims, agent hook settings)
call the launcher or `gitvault-hook` on PATH, never an interpreter or a module path, so they
hold nothing machine-specific and survive upgrades and refactors; `gitvault install` points
the launcher at the gitvault that ran it.

It also answers an agent's turn end without Python when nothing can be due (the quiet fast
path). A turn end that found nothing due leaves a quiet stamp per session (<state>/quiet/<id>,
written by gitvault.agents.quiet through quiet_stamp below: this module is the one home of its
format, reader and writer):

    gitvault-quiet 1 <agent>      the format, and which agent's turn end it answers
    <the input's cwd member>      verbatim, e.g. `"cwd": "/repo"` (empty: the input had none)
    <loose vault ref file>        absolute path, then the tip it held ("-": no loose file)
    <tip>
    <watched file>...             absolute paths: the session's HEAD reflog, git config files,
                                  packed-refs; the stamp's own mtime is the newest of theirs
    end

The sh reads the session id from the hook input, and answers nothing (exit 0, one byte
appended to <id>.seen: the session's liveness and turn count for the ledger) only when the
stamp is complete, of this format and agent, the cwd member is the same, the vault tip is the
same and no watched file is newer than the stamp. Anything else (no stamp, an id it cannot
read, two session ids, a moved vault, a new commit, a changed config) hands the input to
Python unchanged. Stamp content is only ever compared, never evaluated, sourced or run, and
no path from it is opened for writing.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Sequence
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


# The stamp's first line (format 1); the sh compares it whole.
QUIET_FORMAT = "gitvault-quiet 1"
QUIET_END = "end"
# The most of the hook input the sh holds (what the Python runtime reads at most).
INPUT_CAP = 4_000_000


class TurnEnd:
    """One agent's turn-end hook as the launcher sees it: `gitvault-hook AGENT WORD`, the
    session id in the input's member KEY. A plain class: nothing here may cost a hook."""

    def __init__(self, agent: str, word: str, key: str) -> None:
        self.agent, self.word, self.key = agent, word, key


def _quiet_path(turn_ends: Sequence[TurnEnd]) -> str:
    """The sh of the quiet fast path ("" when no agent has a turn end to answer)."""
    safe = [t for t in turn_ends if _plain(t.agent) and _plain(t.word) and _plain(t.key)]
    if not safe:
        return ""
    arms = "\n".join(f"'2:{t.agent}:{t.word}') gv_key={t.key} ;;" for t in safe)
    quiet = f"{statedir.QUIET}"
    beat = statedir.QUIET_BEAT_SUFFIX
    return f"""
# The quiet fast path: a turn end whose stamp still holds ends here, without Python.
gv_quiet() {{
case $0 in */*) ;; *) return 1 ;; esac
case $gv_input in *"\\"$gv_key\\""*"\\"$gv_key\\""*) return 1 ;; esac
gv_rest=${{gv_input#*"\\"$gv_key\\""}}
[ "$gv_rest" != "$gv_input" ] || return 1
gv_rest=${{gv_rest#"${{gv_rest%%[! \t]*}}"}}
case $gv_rest in :*) gv_rest=${{gv_rest#:}} ;; *) return 1 ;; esac
gv_rest=${{gv_rest#"${{gv_rest%%[! \t]*}}"}}
case $gv_rest in \\"*) gv_rest=${{gv_rest#\\"}} ;; *) return 1 ;; esac
gv_sid=${{gv_rest%%\\"*}}
case $gv_sid in ''|[!A-Za-z0-9]*|*[!A-Za-z0-9._-]*) return 1 ;; esac
[ ${{#gv_sid}} -le 128 ] || return 1
gv_stamp=${{0%/*}}/../{quiet}/$gv_sid
[ -f "$gv_stamp" ] || return 1
{{
IFS= read -r gv_line && [ "$gv_line" = "{QUIET_FORMAT} $1" ] || return 1
IFS= read -r gv_line || return 1
if [ -n "$gv_line" ]; then
case $gv_input in *'"cwd"'*'"cwd"'*) return 1 ;; *"$gv_line"*) ;; *) return 1 ;; esac
else
case $gv_input in *'"cwd"'*) return 1 ;; esac
fi
IFS= read -r gv_ref && IFS= read -r gv_tip || return 1
if [ "$gv_tip" = - ]; then
[ ! -e "$gv_ref" ] || return 1
else
[ -f "$gv_ref" ] && IFS= read -r gv_line < "$gv_ref" && [ "$gv_line" = "$gv_tip" ] || return 1
fi
while IFS= read -r gv_line; do
[ "$gv_line" = {QUIET_END} ] && break
[ -n "$gv_line" ] && ! [ "$gv_line" -nt "$gv_stamp" ] || return 1
done
[ "$gv_line" = {QUIET_END} ] || return 1
}} < "$gv_stamp"
gv_beat=$gv_stamp{beat}
[ ! -h "$gv_beat" ] && {{ [ -f "$gv_beat" ] || [ ! -e "$gv_beat" ]; }} || return 1
printf x 2>/dev/null >> "$gv_beat"
}}
gv_key=
case $#:$1:$2 in
{arms}
esac
if [ -n "$gv_key" ]; then
[ -z "${{GITVAULT_CHILD:-}}" ] || exit 0
gv_input=$(head -c {INPUT_CAP} 2>/dev/null)
case $? in 126|127) gv_run "$@" ;; esac
gv_quiet "$1" && exit 0
printf '%s' "$gv_input" | gv_run "$@"
exit $?
fi
"""


def _plain(word: str) -> bool:
    return bool(word) and all(c.isascii() and (c.isalnum() or c in "-_") for c in word)


def script(entry: str, turn_ends: Sequence[TurnEnd] = ()) -> str:
    """The launcher: this gitvault's entry, else gitvault-hook on PATH, else a logged line and
    exit 0 (the gitvault it pointed at was uninstalled: a hook must never fail); before that,
    the quiet fast path for the agents' turn ends."""
    if entry:
        run = f'[ -x {shlex.quote(entry)} ] && exec {shlex.quote(entry)} "$@"'
    else:  # a source tree without the console script: the stable module entry
        py = shlex.quote(sys.executable)
        run = f'[ -x {py} ] && exec {py} -m gitvault.hook "$@"'
    return (
        "#!/bin/sh\n"
        "# gitvault launcher: which gitvault this repository's hooks run "
        "(`gitvault install` rewrites it).\n"
        "gv_run() {\n"
        f"{run}\n"
        f'command -v {ENTRY} >/dev/null 2>&1 && exec {ENTRY} "$@"\n'
        'echo "$(date +%Y-%m-%dT%H:%M:%S) hook: the gitvault this repository was installed '
        f'with is gone; run gitvault install again" >> "${{0%/*}}/{_LOG_FROM_LAUNCHER}"\n'
        "exit 0\n"
        "}\n"
        f"{_quiet_path(turn_ends)}"
        'gv_run "$@"\n'
    )


def quiet_stamp(
    agent: str, cwd_member: str, ref: Path, tip: str | None, watched: Sequence[Path]
) -> bytes | None:
    """A quiet stamp's text (None when a value would not survive a line of its own)."""
    lines = [f"{QUIET_FORMAT} {agent}", cwd_member, str(ref), tip or "-"]
    lines += [str(p) for p in watched] + [QUIET_END]
    if any("\n" in line or "\r" in line for line in lines) or not all(lines[2:]):
        return None
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")


def install(loc: Location, turn_ends: Sequence[TurnEnd] = ()) -> list[str]:
    """Write (or repoint) the launcher; what changed."""
    where = path(loc)
    wanted = script(target(), turn_ends).encode()
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
