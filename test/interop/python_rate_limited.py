"""The official Python MCP SDK's client calling a tool until the gateway refuses it over its
rate: what the SDK then hands its caller (the exception, its JSON-RPC code, message and data).
Prints one JSON line for the test; warnings as in python_client.py.

Usage: python_rate_limited.py URL TOKEN TOOL ARGUMENTS_JSON CALLS
"""

import asyncio
import json
import sys

import httpx2
from conversation import collect_warnings
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


async def main(url: str, token: str, tool: str, arguments: dict, calls: int) -> dict:
    collected = collect_warnings()
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with Client(streamable_http_client(url, http_client=http)) as client:
        for n in range(calls):
            try:
                await client.call_tool(tool, {**arguments, "path": f"python-{n}.md"})
            except MCPError as error:
                return {
                    "call": n + 1,
                    "exception": type(error).__name__,
                    "code": error.code,
                    "message": error.message,
                    "data": error.data,
                    "warnings": collected.records,
                }
    return {"call": None, "warnings": collected.records}


if __name__ == "__main__":
    url, token, tool, arguments, calls = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), int(sys.argv[5])
    print(json.dumps(asyncio.run(main(url, token, tool, arguments, calls))))
