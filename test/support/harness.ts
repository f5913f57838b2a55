import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RunningGateway } from './gateway.ts';
import { connectClient, issueToken, seedOrg, startGateway } from './gateway.ts';
import type { StoreBackend, TestStore } from './stores.ts';
import type { GatewayOptions } from '../../src/app.ts';
import type { Db } from '../../src/store/db.ts';

/*
 * The end-to-end harness every product's suites share: one store with org files applied and one
 * gateway over it per describe, real tokens, the MCP SDK's own client over HTTP, and checks of a
 * tool's answer (its text, its shape, a refusal by scope or rate). Each product's own set-up
 * (its tenant, agents and endpoint) is in its folder's support.ts (test/alignbase/support.ts,
 * test/atmina/support.ts).
 */

/**
 * The gateway's S3_* variables for the suite: the S3 blob store runs with real PostgreSQL when
 * KGW_TEST_S3_ENDPOINT is set (test/services/minio.sh); CI must set it.
 */
export function s3GatewayEnv(backend: StoreBackend): Record<string, string> {
  if (backend.name !== 'postgres') return {};
  const endpoint = process.env.KGW_TEST_S3_ENDPOINT;
  if (endpoint === undefined || endpoint === '') {
    if (process.env.CI === 'true')
      throw new Error('KGW_TEST_S3_ENDPOINT must be set in CI: the end-to-end suites run on PostgreSQL with the S3 blob store (test/services/minio.sh)');
    return {};
  }
  return {
    S3_ENDPOINT: endpoint,
    S3_BUCKET: process.env.KGW_TEST_S3_BUCKET ?? 'kgw-test',
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: process.env.KGW_TEST_S3_ACCESS_KEY_ID ?? 'minioadmin',
    S3_SECRET_ACCESS_KEY: process.env.KGW_TEST_S3_SECRET_ACCESS_KEY ?? 'minioadmin',
  };
}

/** The backend's name in describe titles: "pglite", "postgres" or "postgres+s3". */
export function backendLabel(backend: StoreBackend): string {
  return Object.keys(s3GatewayEnv(backend)).length > 0 ? `${backend.name}+s3` : backend.name;
}

/** An MCP client of one agent with one token. */
export class Agent {
  readonly name: string;
  readonly client: Client;

  constructor(name: string, client: Client) {
    this.name = name;
    this.client = client;
  }

  call(tool: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
    return this.client.callTool({ name: tool, arguments: args }) as Promise<CallToolResult>;
  }

  /** Calls a tool that must succeed; returns its structured content (which must equal the JSON text). */
  async ok<T = Record<string, unknown>>(tool: string, args: Record<string, unknown> = {}): Promise<T> {
    const result = await this.call(tool, args);
    const text = textOf(result);
    assert.notEqual(result.isError, true, `${this.name} ${tool} failed: ${text}`);
    assert.ok(result.structuredContent !== undefined, `${tool} returned no structured content`);
    assert.deepEqual(JSON.parse(text), result.structuredContent, `${tool}: the text copy is the JSON of the structured content`);
    return result.structuredContent as T;
  }

  /** Calls a tool that must fail as a tool result; returns the error text. */
  async fail(tool: string, args: Record<string, unknown> = {}): Promise<string> {
    const result = await this.call(tool, args);
    assert.equal(result.isError, true, `${this.name} ${tool} should have failed but answered ${textOf(result).slice(0, 500)}`);
    assert.equal(result.structuredContent, undefined);
    return textOf(result);
  }

  /** Calls a tool that must be refused over a rate (rateLimitedCall); returns the refusal's text and wait. */
  limited(tool: string, args: Record<string, unknown> = {}): Promise<{ text: string; retryAfterSeconds: number }> {
    return rateLimitedCall(this.call(tool, args));
  }

  /** get_current_context's markdown. */
  async context(): Promise<string> {
    const result = await this.call('get_current_context');
    assert.notEqual(result.isError, true, textOf(result));
    return textOf(result);
  }
}

/**
 * A tools/call refused over a rate: HTTP 429 with Retry-After, which the SDK client throws
 * (StreamableHTTPError, code 429) with the body in its message: a JSON-RPC error -32000 whose
 * message is the dialect's refusal text and whose data names rate_limited and the wait.
 */
export async function rateLimitedCall(call: Promise<unknown>): Promise<{ text: string; retryAfterSeconds: number }> {
  const error = await call.then(
    (answer) => assert.fail(`the call was not refused over a rate: ${JSON.stringify(answer).slice(0, 300)}`),
    (thrown: unknown) => thrown,
  );
  assert.equal((error as { code?: unknown }).code, 429, String(error));
  const message = error instanceof Error ? error.message : String(error);
  const body = JSON.parse(message.slice(message.indexOf('{'))) as {
    error: { code: number; message: string; data?: { reason?: string; retryAfterSeconds?: number } };
  };
  assert.equal(body.error.code, -32000);
  assert.equal(body.error.data?.reason, 'rate_limited');
  const seconds = body.error.data.retryAfterSeconds;
  assert.ok(typeof seconds === 'number' && Number.isInteger(seconds) && seconds >= 1, message);
  return { text: body.error.message, retryAfterSeconds: seconds };
}

/** A tools/call the token's scopes do not allow: HTTP 403 (insufficient_scope) with the dialect's text, which the SDK client throws. */
export async function assertScopeRefused(call: Promise<unknown>): Promise<void> {
  await assert.rejects(call, (error: unknown) => {
    assert.equal((error as { code?: unknown }).code, 403);
    assert.match((error as Error).message, /"error":\{"code":-32003,"message":"forbidden"\}/);
    return true;
  });
}

export function textOf(result: CallToolResult): string {
  const first = result.content[0];
  return first?.type === 'text' ? first.text : '';
}

/**
 * One store with org files applied and one gateway over it: real tokens, the SDK's client over
 * HTTP, every client closed with the gateway. `tenant` is the slug agents belong to unless a
 * call names another.
 */
export class OrgGateway {
  readonly store: TestStore;
  readonly running: RunningGateway;
  readonly tenant: string;
  readonly #agents = new Map<string, Promise<Agent>>();
  readonly #clients: Client[] = [];
  #counter = 0;

  /** The MCP endpoint a client connects to unless it names another. */
  readonly endpoint: string;

  protected constructor(store: TestStore, running: RunningGateway, tenant: string, endpoint: string) {
    this.store = store;
    this.running = running;
    this.tenant = tenant;
    this.endpoint = endpoint;
  }

  /** A store of `backend` with `orgs` applied in order, and a gateway over it (`env`: its extra variables; `endpoint`: where clients connect). */
  static async start(
    backend: StoreBackend,
    orgs: readonly string[],
    options: { tenant: string; endpoint: string; env?: Record<string, string> },
  ): Promise<OrgGateway> {
    const { store, running } = await OrgGateway.launch(backend, orgs, options.env ?? {});
    return new OrgGateway(store, running, options.tenant, options.endpoint);
  }

  protected static async launch(
    backend: StoreBackend,
    orgs: readonly string[],
    env: Record<string, string>,
    options: Omit<GatewayOptions, 'db'> = {},
  ): Promise<{ store: TestStore; running: RunningGateway }> {
    const store = await backend.open({ migrated: true });
    try {
      for (const org of orgs) await seedOrg(store.db, org);
      return { store, running: await startGateway(store.db, env, options) };
    } catch (error) {
      await store.dispose();
      throw error;
    }
  }

  get db(): Db {
    return this.store.db;
  }

  get url(): string {
    return `${this.running.url}${this.endpoint}`;
  }

  /** A connected client of `principal` (an agent's name) with a fresh token of `scopes`, cached per tenant, agent and scopes. */
  agent(principal: string, scopes = 'context.read context.write', tenant = this.tenant): Promise<Agent> {
    const key = `${tenant}\n${principal}\n${scopes}`;
    let agent = this.#agents.get(key);
    if (agent === undefined) {
      agent = this.connect(principal, scopes, { tenant });
      this.#agents.set(key, agent);
    }
    return agent;
  }

  /** A new client with its own token (closed with the gateway); tools listed once so the SDK validates outputs. */
  async connect(principal: string, scopes = 'context.read context.write', options: { tenant?: string; path?: string } = {}): Promise<Agent> {
    const token = await issueToken(this.db, options.tenant ?? this.tenant, principal, scopes);
    const client = await connectClient(`${this.running.url}${options.path ?? this.endpoint}`, token);
    this.#clients.push(client);
    // The SDK validates structured content against the output schemas of listed tools.
    await client.listTools();
    return new Agent(principal, client);
  }

  /** A name no other test of this gateway uses. */
  unique(prefix: string): string {
    this.#counter += 1;
    return `${prefix}-${this.#counter}`;
  }

  async tenantIdOf(slug = this.tenant): Promise<string> {
    const [row] = await this.db.query<{ id: string }>('SELECT id FROM tenants WHERE slug = $1', [slug]);
    assert.ok(row, `no tenant ${slug}`);
    return row.id;
  }

  async principalId(name: string, tenant = this.tenant): Promise<string> {
    const [row] = await this.db.query<{ id: string }>(
      'SELECT p.id FROM principals p JOIN tenants t ON t.id = p.tenant_id WHERE t.slug = $1 AND coalesce(p.email, p.name) = $2',
      [tenant, name],
    );
    assert.ok(row, `no principal ${name}`);
    return row.id;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.#agents.values());
    for (const client of this.#clients) await client.close();
    await this.running.close();
    await this.store.dispose();
  }
}

/** Today's date (UTC) plus `days`, as YYYY-MM-DD. */
export function utcDate(days = 0): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + days)).toISOString().slice(0, 10);
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Kind =
  | 'string'
  | 'uuid'
  | 'iso'
  | 'date?'
  | 'uuid?'
  | 'iso?'
  | 'int'
  | 'int?'
  | 'count'
  | 'bool'
  | 'status'
  | 'publication'
  | 'authority'
  | 'string?'
  | 'array'
  | 'object';

function checkField(where: string, key: string, kind: Kind, value: unknown): void {
  const at = `${where}.${key}`;
  const optional = kind.endsWith('?');
  if (optional && value === null) return;
  const base = kind.replace('?', '');
  switch (base) {
    case 'string':
      return assert.equal(typeof value, 'string', at);
    case 'uuid':
      return assert.match(String(value), UUID, at);
    case 'iso':
      return assert.match(String(value), ISO, at);
    case 'date':
      return assert.match(String(value), DATE, at);
    case 'int':
      return assert.ok(Number.isInteger(value) && (value as number) > 0, `${at} is a positive integer: ${String(value)}`);
    case 'count':
      return assert.ok(Number.isInteger(value) && (value as number) >= 0, `${at} is a non-negative integer: ${String(value)}`);
    case 'bool':
      return assert.equal(typeof value, 'boolean', at);
    case 'array':
      return assert.ok(Array.isArray(value), at);
    case 'object':
      return assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), at);
    case 'status':
      return assert.ok(value === 'live' || value === 'expired', at);
    case 'publication':
      return assert.ok(value === 'unpublished' || value === 'published' || value === 'unpublished_changes', at);
    case 'authority':
      return assert.ok(value === 'informational' || value === 'must_follow', at);
  }
}

/** Asserts exactly these keys, each of its kind. */
export function assertShape(where: string, value: unknown, shape: Readonly<Record<string, Kind>>): void {
  assert.equal(typeof value, 'object', where);
  const object = value as Record<string, unknown>;
  assert.deepEqual(Object.keys(object).sort(), Object.keys(shape).sort(), `${where}: keys`);
  for (const [key, kind] of Object.entries(shape)) checkField(where, key, kind, object[key]);
}
