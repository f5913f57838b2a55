#!/usr/bin/env bash
# Prepares the official Python MCP SDK for the interoperability test (test/interop/python.test.ts):
# a virtual environment in .cache/py-mcp with `mcp` from PyPI at the version pinned here, made
# once and reused while the pin is the same. Prints the line KGW_TEST_PYTHON=<its python> on
# stdout (progress on stderr):
#   eval "$(bash test/services/python-mcp.sh)"; export KGW_TEST_PYTHON
set -euo pipefail
cd "$(dirname "$0")/../.."
MCP_VERSION=2.3.0
venv="$PWD/.cache/py-mcp"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.mcp-version" 2>/dev/null || true)" != "$MCP_VERSION" ]; then
  echo "python-mcp.sh: installing mcp==$MCP_VERSION into .cache/py-mcp" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$MCP_VERSION" >&2
  echo "$MCP_VERSION" >"$venv/.mcp-version"
fi
echo "python-mcp.sh: $("$venv/bin/python" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))')" >&2
echo "KGW_TEST_PYTHON=$venv/bin/python"
