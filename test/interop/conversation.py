"""What the Python client scripts share: the warnings collected while they run, and the one
conversation they hold (list the tools, call one) reported as the test reads it."""

import logging

from mcp import Client


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(f"{record.name}: {record.getMessage()}")


def collect_warnings() -> Collect:
    """Installs a collector on the root logger, Python warnings included, and returns it."""
    collected = Collect()
    logging.getLogger().addHandler(collected)
    logging.captureWarnings(True)
    return collected


async def converse(client: Client, tool: str, arguments: dict, collected: Collect) -> dict:
    """Lists the tools and calls one; the SDK validates the structured output against the tool's output schema."""
    tools = await client.list_tools()
    result = await client.call_tool(tool, arguments)
    return {
        "protocol_version": client.session.protocol_version,
        "tools": [t.name for t in tools.tools],
        "is_error": bool(result.is_error),
        "text": result.content[0].text if result.content else None,
        "structured": result.structured_content,
        "warnings": collected.records,
    }
