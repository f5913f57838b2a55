import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { blobKey } from '../../connectors/blob/contract.ts';
import { scopeCatalogue } from '../../src/products.ts';
import { allTools, mcpEndpoints } from '../../src/products.ts';
import { s3GatewayEnv } from '../support/harness.ts';
import { pngOf, textPdf } from '../atmina/assets/fixtures.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { StoreBackend, TestStore } from '../support/stores.ts';
import type { Db } from '../../src/store/db.ts';
import { sdkClient } from '../support/mcp-client.ts';

/*
 * The world the fuzz suites run in: one store (PGlite, or PostgreSQL with MinIO when configured)
 * with two tenants, each with people, agents, a group, Knowledge, Skills (with files),
 * Memories, Artifacts (with files), drafts, a proposal, messages, an installation and a hook
 * session, and Knowledge Bases: text files with front matter and history, a plain file, a
 * PNG and a PDF Asset, a deleted file, shares, an invitation and upload batches; a gateway
 * listening on 127.0.0.1; a token with every scope for the fuzzing agent; and the ids of
 * everything, both tenants', for the generators to aim at.
 */

/** How long one call may take before it counts as hung. */
export const CALL_TIMEOUT_MS = Number(process.env.KGW_FUZZ_CALL_TIMEOUT_MS ?? 20_000);

/**
 * Runs per property: KGW_FUZZ_RUNS, or `ciRuns` in CI (a count that keeps a suite file around two
 * minutes on two cores), or a third of it on a developer's machine, so that \`npm test\` stays
 * within minutes there; the inputs are the first ones of CI's (the seed is fixed).
 */
export function fuzzRuns(ciRuns: number): number {
  const value = Number(process.env.KGW_FUZZ_RUNS ?? '');
  if (Number.isInteger(value) && value > 0) return value;
  return process.env.CI === 'true' ? ciRuns : Math.max(10, Math.ceil(ciRuns / 3));
}

/** The seed: KGW_FUZZ_SEED, or a fixed one so every run replays the same inputs. */
export function fuzzSeed(): number {
  const raw = process.env.KGW_FUZZ_SEED;
  const value = Number(raw);
  return raw !== undefined && raw.trim() !== '' && Number.isInteger(value) ? value : 20_240_611;
}

/** Every MCP endpoint the gateway serves (read from the source of truth, so new ones are fuzzed too). */
export const ENDPOINT_PATHS: readonly string[] = mcpEndpoints('0.0.0').map((e) => e.path);

export const ALL_SCOPES = scopeCatalogue.all.join(' ');
export const TENANT = 'fuzz';
export const OTHER_TENANT = 'fuzz-other';
export const AGENT = 'fuzz-bot';
export const OTHER_AGENT = 'other-bot';

const ORG = `tenant: ${TENANT}
name: Fuzz Inc.
language: en
people:
  - { email: alice@fuzz.test, name: Alice }
  - { email: bob@fuzz.test, name: Bob }
agents:
  - { name: ${AGENT}, owner: alice@fuzz.test }
  - { name: peer-bot, owner: bob@fuzz.test }
  - { name: quiet-bot, owner: bob@fuzz.test }
groups:
  - { name: crew, members: [${AGENT}, peer-bot, alice@fuzz.test] }
  - { name: nobody, members: [] }
teams:
  - slug: docs
    name: Docs team
    members: { alice@fuzz.test: admin, ${AGENT}: admin, bob@fuzz.test: viewer }
  - slug: ops
    name: Operations
    members: { peer-bot: admin, ${AGENT}: viewer }
knowledge:
  - title: Release checklist
    content: |
      # Release checklist

      1. Run the tests.
    authority: must_follow
    publish: true
  - title: Writing style
    content: Write short sentences.
    review_by: 2030-06-30
memories:
  - name: Release state
    content: No release in progress.
grants:
  - { to: ${AGENT}, on: all_knowledge, role: owner }
  - { to: ${AGENT}, on: all_skills, role: owner }
  - { to: ${AGENT}, on: all_memories, role: owner }
  - { to: ${AGENT}, on: all_artifacts, role: owner }
  - { to: peer-bot, on: all_knowledge, role: viewer }
  - { to: group:crew, on: all_memories, role: editor }
routes:
  - { deliver: "knowledge:Release checklist", to: ${AGENT} }
  - { deliver: "memory:Release state", to: group:crew }
`;

/** Texts only the second tenant holds (its org file and seeded content, its KB files included). */
const OTHER_TEXTS = ['Only for Other GmbH.', 'Other tenant memory.', 'hank@other.test', 'Kept by Other GmbH alone.'];

const OTHER_ORG = `tenant: ${OTHER_TENANT}
name: Other GmbH
language: de
people:
  - { email: hank@other.test, name: Hank }
agents:
  - { name: ${OTHER_AGENT}, owner: hank@other.test }
  - { name: other-peer, owner: hank@other.test }
groups:
  - { name: others, members: [${OTHER_AGENT}, other-peer] }
# The same team slugs as the first tenant's, so a slug never resolves across tenants.
teams:
  - slug: docs
    name: Doku
    members: { ${OTHER_AGENT}: admin, hank@other.test: viewer }
  - slug: ops
    name: Betrieb
    members: { other-peer: admin, ${OTHER_AGENT}: viewer }
knowledge:
  - title: Secret plan
    content: ${OTHER_TEXTS[0]}
    publish: true
memories:
  - name: Other state
    content: ${OTHER_TEXTS[1]}
grants:
  - { to: ${OTHER_AGENT}, on: all_knowledge, role: owner }
  - { to: ${OTHER_AGENT}, on: all_skills, role: owner }
  - { to: ${OTHER_AGENT}, on: all_memories, role: owner }
  - { to: ${OTHER_AGENT}, on: all_artifacts, role: owner }
routes:
  - { deliver: "knowledge:Secret plan", to: ${OTHER_AGENT} }
`;

export const skillMd = (name: string, description = `Use ${name} when the task needs it.`, body = 'Follow these steps.'): string =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;

const b64 = (data: string | Buffer): string => (typeof data === 'string' ? Buffer.from(data, 'utf8') : data).toString('base64');

/** Calls a tool while seeding and answers its structured content; any failure fails the world's opening. */
type Seeder = (tool: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>;

function seeder(tenant: string, client: RecordingClient): Seeder {
  return async (tool, args) => {
    const outcome = await client.call(tool, args);
    assert.ok(
      outcome.kind === 'result' && outcome.result.isError !== true && outcome.result.structuredContent !== undefined,
      `seeding ${tenant}: ${tool} failed: ${describeOutcome(outcome)}`,
    );
    return outcome.result.structuredContent;
  };
}

/** Ids and names of one tenant's content, for the generators. */
export interface TenantPool {
  readonly knowledge: readonly Versioned[];
  readonly skills: readonly Versioned[];
  readonly memories: readonly Versioned[];
  readonly artifacts: readonly Versioned[];
  readonly knowledgeDrafts: readonly string[];
  readonly skillDrafts: readonly string[];
  readonly proposals: readonly string[];
  readonly agents: readonly string[];
  readonly people: readonly string[];
  readonly groups: readonly string[];
  readonly installations: readonly string[];
  readonly sessions: readonly string[];
  readonly attachmentPaths: readonly string[];
  readonly messages: readonly string[];
  /** Knowledge Bases, archived ones included. */
  readonly kbs: readonly KbEntry[];
  /** Their files, deleted ones included. */
  readonly kbFiles: readonly KbFileEntry[];
  /** The SHA-256 of every file version, the heads' (etags) and older ones'. */
  readonly etags: readonly string[];
  readonly grants: readonly { readonly id: string; readonly kbId: string }[];
  readonly teams: readonly { readonly id: string; readonly slug: string }[];
  /** People's emails and pending invitations'. */
  readonly emails: readonly string[];
  readonly auditEvents: readonly string[];
  /** Upload batch tokens the seeding was given (the store keeps only their hashes): one confirmed, one open. */
  readonly batchTokens: readonly { readonly token: string; readonly kbId: string }[];
}

export interface KbEntry {
  readonly id: string;
  readonly slug: string;
  readonly archived: boolean;
  /** Whether the fuzzing may archive it: false for the KBs the seeding made (see `FuzzWorld.#keep`). */
  readonly expendable: boolean;
}

export interface KbFileEntry {
  readonly id: string;
  readonly kbId: string;
  readonly path: string;
  readonly latest: number;
  readonly sha256: string;
  readonly kind: 'text' | 'asset';
  readonly deleted: boolean;
  /** Whether the fuzzing may delete it: false for the files the seeding made. */
  readonly expendable: boolean;
}

export interface Versioned {
  readonly id: string;
  readonly type: 'knowledge' | 'skill' | 'memory' | 'artifact';
  readonly name: string;
  readonly latest: number;
  /** The attachment paths of the latest version. */
  readonly paths: readonly string[];
}

export interface Pools {
  readonly own: TenantPool;
  readonly other: TenantPool;
}

/** One HTTP exchange, as the fuzz client's fetch saw it. */
export interface Exchange {
  readonly requestBody: string;
  readonly status: number;
  readonly responseBody: string;
}

/** The SDK client of one endpoint, with the last exchange recorded for failure reports. */
export class RecordingClient {
  readonly path: string;
  readonly client: Client;
  last: Exchange | undefined;

  private constructor(path: string, client: Client) {
    this.path = path;
    this.client = client;
  }

  static async connect(baseUrl: string, path: string, token: string): Promise<RecordingClient> {
    const self = new RecordingClient(path, sdkClient('kgw-fuzz'));
    const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}${path}`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        const requestBody = typeof init?.body === 'string' ? init.body : '';
        if (init?.method === 'POST') self.last = { requestBody, status: response.status, responseBody: await response.clone().text() };
        return response;
      },
    });
    await self.client.connect(transport);
    return self;
  }

  /** The exchange the last POST recorded (a method, so narrowing after `last = undefined` does not stick). */
  lastExchange(): Exchange | undefined {
    return this.last;
  }

  async listTools(): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.listTools(cursor === undefined ? {} : { cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  }

  /** tools/call through the SDK's request path; `problemsOf` judges the outcome (the SDK's own output check would throw instead). */
  async call(name: unknown, args: unknown): Promise<CallOutcome> {
    this.last = undefined;
    const started = performance.now();
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), CALL_TIMEOUT_MS);
    });
    try {
      const request = this.client.request(
        { method: 'tools/call', params: { name: name as string, arguments: args as Record<string, unknown> | undefined } },
        CallToolResultSchema,
        { timeout: CALL_TIMEOUT_MS * 2, signal: controller.signal },
      );
      request.catch(() => undefined);
      const settled = await Promise.race([
        request.then(
          (result) => ({ result }),
          (error: unknown) => ({ error }),
        ),
        timedOut,
      ]);
      const ms = Math.round(performance.now() - started);
      if (settled === 'timeout') {
        controller.abort();
        return { kind: 'timeout', ms, exchange: this.lastExchange() };
      }
      if ('result' in settled) return { kind: 'result', result: settled.result, ms, exchange: this.lastExchange() };
      const error = settled.error;
      const exchange = this.lastExchange();
      if (exchange !== undefined && exchange.status >= 400) return { kind: 'http-error', status: exchange.status, body: exchange.responseBody, ms, exchange };
      if (error instanceof McpError) return { kind: 'rpc-error', code: error.code, message: error.message, ms, exchange };
      return { kind: 'client-error', message: error instanceof Error ? `${error.name}: ${error.message}` : String(error), ms, exchange };
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

export type CallOutcome =
  | { readonly kind: 'result'; readonly result: CallToolResult; readonly ms: number; readonly exchange: Exchange | undefined }
  | { readonly kind: 'rpc-error'; readonly code: number; readonly message: string; readonly ms: number; readonly exchange: Exchange | undefined }
  | { readonly kind: 'http-error'; readonly status: number; readonly body: string; readonly ms: number; readonly exchange: Exchange }
  | { readonly kind: 'timeout'; readonly ms: number; readonly exchange: Exchange | undefined }
  | { readonly kind: 'client-error'; readonly message: string; readonly ms: number; readonly exchange: Exchange | undefined };

/** The texts the dialects answer an unexpected failure with (src/<product>/dialect/errors.ts). */
export const INTERNAL_TEXT = /internal error/i;
export const JSONRPC_INTERNAL_ERROR = -32603;

const validators = new AjvJsonSchemaValidator();
const outputValidators = new WeakMap<object, JsonSchemaValidator<unknown>>();

function outputValidator(tool: Tool): JsonSchemaValidator<unknown> | undefined {
  if (tool.outputSchema === undefined) return undefined;
  let validator = outputValidators.get(tool.outputSchema);
  if (validator === undefined) {
    validator = validators.getValidator(tool.outputSchema);
    outputValidators.set(tool.outputSchema, validator);
  }
  return validator;
}

/** JSON-RPC error objects anywhere in a parsed body (a response or a batch of them). */
export function rpcErrorsIn(body: unknown): { code: unknown; message: unknown }[] {
  const list = Array.isArray(body) ? body : [body];
  return list
    .filter(
      (m): m is { error: { code: unknown; message: unknown } } =>
        typeof m === 'object' && m !== null && typeof (m as { error?: unknown }).error === 'object' && (m as { error?: unknown }).error !== null,
    )
    .map((m) => m.error);
}

function textsOf(result: CallToolResult): string[] {
  return result.content.flatMap((item) => (item.type === 'text' ? [item.text] : []));
}

/** The codes an Atmina error is named by (docs/atmina.md): its text reads `code: message`. */
export const ATMINA_CODES: readonly string[] = [
  'validation',
  'permission_denied',
  'not_found',
  'conflict',
  'content_integrity',
  'payload_too_large',
  'rate_limited',
  'unavailable',
];
const ATMINA_ERROR = new RegExp(`^(${ATMINA_CODES.join('|')}): \\S`);
const ATMINA_TOOLS = new Set(allTools.filter((tool) => tool.dialect === 'atmina').map((tool) => tool.name));

/** An Atmina answer's errors without a known code: the tool's own, and each failed item's (write_files, confirm_uploads). */
function unknownAtminaCodes(result: CallToolResult): string[] {
  if (result.isError === true) {
    const [text = ''] = textsOf(result);
    return ATMINA_ERROR.test(text) ? [] : [`an Atmina error without a known code: ${cut(text, 120)}`];
  }
  const items = (result.structuredContent as { results?: unknown } | undefined)?.results;
  if (!Array.isArray(items)) return [];
  return items.flatMap(({ code, error }: { code?: unknown; error?: unknown }, index) =>
    code === undefined || (typeof code === 'string' && ATMINA_CODES.includes(code) && typeof error === 'string' && error.startsWith(`${code}: `))
      ? []
      : [`results[${index}] fails without a known code: ${cut(JSON.stringify({ code, error }), 120)}`],
  );
}

/**
 * What is wrong with one tools/call outcome, as short lines; empty when it is acceptable: a
 * JSON-RPC result or error, never -32603 nor an internal-error text, never HTTP 5xx, within the
 * time bound, and structured content of a successful result valid against the output schema.
 */
export function problemsOf(outcome: CallOutcome, tool: Tool | undefined): string[] {
  const problems: string[] = [];
  switch (outcome.kind) {
    case 'timeout':
      problems.push(`no answer within ${CALL_TIMEOUT_MS} ms`);
      break;
    case 'client-error':
      problems.push(
        outcome.exchange === undefined ? `the fuzz client failed before an answer arrived: ${outcome.message}` : `no JSON-RPC answer: ${outcome.message}`,
      );
      break;
    case 'http-error': {
      if (outcome.status >= 500) problems.push(`HTTP ${outcome.status}`);
      let body: unknown;
      try {
        body = JSON.parse(outcome.body);
      } catch {
        problems.push(`HTTP ${outcome.status} with a body that is not JSON`);
      }
      for (const error of rpcErrorsIn(body)) if (error.code === JSONRPC_INTERNAL_ERROR) problems.push(`JSON-RPC error ${JSONRPC_INTERNAL_ERROR}`);
      if (body !== undefined && rpcErrorsIn(body).length === 0) problems.push(`HTTP ${outcome.status} without a JSON-RPC error`);
      if (INTERNAL_TEXT.test(outcome.body)) problems.push('an internal-error text');
      break;
    }
    case 'rpc-error':
      if (outcome.code === JSONRPC_INTERNAL_ERROR) problems.push(`JSON-RPC error ${JSONRPC_INTERNAL_ERROR}`);
      if (INTERNAL_TEXT.test(outcome.message)) problems.push('an internal-error text');
      break;
    case 'result': {
      const { result } = outcome;
      if (outcome.exchange !== undefined && outcome.exchange.status !== 200) problems.push(`a result with HTTP ${outcome.exchange.status}`);
      if (textsOf(result).some((text) => INTERNAL_TEXT.test(text))) problems.push('an internal-error text');
      if (tool !== undefined && ATMINA_TOOLS.has(tool.name)) problems.push(...unknownAtminaCodes(result));
      const validator = tool === undefined ? undefined : outputValidator(tool);
      if (validator !== undefined && result.isError !== true) {
        if (result.structuredContent === undefined) problems.push('a successful result without structuredContent although the tool has an output schema');
        else {
          const check = validator(result.structuredContent);
          if (!check.valid) problems.push(`structuredContent does not match the output schema: ${check.errorMessage ?? ''}`);
        }
      }
      break;
    }
  }
  return problems;
}

/**
 * The other tenant's identifiers and texts that appear in an answer without having been in the
 * request: anything of another tenant a caller sees, beyond its own words echoed back, is a leak.
 */
export function leaksIn(outcome: CallOutcome, request: string, secrets: readonly string[]): string[] {
  const answer =
    outcome.kind === 'result'
      ? JSON.stringify(outcome.result)
      : outcome.kind === 'rpc-error'
        ? outcome.message
        : outcome.kind === 'http-error'
          ? outcome.body
          : '';
  return secrets.filter((secret) => answer.includes(secret) && !request.includes(secret));
}

/**
 * What of the other tenant must never reach the fuzzing agent: its ids (random UUIDs, so they
 * cannot appear by chance) and the texts its org file seeds. Names are left out: the fuzzing
 * agent may well create things of the same names in its own tenant.
 */
export function secretsOf(pool: TenantPool): string[] {
  const resources = [...pool.knowledge, ...pool.skills, ...pool.memories, ...pool.artifacts];
  return [
    ...resources.map((r) => r.id),
    ...pool.agents,
    ...pool.people,
    ...pool.groups,
    ...pool.installations,
    ...pool.knowledgeDrafts,
    ...pool.skillDrafts,
    ...pool.proposals,
    ...pool.messages,
    ...pool.kbs.map((kb) => kb.id),
    ...pool.kbFiles.map((file) => file.id),
    ...pool.grants.map((grant) => grant.id),
    ...pool.teams.map((team) => team.id),
    ...pool.auditEvents,
    ...pool.batchTokens.map((batch) => batch.token),
    ...OTHER_TEXTS,
  ];
}

const SHOW = 600;

/** A string cut for reports, with its length when cut. */
export function cut(text: string, max = SHOW): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;
}

/** How deep a value is nested (arrays and objects), counted without recursion. */
export function depthOf(value: unknown): number {
  let depth = 0;
  let level: unknown[] = [value];
  while (level.length > 0) {
    const next: unknown[] = [];
    for (const item of level) if (typeof item === 'object' && item !== null) next.push(...(Object.values(item) as unknown[]));
    if (next.length === 0 && !level.some((item) => typeof item === 'object' && item !== null)) break;
    depth += 1;
    level = next;
  }
  return depth;
}

function abbreviate(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return value.length > 120 ? `${value.slice(0, 60)}…<${value.length} chars>` : value;
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= 6) return `<nested ${depthOf(value)} deep>`;
  if (Array.isArray(value)) return value.map((item) => abbreviate(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, abbreviate(item, depth + 1)]));
}

/** A compact JSON rendering of arguments for reports: long strings and deep nesting cut, escapes kept visible. */
export function preview(value: unknown, max = SHOW): string {
  const json = JSON.stringify(abbreviate(value, 0));
  return cut(json ?? String(value), max);
}

/** The outcome in a few lines: what came back. */
export function describeOutcome(outcome: CallOutcome): string {
  switch (outcome.kind) {
    case 'timeout':
      return `timed out after ${outcome.ms} ms`;
    case 'client-error':
      return `client error after ${outcome.ms} ms: ${cut(outcome.message)}${outcome.exchange ? `; HTTP ${outcome.exchange.status} ${cut(outcome.exchange.responseBody)}` : ''}`;
    case 'http-error':
      return `HTTP ${outcome.status} after ${outcome.ms} ms: ${cut(outcome.body)}`;
    case 'rpc-error':
      return `JSON-RPC error ${outcome.code} after ${outcome.ms} ms: ${cut(outcome.message)}`;
    case 'result':
      return `result (isError ${String(outcome.result.isError ?? false)}) after ${outcome.ms} ms: ${cut(JSON.stringify({ content: outcome.result.content, structuredContent: outcome.result.structuredContent }))}`;
  }
}

/** A failure's class, for grouping: the problems, with ids, numbers and request ids blurred. */
export function signatureOf(tool: string, problems: readonly string[], outcome: CallOutcome): string {
  const detail =
    outcome.kind === 'result'
      ? textsOf(outcome.result).join(' ')
      : outcome.kind === 'rpc-error'
        ? outcome.message
        : outcome.kind === 'http-error'
          ? outcome.body
          : outcome.kind === 'client-error'
            ? outcome.message
            : '';
  const blurred = detail
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/request id \S+/gi, 'request id <id>')
    .replace(/\d+/g, '<n>')
    .slice(0, 160);
  return `${tool} | ${problems.map((p) => p.replace(/\d+ ms/g, '<n> ms').replace(/: .*/s, '')).join('; ')} | ${blurred}`;
}

/** One tenant's Knowledge-Base rows and the bytes of its file versions, to show the fuzzing left them alone. */
export interface TenantDigest {
  readonly rows: Readonly<Record<string, readonly unknown[]>>;
  /** Per SHA-256 of a version: the SHA-256 of the bytes the blob store holds for it, or "missing". */
  readonly bytes: Readonly<Record<string, string>>;
  readonly auditEvents: number;
  /** Audit events of the tenant that name a principal of another tenant as their actor. */
  readonly foreignActors: number;
}

/** The tenant's rows of every Knowledge-Base table (and its teams), each as JSON. */
const DIGEST_TABLES: Readonly<Record<string, string>> = {
  teams: 'SELECT to_jsonb(t) AS row FROM teams t WHERE tenant_id = $1 ORDER BY id',
  team_members: 'SELECT to_jsonb(t) AS row FROM team_members t WHERE tenant_id = $1 ORDER BY team_id, principal_id',
  team_settings: 'SELECT to_jsonb(t) AS row FROM team_settings t WHERE tenant_id = $1 ORDER BY team_id',
  kbs: 'SELECT to_jsonb(t) AS row FROM kbs t WHERE tenant_id = $1 ORDER BY id',
  kb_files: 'SELECT to_jsonb(t) AS row FROM kb_files t WHERE tenant_id = $1 ORDER BY id',
  kb_file_versions: 'SELECT to_jsonb(t) AS row FROM kb_file_versions t WHERE tenant_id = $1 ORDER BY file_id, version',
  kb_file_assets: 'SELECT to_jsonb(t) AS row FROM kb_file_assets t WHERE tenant_id = $1 ORDER BY file_id, version',
  kb_contributions: 'SELECT to_jsonb(t) AS row FROM kb_contributions t WHERE tenant_id = $1 ORDER BY kb_id, principal_id',
  kb_shares: 'SELECT to_jsonb(t) AS row FROM kb_shares t WHERE tenant_id = $1 ORDER BY id',
  kb_upload_batches: 'SELECT to_jsonb(t) AS row FROM kb_upload_batches t WHERE tenant_id = $1 ORDER BY id',
};

export class FuzzWorld {
  readonly store: TestStore;
  readonly running: RunningGateway;
  /** Every scope, for the fuzzing agent of the first tenant. */
  readonly token: string;
  readonly #clients: RecordingClient[] = [];
  readonly #tenantIds: { own: string; other: string };
  /**
   * The KBs and files the seeding made, which the generators never confirm the deletion of: a
   * fuzzed delete_kb or delete_file succeeds on what the fuzzing itself created (and the
   * expendable KB seeded for it), so every tool after it still finds the seeded files.
   */
  readonly #keep = new Set<string>();
  readonly #batchTokens: { own: TenantPool['batchTokens']; other: TenantPool['batchTokens'] } = { own: [], other: [] };
  /** The other tenant's digest right after seeding: `otherTenantDigest()` must keep answering it. */
  otherBaseline: TenantDigest | undefined;

  private constructor(store: TestStore, running: RunningGateway, token: string, tenantIds: { own: string; other: string }) {
    this.store = store;
    this.running = running;
    this.token = token;
    this.#tenantIds = tenantIds;
  }

  static async open(backend: StoreBackend): Promise<FuzzWorld> {
    const store = await backend.open({ migrated: true });
    let running: RunningGateway | undefined;
    try {
      await seedOrg(store.db, ORG);
      await seedOrg(store.db, OTHER_ORG);
      // Writes are rate-limited per principal; the fuzzing writes far faster than an agent should.
      running = await startGateway(store.db, { KGW_KB_WRITES_PER_MINUTE: '1000000', ...s3GatewayEnv(backend) });
      const token = await issueToken(store.db, TENANT, AGENT, ALL_SCOPES);
      const ids = await store.db.query<{ slug: string; id: string }>('SELECT slug, id FROM tenants WHERE slug = ANY($1)', [[TENANT, OTHER_TENANT]]);
      const idOf = (slug: string) => ids.find((row) => row.slug === slug)?.id ?? assert.fail(`no tenant ${slug}`);
      const world = new FuzzWorld(store, running, token, { own: idOf(TENANT), other: idOf(OTHER_TENANT) });
      const otherToken = await issueToken(store.db, OTHER_TENANT, OTHER_AGENT, ALL_SCOPES);
      await world.#seedContent(TENANT, AGENT, token, 'peer-bot');
      await world.#seedContent(OTHER_TENANT, OTHER_AGENT, otherToken, 'other-peer');
      world.#batchTokens.own = await world.#seedKbs(TENANT, token, 'peer-bot', 'Kept by Fuzz Inc.');
      world.#batchTokens.other = await world.#seedKbs(OTHER_TENANT, otherToken, 'other-peer', OTHER_TEXTS[3] ?? '');
      world.otherBaseline = await world.otherTenantDigest();
      return world;
    } catch (error) {
      await running?.close();
      await store.dispose();
      throw error;
    }
  }

  get db(): Db {
    return this.store.db;
  }

  get baseUrl(): string {
    return this.running.url;
  }

  /** A connected SDK client of the fuzzing agent on one endpoint (closed with the world). */
  async connect(path: string, token = this.token): Promise<RecordingClient> {
    const client = await RecordingClient.connect(this.baseUrl, path, token);
    this.#clients.push(client);
    return client;
  }

  async healthz(): Promise<number> {
    const response = await fetch(`${this.baseUrl}/healthz`, { signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
    await response.arrayBuffer();
    return response.status;
  }

  /** Creates one tenant's content through the tools, as its agent (so every write path starts from real state). */
  async #seedContent(tenant: string, agent: string, token: string, peer: string): Promise<void> {
    const ok = seeder(tenant, await this.connect('/alignbase/mcp', token));
    const prefix = tenant === TENANT ? 'fuzz' : 'other';
    const knowledge = await ok('write_knowledge', {
      title: `${prefix} knowledge`,
      expected_version: 0,
      content: '# Notes\n\nVersion one.',
      authority: 'informational',
      publish: true,
    });
    await ok('write_knowledge', { knowledge_id: knowledge.knowledge_id, expected_version: 1, content: '# Notes\n\nVersion two.' });
    await ok('create_knowledge_draft', { knowledge_id: knowledge.knowledge_id, base_version: 2, content: '# Notes\n\nA draft.', rationale: 'clearer' });
    await ok('propose_knowledge', {
      title: `${prefix} proposal`,
      content: 'Proposed.',
      rationale: 'we need it',
      attachments: [{ path: 'notes/extra.md', data_base64: b64('# Extra\n') }],
    });
    const skillName = `${prefix}-skill`;
    const files = [
      { path: 'scripts/check.sh', data_base64: b64('#!/bin/sh\necho ok\n') },
      { path: 'docs/usage.md', data_base64: b64('# Usage\n') },
      { path: 'assets/blob.bin', data_base64: b64(Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 31) % 256))) },
    ];
    const skill = await ok('create_skill', { skill_md: skillMd(skillName), attachments: files });
    await ok('publish_skill', { skill_id: skill.skill_id, version: 1 });
    await ok('write_skill', { skill_id: skill.skill_id, expected_version: 1, skill_md: skillMd(skillName, 'Second version.'), attachments: files.slice(0, 2) });
    await ok('create_skill_draft', { skill_id: skill.skill_id, base_version: 2, skill_md: skillMd(skillName, 'A draft.'), rationale: 'try' });
    await ok('create_skill', { skill_md: skillMd(`${prefix}-plain`) });
    const memory = await ok('create_memory', { name: `${prefix} memory`, content: 'Remember this.' });
    await ok('write_memory', { memory_id: memory.memory_id, expected_version: 1, content: 'Remember this, too.' });
    const artifact = await ok('write_artifact', {
      expected_version: 0,
      name: `${prefix} artifact`,
      markdown: '# Report\n',
      attachments: [
        { path: 'data/table.csv', data_base64: b64('a,b\n1,2\n') },
        { path: 'data/big.txt', data_base64: b64('x'.repeat(270_000)) },
      ],
      source_task: 'fuzz seeding',
    });
    await ok('write_artifact', { artifact_id: artifact.artifact_id, expected_version: 1, markdown: '# Report v2\n' });
    const { recipients } = (await ok('list_context_recipients', {})) as { recipients: { type: string; id: string; name: string }[] };
    const to = recipients.filter((r) => r.name === peer || r.type === 'group').map(({ type, id }) => ({ type, id }));
    await ok('send_context', {
      recipients: to,
      message: 'Hello.',
      artifacts: [{ artifact_id: artifact.artifact_id, access: 'viewer' }],
      idempotency_key: crypto.randomUUID(),
    });
    const installation = await ok('report_installation_capabilities', {
      integration: 'claude-code',
      transport: 'streamable-http',
      capabilities: [
        'connection_test',
        'context_load',
        'skills_install',
        'session_lifecycle',
        'session_start_hook',
        'prompt_submit_hook',
        'tool_use_hook',
        'stop_hook',
        'session_end_hook',
      ],
      client_version: '1.2.3',
    });
    await ok('start_hook_session', { local_installation_id: installation.local_installation_id, hook: 'session_start', session_id: `${prefix}-session-1` });
    await ok('record_hook_activity_event', {
      local_installation_id: installation.local_installation_id,
      session_id: `${prefix}-session-1`,
      event: { type: 'tool_used', tool_name: 'Read' },
    });
    await ok('record_activity_event', {
      local_installation_id: installation.local_installation_id,
      event: { type: 'skill_installed', subject: { type: 'skill', id: skill.skill_id, version: 1 } },
    });
    // A message to the agent itself, from its peer, so read_inbox and get_current_context have one.
    const peerToken = await issueToken(this.db, tenant, peer, ALL_SCOPES);
    const peerClient = await this.connect('/alignbase/mcp', peerToken);
    const agentId = recipients.length > 0 ? await this.#principalId(tenant, agent) : undefined;
    if (agentId !== undefined) {
      const sent = await peerClient.call('send_context', {
        recipients: [{ type: 'agent', id: agentId }],
        message: 'Hi back.',
        idempotency_key: crypto.randomUUID(),
      });
      assert.ok(sent.kind === 'result' && sent.result.isError !== true, `seeding ${tenant}: the peer's send_context failed: ${describeOutcome(sent)}`);
    }
  }

  /**
   * Creates one tenant's Knowledge Bases through the Atmina tools: as the agent (Admin of team
   * docs) the handbook, whose files have history of every kind (create, append, patch,
   * overwrite, restore, move, upload, update, delete), with front matter, a plain file, JSON,
   * a PNG and a PDF, a confirmed and an open upload batch, shares and an invitation; an
   * expendable private KB; the team's settings; and as the peer (Admin of team ops) a team KB
   * the agent only reads and a private one it cannot see. `marker` is text only this tenant's
   * files hold. Answers the upload batch tokens (the store keeps their hashes only).
   */
  async #seedKbs(tenant: string, token: string, peer: string, marker: string): Promise<TenantPool['batchTokens']> {
    const ok = seeder(tenant, await this.connect('/atmina/mcp', token));
    const handbook = await ok('create_kb', { name: 'Handbook', slug: 'handbook', description: 'How we work.', team: 'docs' });
    const kb = String(handbook.kb_id);
    const readme = (tags: string, body: string) => `---\ntitle: Handbook\ntags: [${tags}]\n---\n\n# Handbook\n\n## Purpose\n\n${body}\n`;
    const v1 = await ok('write_file', { kb_id: kb, path: 'README.md', mode: 'create', content: readme('policy, Onboarding', `${marker} Version one.`) });
    await ok('write_file', { kb_id: kb, path: 'README.md', mode: 'append', content: '\n## Contacts\n\nAsk the docs team.\n' });
    await ok('write_file', { kb_id: kb, path: 'README.md', mode: 'patch', patch: [{ find: 'Version one.', replace: 'Version two.' }] });
    const v4 = await ok('write_file', { kb_id: kb, path: 'README.md', mode: 'overwrite', content: readme('policy, release', `${marker} Version four.`) });
    await ok('restore_version', { kb_id: kb, file_id: v1.file_id, version: 2, if_match: v4.sha256 });
    const setup = await ok('write_file', {
      kb_id: kb,
      path: 'guides/draft.md',
      mode: 'create',
      content: '---\ndescription: Setting up.\ntags: [setup]\n---\n# Setup\n\n## Install\n\nRun it.\n\n### Check\n\nSee [the README](../README.md).\n',
    });
    await ok('move_file', { kb_id: kb, file_id: setup.file_id, to_path: 'guides/setup.md' });
    await ok('write_files', {
      kb_id: kb,
      items: [
        { path: 'notes.txt', mode: 'create', content: `# not a heading in plain text\n${marker}\n` },
        { path: 'config/settings.json', mode: 'create', content: '{ "theme": "dark" }\n' },
        { path: 'old/removed.md', mode: 'create', content: '# Removed\n' },
      ],
    });
    await ok('delete_file', { kb_id: kb, path: 'old/removed.md', confirm: 'old/removed.md' });
    const logo = await ok('upload_file', { kb_id: kb, filename: 'images/logo.png', content_base64: b64(pngOf(32, 32)), description: 'The logo.' });
    await ok('update_file', {
      kb_id: kb,
      file_id: logo.file_id,
      mime_type: 'image/png',
      content_base64: b64(pngOf(48, 24, () => [20, 90, 200])),
      if_match: logo.sha256,
    });
    await ok('upload_file', { kb_id: kb, filename: 'manuals/guide.pdf', content_base64: b64(textPdf([['Guide', marker], ['Page two']])) });
    const tokens = [
      { token: await this.#upload(ok, kb, 'uploads/batch.md', `# Uploaded\n\n${marker}\n`), kbId: kb },
      { token: await this.#upload(ok, kb, 'uploads/open.txt'), kbId: kb },
    ];
    await ok('share_kb', { kb_id: kb, principal_id: await this.#principalId(tenant, peer), role: 'editor' });
    await ok('invite_to_kb', { kb_id: kb, email: `newcomer@${tenant}.test`, role: 'viewer' });
    await ok('update_team_settings', { team: 'docs', contribution_note_days: 7 });
    for (const row of await this.db.query<{ id: string }>('SELECT id FROM kbs WHERE tenant_id = (SELECT id FROM tenants WHERE slug = $1)', [tenant]))
      this.#keep.add(row.id);
    const files = await this.db.query<{ id: string }>('SELECT id FROM kb_files WHERE tenant_id = (SELECT id FROM tenants WHERE slug = $1)', [tenant]);
    for (const row of files) this.#keep.add(row.id);
    // Expendable: fuzzed deletions of it succeed.
    const scratch = await ok('create_kb', { name: 'Scratch', slug: `${tenant}-scratch`, visibility: 'private', team: 'docs' });
    await ok('write_file', { kb_id: scratch.kb_id, path: 'scratch/a.md', mode: 'create', content: '# A\n' });
    await ok('share_kb', { kb_id: scratch.kb_id, team: 'ops', role: 'viewer' });
    const asPeer = seeder(tenant, await this.connect('/atmina/mcp', await issueToken(this.db, tenant, peer, ALL_SCOPES)));
    const runbook = await asPeer('create_kb', { name: 'Runbook', slug: `${tenant}-runbook`, team: 'ops' });
    await asPeer('write_file', { kb_id: runbook.kb_id, path: 'runbook.md', mode: 'create', content: `# Runbook\n\n${marker}\n` });
    const vault = await asPeer('create_kb', { name: 'Vault', slug: `${tenant}-vault`, visibility: 'private', team: 'ops' });
    await asPeer('write_file', { kb_id: vault.kb_id, path: 'vault/secret.md', mode: 'create', content: `# Secret\n\n${marker}\n` });
    for (const id of [runbook.kb_id, vault.kb_id]) if (typeof id === 'string') this.#keep.add(id);
    return tokens;
  }

  /** A request_uploads batch of one text file: confirmed when `content` is given (PUT, then confirm_uploads), else left open. */
  async #upload(ok: Seeder, kb: string, path: string, content?: string): Promise<string> {
    const bytes = Buffer.from(content ?? 'never sent\n', 'utf8');
    const batch = await ok('request_uploads', {
      kb_id: kb,
      items: [{ path, size_bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }],
    });
    const token = String(batch.batch_token);
    if (content === undefined) return token;
    const [upload] = batch.uploads as { url: string; headers: Record<string, string> }[];
    assert.ok(upload, 'request_uploads answered one upload');
    // The disk store's URL names the public URL; the gateway here listens on its own address.
    const url = new URL(upload.url);
    const target = url.pathname.startsWith('/uploads/') ? new URL(`${url.pathname}${url.search}`, this.baseUrl) : url;
    const put = await fetch(target, { method: 'PUT', headers: upload.headers, body: bytes });
    assert.equal(put.status, 200, `PUT ${path}: ${await put.text()}`);
    await ok('confirm_uploads', { kb_id: kb, batch_token: token });
    return token;
  }

  /** The other tenant's Knowledge-Base rows, its file bytes and its audit events, as they are now. */
  async otherTenantDigest(): Promise<TenantDigest> {
    const tenantId = this.#tenantIds.other;
    const rows: Record<string, unknown[]> = {};
    for (const [table, sql] of Object.entries(DIGEST_TABLES)) rows[table] = (await this.db.query<{ row: unknown }>(sql, [tenantId])).map((r) => r.row);
    const bytes: Record<string, string> = {};
    const blob = this.running.gateway.services.blob;
    for (const { sha256 } of await this.db.query<{ sha256: string }>('SELECT DISTINCT sha256 FROM kb_file_versions WHERE tenant_id = $1 ORDER BY 1', [
      tenantId,
    ])) {
      try {
        const hash = createHash('sha256');
        for await (const chunk of await blob.get(blobKey(sha256))) hash.update(chunk as Buffer);
        bytes[sha256] = hash.digest('hex');
      } catch {
        bytes[sha256] = 'missing';
      }
    }
    const [audit] = await this.db.query<{ events: number; foreign: number }>(
      `SELECT count(*)::int AS events,
              count(*) FILTER (WHERE principal_id IN (SELECT id FROM principals WHERE tenant_id <> $1))::int AS foreign
         FROM audit_events WHERE tenant_id = $1`,
      [tenantId],
    );
    return { rows, bytes, auditEvents: audit?.events ?? 0, foreignActors: audit?.foreign ?? 0 };
  }

  async #principalId(tenant: string, name: string): Promise<string> {
    const [row] = await this.db.query<{ id: string }>('SELECT p.id FROM principals p JOIN tenants t ON t.id = p.tenant_id WHERE t.slug = $1 AND p.name = $2', [
      tenant,
      name,
    ]);
    assert.ok(row, `no principal ${name} in ${tenant}`);
    return row.id;
  }

  /** The ids of both tenants' content as the store holds it now. */
  async pools(): Promise<Pools> {
    return { own: await this.#pool(this.#tenantIds.own), other: await this.#pool(this.#tenantIds.other) };
  }

  async #pool(tenantId: string): Promise<TenantPool> {
    const db = this.db;
    const resources = await db.query<Versioned>(
      `SELECT r.id, r.type, r.name, r.latest_version AS latest,
              coalesce((SELECT jsonb_agg(a->>'path') FROM jsonb_array_elements(v.attachments) a), '[]'::jsonb) AS paths
         FROM context_resources r
         LEFT JOIN context_versions v ON v.tenant_id = r.tenant_id AND v.resource_id = r.id AND v.version = r.latest_version
        WHERE r.tenant_id = $1 ORDER BY r.created_at, r.id LIMIT 400`,
      [tenantId],
    );
    const ofType = (type: string): Versioned[] => resources.filter((r) => r.type === type);
    const column = async (sql: string): Promise<string[]> => (await db.query<{ v: string }>(sql, [tenantId])).map((row) => row.v);
    return {
      knowledge: ofType('knowledge'),
      skills: ofType('skill'),
      memories: ofType('memory'),
      artifacts: ofType('artifact'),
      knowledgeDrafts: await column(
        "SELECT id::text AS v FROM context_drafts WHERE tenant_id = $1 AND resource_type = 'knowledge' ORDER BY created_at LIMIT 50",
      ),
      skillDrafts: await column("SELECT id::text AS v FROM context_drafts WHERE tenant_id = $1 AND resource_type = 'skill' ORDER BY created_at LIMIT 50"),
      proposals: await column('SELECT id::text AS v FROM context_proposals WHERE tenant_id = $1 ORDER BY created_at LIMIT 100'),
      agents: await column("SELECT id::text AS v FROM principals WHERE tenant_id = $1 AND kind = 'agent' ORDER BY name"),
      people: await column("SELECT id::text AS v FROM principals WHERE tenant_id = $1 AND kind = 'person' ORDER BY name"),
      groups: await column('SELECT id::text AS v FROM groups WHERE tenant_id = $1 ORDER BY name'),
      installations: await column('SELECT id::text AS v FROM activity_installations WHERE tenant_id = $1 ORDER BY created_at LIMIT 20'),
      sessions: await column('SELECT DISTINCT session_id AS v FROM activity_sessions WHERE tenant_id = $1 ORDER BY 1 LIMIT 20'),
      attachmentPaths: await column(
        "SELECT DISTINCT a->>'path' AS v FROM context_versions, jsonb_array_elements(attachments) a WHERE tenant_id = $1 ORDER BY 1 LIMIT 50",
      ),
      messages: await column('SELECT id::text AS v FROM context_messages WHERE tenant_id = $1 ORDER BY seq LIMIT 20'),
      kbs: (
        await db.query<{ id: string; slug: string; archived: boolean }>(
          'SELECT id, slug, archived_at IS NOT NULL AS archived FROM kbs WHERE tenant_id = $1 ORDER BY created_at, id LIMIT 100',
          [tenantId],
        )
      ).map((kb) => ({ ...kb, expendable: !this.#keep.has(kb.id) })),
      kbFiles: (
        await db.query<Omit<KbFileEntry, 'expendable'>>(
          `SELECT id, kb_id AS "kbId", path, latest_version AS latest, sha256, kind, deleted_at IS NOT NULL AS deleted
             FROM kb_files WHERE tenant_id = $1 ORDER BY created_at, id LIMIT 300`,
          [tenantId],
        )
      ).map((file) => ({ ...file, expendable: !this.#keep.has(file.id) })),
      etags: await column('SELECT DISTINCT sha256 AS v FROM kb_file_versions WHERE tenant_id = $1 ORDER BY 1 LIMIT 300'),
      grants: await db.query<{ id: string; kbId: string }>('SELECT id, kb_id AS "kbId" FROM kb_shares WHERE tenant_id = $1 ORDER BY created_at, id LIMIT 100', [
        tenantId,
      ]),
      teams: await db.query<{ id: string; slug: string }>('SELECT id, slug FROM teams WHERE tenant_id = $1 ORDER BY slug', [tenantId]),
      emails: await column(
        `SELECT email AS v FROM principals WHERE tenant_id = $1 AND email IS NOT NULL
         UNION SELECT invited_email FROM kb_shares WHERE tenant_id = $1 AND invited_email IS NOT NULL ORDER BY 1 LIMIT 50`,
      ),
      // Mostly events of KBs and teams, the ones audit_log shows; a few of other kinds.
      auditEvents: await column(
        `SELECT v FROM (SELECT id::text AS v FROM audit_events WHERE tenant_id = $1 AND (action LIKE 'kb.%' OR action LIKE 'team.%') ORDER BY at DESC, id LIMIT 40) kb
         UNION ALL SELECT v FROM (SELECT id::text AS v FROM audit_events WHERE tenant_id = $1 AND action NOT LIKE 'kb.%' ORDER BY at DESC, id LIMIT 10) other`,
      ),
      batchTokens: tenantId === this.#tenantIds.own ? this.#batchTokens.own : this.#batchTokens.other,
    };
  }

  async close(): Promise<void> {
    for (const client of this.#clients) await client.close().catch(() => undefined);
    await this.running.close();
    await this.store.dispose();
  }
}
