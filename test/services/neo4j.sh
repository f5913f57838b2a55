#!/usr/bin/env bash
# Builds (once) and starts an embedded Neo4j 5 Community with Bolt on loopback for the graph
# contract suite (test/services/neo4j/). Prints the export lines for the tests (the shared
# server's URL, and the launcher's class path for private instances) and the pidfile on stdout;
# progress goes to stderr. Stop it with: kill "$(cat <pidfile>)".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
port="${NEO4J_TEST_PORT:-7688}"
cache="$root/.cache"
build="$cache/neo4j-launcher"
pidfile="$cache/neo4j-test.pid"
logfile="$cache/neo4j-test.log"
mkdir -p "$cache"
# A value as one shell word that `eval` reads back unchanged (the class path ends in a glob).
quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

if [ ! -f "$build/neo4j-launcher-1.jar" ] || [ "$root/test/services/neo4j/pom.xml" -nt "$build/neo4j-launcher-1.jar" ] \
   || [ "$root/test/services/neo4j/src/main/java/kgw/Neo4jLauncher.java" -nt "$build/neo4j-launcher-1.jar" ]; then
  echo "neo4j.sh: building the launcher (Maven, cache in .cache/m2)" >&2
  (cd "$root/test/services/neo4j" && mvn -q -B -Dmaven.repo.local="$cache/m2" -Dkgw.build.dir="$build" package >&2)
fi

classpath="$build/neo4j-launcher-1.jar:$build/lib/*"
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  echo "neo4j.sh: already running (pid $(cat "$pidfile"))" >&2
else
  data="$(mktemp -d "${TMPDIR:-/tmp}/kgw-neo4j-XXXXXX")"
  nohup java -Xms256m -Xmx1g -cp "$classpath" kgw.Neo4jLauncher "$port" "$data" >"$logfile" 2>&1 &
  echo $! >"$pidfile"
  for _ in $(seq 1 300); do
    grep -q '^READY ' "$logfile" 2>/dev/null && break
    kill -0 "$(cat "$pidfile")" 2>/dev/null || { echo "neo4j.sh: the launcher exited; see $logfile" >&2; tail -20 "$logfile" >&2; exit 1; }
    sleep 0.2
  done
  grep -q '^READY ' "$logfile" || { echo "neo4j.sh: Bolt did not come up within 60 s; see $logfile" >&2; exit 1; }
fi
# Auth is disabled in the launcher; the driver still sends these, and they are ignored.
echo "export KGW_TEST_NEO4J_URL=bolt://127.0.0.1:$port KGW_TEST_NEO4J_USER=neo4j KGW_TEST_NEO4J_PASSWORD=kgw-test-password"
# For test/support/services.ts, which runs private instances for fault tests.
echo "export KGW_TEST_NEO4J_CLASSPATH=$(quote "$classpath")"
echo "# pidfile: $pidfile"
