#!/bin/sh
# Prints "ready" when the release can be tagged, or what is missing.
set -eu
npm test >/dev/null 2>&1 || { echo "the tests fail"; exit 1; }
grep -q "^## $(node -p 'require("./package.json").version')" CHANGELOG.md || { echo "CHANGELOG.md has no entry for this version"; exit 1; }
echo ready
