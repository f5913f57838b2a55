#!/usr/bin/env bash
# Stops the embedding service start.sh started from DEST, if it still runs: its pid is in
# DEST/embed.pid, and it is stopped only when that process is this server (pids are reused).
#   bash services/embeddings/stop.sh DEST
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: stop.sh DEST" >&2; exit 2; }
pidfile="$1/embed.pid"
# Bounded wait, in steps of 0.2 s: 10 s for the server to exit before it is killed.
stop_steps=50

[ -f "$pidfile" ] || exit 0
pid="$(cat "$pidfile")"
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "embed_server.py"; then
  echo "stop.sh: stopping the embedding server (pid $pid)" >&2
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 "$stop_steps"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -9 "$pid" 2>/dev/null || true
fi
rm -f "$pidfile"
