# gitvault-shim gitvault-drain.sh v1
# Sourced by gitvault's hook shims after they spooled a line: make sure one drainer runs.
# $state is the spool folder, $2 the common git dir. Foreground with GITVAULT_SYNC=1 or
# `git config gitvault.sync true` (scripts, tests); otherwise a detached background process.
sync=${GITVAULT_SYNC:-}
[ -z "$sync" ] && sync=$(git config --get --type=bool gitvault.sync 2>/dev/null)
if [ ! -x "$GITVAULT_PYTHON" ]; then
  echo "$(date +%Y-%m-%dT%H:%M:%S) hook: python $GITVAULT_PYTHON is gone; run gitvault install again" >> "$state/log"
elif [ -n "$sync" ] && [ "$sync" != 0 ] && [ "$sync" != false ]; then
  "$GITVAULT_PYTHON" -m gitvault.drain "$2" --wait >/dev/null 2>&1
else
  pid=; [ -f "$state/drain.pid" ] && read -r pid < "$state/drain.pid" 2>/dev/null
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
    "$GITVAULT_PYTHON" -m gitvault.drain "$2" --detach </dev/null >/dev/null 2>&1 &
    # Claim the slot at once, so commits made while Python starts do not start more drainers.
    echo $! > "$state/drain.pid" 2>/dev/null
  fi
fi
exit 0
