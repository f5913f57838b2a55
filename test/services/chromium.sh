#!/usr/bin/env bash
# Installs Debian's Chromium for the browser test (test/oauth/browser.test.ts), only when it is
# missing: the test drives /usr/bin/chromium headless through playwright-core.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  echo "chromium present: $(/usr/bin/chromium --version 2>/dev/null || echo unknown version)"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends chromium >&2
echo "chromium installed: $(/usr/bin/chromium --version 2>/dev/null || echo unknown version)"
