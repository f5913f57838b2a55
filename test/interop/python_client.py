"""The official Python MCP SDK's client as its users run it: its default mode (auto: it asks
server/discover at 2026-07-28 and would fall back to the initialize handshake), a static bearer
token on every request, then list the tools and call one. Prints one JSON line for the test;
every log record at WARNING or above (a fallback, a schema it could not use) is in `warnings`.

Usage: python_client.py URL TOKEN TOOL ARGUMENTS_JSON
"""

import asyncio
import json
import logging
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()}")


async def main(url: str, token: str, tool: str, arguments: dict) -> dict:
    collected = Collect()
    logging.getLogger().addHandler(collected)
    logging.captureWarnings(True)
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with Client(streamable_http_client(url, http_client=http)) as client:
        session = client.session
        tools = await client.list_tools()
        result = await client.call_tool(tool, arguments)
        return {
            "protocol_version": session.protocol_version,
            "tools": [t.name for t in tools.tools],
            "is_error": bool(result.is_error),
            "text": result.content[0].text if result.content else None,
            "structured": result.structured_content,
            "warnings": collected.records,
        }


if __name__ == "__main__":
    url, token, tool, arguments = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    print(json.dumps(asyncio.run(main(url, token, tool, arguments))))
