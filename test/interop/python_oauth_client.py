"""The official Python MCP SDK's client signing in with its own OAuth client provider, as a
desktop application does: discovery from the server's 401, dynamic client registration, the
authorization URL handed to "the browser", the code caught on the client's own loopback
callback, the token exchange, then discover, list and call. The scopes are the SDK's own
choice (from the challenge). The test reads stdout line by line: first
{"authorize": URL}, which it opens in headless Chromium where a person signs in and consents,
then the result line. Every log record at WARNING or above is in `warnings`.

Usage: python_oauth_client.py URL TOOL ARGUMENTS_JSON
"""

import asyncio
import json
import sys
from urllib.parse import parse_qs, urlsplit

import httpx2
from conversation import collect_warnings, converse
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken


class MemoryStorage:
    """The SDK's TokenStorage protocol, kept in memory for this one run."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Callback:
    """A loopback HTTP server that catches the one authorization response."""

    def __init__(self) -> None:
        self.result: asyncio.Future[dict[str, list[str]]] = asyncio.get_running_loop().create_future()
        self.server: asyncio.Server | None = None
        self.url = ""

    async def start(self) -> None:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/callback"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request_line = (await reader.readline()).decode("latin-1")
        while (await reader.readline()) not in (b"\r\n", b"\n", b""):
            pass
        target = request_line.split(" ")[1] if request_line.count(" ") >= 2 else "/"
        parts = urlsplit(target)
        found = parts.path == "/callback"
        body = b"<p>You can close this window.</p>" if found else b"not found"
        status = b"200 OK" if found else b"404 Not Found"
        writer.write(b"HTTP/1.1 " + status + b"\r\ncontent-type: text/html\r\ncontent-length: " + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)
        await writer.drain()
        writer.close()
        if found and not self.result.done():
            self.result.set_result(parse_qs(parts.query))

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


async def main(url: str, tool: str, arguments: dict) -> dict:
    collected = collect_warnings()
    callback = Callback()
    await callback.start()

    async def redirect_handler(authorization_url: str) -> None:
        print(json.dumps({"authorize": authorization_url}), flush=True)

    async def callback_handler() -> AuthorizationCodeResult:
        query = await asyncio.wait_for(callback.result, timeout=120)
        first = lambda key: query[key][0] if key in query else None  # noqa: E731
        if first("error") is not None:
            raise RuntimeError(f"authorization refused: {first('error')}: {first('error_description')}")
        return AuthorizationCodeResult(code=first("code") or "", state=first("state"), iss=first("iss"))

    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="Python SDK OAuth Test",
            redirect_uris=[callback.url],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=MemoryStorage(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    try:
        http = httpx2.AsyncClient(auth=provider)
        async with Client(streamable_http_client(url, http_client=http)) as client:
            answer = await converse(client, tool, arguments, collected)
        tokens = provider.context.current_tokens
        client_info = provider.context.client_info
        return {
            **answer,
            "client_id": client_info.client_id if client_info else None,
            "scope": tokens.scope if tokens else None,
            "has_refresh_token": bool(tokens and tokens.refresh_token),
        }
    finally:
        await callback.close()


if __name__ == "__main__":
    url, tool, arguments = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    print(json.dumps({"result": asyncio.run(main(url, tool, arguments))}), flush=True)
