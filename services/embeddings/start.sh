#!/usr/bin/env bash
# Starts the embedding service that setup.sh installed in DEST, in the background, and prints its
# base URL (the value for KGW_EMBEDDINGS_URL) on stdout once /health answers:
#   url="$(bash services/embeddings/start.sh DEST)"
# The server's pid goes to DEST/embed.pid, its output to DEST/embed.log; a server started earlier
# from the same DEST is stopped first. Stop it with: bash services/embeddings/stop.sh DEST
# Settings come from the environment, as embed_server.py describes: EMBED_HOST (127.0.0.1),
# EMBED_PORT (8081), EMBED_API_KEY, EMBED_THREADS, EMBED_HTTP_THREADS, EMBED_LOG.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: start.sh DEST" >&2; exit 2; }
dest="$(cd "$1" && pwd)"
[ -x "$dest/venv/bin/python" ] && [ -f "$dest/model/model.onnx" ] || { echo "start.sh: nothing installed in $dest; run setup.sh $dest first" >&2; exit 1; }
pidfile="$dest/embed.pid"
log="$dest/embed.log"
host="${EMBED_HOST:-127.0.0.1}"
port="${EMBED_PORT:-8081}"
# Bounded wait, in steps of 0.2 s: 60 s for /health (it takes 1 to 2 s: loading the model and
# one warm-up run).
ready_steps=300

# A server started earlier from the same DEST is stopped first.
bash "$(dirname "$0")/stop.sh" "$dest"

EMBED_MODEL_DIR="$dest/model" EMBED_HOST="$host" EMBED_PORT="$port" nohup "$dest/venv/bin/python" "$dest/embed_server.py" >"$log" 2>&1 &
echo $! >"$pidfile"

# A host that is a wildcard address is probed on loopback; an IPv6 address goes in brackets.
case "$host" in 0.0.0.0 | "") probe=127.0.0.1 ;; :: ) probe="[::1]" ;; *:*) probe="[$host]" ;; *) probe="$host" ;; esac
url="http://$probe:$port"
ready() { curl -fsS --max-time 2 "$url/health" 2>/dev/null | grep -q '"ok"'; }
for _ in $(seq 1 "$ready_steps"); do
  ready && break
  if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "start.sh: the server exited; its log ($log):" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
  sleep 0.2
done
if ! ready; then
  echo "start.sh: the server did not answer $url/health within $((ready_steps / 5)) s; its log ($log):" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
echo "start.sh: $(tail -n 1 "$log") (pid $(cat "$pidfile"))" >&2
echo "$url/v1"
