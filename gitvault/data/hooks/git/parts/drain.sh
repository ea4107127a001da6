# Make sure one drainer runs: in the foreground with GITVAULT_SYNC=1 or `git config
# gitvault.sync true` (scripts, tests), otherwise detached in the background.
hook="$state/@LAUNCHER@"
if [ ! -x "$hook" ]; then
  echo "$(date +%Y-%m-%dT%H:%M:%S) hook: $hook is missing; run gitvault install again" >> "$state/log"; exit 0
fi
sync=${GITVAULT_SYNC:-}
[ -z "$sync" ] && sync=$(git config --get --type=bool gitvault.sync 2>/dev/null)
if [ -n "$sync" ] && [ "$sync" != 0 ] && [ "$sync" != false ]; then
  "$hook" git drain "$2" --wait >/dev/null 2>&1
else
  pid=; [ -f "$state/drain.pid" ] && read -r pid < "$state/drain.pid" 2>/dev/null
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
    "$hook" git drain "$2" --detach </dev/null >/dev/null 2>&1 &
    # Claim the slot at once, so commits made while Python starts do not start more drainers.
    echo $! > "$state/drain.pid" 2>/dev/null
  fi
fi
exit 0
