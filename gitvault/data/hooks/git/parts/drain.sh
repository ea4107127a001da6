# Make sure one drainer runs: in the foreground with GITVAULT_SYNC=1 (or gitvault.sync, below),
# otherwise detached (a tool that kills git's process group afterwards does not kill it).
hook="$state/@LAUNCHER@"
if [ ! -x "$hook" ]; then
  gv_log "$hook is missing; run gitvault install again"; exit 0
fi
if [ -n "${GITVAULT_SYNC:-}" ] && [ "$GITVAULT_SYNC" != 0 ] && [ "$GITVAULT_SYNC" != false ]; then
  "$hook" git drain "$cd" --wait >/dev/null 2>&1
  exit 0
fi
# A drainer still running takes this line too (it re-reads the spool before it exits). Its pid
# is only a hint: it counts when /proc shows that pid is a gitvault drainer, so a reused pid
# never suppresses one; the drainers themselves serialise on a lock the OS releases on death.
pidf="$state/@DRAIN_PID@"; writable "$pidf" || pidf=/dev/null
pid=; [ -f "$pidf" ] && read -r pid < "$pidf" 2>/dev/null
if [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ]; then
  cmd=; read -r cmd < "/proc/$pid/cmdline" 2>/dev/null
  case $cmd in *gitvault*drain*) exit 0 ;; esac
elif [ -n "$pid" ] && [ ! -d /proc/self ] && kill -0 "$pid" 2>/dev/null; then
  exit 0
fi
# `git config gitvault.sync true` (tests): notes land before git returns. Read when no drainer
# runs and a config file names sync (any case) or an include, or `git -c` is set: not ~4 ms.
# `read` takes a byte per system call: past 256 lines grep searches the file (6 MB: 3 s -> ms).
may_set() {
  [ -n "${GIT_CONFIG_PARAMETERS:-}${GIT_CONFIG_COUNT:-}${GIT_CONFIG:-}" ] && return 0
  for f; do [ -e "$f" ] || continue; { [ -f "$f" ] && [ -r "$f" ]; } || return 0; n=0
    while IFS= read -r l || [ -n "$l" ]; do case $l in *[Ss][Yy][Nn][Cc]*|*[Ii][Nn][Cc][Ll][Uu][Dd][Ee]*) return 0;; esac
      n=$((n+1)); [ $n -lt 256 ] || break; done < "$f" || return 0
    [ $n -lt 256 ] || { grep -qsi -e sync -e include -- "$f"; [ $? -ne 1 ] && return 0; }; done; return 1; }
g=${XDG_CONFIG_HOME:-$HOME/.config}/git/config; [ -n "${GIT_CONFIG_GLOBAL:-}" ] && g=$GIT_CONFIG_GLOBAL
sync=; may_set "${GIT_CONFIG_SYSTEM:-/etc/gitconfig}" "$g" "${GIT_CONFIG_GLOBAL:-$HOME/.gitconfig}" \
  "$cd/config" "$gd/config.worktree" && sync=$(git config --get --type=bool gitvault.sync 2>/dev/null)
if [ "$sync" = true ]; then
  "$hook" git drain "$cd" --wait >/dev/null 2>&1
  exit 0
fi
# Start one detached drainer and return at once: git's path pays a fork, not the drainer's start.
# Until the drainer is in a session of its own (its first act in Python), it ignores the
# hangup, interrupt and termination a tool or a terminal may send to git's process group once
# git returns: ignored here, before the fork, since the child may not even have run when the
# signal comes (sh would ignore SIGINT for a background job only once the child runs); an
# ignored signal stays ignored across exec, and the drainer restores them once out of the
# group. Its pid is claimed at once: a commit made in the moment before the exec starts a
# second drainer, which finds the lock taken and exits.
trap '' HUP INT QUIT TERM
"$hook" git drain "$cd" --detach </dev/null >/dev/null 2>&1 &
echo $! > "$pidf" 2>/dev/null
exit 0
