# State files are written only as regular files: never through a link, never into a FIFO.
writable() { [ ! -L "$1" ] && { [ -f "$1" ] || [ ! -e "$1" ]; }; }
gv_log() { writable "$state/@LOG@" && echo "$(date +%Y-%m-%dT%H:%M:%S) hook: $1" >> "$state/@LOG@"; } 2>/dev/null
# A drainer claims the spool by renaming it, then reads it whole, so a write counts only if
# the file written is still the spool after it; else it may sit in a file already read, and is
# written again (a line read twice makes one note). notes/drain.py says why this loses none.
spool_append() {
  n=0; while [ $n -lt 4 ]; do n=$((n+1)); writable "$state/@SPOOL@" || return 1
    { printf '%s' "$1" >&9 && { [ ! -d /dev/fd ] || [ /dev/fd/9 -ef "$state/@SPOOL@" ]; }; } \
      2>/dev/null 9>>"$state/@SPOOL@" && return 0
  done; return 1
}
