import { LOOPBACK_NAMES } from '../auth/resources.ts';

/*
 * What `kgw connect CLIENT` prints: the configuration each MCP client reads, for one endpoint
 * and one bearer token, in the shape that client documents. Pure text, so the tests can hand
 * each snippet to a real client (the Inspector's --config, the Python and TypeScript SDKs).
 */

export interface ConnectTarget {
  /** The server's name in the client's configuration. */
  readonly name: string;
  /** The MCP endpoint's URL. */
  readonly url: string;
  readonly token: string;
}

interface ClientSnippet {
  readonly summary: string;
  /** Where the text goes, told on stderr. */
  readonly where: string;
  render(target: ConnectTarget): string;
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** A POSIX shell word: quoted unless it is plainly safe. */
const shellWord = (value: string): string => (/^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'"'"'`)}'`);

/** `mcp-remote` reaches http:// URLs only on loopback unless told otherwise. */
const needsAllowHttp = (url: string): boolean => {
  const parsed = new URL(url);
  return parsed.protocol === 'http:' && !LOOPBACK_NAMES.has(parsed.hostname);
};

const httpServer = (target: ConnectTarget) => ({ type: 'http', url: target.url, headers: { Authorization: `Bearer ${target.token}` } });

export const CLIENT_SNIPPETS = {
  'claude-code': {
    summary: 'Claude Code: the `claude mcp add` command',
    where: 'run it in a shell (add --scope project to share it through .mcp.json)',
    render: (target) =>
      `claude mcp add --transport http ${shellWord(target.name)} ${shellWord(target.url)} --header ${shellWord(`Authorization: Bearer ${target.token}`)}\n`,
  },
  'mcp-json': {
    summary: 'a project .mcp.json (Claude Code, the MCP Inspector and other clients reading mcpServers)',
    where: "save it as .mcp.json in the project, or merge its server into the file's mcpServers",
    render: (target) => json({ mcpServers: { [target.name]: httpServer(target) } }),
  },
  cursor: {
    summary: 'Cursor: .cursor/mcp.json (or ~/.cursor/mcp.json)',
    where: "save it as .cursor/mcp.json in the project, or merge its server into the file's mcpServers",
    render: (target) => json({ mcpServers: { [target.name]: httpServer(target) } }),
  },
  vscode: {
    summary: 'VS Code: .vscode/mcp.json',
    where: "save it as .vscode/mcp.json in the workspace, or merge its server into the file's servers",
    render: (target) => json({ servers: { [target.name]: httpServer(target) } }),
  },
  'claude-desktop': {
    summary: 'Claude Desktop: claude_desktop_config.json, through the mcp-remote bridge (it launches local servers)',
    where: "merge it into claude_desktop_config.json's mcpServers and restart Claude Desktop",
    // The header is passed through a variable: Claude Desktop on Windows splits arguments at spaces.
    render: (target) =>
      json({
        mcpServers: {
          [target.name]: {
            command: 'npx',
            args: ['-y', 'mcp-remote', target.url, '--header', 'Authorization:${KGW_AUTHORIZATION}', ...(needsAllowHttp(target.url) ? ['--allow-http'] : [])],
            env: { KGW_AUTHORIZATION: `Bearer ${target.token}` },
          },
        },
      }),
  },
  python: {
    summary: 'the official Python MCP SDK (pip install mcp)',
    where: 'save it as a .py file and run it with the Python that has the mcp package',
    render: (target) => `import asyncio

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

URL = ${JSON.stringify(target.url)}
TOKEN = ${JSON.stringify(target.token)}


async def main() -> None:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
    async with Client(streamable_http_client(URL, http_client=http)) as client:
        tools = await client.list_tools()
        print([tool.name for tool in tools.tools])


asyncio.run(main())
`,
  },
  typescript: {
    summary: 'the TypeScript MCP SDK (npm install @modelcontextprotocol/sdk)',
    where: 'save it as a .mjs file (or .ts) in a project with the SDK installed and run it with node',
    render: (target) => `import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const client = new Client({ name: 'my-agent', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(${JSON.stringify(target.url)}), {
  requestInit: { headers: { Authorization: ${JSON.stringify(`Bearer ${target.token}`)} } },
});
await client.connect(transport);
console.log((await client.listTools()).tools.map((tool) => tool.name));
await client.close();
`,
  },
} as const satisfies Record<string, ClientSnippet>;

export type ConnectClient = keyof typeof CLIENT_SNIPPETS;

export const CONNECT_CLIENTS = Object.keys(CLIENT_SNIPPETS) as ConnectClient[];

export function isConnectClient(value: string): value is ConnectClient {
  return Object.hasOwn(CLIENT_SNIPPETS, value);
}
