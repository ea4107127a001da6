"""The launcher: <common git dir>/gitvault/bin/gitvault-hook, the one place that knows which
gitvault this repository's hooks run. Installed files (the git shims, agent hook settings)
call the launcher or `gitvault-hook` on PATH, never an interpreter or a module path, so they
hold nothing machine-specific and survive upgrades and refactors; `gitvault install` points
the launcher at the gitvault that ran it.

It also answers, without Python, an edit-time call about a file the vault knows nothing of or
whose block the session already got (gv_unknown: the path list's and the session's shown list,
grep -Fx; gitvault.agents.behaviours.file_recall_due is the same check in Python), and an
agent's turn end when nothing can be due (the quiet fast path). A turn end that found nothing
due leaves a quiet stamp per session (<state>/quiet/<id>, written by gitvault.agents.quiet
through quiet_stamp below: this module is the one home of its format, reader and writer):

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

It also serves a fresh session start (no `source` meaning resume) from the recall block the
last vault change materialized for the session's worktree (gitvault.materialize.ready writes it, in
<state>/recall-ready/<worktree>; this module holds its format, reader and writer):

    gitvault-ready 1 serve        (`wait`: names the worktree for the next refresh only)
    <token>                       the READY_GEN token then (a state file recall reads replaces it)
    <worktree>                    compared with the project folder the agent names
    <HEAD file>, <its first line> the worktree's branch (its sessions first, its handovers)
    <vault ref file>, <tip>       as in a stamp ("-": no loose file, packed-refs is watched)
    <private ref file>, <tip>
    <patterns folder>             compared with the one the hook's environment names
    <agents served>               "*" or names (`git config gitvault.agents`)
    =<value>...                   the git config files the environment named then (config_env:
                                  the user's, the XDG folder, the system's, NOSYSTEM), compared
                                  with what the hook's environment names
    <block length>                characters (no more than the agent passes on)
    <reflog>                      the worktree's HEAD reflog: its size is the run's start offset
    <ledger line>                 JSON: what the session's ledger takes from the start
    <watched file>... end         git config files, packed-refs, the patterns: not newer
    <block>                       the recall block as the inside of a JSON string, one line

The sh serves it only when every line holds, the input names the agent's required members, no
resume, one session id, a project folder that is the worktree's top, no git config in the
environment and, where the agent hands the start a file for the session's environment, gitvault
on PATH (else Python writes it). It then records the start (<state>/quiet/<id>.start: the
reflog size, the ledger line; created only when none exists, the ledger folds it in and removes
it, and the turn-end path answers nothing while it waits) and prints the agent's envelope
around the block. Anything else goes to Python, which serves and records the start itself.

And it serves an edit-time block (a file the vault knows, not yet shown to the session) from
the blocks the last vault change materialized for the worktree (gitvault.materialize.blocks
writes them, in <state>/recall-ready/@files.<worktree>; this module holds the format):

    gitvault-files 1
    basis ...                     what the blocks were built from (the builder's; the sh
                                  reads past it)
    <token>, <worktree>, <HEAD file>, <its first line>, <vault ref file>, <tip>,
    <private ref file>, <tip>, <patterns folder>, <agents served>, =<value>...
                                  a line each, as in a ready file
    <watched file>... end         git config files, packed-refs, the patterns, the worktree's
                                  HEAD reflog, info/exclude, the user's excludes file
    <path>                        then per path: the repository-relative path, and on the
    #<length><TAB><block>         next line its block as the inside of a JSON string

The sh serves a block only when every header line holds, no `.gitignore` on the path's way
down from the worktree's top is newer than the file, the input is a JSON object (it opens
with `{` and, whole, ends with `}`: one cut at the size Python reads, or with anything after
it, Python cannot parse and answers nothing) whose cwd
member (when it has one, before the agent's tail member) is a plain string, no git config is
in the environment, `flock` is on PATH and the input holds the members the agent's tool
event needs (Codex: its shell tool); it then claims the path in the session's shown
list under the flock Python takes there (gitvault.agents.shown.claim) and prints the agent's
envelope around the block. Anything else goes to Python.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from gitvault.named import NamedTuple
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
    import shutil  # here: every hook imports this module, few call this

    return shutil.which(ENTRY) or ""


# How old the files a stamp or a ready file watches must be when it is written: a later write
# is then newer than it even to a shell comparing whole seconds (or a clock's coarse ticks).
SETTLE_NS = 2_000_000_000
# The stamp's first line (format 1); the sh compares it whole.
QUIET_FORMAT = "gitvault-quiet 1"
QUIET_END = "end"  # the end of a stamp's and a ready file's watched files
# A ready file's first line: the format, then whether the sh may serve it (READY_WAIT: it only
# names its worktree for the next refresh; Python serves the start).
READY_FORMAT = "gitvault-ready 1"
READY_SERVE, READY_WAIT = "serve", "wait"
# A worktree's materialized edit-time blocks: the first line, and the first word of the next.
FILES_FORMAT = "gitvault-files 1"
FILES_BASIS = "basis"
# Where recall reads the user's standing patterns from (gitvault.memory.recall), when set.
PATTERNS_ENV = "GITVAULT_PATTERNS_DIR"
CLI = "gitvault"  # the command a session's shell runs gitvault by, when it is on PATH
# The most of the hook input the sh holds (what the Python runtime reads at most).
INPUT_CAP = 4_000_000


def config_env(env: Mapping[str, str]) -> tuple[str, str, str, str]:
    """Which git config files (besides the repository's) a process with this environment
    reads, as gv_config_env (the sh) spells it: the user's file, the XDG config folder, the
    system file, and GIT_CONFIG_NOSYSTEM. A ready or blocks file names them as they were when it
    was built; the sh serves only under the same (another user's or system config may list
    other agents or settings)."""
    home = env.get("HOME", "")
    user = env.get("GIT_CONFIG_GLOBAL", "") or (f"{home}/.gitconfig" if home else "")
    xdg = env.get("XDG_CONFIG_HOME", "") or (f"{home}/.config" if home else "")
    system = env.get("GIT_CONFIG_SYSTEM", "") or "/etc/gitconfig"
    return user, xdg, system, env.get("GIT_CONFIG_NOSYSTEM", "")


# A session's shown list at which it has seen enough: no more blocks (as
# gitvault.agents.shown.MAX_BYTES, which claims the same way).
SHOWN_MAX_BYTES = 4 * 1024 * 1024


class TurnEnd:
    """One agent's turn-end hook as the launcher sees it: `gitvault-hook AGENT WORD`, the
    session id in the input's member KEY. A plain class: nothing here may cost a hook."""

    def __init__(self, agent: str, word: str, key: str) -> None:
        self.agent, self.word, self.key = agent, word, key


class SessionStart:
    """One agent's session-start hook as the launcher serves it from a materialized recall:
    `gitvault-hook AGENT WORD`, the session id in member KEY; what the agent prints around the
    block (PREFIX, the block as a JSON string's inside, SUFFIX: the adapter's own output for it)
    and the most of the block it passes on (LIMIT characters). RESUME: the values of the input's
    `source` member that mean a resumed conversation (Python then). FIRST: a variable naming the
    project folder that wins over the input's cwd member. ENV_FILE: a variable the agent sets for
    a file the session start may write the session's environment into (Python then, unless the
    gitvault command is on PATH, when there is nothing to write). NEEDS: (member, value) pairs
    the input must hold, as the adapter's input schema requires them (value "": any string)."""

    def __init__(
        self,
        agent: str,
        word: str,
        key: str,
        prefix: str,
        suffix: str,
        limit: int,
        resume: tuple[str, ...] = ("resume",),
        first: str = "",
        env_file: str = "",
        needs: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.agent, self.word, self.key = agent, word, key
        self.prefix, self.suffix, self.limit = prefix, suffix, limit
        self.resume, self.first, self.env_file = resume, first, env_file
        # Members the agent's input must hold (as a string; equal to the value unless it is "").
        self.needs = needs


class ToolEvent:
    """One agent's edit-time hook (a file read or edit): `gitvault-hook AGENT WORD`, the session
    id in member KEY, the file in member PATH_KEY (absolute, or relative to the input's cwd
    member), the project folder in variable PROJECT_VAR (PWD: the input's cwd member, as the
    Python runtime takes it); a member named in OTHERS means the call may name more files
    (Python then)."""

    def __init__(
        self,
        agent: str,
        word: str,
        key: str,
        path_key: str,
        project_var: str,
        others: tuple[str, ...] = (),
        parent: str = "",
        readers: tuple[str, ...] = (),
        tail: str = "",
        prefix: str = "",
        suffix: str = "",
        limit: int = 0,
        needs: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.agent, self.word, self.key = agent, word, key
        self.path_key, self.project_var, self.others = path_key, project_var, others
        # NEEDS: (member, value) pairs the input must hold, as plain strings, for the sh to
        # serve a block (Codex: the shell tool, whose command line names the file read).
        self.needs = needs
        # PREFIX, SUFFIX: what the agent prints around a block (the block as a JSON string's
        # inside); LIMIT: the most of it the agent passes on (0: the sh serves no block for
        # this hook; Python builds it).
        self.prefix, self.suffix, self.limit = prefix, suffix, limit
        # PARENT: PATH_KEY must be a plain member of the input's object member PARENT (the
        # tool's arguments). READERS: PATH_KEY holds a shell command line, whose one file the sh
        # reads only from `READER FILE`, `head|tail -n N FILE` or `sed -n 'N,Mp' FILE`.
        self.parent, self.readers = parent, readers
        # TAIL: a member the agent always writes after every member the sh reads (the tool's
        # result, as large as the file read): the sh looks only at the input before it.
        self.tail = tail


# gv_member NAME: the value of the input's one member NAME (a JSON string without an escape in
# it, whitespace around the colon as JSON allows on one line) into gv_value; false otherwise.
_MEMBER_SH = r"""
gv_member() {
case $gv_input in *"\"$1\""*"\"$1\""*) return 1 ;; esac
gv_rest=${gv_input#*"\"$1\""}
[ "$gv_rest" != "$gv_input" ] || return 1
gv_rest=${gv_rest#"${gv_rest%%[! 	]*}"}
case $gv_rest in :*) gv_rest=${gv_rest#:} ;; *) return 1 ;; esac
gv_rest=${gv_rest#"${gv_rest%%[! 	]*}"}
case $gv_rest in \"*) gv_rest=${gv_rest#\"} ;; *) return 1 ;; esac
gv_value=${gv_rest%%\"*}
case $gv_value in *\\*) return 1 ;; esac
}
gv_session() {
gv_member "$gv_key" || return 1
gv_sid=$gv_value
case $gv_sid in ''|[!A-Za-z0-9]*|*[!A-Za-z0-9._-]*) return 1 ;; esac
[ ${#gv_sid} -le 100 ]
}
"""

# Readers of a stamp's or a ready file's lines (on stdin). gv_holds: the next two lines are a
# loose ref file and the tip it must hold ("-": no loose file; packed-refs is then watched).
# gv_older FILE: the next lines, up to the end line, are files none of which is newer than FILE.
_LINES_SH = r"""
gv_holds() {
IFS= read -r gv_ref && IFS= read -r gv_tip || return 1
if [ "$gv_tip" = - ]; then
[ ! -e "$gv_ref" ] && [ ! -h "$gv_ref" ]
else
[ -f "$gv_ref" ] && IFS= read -r gv_line < "$gv_ref" && [ "$gv_line" = "$gv_tip" ]
fi
}
gv_older() {
while IFS= read -r gv_line; do
[ "$gv_line" = @QUIET_END@ ] && return 0
[ -n "$gv_line" ] && ! [ "$gv_line" -nt "$1" ] || return 1
done
return 1
}
"""

# What a ready file and a blocks file share (gv_patterns: the user's patterns folder, as recall
# finds it, into gv_patterns). gv_head AGENT FOLDER: the next lines name the READY_GEN token
# now (file gv_gen), the worktree FOLDER, its HEAD, the vault's and the private ref's tips as
# they are, the patterns folder and agents among which AGENT is served.
_HEAD_SH = r"""
gv_patterns_dir() {
if [ -n "${@PATTERNS_ENV@:-}" ]; then
gv_patterns=$@PATTERNS_ENV@
elif [ -n "${XDG_CONFIG_HOME:-}" ]; then
gv_patterns=$XDG_CONFIG_HOME/gitvault/patterns
elif [ -n "${HOME:-}" ]; then
gv_patterns=$HOME/.config/gitvault/patterns
else
return 1
fi
}
gv_head() {
IFS= read -r gv_line && IFS= read -r gv_tip < "$gv_gen" && [ "$gv_line" = "$gv_tip" ] || return 1
IFS= read -r gv_line && [ "$gv_line" = "$2" ] || return 1
gv_holds && gv_holds && gv_holds || return 1
IFS= read -r gv_line && [ "$gv_line" = "$gv_patterns" ] || return 1
IFS= read -r gv_line || return 1
case " $gv_line " in *" * "*|*" $1 "*) ;; *) return 1 ;; esac
gv_user=${GIT_CONFIG_GLOBAL:-}
[ -n "$gv_user" ] || [ -z "${HOME:-}" ] || gv_user=$HOME/.gitconfig
gv_xdg=${XDG_CONFIG_HOME:-}
[ -n "$gv_xdg" ] || [ -z "${HOME:-}" ] || gv_xdg=$HOME/.config
for gv_word in "$gv_user" "$gv_xdg" "${GIT_CONFIG_SYSTEM:-/etc/gitconfig}" \
"${GIT_CONFIG_NOSYSTEM:-}"; do
IFS= read -r gv_line && [ "$gv_line" = "=$gv_word" ] || return 1
done
}
"""

# gv_quiet AGENT: the session's quiet stamp holds (see the module's docstring).
_QUIET_SH = r"""
gv_quiet() {
case $0 in */*) ;; *) return 1 ;; esac
gv_session || return 1
gv_stamp=${0%/*}/../@QUIET@/$gv_sid
[ -f "$gv_stamp" ] || return 1
{
IFS= read -r gv_line && [ "$gv_line" = "@QUIET_FORMAT@ $1" ] || return 1
IFS= read -r gv_line || return 1
if [ -n "$gv_line" ]; then
case $gv_input in *'"cwd"'*'"cwd"'*) return 1 ;; *"$gv_line"*) ;; *) return 1 ;; esac
else
case $gv_input in *'"cwd"'*) return 1 ;; esac
fi
gv_holds || return 1
gv_older "$gv_stamp" || return 1
} < "$gv_stamp"
[ ! -e "$gv_stamp@START@" ] && [ ! -h "$gv_stamp@START@" ] || return 1
gv_beat=$gv_stamp@BEAT@
[ ! -h "$gv_beat" ] && { [ -f "$gv_beat" ] || [ ! -e "$gv_beat" ]; } || return 1
printf x 2>/dev/null >> "$gv_beat"
}
"""

# gv_ready AGENT: a fresh session start (no resume) in a worktree whose materialized recall
# still holds (see the module's docstring): the start is recorded for the ledger and the block
# printed in the agent's envelope (gv_prefix, the block, gv_suffix).
_READY_SH = r"""
gv_ready() {
case $0 in */*) ;; *) return 1 ;; esac
[ -z "${GIT_CONFIG_PARAMETERS:-}${GIT_CONFIG_COUNT:-}" ] || return 1
case $gv_input in "{"*"}") ;; *) return 1 ;; esac
gv_session || return 1
for gv_word in $gv_needs; do
gv_member "${gv_word%%=*}" || return 1
[ -z "${gv_word#*=}" ] || [ "$gv_value" = "${gv_word#*=}" ] || return 1
done
case $gv_input in *'"source"'*)
gv_member source || return 1
for gv_word in $gv_resume; do [ "$gv_value" != "$gv_word" ] || return 1; done ;;
esac
gv_dir=$gv_first
if [ -z "$gv_dir" ]; then
gv_member cwd || return 1
gv_dir=$gv_value
fi
case $gv_dir in /*) ;; *) return 1 ;; esac
[ -z "$gv_envfile" ] || command -v @CLI@ >/dev/null 2>&1 || return 1
if [ -d "$gv_dir/.git" ]; then
gv_wt=@READY_MAIN@
elif [ -f "$gv_dir/.git" ]; then
IFS= read -r gv_line < "$gv_dir/.git" || return 1
gv_wt=${gv_line##*/}
case $gv_wt in ''|[!A-Za-z0-9]*|*[!A-Za-z0-9._-]*) return 1 ;; esac
else
return 1
fi
gv_state=${0%/*}/..
gv_file=$gv_state/@READY@/$gv_wt
gv_gen=$gv_state/@READY@/@READY_GEN@
gv_rec=$gv_state/@QUIET@/$gv_sid@START@
[ -f "$gv_file" ] && [ ! -h "$gv_file" ] && [ -f "$gv_gen" ] && [ ! -h "$gv_gen" ] || return 1
[ ! -e "$gv_rec" ] && [ ! -h "$gv_rec" ] || return 1
gv_patterns_dir || return 1
{
IFS= read -r gv_line && [ "$gv_line" = "@READY_FORMAT@ @READY_SERVE@" ] || return 1
gv_head "$1" "$gv_dir" || return 1
IFS= read -r gv_length || return 1
case $gv_length in ''|*[!0-9]*) return 1 ;; esac
[ ${#gv_length} -le 9 ] && [ "$gv_length" -le "$gv_limit" ] || return 1
IFS= read -r gv_log && IFS= read -r gv_ledger || return 1
case $gv_ledger in "{"*"}") ;; *) return 1 ;; esac
gv_older "$gv_file" || return 1
gv_size=0
if [ -f "$gv_log" ]; then
gv_size=$(wc -c < "$gv_log") || return 1
gv_size=${gv_size#"${gv_size%%[! ]*}"}
case $gv_size in ''|*[!0-9]*) return 1 ;; esac
elif [ -e "$gv_log" ] || [ -h "$gv_log" ]; then
return 1
fi
set -C
{ printf '%s\n%s\n' "$gv_size" "$gv_ledger" > "$gv_rec"; } 2>/dev/null
gv_line=$?
set +C
[ "$gv_line" -eq 0 ] || return 1
if [ "$gv_length" -gt 0 ]; then
printf '%s' "$gv_prefix"
cat
printf '%s\n' "$gv_suffix"
fi
return 0
} < "$gv_file"
}
"""

# gv_unknown: an edit-time call about one file the vault knows nothing of, or whose block this
# session already got: nothing to say (gitvault.agents.behaviours.file_recall_due's answer).
# Run in a subshell (it changes directory). The file is the input's absolute path, its folder
# resolved as realpath would (cd -P), inside the project folder, which must be a worktree's top.
_UNKNOWN_SH = r"""
gv_inside() {
case $gv_input in *"\"$1\""*"\"$1\""*) return 1 ;; esac
gv_rest=${gv_input#*"\"$1\""}
[ "$gv_rest" != "$gv_input" ] || return 1
gv_rest=${gv_rest#"${gv_rest%%[! 	]*}"}
case $gv_rest in :*) gv_rest=${gv_rest#:} ;; *) return 1 ;; esac
gv_rest=${gv_rest#"${gv_rest%%[! 	]*}"}
case $gv_rest in "{"*) gv_rest=${gv_rest#?} ;; *) return 1 ;; esac
case $gv_rest in *"\"$2\""*) ;; *) return 1 ;; esac
gv_rest=${gv_rest%%"\"$2\""*}
case $gv_rest in *[{}\\]*) return 1 ;; esac
}
gv_command() {
case $gv_file in ''|*[!A-Za-z0-9._/+@,\'\ -]*) return 1 ;; esac
set -f
set -- $gv_file
case $#:${1##*/} in
2:*) gv_word=${1##*/} gv_file=$2 ;;
4:head|4:tail) gv_word=- gv_file=$4
[ "$2" = -n ] && case $3 in ''|*[!0-9]*) false ;; esac || return 1 ;;
4:sed) gv_word=- gv_file=$4 gv_script=$3
case $gv_script in "'"*"'") gv_script=${gv_script#?} gv_script=${gv_script%?} ;; esac
[ "$2" = -n ] || return 1
case $gv_script in *,*p) ;; *) return 1 ;; esac
gv_from=${gv_script%%,*} gv_to=${gv_script#*,}
gv_to=${gv_to%p}
case $gv_from in ''|*[!0-9]*) return 1 ;; esac
case $gv_to in ''|*[!0-9]*) return 1 ;; esac ;;
*) return 1 ;;
esac
case $1$2$4 in *"'"*) return 1 ;; esac
case $gv_file in -*) return 1 ;; esac
[ "$gv_word" = - ] && return 0
for gv_reader in $gv_readers; do
[ "$gv_word" = "$gv_reader" ] && return 0
done
return 1
}
gv_unknown() {
case $0 in */*) ;; *) return 1 ;; esac
gv_state=${0%/*}/..
case $gv_input in "{"*"}") gv_whole=1 ;; *) gv_whole= ;; esac
[ -z "$gv_tail" ] || gv_input=${gv_input%%"\"$gv_tail\""*}
for gv_other in $gv_others; do
case $gv_input in *"\"$gv_other\""*) return 1 ;; esac
done
gv_session || return 1
[ -z "$gv_parent" ] || gv_inside "$gv_parent" "$gv_path_key" || return 1
gv_member "$gv_path_key" || return 1
gv_file=$gv_value
[ -z "$gv_readers" ] || gv_command || return 1
if [ -z "$gv_project" ] || case $gv_file in /*) false ;; esac; then
gv_member cwd || return 1
case $gv_value in /*) ;; *) return 1 ;; esac
[ -n "$gv_project" ] || gv_project=$gv_value
case $gv_file in /*) ;; *) gv_file=$gv_value/$gv_file ;; esac
fi
case $gv_file in */|*//*|*/./*|*/../*|*/.|*/..) return 1 ;; esac
[ -n "$gv_project" ] && [ -e "$gv_project/.git" ] && [ ! -h "$gv_file" ] || return 1
cd -P -- "$gv_project" 2>/dev/null || return 1
gv_root=$PWD
cd -P -- "${gv_file%/*}/" 2>/dev/null || return 1
case $PWD/ in "$gv_root"/*) ;; *) return 1 ;; esac
gv_rel=${PWD#"$gv_root"}/${gv_file##*/}
gv_rel=${gv_rel#/}
case /$gv_rel/ in */.git/*|//) return 1 ;; esac
case $gv_rel in '#'*) return 1 ;; esac
gv_shown=$gv_state/@SHOWN@/$gv_sid
if [ -f "$gv_shown" ] && grep -Fxq -e "$gv_rel" "$gv_shown" 2>/dev/null; then
return 0
fi
gv_known=$gv_state/@KNOWN@
[ -f "$gv_known" ] || return 1
IFS= read -r gv_line < "$gv_known" || return 1
case $gv_line in @KNOWN_HEADER@*) ;; *) return 1 ;; esac
grep -Fxq -e "$gv_rel" "$gv_known" 2>/dev/null
case $? in
1) return 0 ;;
0) [ "$gv_limit" -gt 0 ] && gv_served "$1" ;;
*) return 1 ;;
esac
}
"""

# gv_served AGENT: the materialized block of gv_rel, a file the vault knows and the session has
# not been shown (gv_unknown found both), claimed in the session's shown list under its flock
# and printed in the agent's envelope (gv_prefix, the block, gv_suffix). Exit 3 of the claim:
# another call of the session claimed it first, or the list is full (nothing to print). As
# gitvault.agents.shown.claim, a torn last line gets its line break before the claim.
_SERVED_SH = r"""
gv_served() {
[ -z "${GIT_CONFIG_PARAMETERS:-}${GIT_CONFIG_COUNT:-}" ] || return 1
[ -n "$gv_whole" ] || return 1
case $gv_input in *'"cwd"'*) gv_member cwd || return 1 ;; esac
for gv_word in $gv_needs; do
gv_member "${gv_word%%=*}" && [ "$gv_value" = "${gv_word#*=}" ] || return 1
done
command -v flock >/dev/null 2>&1 || return 1
if [ -d "$gv_root/.git" ]; then
gv_wt=@READY_MAIN@
elif [ -f "$gv_root/.git" ]; then
IFS= read -r gv_line < "$gv_root/.git" || return 1
gv_wt=${gv_line##*/}
case $gv_wt in ''|[!A-Za-z0-9]*|*[!A-Za-z0-9._-]*) return 1 ;; esac
else
return 1
fi
gv_blocks=$gv_state/@READY@/@FILES@$gv_wt
gv_gen=$gv_state/@READY@/@READY_GEN@
[ -f "$gv_blocks" ] && [ ! -h "$gv_blocks" ] && [ -f "$gv_gen" ] && [ ! -h "$gv_gen" ] || return 1
[ -d "${gv_shown%/*}" ] && [ ! -h "$gv_shown" ] || return 1
[ ! -e "$gv_shown" ] || [ -f "$gv_shown" ] || return 1
gv_patterns_dir || return 1
gv_dir=$gv_root
gv_rest=$gv_rel
while :; do
[ "$gv_dir/.gitignore" -nt "$gv_blocks" ] && return 1
case $gv_rest in */*) gv_dir=$gv_dir/${gv_rest%%/*} gv_rest=${gv_rest#*/} ;; *) break ;; esac
done
{
IFS= read -r gv_line && [ "$gv_line" = "@FILES_FORMAT@" ] || return 1
IFS= read -r gv_line || return 1
case $gv_line in "@FILES_BASIS@ "*) ;; *) return 1 ;; esac
gv_head "$1" "$gv_root" || return 1
gv_older "$gv_blocks" || return 1
gv_found=$(GV_REL=$gv_rel awk 'f { print; exit }
{ o = !o } o && $0 == ENVIRON["GV_REL"] { f = 1 }') || return 1
} < "$gv_blocks"
case $gv_found in "#"*"	"*) ;; *) return 1 ;; esac
gv_length=${gv_found%%"	"*}
gv_length=${gv_length#"#"}
case $gv_length in ''|*[!0-9]*) return 1 ;; esac
[ ${#gv_length} -le 9 ] && [ "$gv_length" -le "$gv_limit" ] || return 1
gv_found=${gv_found#*"	"}
(
umask 077
exec 9>>"$gv_shown" || exit 1
flock -x 9 || exit 1
! grep -Fxq -e "$gv_rel" "$gv_shown" || exit 3
gv_size=$(wc -c < "$gv_shown") || exit 1
gv_size=${gv_size#"${gv_size%%[! ]*}"}
case $gv_size in ''|*[!0-9]*) exit 1 ;; esac
[ "$gv_size" -lt @SHOWN_MAX@ ] || exit 3
if [ "$gv_size" -gt 0 ]; then
gv_line=$(tail -c 1 "$gv_shown") || exit 1
[ -z "$gv_line" ] || printf '\n' >&9 || exit 1
fi
printf '%s\n' "$gv_rel" >&9 || exit 1
) 2>/dev/null
case $? in
0) printf '%s%s%s\n' "$gv_prefix" "$gv_found" "$gv_suffix" ;;
3) return 0 ;;
*) return 1 ;;
esac
}
"""

_DISPATCH_SH = r"""gv_key=
case $#:$1:$2 in
@ARMS@
esac
if [ -n "$gv_key" ]; then
[ -z "${GITVAULT_CHILD:-}" ] || exit 0
gv_input=$(head -c @INPUT_CAP@ 2>/dev/null)
case $? in 126|127) gv_run "$@" ;; esac
case $gv_kind in
quiet) gv_quiet "$1" && exit 0 ;;
ready) gv_ready "$1" && exit 0 ;;
*) (gv_unknown "$1") && exit 0 ;;
esac
printf '%s' "$gv_input" | gv_run "$@"
exit $?
fi
"""


def _fill(text: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        text = text.replace(f"@{name}@", value)
    return text


def _fast_paths(
    turn_ends: Sequence[TurnEnd],
    tool_events: Sequence[ToolEvent] = (),
    known_header: str = "",
    starts: Sequence[SessionStart] = (),
) -> str:
    """The sh of the fast paths ("" when no hook is answered there)."""
    import shlex  # here: the status line and hooks import this module, few build a script

    ends = [t for t in turn_ends if all(_plain(w) for w in (t.agent, t.word, t.key))]
    tools = [
        t
        for t in tool_events
        if all(_plain(w) for w in (t.agent, t.word, t.key, t.path_key, t.project_var, *t.others))
        and all(_plain(w) for w in (*t.readers, *([t.parent] if t.parent else [])))
    ]
    if not known_header or "\n" in known_header:
        tools = []
    for t in tools:  # a block is served only in an envelope that survives a line of its own
        if t.limit < 0 or any(c in t.prefix + t.suffix for c in "\n\r\0"):
            t.limit = 0
        if not all(_plain(w) for pair in t.needs for w in pair):
            t.limit = 0
    ready = [
        t
        for t in starts
        if all(_plain(w) for w in (t.agent, t.word, t.key, *t.resume))
        and all(_plain(w) for w in (t.first, t.env_file, *(v for n in t.needs for v in n)) if w)
        and all(name for name, _ in t.needs)
        and not any(c in t.prefix + t.suffix for c in "\n\r\0")
        and t.limit > 0
    ]
    if not ends and not tools and not ready:
        return ""
    arms = [f"'2:{t.agent}:{t.word}') gv_key={t.key} gv_kind=quiet ;;" for t in ends]
    arms += [
        f"'2:{t.agent}:{t.word}') gv_key={t.key} gv_kind=unknown gv_path_key={t.path_key} "
        f"gv_project={'' if t.project_var == 'PWD' else f'${{{t.project_var}:-}}'} "
        f"gv_others='{' '.join(t.others)}' gv_parent={t.parent} "
        f"gv_readers='{' '.join(t.readers)}' gv_tail='{t.tail}' gv_limit={t.limit} "
        f"gv_needs='{' '.join(f'{n}={v}' for n, v in t.needs)}'"
        + (
            f"\ngv_prefix={shlex.quote(t.prefix)}\ngv_suffix={shlex.quote(t.suffix)}"
            if t.limit > 0
            else ""
        )
        + " ;;"
        for t in tools
    ]
    arms += [
        f"'2:{t.agent}:{t.word}') gv_key={t.key} gv_kind=ready gv_limit={t.limit} "
        f"gv_resume='{' '.join(t.resume)}' "
        f"gv_first={f'${{{t.first}:-}}' if t.first else ''} "
        f"gv_envfile={f'${{{t.env_file}:-}}' if t.env_file else ''} "
        f"gv_needs='{' '.join(f'{n}={v}' for n, v in t.needs)}'\n"
        f"gv_prefix={shlex.quote(t.prefix)}\ngv_suffix={shlex.quote(t.suffix)} ;;"
        for t in ready
    ]
    parts = [
        _MEMBER_SH,
        _LINES_SH if ends or ready or tools else "",
        _HEAD_SH if ready or tools else "",
        _QUIET_SH if ends else "",
        _READY_SH if ready else "",
        _UNKNOWN_SH if tools else "",
        _SERVED_SH if tools else "",
        _DISPATCH_SH,
    ]
    return (
        "\n# The fast paths: a turn end whose quiet stamp holds, a session start whose\n"
        "# materialized recall holds, an edit-time call with nothing to say, end here, without\n"
        "# Python."
        + _fill(
            "".join(parts),
            {
                "QUIET": statedir.QUIET,
                "QUIET_FORMAT": QUIET_FORMAT,
                "QUIET_END": QUIET_END,
                "BEAT": statedir.QUIET_BEAT_SUFFIX,
                "START": statedir.QUIET_START_SUFFIX,
                "READY": statedir.READY,
                "READY_MAIN": statedir.READY_MAIN,
                "READY_GEN": statedir.READY_GEN,
                "READY_FORMAT": READY_FORMAT,
                "FILES": statedir.READY_FILES,
                "FILES_FORMAT": FILES_FORMAT,
                "FILES_BASIS": FILES_BASIS,
                "READY_SERVE": READY_SERVE,
                "PATTERNS_ENV": PATTERNS_ENV,
                "CLI": CLI,
                "SHOWN": statedir.SHOWN_PATHS,
                "SHOWN_MAX": str(SHOWN_MAX_BYTES),
                "KNOWN": statedir.KNOWN_PATHS,
                "KNOWN_HEADER": shlex.quote(known_header),
                "ARMS": "\n".join(arms),
                "INPUT_CAP": str(INPUT_CAP),
            },
        )
    )


def _plain(word: str) -> bool:
    return bool(word) and all(c.isascii() and (c.isalnum() or c in "-_") for c in word)


def script(
    entry: str,
    turn_ends: Sequence[TurnEnd] = (),
    tool_events: Sequence[ToolEvent] = (),
    known_header: str = "",
    starts: Sequence[SessionStart] = (),
) -> str:
    """The launcher: this gitvault's entry, else gitvault-hook on PATH, else a logged line and
    exit 0 (the gitvault it pointed at was uninstalled: a hook must never fail); before that,
    the fast paths for the agents' turn ends, session starts and edit-time calls."""
    import shlex  # here: the status line and hooks import this module, few build a script

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
        f"{_fast_paths(turn_ends, tool_events, known_header, starts)}"
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


class Ready(NamedTuple):
    """What a ready file says besides the block: built from what, for which worktree."""

    gen: str  # the READY_GEN token when it was built
    workdir: Path
    head: tuple[Path, str]  # the worktree's HEAD file and its first line
    vault: tuple[Path, str | None]  # the vault branch's loose ref file and its tip (None: none)
    private: tuple[Path, str | None]  # the private sessions' ref, the same way
    patterns: str  # the user's patterns folder (as recall found it)
    agents: list[str] | None  # the agents served (None: every one)
    env: tuple[str, ...]  # config_env() then
    reflog: Path  # the worktree's HEAD reflog (its size is the run's start offset)
    ledger: str  # one line of JSON: what the session's ledger takes from the start
    watched: tuple[Path, ...]  # files none of which may be newer than the ready file


def ready_text(ready: Ready, text: str) -> bytes | None:
    """A servable ready file for the recall block TEXT, which the sh prints as the inside of a
    JSON string (None when a value would not survive a line of its own)."""
    import json

    lines = [
        f"{READY_FORMAT} {READY_SERVE}",
        ready.gen,
        str(ready.workdir),
        str(ready.head[0]),
        ready.head[1],
        str(ready.vault[0]),
        ready.vault[1] or "-",
        str(ready.private[0]),
        ready.private[1] or "-",
        ready.patterns,
        " ".join(ready.agents) if ready.agents is not None else "*",
        *(f"={value}" for value in ready.env),
        str(len(text)),
        str(ready.reflog),
        ready.ledger,
        *(str(p) for p in ready.watched),
        QUIET_END,
    ]
    if any(not line or "\n" in line or "\r" in line for line in lines):
        return None
    if ready.agents is not None and any(not _plain(a) for a in ready.agents):
        return None
    escaped = json.dumps(text)[1:-1]  # as the adapters' json.dumps writes a string: one line
    return ("\n".join(lines) + "\n" + escaped).encode("utf-8", "surrogateescape")


class FilesHead(NamedTuple):
    """A blocks file's header: what its blocks were built from (as a ready file's, and the
    builder's own basis line)."""

    basis: str  # the builder's (gitvault.materialize.blocks), one line of words
    gen: str
    workdir: Path
    head: tuple[Path, str]
    vault: tuple[Path, str | None]
    private: tuple[Path, str | None]
    patterns: str
    agents: list[str] | None
    env: tuple[str, ...]
    watched: tuple[Path, ...]


def files_text(head: FilesHead, entries: Sequence[tuple[str, bytes]]) -> bytes | None:
    """A blocks file: the header, then each path and its block line (#<length><TAB><block as
    a JSON string's inside>). None when a header value would not survive a line of its own;
    a path that would not (a line break, a leading '#') is left out."""
    lines = [
        FILES_FORMAT,
        f"{FILES_BASIS} {head.basis}",
        head.gen,
        str(head.workdir),
        str(head.head[0]),
        head.head[1],
        str(head.vault[0]),
        head.vault[1] or "-",
        str(head.private[0]),
        head.private[1] or "-",
        head.patterns,
        " ".join(head.agents) if head.agents is not None else "*",
        *(f"={value}" for value in head.env),
        *(str(p) for p in head.watched),
        QUIET_END,
    ]
    if any(not line or "\n" in line or "\r" in line for line in lines):
        return None
    if head.agents is not None and any(not _plain(a) for a in head.agents):
        return None
    out = [("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")]
    for path, block in entries:
        if not path or "\n" in path or "\r" in path or path.startswith("#"):
            continue
        if not block.startswith(b"#") or b"\n" in block or b"\r" in block:
            continue
        out.append(path.encode("utf-8", "surrogateescape") + b"\n" + block + b"\n")
    return b"".join(out)


def ready_wait(workdir: Path, git_dir: Path) -> bytes | None:
    """A ready file the sh never serves: it names its worktree for the next refresh."""
    lines = [f"{READY_FORMAT} {READY_WAIT}", "-", str(workdir), str(git_dir / "HEAD")]
    if any("\n" in line or "\r" in line for line in lines):
        return None
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")


def ready_worktree(data: bytes) -> tuple[Path, Path] | None:
    """(worktree, its git dir) a ready file of either kind names; None when it is not one."""
    lines = data.decode("utf-8", "surrogateescape").split("\n", 4)
    if len(lines) < 5 or lines[0] not in (f"{READY_FORMAT} {s}" for s in (READY_SERVE, READY_WAIT)):
        return None
    workdir, head = Path(lines[2]), Path(lines[3])
    if not workdir.is_absolute() or not head.is_absolute() or head.name != "HEAD":
        return None
    return workdir, head.parent


def start_record(data: bytes) -> tuple[int, dict[str, object]] | None:
    """A session start the sh answered: the worktree's reflog size then, and the ledger's part
    (parsed, unchecked: the ledger checks its fields); None when it is not one."""
    from gitvault.vault.files import parse_json

    lines = data.decode("utf-8", "replace").split("\n")
    if len(lines) != 3 or lines[2] or not lines[0].isdigit() or len(lines[0]) > 15:
        return None
    try:
        value = parse_json(lines[1])
    except ValueError:
        return None
    return (int(lines[0]), value) if isinstance(value, dict) else None


def install(
    loc: Location,
    turn_ends: Sequence[TurnEnd] = (),
    tool_events: Sequence[ToolEvent] = (),
    known_header: str = "",
    starts: Sequence[SessionStart] = (),
) -> list[str]:
    """Write (or repoint) the launcher with the fast paths of these hooks (`known_header`: how
    the path list's header begins, gitvault.pathrecall.known); what changed."""
    where = path(loc)
    wanted = script(target(), turn_ends, tool_events, known_header, starts).encode()
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
    missing tool must never break a session). Names no machine-specific path.

    The project folder's own `.git` folder is tried first: there (a main worktree's top) it is
    the common git dir, found without starting git (~2 ms a hook, every turn and tool call);
    anywhere else (a linked worktree, a subfolder, a `.git` file) git names it."""
    project = f"${{{project_var}:-.}}"
    # $PWD, not ".": the launcher finds its state folder from its own path, after a `cd`
    near = f"${{{project_var}:-$PWD}}/.git/{STATE_DIRNAME}/{RELATIVE}"
    common = (
        f'd=$(git -C "{project}" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)'
    )
    hook = f"$d/{STATE_DIRNAME}/{RELATIVE}"
    return (
        f'[ -x "{near}" ] && exec "{near}" {args}; '
        f'{common}; [ -x "{hook}" ] && exec "{hook}" {args}; '
        f"command -v {ENTRY} >/dev/null 2>&1 && exec {ENTRY} {args}; exit 0"
    )


def remove(loc: Location) -> list[str]:
    where = path(loc)
    if not where.exists():
        return []
    where.unlink()
    return [f"removed {where}"]
