#!/usr/bin/env bash
# Starts Debian's PostgreSQL 15 cluster on loopback and makes a role for the test suites.
# Prints the connection URL for tests (KGW_TEST_DATABASE_URL) on stdout.
set -euo pipefail
version="${PG_VERSION:-15}"
cluster="${PG_CLUSTER:-main}"
port="${PG_PORT:-5432}"
role="${PG_TEST_ROLE:-kgw}"
password="${PG_TEST_PASSWORD:-kgw}"

if ! command -v pg_ctlcluster >/dev/null; then
  echo "postgres.sh: pg_ctlcluster not found; install postgresql-$version" >&2
  exit 1
fi
if ! pg_lsclusters -h | awk -v v="$version" -v c="$cluster" '$1==v && $2==c {found=1} END {exit !found}'; then
  pg_createcluster "$version" "$cluster" --port "$port" >&2
fi
if ! pg_lsclusters -h | awk -v v="$version" -v c="$cluster" '$1==v && $2==c && $4=="online" {found=1} END {exit !found}'; then
  pg_ctlcluster "$version" "$cluster" start >&2
fi
for _ in $(seq 1 50); do
  pg_isready -q -h 127.0.0.1 -p "$port" && break
  sleep 0.2
done
pg_isready -q -h 127.0.0.1 -p "$port" || { echo "postgres.sh: server did not become ready" >&2; exit 1; }
runuser -u postgres -- psql -q -p "$port" -v ON_ERROR_STOP=1 <<SQL >&2
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$role') THEN
    CREATE ROLE $role LOGIN SUPERUSER PASSWORD '$password';
  END IF;
END \$\$;
SQL
echo "postgres://$role:$password@127.0.0.1:$port/postgres"
