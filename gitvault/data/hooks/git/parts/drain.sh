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
# `git config gitvault.sync true` (scripts, tests): notes land before git returns. Read only
# when no drainer runs, so a burst of commits (cherry-pick, am) costs no git process each.
sync=$(git config --get --type=bool gitvault.sync 2>/dev/null)
if [ "$sync" = true ]; then
  "$hook" git drain "$cd" --wait >/dev/null 2>&1
  exit 0
fi
if command -v setsid >/dev/null 2>&1; then
  # The drainer's shell records its pid only once setsid has moved it to a session (and so a
  # process group) of its own; wait for that (a few ms), so that when this hook returns the
  # drainer is already out of the group a tool may kill after `git commit`.
  echo starting > "$pidf" 2>/dev/null
  setsid sh -c 'echo $$ > "$0"; exec "$1" git drain "$2" --detach' \
    "$pidf" "$hook" "$cd" </dev/null >/dev/null 2>&1 &
  i=0; while [ $i -lt 5000 ] && [ "$pidf" != /dev/null ]; do
    pid=; read -r pid < "$pidf" 2>/dev/null; [ "$pid" != starting ] && break
    i=$((i+1))
  done
else
  "$hook" git drain "$cd" --detach </dev/null >/dev/null 2>&1 &
  # Claim the slot at once, so commits made while Python starts do not start more drainers.
  echo $! > "$pidf" 2>/dev/null
fi
exit 0
