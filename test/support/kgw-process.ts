import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import type { Env, Served } from '../cli/support.ts';
import { kgw, serve } from '../cli/support.ts';
import { sdkClient } from './mcp-client.ts';

/*
 * Helpers for suites that run the real gateway as OS processes and may kill it with SIGKILL:
 * `kgw serve` with a handle that can crash it, tokens through the real CLI, the MCP SDK's own
 * client, bounded polling and a plain `pg` client for checks against a test database.
 */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A `kgw serve` child that a test may also kill with SIGKILL. */
export type KgwProcess = Served;
/** Starts `kgw serve` and waits for /healthz (see `serve`). */
export const startKgw = serve;

/** Runs a `kgw` command that must succeed; returns its stdout. */
export async function kgwOk(args: readonly string[], env: Env, timeoutMs = 60_000): Promise<string> {
  const run = await kgw(args, env, { timeoutMs });
  if (run.code !== 0) throw new Error(`kgw ${args.join(' ')} failed (code ${run.code}, signal ${run.signal}):\n${run.stderr}${run.stdout}`);
  return run.stdout;
}

/** A static token from `kgw token create`. */
export async function createTokenCli(env: Env, tenant: string, principal: string, scopes: string, label?: string): Promise<string> {
  const args = ['token', 'create', '--tenant', tenant, '--principal', principal, '--scopes', scopes, ...(label === undefined ? [] : ['--label', label])];
  return (await kgwOk(args, env)).trim();
}

/** The SDK's own client over Streamable HTTP with a bearer token. */
export async function mcpClient(endpoint: string, token: string): Promise<Client> {
  const client = sdkClient('kgw-hardening');
  const transport = new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return client;
}

export function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** A tool call that must succeed; its structured content. */
export async function callOk<T>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = await callTool(client, name, args);
  if (result.isError === true || result.structuredContent === undefined) throw new Error(`${name} failed: ${textOf(result)}`);
  return result.structuredContent as T;
}

/** Closes clients whose server may be gone; a failure to close is of no interest here. */
export async function closeAll(clients: readonly Client[]): Promise<void> {
  await Promise.allSettled(clients.map((client) => client.close()));
}

/** Polls `probe` until it returns a value, at most `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `${what}: not within ${timeoutMs} ms${last === undefined ? '' : ` (last error: ${last instanceof Error ? last.message : JSON.stringify(last)})`}`,
      );
    await sleep(everyMs);
  }
}

/** Runs `work` with a plain pg client of `url`, closed afterwards. */
export async function withPg<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
