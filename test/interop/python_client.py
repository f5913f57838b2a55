"""The official Python MCP SDK's client as its users run it: its default mode (auto: it asks
server/discover at 2026-07-28 and would fall back to the initialize handshake), a static bearer
token on every request, then list the tools and call one. Prints one JSON line for the test;
every log record at WARNING or above (a fallback, a schema it could not use) is in `warnings`.

Usage: python_client.py URL TOKEN TOOL ARGUMENTS_JSON
"""

import asyncio
import json
import sys

import httpx2
from conversation import collect_warnings, converse
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, token: str, tool: str, arguments: dict) -> dict:
    collected = collect_warnings()
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with Client(streamable_http_client(url, http_client=http)) as client:
        return await converse(client, tool, arguments, collected)


if __name__ == "__main__":
    url, token, tool, arguments = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    print(json.dumps(asyncio.run(main(url, token, tool, arguments))))
