#!/usr/bin/env bash
# Starts a Meilisearch on loopback for the Meilisearch search backend suite and prints `export`
# lines on stdout:   eval "$(bash test/services/meilisearch.sh)"
# Each run starts a fresh server with a new random master key and an empty data folder in a new
# temporary folder; a server this script started earlier is stopped first (its pid is kept in
# .cache/meili-test.pid, its data folder's path in .cache/meili-test.data). Stop it with the
# printed command. Everything else goes to stderr.
#
# The binary is the one in shared/bin next to the repository (see its README there; no package
# of Meilisearch can be installed where this project is built), or MEILI_BIN. It is run in place:
# it only needs the execute bit, and the data it writes goes to the temporary folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"

pidfile="$root/.cache/meili-test.pid"
datafile="$root/.cache/meili-test.data"
# Bounded waits, in steps of 0.2 s: 30 s for the server to answer /health (it takes about a
# second), 10 s for an old one to exit before it is killed.
ready_steps=150
stop_steps=50

# A value as one shell word that `eval` reads back unchanged.
quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

find_bin() {
  if [ -n "${MEILI_BIN:-}" ]; then
    echo "$MEILI_BIN"
    return
  fi
  local candidates=("$root/../shared/bin/meilisearch")
  # In a linked git worktree, shared/ sits next to the main checkout instead.
  local common
  if common="$(git -C "$root" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)"; then
    candidates+=("$(dirname "$common")/../shared/bin/meilisearch")
  fi
  local candidate
  for candidate in "${candidates[@]}"; do
    if [ -x "$candidate" ]; then
      echo "$candidate"
      return
    fi
  done
  echo "meilisearch.sh: no Meilisearch binary at ${candidates[*]}; set MEILI_BIN" >&2
  exit 1
}
bin="$(find_bin)"

# The pid in the pidfile, when that process is alive and is Meilisearch (pids are reused).
running_pid() {
  [ -f "$pidfile" ] || return 1
  local pid
  pid="$(cat "$pidfile")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  local comm
  comm="$(cat "/proc/$pid/comm" 2>/dev/null || ps -p "$pid" -o comm= 2>/dev/null || true)"
  [ -z "$comm" ] || [ "$comm" = "meilisearch" ] || return 1
  echo "$pid"
}

# Stops the server an earlier run left, and removes its data folder.
if pid="$(running_pid)"; then
  echo "meilisearch.sh: stopping the Meilisearch of an earlier run (pid $pid)" >&2
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 "$stop_steps"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -9 "$pid" 2>/dev/null || true
fi
if [ -f "$datafile" ]; then
  stale="$(cat "$datafile")"
  case "$stale" in */kgw-meili-data-*) rm -rf "$stale" ;; esac
fi
rm -f "$pidfile" "$datafile"

# MEILI_PORT, or the first port from 7700 on that nothing answers on.
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [ -n "${MEILI_PORT:-}" ]; then
  port="$MEILI_PORT"
else
  port=""
  for candidate in $(seq 7700 7799); do
    if ! port_taken "$candidate"; then
      port="$candidate"
      break
    fi
  done
  [ -n "$port" ] || { echo "meilisearch.sh: no free port in 7700-7799; set MEILI_PORT" >&2; exit 1; }
fi
url="http://127.0.0.1:$port"
# 16 random bytes as 32 hex characters (Meilisearch wants a master key of at least 16 bytes).
key="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"

mkdir -p "$root/.cache"
data="$(mktemp -d "${TMPDIR:-/tmp}/kgw-meili-data-XXXXXX")"
echo "$data" >"$datafile"
log="$data/meilisearch.log"
# Indexing memory bounded to 1 GiB (MEILI_MAX_INDEXING_MEMORY overrides it): by default Meilisearch
# takes two thirds of the machine's memory, and each batch's cost grows with it. Measured on a
# 24 GiB machine with 10 k files indexed: adding one file took 550-650 ms with the default,
# 170-185 ms with 4 GiB, 70-90 ms with 1 GiB or 256 MiB; loading 10 k files in tasks of 400
# took 76 s with the default, 29 s with 1 GiB (docs/search.md, "Meilisearch's indexing memory").
nohup "$bin" --http-addr "127.0.0.1:$port" --master-key "$key" --no-analytics --env development \
  --max-indexing-memory "${MEILI_MAX_INDEXING_MEMORY:-1GiB}" \
  --db-path "$data/db" --dump-dir "$data/dumps" --snapshot-dir "$data/snapshots" >"$log" 2>&1 &
echo $! >"$pidfile"

ready() { curl -fsS --max-time 2 "$url/health" 2>/dev/null | grep -q '"available"'; }
for _ in $(seq 1 "$ready_steps"); do
  ready && break
  if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "meilisearch.sh: Meilisearch exited; the end of its log ($log):" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
  sleep 0.2
done
if ! ready; then
  echo "meilisearch.sh: Meilisearch did not answer $url/health within $((ready_steps / 5)) s; the end of its log ($log):" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
echo "meilisearch.sh: Meilisearch $("$bin" --version | awk '{print $2}') on $url (pid $(cat "$pidfile"), data $data)" >&2

echo "export KGW_TEST_MEILI_URL=$(quote "$url")"
echo "export KGW_TEST_MEILI_KEY=$(quote "$key")"
echo "# stop: kill \$(cat $pidfile) && rm -rf \$(cat $datafile) && rm -f $pidfile $datafile"
