#!/usr/bin/env bash
# Builds (once) and starts MinIO on loopback for the S3 blob contract suite, creates the bucket,
# and prints `export` lines on stdout:   eval "$(bash test/services/minio.sh)"
# A MinIO this script started earlier is reused while its pid is alive and it answers on the
# port: its pid is kept in .cache/minio-test.pid and its data folder's path in
# .cache/minio-test.data. Stop it with the printed command. Everything else goes to stderr.
#
# MinIO publishes no semver tags, so the Go module proxy serves a pseudo-version of its master;
# this one is the newest the proxy listed when pinned (2026-02-12), and builds with go >= 1.24.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"

version="${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
port="${MINIO_PORT:-9100}"
user="${MINIO_ROOT_USER:-kgwminio}"
password="${MINIO_ROOT_PASSWORD:-kgwminio-secret}"
bucket="${MINIO_BUCKET:-kgw-test}"
cache="$root/.cache/minio"
bin="$cache/$version/minio"
pidfile="$root/.cache/minio-test.pid"
datafile="$root/.cache/minio-test.data"
endpoint="http://127.0.0.1:$port"

# A value as one shell word that `eval` reads back unchanged.
quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

if [ ! -x "$bin" ]; then
  command -v go >/dev/null || { echo "minio.sh: go not found; MinIO is built from source with go install" >&2; exit 1; }
  echo "minio.sh: building MinIO $version (several minutes the first time)" >&2
  mkdir -p "$cache/$version"
  GOTOOLCHAIN=local GOBIN="$cache/$version" GOFLAGS=-mod=mod go install "github.com/minio/minio@$version" >&2
fi

ready() { curl -fsS -o /dev/null --max-time 2 "$endpoint/minio/health/ready" 2>/dev/null; }
# The pid in the pidfile, when that process is alive and is MinIO (pids are reused).
running_pid() {
  [ -f "$pidfile" ] || return 1
  local pid
  pid="$(cat "$pidfile")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  local comm
  comm="$(cat "/proc/$pid/comm" 2>/dev/null || ps -p "$pid" -o comm= 2>/dev/null || true)"
  [ -z "$comm" ] || [ "$comm" = "minio" ] || return 1
  echo "$pid"
}

reused=""
if pid="$(running_pid)"; then
  for _ in $(seq 1 50); do ready && break; sleep 0.2; done
  if ready; then
    reused="$pid"
    echo "minio.sh: reusing MinIO (pid $pid, data $(cat "$datafile" 2>/dev/null || echo unknown))" >&2
  else
    echo "minio.sh: MinIO (pid $pid) does not answer on $endpoint; starting a new one" >&2
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  fi
fi

if [ -z "$reused" ]; then
  if [ -f "$datafile" ]; then
    # Left behind by a MinIO that is gone: its data is of no use to anyone.
    stale="$(cat "$datafile")"
    case "$stale" in */kgw-minio-data-*) rm -rf "$stale" ;; esac
  fi
  rm -f "$pidfile" "$datafile"
  mkdir -p "$root/.cache"
  data="$(mktemp -d "${TMPDIR:-/tmp}/kgw-minio-data-XXXXXX")"
  echo "$data" >"$datafile"
  MINIO_ROOT_USER="$user" MINIO_ROOT_PASSWORD="$password" MINIO_BROWSER=off MINIO_UPDATE=off \
    nohup "$bin" server --quiet --address "127.0.0.1:$port" "$data/data" >"$data/minio.log" 2>&1 &
  echo $! >"$pidfile"

  for _ in $(seq 1 100); do
    ready && break
    if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
      echo "minio.sh: MinIO exited; its log:" >&2
      cat "$data/minio.log" >&2
      exit 1
    fi
    sleep 0.2
  done
  ready || { echo "minio.sh: MinIO did not become ready (log: $data/minio.log)" >&2; exit 1; }
fi

# The bucket, through the SDK the gateway uses (idempotent).
KGW_S3_ENDPOINT="$endpoint" KGW_S3_BUCKET="$bucket" KGW_S3_USER="$user" KGW_S3_PASSWORD="$password" \
  "$root/node_modules/.bin/node" --input-type=module -e '
import { S3Client, CreateBucketCommand, HeadBucketCommand } from "@aws-sdk/client-s3";
const e = process.env;
const client = new S3Client({ region: "us-east-1", endpoint: e.KGW_S3_ENDPOINT, forcePathStyle: true, credentials: { accessKeyId: e.KGW_S3_USER, secretAccessKey: e.KGW_S3_PASSWORD } });
try { await client.send(new HeadBucketCommand({ Bucket: e.KGW_S3_BUCKET })); }
catch { await client.send(new CreateBucketCommand({ Bucket: e.KGW_S3_BUCKET })); }
client.destroy();
' >&2

echo "export KGW_TEST_S3_ENDPOINT=$(quote "$endpoint")"
echo "export KGW_TEST_S3_BUCKET=$(quote "$bucket")"
echo "export KGW_TEST_S3_ACCESS_KEY_ID=$(quote "$user")"
echo "export KGW_TEST_S3_SECRET_ACCESS_KEY=$(quote "$password")"
echo "export KGW_TEST_MINIO_PIDFILE=$(quote "$pidfile")"
echo "export KGW_TEST_MINIO_BIN=$(quote "$bin")"
echo "# stop: kill \$(cat $pidfile) && rm -rf \$(cat $datafile) && rm -f $pidfile $datafile"
