# Make sure one drainer runs: in the foreground with GITVAULT_SYNC=1 (or gitvault.sync, below),
# otherwise detached, in a session of its own from the first instruction (a tool that kills
# git's process group afterwards does not kill it).
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
may_set() {
  [ -n "${GIT_CONFIG_PARAMETERS:-}${GIT_CONFIG_COUNT:-}${GIT_CONFIG:-}" ] && return 0
  for f; do [ -e "$f" ] || continue; { [ -f "$f" ] && [ -r "$f" ]; } || return 0
    while IFS= read -r l || [ -n "$l" ]; do case $l in *[Ss][Yy][Nn][Cc]*|*[Ii][Nn][Cc][Ll][Uu][Dd][Ee]*) return 0;; esac
    done < "$f" || return 0; done; return 1; }
g=${XDG_CONFIG_HOME:-$HOME/.config}/git/config; [ -n "${GIT_CONFIG_GLOBAL:-}" ] && g=$GIT_CONFIG_GLOBAL
sync=; may_set "${GIT_CONFIG_SYSTEM:-/etc/gitconfig}" "$g" "${GIT_CONFIG_GLOBAL:-$HOME/.gitconfig}" \
  "$cd/config" "$gd/config.worktree" && sync=$(git config --get --type=bool gitvault.sync 2>/dev/null)
if [ "$sync" = true ]; then
  "$hook" git drain "$cd" --wait >/dev/null 2>&1
  exit 0
fi
if command -v setsid >/dev/null 2>&1; then
  # The drainer's shell records its pid once setsid moved it to a session of its own, then
  # closes the pipe read here: when the hook returns it is out of the group a tool may kill
  # after `git commit`. A blocking read, not a poll of the pid file (~2 ms of CPU a commit).
  echo starting > "$pidf" 2>/dev/null
  pid=$(setsid /bin/sh -c 'echo $$ > "$0"; exec "$1" git drain "$2" --detach >/dev/null 2>&1' \
    "$pidf" "$hook" "$cd" </dev/null 2>/dev/null &)
else
  "$hook" git drain "$cd" --detach </dev/null >/dev/null 2>&1 &
  # Claim the slot at once, so commits made while Python starts do not start more drainers.
  echo $! > "$pidf" 2>/dev/null
fi
exit 0
