import { readFileSync } from 'node:fs';
/** What the parent (run.ts) and the server child (server.ts) share: scenarios, the request, IPC messages. */

/**
 * Two suites, each with its own fresh store and result file: `whoami` compares the MCP layer
 * with a plain route; `files` reads and writes Atmina KB files through the gateway. read_file
 * runs first: after write_file, the gateway's outbox worker would still be projecting the
 * writes while read_file is measured.
 */
export const SUITES = {
  whoami: ['mcp', 'mcp-2026', 'plain', 'naive-sdk', 'healthz'],
  files: ['read_file', 'write_file'],
} as const;
export type Suite = keyof typeof SUITES;
export const SUITE_NAMES = Object.keys(SUITES) as readonly Suite[];
export const SCENARIOS = [...SUITES.whoami, ...SUITES.files] as const;
export type Scenario = (typeof SCENARIOS)[number];
export type WhoamiScenario = (typeof SUITES.whoami)[number];

/** Scenarios served by the real gateway (createGateway). */
export const GATEWAY_SCENARIOS: ReadonlySet<Scenario> = new Set(['mcp', 'mcp-2026', 'healthz', 'write_file', 'read_file']);

/**
 * KGW_KB_WRITES_PER_MINUTE of the gateway child: far above any rate the bench reaches, so the
 * per-principal write limit (600 a minute by default) never answers rate_limited mid-run.
 */
export const BENCH_KB_WRITES_PER_MINUTE = 100_000_000;

export type StoreSpec = { readonly kind: 'pglite'; readonly dataDir: string } | { readonly kind: 'postgres'; readonly url: string };

/** What the parent hands the child (as argv[2], JSON). */
export interface ChildSpec {
  readonly scenario: Scenario;
  readonly store: StoreSpec;
  /** KGW_DATA_DIR of the gateway: the disk blob store the parent seeded (KB file bytes). */
  readonly dataDir: string;
}

export type ToChild = { readonly type: 'usage' } | { readonly type: 'stop' };
export type FromChild =
  | { readonly type: 'ready'; readonly port: number; readonly usage: Usage }
  | { readonly type: 'usage'; readonly usage: Usage }
  | { readonly type: 'failed'; readonly message: string };

export interface Usage {
  /** process.resourceUsage().maxRSS, KiB. */
  readonly maxRssKiB: number;
  /** User plus system CPU time, microseconds. */
  readonly cpuMicros: number;
  /** V8 heap reserved now (process.memoryUsage().heapTotal), KiB. */
  readonly heapTotalKiB: number;
  /** RSS now (process.memoryUsage().rss), KiB: what the process holds, where maxRSS also counts a moment's peak. */
  readonly rssKiB: number;
}

export function usageNow(): Usage {
  const usage = process.resourceUsage();
  const memory = process.memoryUsage();
  return {
    maxRssKiB: usage.maxRSS,
    cpuMicros: usage.userCPUTime + usage.systemCPUTime,
    heapTotalKiB: Math.round(memory.heapTotal / 1024),
    rssKiB: Math.round(memory.rss / 1024),
  };
}

/** The seeded organisation: the tenant the test suites start from; the bench calls whoami as alice. */
export const ORG_YAML = readFileSync(new URL('../test/fixtures/acme.yaml', import.meta.url), 'utf8');
export const CALLER = { tenant: 'acme', principal: 'alice@acme.test', scopes: ['context.read'] } as const;

export const PATHS: Readonly<Record<Scenario, string>> = {
  mcp: '/atmina/mcp',
  'mcp-2026': '/atmina/mcp',
  plain: '/whoami',
  'naive-sdk': '/mcp',
  healthz: '/healthz',
  write_file: '/atmina/mcp',
  read_file: '/atmina/mcp',
};

/** The JSON-RPC body of a tools/call. */
export function toolCall(name: string, args: Readonly<Record<string, unknown>>): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
}

/**
 * Every whoami scenario gets the same body and headers, only the path differs; but `mcp-2026`,
 * the same call in MCP 2026-07-28: the envelope in `_meta` and the revision's headers.
 */
const REQUEST_BODY = toolCall('whoami', {});
const MODERN_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'whoami',
    arguments: {},
    _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
  },
});

export const requestBody = (scenario: Scenario): string => (scenario === 'mcp-2026' ? MODERN_BODY : REQUEST_BODY);

export function requestHeaders(token: string, scenario?: Scenario): Record<string, string> {
  const common = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (scenario === 'mcp-2026') return { ...common, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'whoami' };
  return { ...common, 'mcp-protocol-version': '2025-06-18' };
}

export function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

/** Why a response body is not the whoami of alice at acme, or undefined when it is. */
export function checkBody(scenario: WhoamiScenario, body: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return 'body is not JSON';
  }
  let profile = json;
  if (scenario !== 'plain') {
    const result = field(json, 'result');
    if (result === undefined) return `no JSON-RPC result: ${body.slice(0, 200)}`;
    if (field(result, 'isError') === true) return `tool error: ${body.slice(0, 200)}`;
    profile = field(result, 'structuredContent');
    const text = field((field(result, 'content') as unknown[] | undefined)?.[0], 'text');
    if (typeof text !== 'string' || JSON.stringify(JSON.parse(text)) !== JSON.stringify(profile)) return 'text content differs from structured content';
  }
  if (field(field(profile, 'tenant'), 'slug') !== CALLER.tenant) return `tenant is not ${CALLER.tenant}: ${body.slice(0, 200)}`;
  if (field(field(profile, 'principal'), 'email') !== CALLER.principal) return `principal is not ${CALLER.principal}`;
  const teams = field(profile, 'teams');
  if (!Array.isArray(teams) || teams.length !== 1) return 'expected one team membership';
  return undefined;
}
