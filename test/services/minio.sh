#!/usr/bin/env bash
# Builds (once) and starts MinIO on loopback for the S3 blob contract suite, creates the bucket,
# and prints `export` lines on stdout:   eval "$(bash test/services/minio.sh)"
# Stop it with the printed command (kill of the pid in the pidfile). Everything else goes to stderr.
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

if [ ! -x "$bin" ]; then
  command -v go >/dev/null || { echo "minio.sh: go not found; MinIO is built from source with go install" >&2; exit 1; }
  echo "minio.sh: building MinIO $version (several minutes the first time)" >&2
  mkdir -p "$cache/$version"
  GOTOOLCHAIN=local GOBIN="$cache/$version" GOFLAGS=-mod=mod go install "github.com/minio/minio@$version" >&2
fi

data="$(mktemp -d "${TMPDIR:-/tmp}/kgw-minio-data-XXXXXX")"
pidfile="$data/minio.pid"
MINIO_ROOT_USER="$user" MINIO_ROOT_PASSWORD="$password" MINIO_BROWSER=off MINIO_UPDATE=off \
  nohup "$bin" server --quiet --address "127.0.0.1:$port" "$data/data" >"$data/minio.log" 2>&1 &
echo $! >"$pidfile"

endpoint="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
  curl -fsS -o /dev/null "$endpoint/minio/health/ready" 2>/dev/null && break
  if ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "minio.sh: MinIO exited; its log:" >&2
    cat "$data/minio.log" >&2
    exit 1
  fi
  sleep 0.2
done
curl -fsS -o /dev/null "$endpoint/minio/health/ready" || { echo "minio.sh: MinIO did not become ready (log: $data/minio.log)" >&2; exit 1; }

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

echo "export KGW_TEST_S3_ENDPOINT=$endpoint"
echo "export KGW_TEST_S3_BUCKET=$bucket"
echo "export KGW_TEST_S3_ACCESS_KEY_ID=$user"
echo "export KGW_TEST_S3_SECRET_ACCESS_KEY=$password"
echo "export KGW_TEST_MINIO_PIDFILE=$pidfile"
echo "# stop: kill \$(cat $pidfile) && rm -rf $data"
