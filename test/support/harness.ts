import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SKILL_MD, b64 } from './fixtures.ts';
import type { RunningGateway } from './gateway.ts';
import { ACME_ORG, GLOBEX_ORG, connectClient, issueToken, seedOrg, startGateway } from './gateway.ts';
import type { StoreBackend, TestStore } from './stores.ts';
import type { GatewayOptions } from '../../src/app.ts';
import type { Db } from '../../src/store/db.ts';

/*
 * Shared setup of the Alignbase end-to-end suites: one store and one gateway per describe, the
 * suites' starting tenant (test/fixtures/acme.yaml) with the agents below, real tokens and the
 * MCP SDK's own client over HTTP on /alignbase/mcp.
 *
 * Agents and their whole-type roles (grants on single resources are added by the tests, once
 * the resources exist, through the org file's grants and routes sections):
 *
 *   admin-bot      Owner on All Knowledge and All Skills: makes the fixtures
 *   viewer-bot     Viewer on both
 *   proposer-bot   Proposer on both
 *   editor-bot     Editor on both
 *   publisher-bot  Publisher on both
 *   scoped-bot     nothing on the types; roles on single resources only
 *   outsider-bot   no role at all
 *   routed-bot     no role; receives Always routes directly
 *   fleet-bot      no role; receives Always routes through group fleet
 */

export const MCP_PATH = '/alignbase/mcp';
export const TENANT = 'acme';

export const BASE_ORG = `tenant: acme
name: Acme Inc.
language: en
people:
  - { email: alice@acme.test, name: Alice }
agents:
  - { name: admin-bot, owner: alice@acme.test }
  - { name: viewer-bot, owner: alice@acme.test }
  - { name: proposer-bot, owner: alice@acme.test }
  - { name: editor-bot, owner: alice@acme.test }
  - { name: publisher-bot, owner: alice@acme.test }
  - { name: scoped-bot, owner: alice@acme.test }
  - { name: outsider-bot, owner: alice@acme.test }
  - { name: routed-bot, owner: alice@acme.test }
  - { name: fleet-bot, owner: alice@acme.test }
groups:
  - { name: fleet, members: [fleet-bot] }
`;

const BASE_GRANTS = [
  ['admin-bot', 'owner'],
  ['viewer-bot', 'viewer'],
  ['proposer-bot', 'proposer'],
  ['editor-bot', 'editor'],
  ['publisher-bot', 'publisher'],
].flatMap(([to, role]) => [`{ to: ${to}, on: all_knowledge, role: ${role} }`, `{ to: ${to}, on: all_skills, role: ${role} }`]);

/** One grant line of the org file; `on` is all_knowledge, all_skills, knowledge:TITLE or skill:NAME. */
export const grant = (to: string, on: string, role: string): string => `{ to: ${JSON.stringify(to)}, on: ${JSON.stringify(on)}, role: ${role} }`;
/** One route line of the org file. */
export const route = (deliver: string, to: string): string => `{ deliver: ${JSON.stringify(deliver)}, to: ${JSON.stringify(to)} }`;

/** A second tenant whose agent holds Owner on everything of its own tenant. */
export const GLOBEX_WITH_GRANTS = `${GLOBEX_ORG}grants:
  - { to: globex-bot, on: all_knowledge, role: owner }
  - { to: globex-bot, on: all_skills, role: owner }
`;

/**
 * The gateway's S3_* variables for the suite: the S3 blob store runs with real PostgreSQL when
 * KGW_TEST_S3_ENDPOINT is set (test/services/minio.sh); CI must set it.
 */
export function s3GatewayEnv(backend: StoreBackend): Record<string, string> {
  if (backend.name !== 'postgres') return {};
  const endpoint = process.env.KGW_TEST_S3_ENDPOINT;
  if (endpoint === undefined || endpoint === '') {
    if (process.env.CI === 'true')
      throw new Error('KGW_TEST_S3_ENDPOINT must be set in CI: the Alignbase suite runs on PostgreSQL with the S3 blob store (test/services/minio.sh)');
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

  protected constructor(store: TestStore, running: RunningGateway, tenant: string) {
    this.store = store;
    this.running = running;
    this.tenant = tenant;
  }

  /** A store of `backend` with `orgs` applied in order, and a gateway over it (`env`: its extra variables). */
  static async start(backend: StoreBackend, orgs: readonly string[], options: { tenant: string; env?: Record<string, string> }): Promise<OrgGateway> {
    const { store, running } = await OrgGateway.launch(backend, orgs, options.env ?? {});
    return new OrgGateway(store, running, options.tenant);
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
    return `${this.running.url}${MCP_PATH}`;
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
    const client = await connectClient(`${this.running.url}${options.path ?? MCP_PATH}`, token);
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

/** The gateway of the tenant above (test/fixtures/acme.yaml plus this suite's agents), with grants and routes the tests add. */
export class Suite extends OrgGateway {
  readonly tenantId: string;
  readonly s3: boolean;
  readonly #grants: string[] = [];
  readonly #routes: string[] = [];

  private constructor(store: TestStore, running: RunningGateway, tenantId: string, s3: boolean) {
    super(store, running, TENANT);
    this.tenantId = tenantId;
    this.s3 = s3;
  }

  static async open(backend: StoreBackend, options: { globex?: boolean } = {}): Promise<Suite> {
    const env = s3GatewayEnv(backend);
    // The documented example org first (people, release-bot, group eng, team docs), then this suite's agents.
    const orgs = [ACME_ORG, `${BASE_ORG}grants:\n${BASE_GRANTS.map((g) => `  - ${g}`).join('\n')}\n`, ...(options.globex === true ? [GLOBEX_WITH_GRANTS] : [])];
    const { store, running } = await OrgGateway.launch(backend, orgs, env);
    const [tenant] = await store.db.query<{ id: string }>('SELECT id FROM tenants WHERE slug = $1', [TENANT]);
    assert.ok(tenant);
    return new Suite(store, running, tenant.id, Object.keys(env).length > 0);
  }

  /** Adds (or drops) grants and routes of the tenant's org file (whose grants and routes sections are complete lists) and applies it. */
  async access(input: {
    grants?: readonly string[];
    routes?: readonly string[];
    dropGrants?: readonly string[];
    dropRoutes?: readonly string[];
  }): Promise<void> {
    this.#grants.push(...(input.grants ?? []));
    this.#routes.push(...(input.routes ?? []));
    for (const [list, drop] of [
      [this.#grants, input.dropGrants],
      [this.#routes, input.dropRoutes],
    ] as const) {
      for (const line of drop ?? []) {
        const at = list.indexOf(line);
        assert.ok(at >= 0, `no ${line} to drop`);
        list.splice(at, 1);
      }
    }
    const lines = (items: readonly string[]) => (items.length === 0 ? ' []\n' : `\n${items.map((item) => `  - ${item}`).join('\n')}\n`);
    await seedOrg(this.db, `${BASE_ORG}grants:${lines([...BASE_GRANTS, ...this.#grants])}routes:${lines(this.#routes)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Fixtures and shapes

// SKILL.md and base64 as every suite builds them; the Alignbase suites take them from here.
export { SKILL_MD, b64 };

/** Today's date (UTC) plus `days`, as YYYY-MM-DD. */
export function utcDate(days = 0): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + days)).toISOString().slice(0, 10);
}

export interface CreatedKnowledge {
  knowledge_id: string;
  title: string;
  version_id: string;
  version: number;
  updated: boolean;
  published: boolean;
  created: boolean;
}

/** Creates a Knowledge as `agent` (default content, informational). */
export async function createKnowledge(agent: Agent, title: string, extra: Record<string, unknown> = {}): Promise<CreatedKnowledge> {
  return agent.ok<CreatedKnowledge>('write_knowledge', { title, expected_version: 0, content: `# ${title}\n\nVersion one.`, ...extra });
}

export interface CreatedSkill {
  skill_id: string;
  name: string;
  directory_name: string;
  version_id: string;
  version: number;
  created: boolean;
}

export async function createSkill(agent: Agent, name: string, extra: Record<string, unknown> = {}): Promise<CreatedSkill> {
  return agent.ok<CreatedSkill>('create_skill', { skill_md: SKILL_MD(name), ...extra });
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

const CAPABILITIES = { can_read: 'bool', can_draft: 'bool', can_edit: 'bool', can_publish: 'bool' } as const;
const LIST_FIELDS = {
  current_version_id: 'uuid',
  current_version: 'int',
  latest_version_id: 'uuid',
  latest_version: 'int',
  published_version_id: 'uuid?',
  published_version: 'int?',
  created_at: 'iso',
  updated_at: 'iso',
  current_version_created_at: 'iso',
  latest_version_created_at: 'iso',
  published_version_created_at: 'iso?',
  review_by: 'date?',
  expires_at: 'date?',
  status: 'status',
  publication_status: 'publication',
  has_unpublished_changes: 'bool',
  ...CAPABILITIES,
} as const;
const READ_FIELDS = {
  version_id: 'uuid',
  version: 'int',
  latest_version: 'int',
  published_version: 'int?',
  is_published_version: 'bool',
  has_unpublished_changes: 'bool',
  created_at: 'iso',
  updated_at: 'iso',
  version_created_at: 'iso',
  review_by: 'date?',
  expires_at: 'date?',
  status: 'status',
  publication_status: 'publication',
  ...CAPABILITIES,
} as const;

/** The spec's list_knowledge item. */
export const KNOWLEDGE_ITEM = { knowledge_id: 'uuid', title: 'string', ...LIST_FIELDS } as const;
/** The spec's read_knowledge output, plus authority and the attachment manifest (ours, docs/alignbase.md). */
export const KNOWLEDGE_READ = {
  knowledge_id: 'uuid',
  title: 'string',
  ...READ_FIELDS,
  content: 'string',
  authority: 'authority',
  attachment_format: 'string',
  attachments: 'array',
} as const;
export const KNOWLEDGE_WRITE = {
  knowledge_id: 'uuid',
  title: 'string',
  version_id: 'uuid',
  version: 'int',
  updated: 'bool',
  published: 'bool',
  created: 'bool',
} as const;
export const KNOWLEDGE_PUBLISH = { knowledge_id: 'uuid', title: 'string', version_id: 'uuid', version: 'int', published: 'bool' } as const;
/** The spec's list_skills item. */
export const SKILL_ITEM = { id: 'uuid', name: 'string', directory_name: 'string', description: 'string', ...LIST_FIELDS } as const;
/** The spec's read_skill output, plus install_metadata (ours: the provenance keys to record). */
export const SKILL_READ = {
  skill_id: 'uuid',
  name: 'string',
  directory_name: 'string',
  description: 'string',
  ...READ_FIELDS,
  skill_md: 'string',
  attachment_format: 'string',
  attachments: 'array',
  install_metadata: 'object',
} as const;
export const SKILL_CREATE = { skill_id: 'uuid', name: 'string', directory_name: 'string', version_id: 'uuid', version: 'int', created: 'bool' } as const;
export const SKILL_WRITE = { skill_id: 'uuid', name: 'string', directory_name: 'string', version_id: 'uuid', version: 'int', updated: 'bool' } as const;
export const SKILL_PUBLISH = { skill_id: 'uuid', name: 'string', version_id: 'uuid', version: 'int', published: 'bool' } as const;
const DRAFT_FIELDS = {
  draft_id: 'uuid',
  base_version: 'int',
  current_version: 'int',
  is_stale: 'bool',
  author_name: 'string?',
  author_email: 'string?',
  agent_name: 'string?',
  rationale: 'string?',
  created_at: 'iso',
  created_by_this_agent: 'bool',
} as const;
export const KNOWLEDGE_DRAFT_ITEM = { ...DRAFT_FIELDS, knowledge_id: 'uuid' } as const;
export const KNOWLEDGE_DRAFT_READ = { ...KNOWLEDGE_DRAFT_ITEM, content: 'string' } as const;
export const SKILL_DRAFT_ITEM = { ...DRAFT_FIELDS, skill_id: 'uuid' } as const;
export const SKILL_DRAFT_READ = { ...SKILL_DRAFT_ITEM, skill_md: 'string' } as const;
export const ATTACHMENT_CHUNK = {
  data_base64: 'string',
  offset: 'count',
  next_offset: 'count',
  size: 'count',
  eof: 'bool',
  media_type: 'string',
  version_id: 'uuid',
} as const;

/** The Knowledge and Skill rows of the tenant, to show that a failed call changed nothing. */
export async function snapshot(db: Db, tenantId: string): Promise<unknown> {
  const resources = await db.query(
    `SELECT id, type, name, status, latest_version, published_version, review_by::text, expires_at::text, updated_at::text
       FROM context_resources WHERE tenant_id = $1 ORDER BY id`,
    [tenantId],
  );
  const versions = await db.query(
    'SELECT resource_id, version, id, content, authority, name, description, attachments::text FROM context_versions WHERE tenant_id = $1 ORDER BY resource_id, version',
    [tenantId],
  );
  const drafts = await db.query('SELECT id, resource_id, status FROM context_drafts WHERE tenant_id = $1 ORDER BY id', [tenantId]);
  const proposals = await db.query('SELECT id, status FROM context_proposals WHERE tenant_id = $1 ORDER BY id', [tenantId]);
  return { resources, versions, drafts, proposals };
}
