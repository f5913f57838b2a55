#!/usr/bin/env bash
# Validates docker-compose.yml with the real Docker Compose (`docker compose config --quiet`), the
# Go implementation known as Compose v2 (its releases are numbered v5 since late 2025). It needs
# no Docker engine. Compose is built once from the Go module proxy (github.com/docker/compose/v5,
# pinned below; about a minute on 2 cores) into .cache/compose/ and reused after that.
#
#   bash test/services/compose-config.sh [path/to/compose.yml]
#
# Exits non-zero if the file does not validate, or if Compose prints any warning
# (an unset variable, an obsolete key, ...).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
compose_file="${1:-$root/docker-compose.yml}"
version="${KGW_COMPOSE_VERSION:-v5.6.0}"  # its go.mod asks for go 1.26.8; v5.7.x ask for 1.26.10
module="github.com/docker/compose/v5"
cache="$root/.cache/compose/$version"
bin="$cache/docker-compose"

log() { echo "compose-config.sh: $*" >&2; }
# One string field of the indented JSON that `go mod download -json` prints.
json_field() { sed -n "s/^[[:space:]]*\"$1\": \"\(.*\)\",\{0,1\}\$/\1/p"; }

build_compose() {
  command -v go >/dev/null || { log "go not found; it is needed once to build Docker Compose"; return 1; }
  local started=$SECONDS src need have tmp build_log="$cache/build.log"
  export GOFLAGS=-buildvcs=false
  # `go install $module/cmd@$version` refuses modules whose go.mod has exclude directives
  # (Compose's has), so download the module and build inside it, where its go.mod applies as written.
  local json
  # The machine's Go when it is as new as the module's go.mod asks, else the approved newer toolchain.
  # (The go.mod is fetched even when the local Go is too old for the module.)
  json="$(GOTOOLCHAIN=local go mod download -json "$module@$version" 2>"$build_log" || true)"
  need="$(sed -n 's/^go \([0-9.]*\).*/\1/p' "$(json_field GoMod <<<"$json")" 2>/dev/null || true)"
  have="$(GOTOOLCHAIN=local go env GOVERSION)"; have="${have#go}"
  if [ "$(printf '%s\n%s\n' "${need:-0}" "$have" | sort -V | head -n1)" = "${need:-0}" ]; then
    export GOTOOLCHAIN=local
  else
    export GOTOOLCHAIN=go1.27.3
    json="$(go mod download -json "$module@$version" 2>>"$build_log" || true)"
  fi
  src="$(json_field Dir <<<"$json")"
  if [ -z "$src" ] || [ ! -d "$src/cmd" ]; then
    printf '%s\n' "$json" >&2; cat "$build_log" >&2
    log "could not download $module@$version"; return 1
  fi
  log "building Docker Compose $version (its go.mod: go $need) with $(go env GOVERSION); about a minute, once"
  tmp="$(mktemp "$cache/.docker-compose.XXXXXX")"
  if ! (cd "$src" && go build -mod=readonly -trimpath \
          -ldflags "-s -w -X $module/internal.Version=$version" -o "$tmp" ./cmd) >>"$build_log" 2>&1; then
    tail -n 40 "$build_log" >&2
    rm -f "$tmp"; log "building Docker Compose failed (log: $build_log)"; return 1
  fi
  chmod 0755 "$tmp"
  mv -f "$tmp" "$bin"
  log "built $bin in $((SECONDS - started))s"
}

if ! "$bin" version >/dev/null 2>&1; then
  mkdir -p "$cache"
  if command -v flock >/dev/null; then
    exec 9>"$cache/.lock"
    flock 9
  fi
  "$bin" version >/dev/null 2>&1 || build_compose
fi

# Run it as `docker compose` (a CLI plugin in a private DOCKER_CONFIG) when the docker CLI is
# installed, else as the standalone binary: the two take the same arguments.
run=("$bin")
if command -v docker >/dev/null; then
  plugin_config="$cache/docker-config"
  mkdir -p "$plugin_config/cli-plugins"
  ln -sfn "$bin" "$plugin_config/cli-plugins/docker-compose"
  if DOCKER_CONFIG="$plugin_config" docker compose version >/dev/null 2>&1; then
    run=(env DOCKER_CONFIG="$plugin_config" docker compose)
  fi
fi

errors="$(mktemp)"
trap 'rm -f "$errors"' EXIT
status=0
"${run[@]}" --project-directory "$root" -f "$compose_file" config --quiet 2>"$errors" || status=$?
if [ "$status" -ne 0 ] || [ -s "$errors" ]; then
  cat "$errors" >&2
  if [ "$status" -ne 0 ]; then why="exit $status"; else why="exit 0, but Compose printed the warnings above"; fi
  log "FAILED: ${run[*]} config --quiet on $compose_file ($why)"
  exit 1
fi
if [ "${run[0]}" = env ]; then how="docker compose"; else how="$bin"; fi
log "ok: $how config --quiet ($("$bin" version --short 2>/dev/null || echo "$version")) on $compose_file"
