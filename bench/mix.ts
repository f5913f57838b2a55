/**
 * `npm run bench:mix`: a mixed load of many agents on one replica and on several over one
 * PostgreSQL database, with Meilisearch and Neo4j when they are configured. See bench/README.md
 * ("The mix bench").
 *
 * For each replica count, on a fresh database: the org of MIX_ORG (agents in teams, a KB per
 * team, Knowledge, Company Brain nodes), a token per agent, files written into the KBs and
 * indexed; then that many `kgw serve` processes over the one database and the agents, each an
 * MCP SDK client of one replica (round-robin), each calling one tool after the other for the
 * warm-up and then the measured seconds, the tool picked at random by the weights of MIX.
 * Measured: calls and latency per kind, errors (kept per kind), each replica's RSS and CPU,
 * and the CPU of the PostgreSQL server's processes. After the mix, a limit counted in the store
 * (upload PUTs per client address) is probed across the replicas.
 */
import { execFileSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Meilisearch } from 'meilisearch';
import { selectBacklogs, selectProjectionStates } from '../src/kernel/outbox/queries.ts';
import { scopeCatalogue } from '../src/products.ts';
import { migrate } from '../src/store/migrate.ts';
import { pngOf } from '../test/atmina/assets/fixtures.ts';
import { connectClient, issueToken, seedOrg } from '../test/support/gateway.ts';
import { callStructured, searchBackend, waitForSearchIndexing, writeFiles } from './cranfield-mcp.ts';
import { CleanUp } from './clean-up.ts';
import type { BenchFile } from './cranfield-mcp.ts';
import { generateCorpus, prng } from './corpus.ts';
import { serve, stop } from './kgw-process.ts';
import { machineInfo, serverSettings } from './machine.ts';
import { BENCH_KB_WRITES_PER_MINUTE } from './scenarios.ts';
import { openBenchStore } from './store.ts';

const HERE = path.dirname(new URL(import.meta.url).pathname);

/**
 * The mix: what an agent calls, in what share (weights add up to 100). Mostly reading, as agents
 * do: files read and listed, searches, the context an Alignbase session starts with and Company
 * Brain look-ups; a fifth of the calls write (text files, small uploaded pictures, a Memory).
 */
export const MIX = [
  { kind: 'read_file', endpoint: 'atmina', weight: 30 },
  { kind: 'search', endpoint: 'atmina', weight: 20 },
  { kind: 'list_files', endpoint: 'atmina', weight: 10 },
  { kind: 'get_current_context', endpoint: 'alignbase', weight: 10 },
  { kind: 'write_file', endpoint: 'atmina', weight: 15 },
  { kind: 'upload_file', endpoint: 'atmina', weight: 5 },
  { kind: 'write_memory', endpoint: 'alignbase', weight: 5 },
  { kind: 'query_index', endpoint: 'brain', weight: 5 },
] as const;
export type Kind = (typeof MIX)[number]['kind'];
type Endpoint = (typeof MIX)[number]['endpoint'];
const ENDPOINTS: Readonly<Record<Endpoint, string>> = { atmina: '/atmina/mcp', alignbase: '/alignbase/mcp', brain: '/brain/mcp' };
const TOTAL_WEIGHT = MIX.reduce((sum, m) => sum + m.weight, 0);

const TENANT = 'mix';
/** Agents are spread over this many teams, each owning one KB the seeded files are shared over. */
const TEAMS = 3;
/** Every scope: the agents read and write through all three dialects. */
const SCOPES = scopeCatalogue.all.join(' ');
/** Files in each `write_file` agent's own folder: overwritten in turn, so versions pile up as notes are edited. */
const NOTES_PER_AGENT = 10;
/** Side of the uploaded pictures in pixels: an RGB PNG of noise, about 5 KB. */
const PICTURE_SIDE = 40;
/** How often the replicas' RSS is sampled. */
const RSS_SAMPLE_MS = 500;
/** Connections per pool of the bench's own handle on the store (seeding; idle while measured). */
const POOL_MAX = 4;
/**
 * KGW_UPLOAD_PUTS_PER_MINUTE of the replicas (the gateway's default), and the PUTs the limit
 * probe sends after the mix: this many more than the limit, spread over the replicas.
 */
const UPLOAD_PUTS_PER_MINUTE = 120;
const PROBE_PUTS_OVER = 10;
/** Items per request_uploads call: the tool's maximum. */
const UPLOAD_BATCH = 50;
/**
 * How long the seeded files may take to be indexed before the bench gives up, naming the search
 * projection's latest error: seconds here, so a search engine that refuses (a wrong key) ends
 * the run soon.
 */
const INDEXING_WAIT_MS = 120_000;
/** Messages kept per kind of error. */
const ERRORS_KEPT = 5;
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** Company Brain nodes for query_index to find; the queries are words of their titles and summaries. */
const BRAIN_NODES = [
  { id: 'invoice-approval', type: 'SOP / process', title: 'Invoice approval', summary: 'Invoices above the threshold need a second signature.' },
  { id: 'release-process', type: 'SOP / process', title: 'Release process', summary: 'Every release is tagged after the tests pass.' },
  { id: 'erp', type: 'tool', title: 'ERP', summary: 'The system of record for orders and invoices.' },
  { id: 'travel-policy', type: 'policy', title: 'Travel policy', summary: 'Trains under six hours, economy flights above.' },
  { id: 'data-warehouse', type: 'data source', title: 'Data warehouse', summary: 'Nightly copies of orders, invoices and tickets.' },
  { id: 'growth-plan', type: 'strategy', title: 'Growth plan', summary: 'Two new markets next year, support in their languages.' },
] as const;
const BRAIN_QUERIES = ['invoice', 'release', 'orders', 'travel policy', 'warehouse', 'markets', 'signature', 'tests'];

export interface MixSettings {
  readonly agents: number;
  readonly seconds: number;
  readonly warmup: number;
  /** Replica counts, each measured on its own fresh database, in this order. */
  readonly replicas: readonly number[];
  /** Files written into the KBs before the run, for reads and searches to find. */
  readonly files: number;
  /** The PostgreSQL server the fresh databases are made on. */
  readonly serverUrl: string;
  readonly meili: { readonly url: string; readonly key: string | undefined } | undefined;
  readonly neo4j: { readonly url: string; readonly user: string; readonly password: string } | undefined;
  /** S3_* variables handed to the replicas; without them the replicas share one disk blob folder. */
  readonly s3: Readonly<Record<string, string>>;
  readonly seed: number;
  /** Node flags each replica gets after `npm start`'s own (e.g. `--heap-growing-percent=50 --no-maglev`). */
  readonly nodeFlags: readonly string[];
  /** Progress lines on stdout. */
  readonly log: (line: string) => void;
}

interface LatencySummary {
  calls: number;
  callsPerSec: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface MixRun {
  replicas: number;
  engine: string;
  graph: 'neo4j' | 'postgres';
  blobs: 's3' | 'shared disk folder';
  seededFiles: number;
  measuredSeconds: number;
  calls: number;
  callsPerSec: number;
  errors: number;
  perKind: Record<string, LatencySummary & { errors: number }>;
  /** First messages of each kind of error. */
  errorSamples: Record<string, string[]>;
  /** Per replica: RSS in MiB (peak while measured, and at the end), CPU seconds while measured. */
  replicaProcesses: { rssPeakMiB: number; rssEndMiB: number; cpuSeconds: number }[];
  /**
   * The upload PUT limit, probed after the mix (disk blobs only: S3 takes the PUTs itself): one
   * client address PUTs PROBE_PUTS_OVER more than the limit to the replicas in turn; it holds
   * when exactly the limit is accepted, whichever replica took each PUT.
   */
  uploadPutLimit: { limitPerMinute: number; puts: number; accepted: number; refused: number; other: string[]; holds: boolean } | null;
  /** Outbox rows per projection not yet applied at the end of the measured window, and the projection's latest error. */
  outboxAtEnd: { projection: string; backlog: number; failing: number; lastError: string | null }[];
  /** CPU of this process while measured: the agents' clients, on the same machine as what they measure. */
  benchProcessCpuSeconds: number;
  /** The PostgreSQL server's CPU while measured: the bench database's backends, and every process of the server. */
  postgresCpu: { benchDatabaseSeconds: number; serverSeconds: number; serverPercentOfOneCore: number };
  loadAverageStart: number[];
  loadAverageEnd: number[];
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const loadAverage = () => os.loadavg().map((l) => round(l, 2));

/** The nearest-rank percentile of sorted `values`. */
function percentile(sorted: readonly number[], pct: number): number {
  const rank = Math.max(1, Math.ceil((pct / 100) * sorted.length));
  return sorted[rank - 1] ?? 0;
}

function latency(values: readonly number[], seconds: number): LatencySummary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    calls: values.length,
    callsPerSec: round(values.length / seconds),
    p50Ms: round(percentile(sorted, 50)),
    p95Ms: round(percentile(sorted, 95)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted.at(-1) ?? 0),
  };
}

const agentName = (n: number): string => `agent-${String(n).padStart(2, '0')}`;
const teamOf = (agent: number): number => agent % TEAMS;
const kbSlug = (team: number): string => `kb-${team}`;
const notePath = (agent: number, k: number): string => `agents/${agentName(agent)}/note-${k}.md`;

/** The org: an owner, the agents in TEAMS teams (Editors) each owning a KB, Knowledge they may edit, and Company Brain nodes. */
export function mixOrg(agents: number): string {
  const names = Array.from({ length: agents }, (_, n) => agentName(n));
  const lines = [
    `tenant: ${TENANT}`,
    'name: Mix bench',
    'people:',
    `  - { email: owner@${TENANT}.test, name: Owner }`,
    'agents:',
    ...names.map((name) => `  - { name: ${name}, owner: owner@${TENANT}.test }`),
    'groups:',
    `  - { name: agents, members: [${names.join(', ')}] }`,
    'teams:',
    ...Array.from({ length: TEAMS }, (_, t) => {
      const members = names.filter((_, n) => teamOf(n) === t).map((name) => `${name}: editor`);
      return `  - { slug: team-${t}, name: Team ${t}, members: { owner@${TENANT}.test: admin${members.map((m) => `, ${m}`).join('')} } }`;
    }),
    'kbs:',
    ...Array.from({ length: TEAMS }, (_, t) => `  - { slug: ${kbSlug(t)}, name: Notes of team ${t}, team: team-${t} }`),
    'knowledge:',
    '  - { title: Writing style, content: "# Writing style\\n\\nShort sentences. One idea a paragraph.", publish: true }',
    '  - { title: Release checklist, content: "# Release checklist\\n\\n1. Run the tests.\\n2. Update the changelog.\\n3. Tag the release.", publish: true }',
    'grants:',
    '  - { to: group:agents, on: all_knowledge, role: editor }',
    '  - { to: group:agents, on: all_memories, role: editor }',
    'routes:',
    '  - { deliver: "knowledge:Writing style", to: group:agents }',
    '  - { deliver: "knowledge:Release checklist", to: group:agents }',
    'brain:',
    '  nodes:',
    ...BRAIN_NODES.map((n) => `    - { id: ${n.id}, type: ${n.type}, title: ${n.title}, summary: "${n.summary}", access: public }`),
  ];
  return `${lines.join('\n')}\n`;
}

/** A PNG of `side`×`side` RGB noise from `random`: a small picture that does not compress. */
export function noisePng(side: number, random: () => number): Buffer {
  const channel = () => Math.floor(random() * 256);
  return pngOf(side, side, () => [channel(), channel(), channel()]);
}

// ---------------------------------------------------------------------------------------------
// Processes: RSS and CPU from /proc (Linux).

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined; // gone, or not ours to read
  }
}

/** VmRSS of `pid` in KiB, or undefined when it is gone. */
function rssKiB(pid: number): number | undefined {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readProc(pid, 'status') ?? '');
  return match === null ? undefined : Number(match[1]);
}

/** utime + stime of `pid` in clock ticks (fields 14 and 15 of /proc/<pid>/stat, after the command in parentheses). */
function cpuTicks(pid: number): number {
  const stat = readProc(pid, 'stat');
  if (stat === undefined) return 0;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU ticks of each process of the local PostgreSQL server now (the postmaster and its `postgres: …` children), and whether it serves `database`. */
function postgresTicks(database: string): Map<number, { ticks: number; ours: boolean }> {
  const processes = new Map<number, { ticks: number; ours: boolean }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const command = (readProc(pid, 'cmdline') ?? '').replaceAll('\0', ' ');
    if (!command.startsWith('postgres:') && !/\/bin\/postgres( |$)/.test(command)) continue;
    processes.set(pid, { ticks: cpuTicks(pid), ours: command.includes(` ${database} `) });
  }
  return processes;
}

/**
 * The ticks spent between two snapshots, by the whole server and by the backends of the bench's
 * database: per process, so that one of another database exiting in between (the server is
 * shared) does not lower the sum. A process that exits in between takes its ticks with it; the
 * replicas' pools keep their connections while busy, so the figures miss little, and are never
 * too high. A pid seen only after (or reused: fewer ticks than before) counts from zero.
 */
function postgresSpent(
  before: ReadonlyMap<number, { ticks: number }>,
  after: ReadonlyMap<number, { ticks: number; ours: boolean }>,
): { server: number; database: number } {
  let server = 0;
  let ours = 0;
  for (const [pid, now] of after) {
    const earlier = before.get(pid)?.ticks ?? 0;
    const spent = now.ticks >= earlier ? now.ticks - earlier : now.ticks;
    server += spent;
    if (now.ours) ours += spent;
  }
  return { server, database: ours };
}

// ---------------------------------------------------------------------------------------------
// The agents.

interface Tally {
  readonly ms: Map<Kind, number[]>;
  readonly errors: Map<Kind, number>;
  readonly samples: Map<Kind, string[]>;
}

function newTally(): Tally {
  return { ms: new Map(MIX.map((m) => [m.kind, []])), errors: new Map(MIX.map((m) => [m.kind, 0])), samples: new Map() };
}

function recordError(tally: Tally, kind: Kind, message: string): void {
  tally.errors.set(kind, (tally.errors.get(kind) ?? 0) + 1);
  const kept = tally.samples.get(kind) ?? [];
  if (kept.length < ERRORS_KEPT) kept.push(message.slice(0, 500));
  tally.samples.set(kind, kept);
}

interface Agent {
  readonly n: number;
  readonly clients: Readonly<Record<Endpoint, Client>>;
  readonly kb: string;
  /** Paths of the seeded files of the agent's KB. */
  readonly paths: readonly string[];
  memory: { id: string; version: number };
  readonly random: () => number;
  calls: number;
}

/**
 * A tool call that must answer something: a tool error is thrown with its text (`code: message`),
 * and so is an answer without content. Tools that answer text only (get_current_context,
 * query_index) are checked this far; callStructured checks the others' structured content.
 */
async function callText(client: Client, name: string, args: Record<string, unknown>): Promise<void> {
  const result = await client.callTool({ name, arguments: args });
  const content = Array.isArray(result.content) ? (result.content as { type?: string; text?: string }[]) : [];
  const text = content.map((c) => (c.type === 'text' ? (c.text ?? '') : '')).join(' ');
  if (result.isError === true) throw new Error(`${name} failed: ${text}`);
  if (text.trim() === '') throw new Error(`${name} answered no text`);
}

/** A tool call of `kind` with its arguments; throws with the tool's message when it answers an error. */
async function callOnce(agent: Agent, kind: Kind, queries: readonly string[]): Promise<void> {
  const { random } = agent;
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const n = (agent.calls += 1);
  switch (kind) {
    case 'read_file': {
      const file = await callStructured(agent.clients.atmina, 'read_file', { kb_id: agent.kb, path: pick(agent.paths) });
      if (typeof file.content !== 'string') throw new Error('read_file answered no content');
      return;
    }
    case 'search':
      await callStructured(agent.clients.atmina, 'search', { query: pick(queries) });
      return;
    case 'list_files': {
      const folder = pick(agent.paths).split('/').slice(0, 2).join('/');
      await callStructured(agent.clients.atmina, 'list_files', { kb_id: agent.kb, path_prefix: `${folder}/`, limit: 50 });
      return;
    }
    case 'get_current_context':
      await callText(agent.clients.alignbase, 'get_current_context', {});
      return;
    case 'write_file': {
      const words = Array.from({ length: 40 }, () => pick(queries)).join(' ');
      await callStructured(agent.clients.atmina, 'write_file', {
        kb_id: agent.kb,
        path: notePath(agent.n, n % NOTES_PER_AGENT),
        mode: 'overwrite',
        content: `# Note ${n} of ${agentName(agent.n)}\n\n${words}.\n`,
      });
      return;
    }
    case 'upload_file':
      await callStructured(agent.clients.atmina, 'upload_file', {
        kb_id: agent.kb,
        filename: `agents/${agentName(agent.n)}/pictures/p${n}.png`,
        mime_type: 'image/png',
        content_base64: noisePng(PICTURE_SIDE, random).toString('base64'),
        description: `A picture agent ${agent.n} took, number ${n}.`,
      });
      return;
    case 'write_memory': {
      const answer = await callStructured(agent.clients.alignbase, 'write_memory', {
        memory_id: agent.memory.id,
        expected_version: agent.memory.version,
        content: `Working on call ${n}: ${pick(queries)}.`,
      });
      if (typeof answer.version === 'number') agent.memory.version = answer.version;
      return;
    }
    case 'query_index':
      await callText(agent.clients.brain, 'query_index', { query: pick(BRAIN_QUERIES), limit: 5 });
      return;
  }
}

function pickKind(random: () => number): Kind {
  let roll = random() * TOTAL_WEIGHT;
  for (const m of MIX) {
    roll -= m.weight;
    if (roll < 0) return m.kind;
  }
  return MIX[0].kind;
}

/** Calls until `end`; calls started at or after `measureFrom` are counted. */
async function agentLoop(agent: Agent, queries: readonly string[], measureFrom: number, end: number, tally: Tally, warmupTally: Tally): Promise<void> {
  for (let started = performance.now(); started < end; started = performance.now()) {
    const kind = pickKind(agent.random);
    const into = started >= measureFrom ? tally : warmupTally;
    try {
      await callOnce(agent, kind, queries);
      into.ms.get(kind)!.push(performance.now() - started);
    } catch (error) {
      recordError(into, kind, error instanceof Error ? error.message : String(error));
    }
  }
}

/**
 * Declares limit + PROBE_PUTS_OVER small files with request_uploads, then PUTs them one after
 * the other, the n-th to replica n mod replicas: the limit is per client address and minute, a
 * window that starts at the first PUT, so all of them fall in one window.
 */
async function probeUploadPutLimit(client: Client, kb: string, urls: readonly string[]): Promise<NonNullable<MixRun['uploadPutLimit']>> {
  const puts = UPLOAD_PUTS_PER_MINUTE + PROBE_PUTS_OVER;
  const bodies = Array.from({ length: puts }, (_, n) => Buffer.from(`Limit probe ${n}.\n`));
  const uploads: { url: string; headers: Record<string, string> }[] = [];
  for (let start = 0; start < puts; start += UPLOAD_BATCH) {
    const items = bodies.slice(start, start + UPLOAD_BATCH).map((body, i) => ({
      path: `probes/put-${start + i}.txt`,
      mime_type: 'text/plain',
      size_bytes: body.length,
      sha256: createHash('sha256').update(body).digest('hex'),
    }));
    const answer = (await callStructured(client, 'request_uploads', { kb_id: kb, items })) as { uploads?: { url: string; headers: Record<string, string> }[] };
    if (answer.uploads?.length !== items.length) throw new Error(`request_uploads issued ${answer.uploads?.length ?? 0} of ${items.length} URLs`);
    uploads.push(...answer.uploads);
  }
  let accepted = 0;
  let refused = 0;
  const other: string[] = [];
  for (const [n, upload] of uploads.entries()) {
    const target = new URL(upload.url);
    const replica = new URL(urls[n % urls.length]!);
    target.host = replica.host;
    const response = await fetch(target, { method: 'PUT', headers: upload.headers, body: bodies[n]! });
    const text = await response.text();
    if (response.ok) accepted += 1;
    else if (response.status === 429) refused += 1;
    else if (other.length < ERRORS_KEPT) other.push(`${response.status}: ${text.slice(0, 200)}`);
  }
  return {
    limitPerMinute: UPLOAD_PUTS_PER_MINUTE,
    puts,
    accepted,
    refused,
    other,
    holds: accepted === UPLOAD_PUTS_PER_MINUTE && refused === PROBE_PUTS_OVER && other.length === 0,
  };
}

// ---------------------------------------------------------------------------------------------

/** The environment of a replica: this process's, without any gateway setting of its own, and the bench's. */
function replicaEnv(settings: MixSettings, databaseUrl: string, dataDir: string, meiliIndex: string, replica: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^(KGW_|MEILI_|NEO4J_|S3_|DATABASE_URL$)/.test(key)) env[key] = value;
  const url = new URL(databaseUrl);
  url.searchParams.set('application_name', `kgw-mix-${replica}`);
  return {
    ...env,
    DATABASE_URL: url.toString(),
    KGW_DATA_DIR: dataDir,
    KGW_LOG_LEVEL: 'error',
    KGW_KB_WRITES_PER_MINUTE: String(BENCH_KB_WRITES_PER_MINUTE),
    KGW_UPLOAD_PUTS_PER_MINUTE: String(UPLOAD_PUTS_PER_MINUTE),
    ...(settings.meili === undefined
      ? {}
      : { MEILI_URL: settings.meili.url, MEILI_INDEX: meiliIndex, ...(settings.meili.key === undefined ? {} : { MEILI_API_KEY: settings.meili.key }) }),
    ...(settings.neo4j === undefined ? {} : { NEO4J_URL: settings.neo4j.url, NEO4J_USER: settings.neo4j.user, NEO4J_PASSWORD: settings.neo4j.password }),
    ...settings.s3,
  };
}

/** One measured run on `replicas` replicas over a fresh database; `undo` collects the clean-up steps (run by the caller). */
async function runOnce(settings: MixSettings, replicas: number, undo: CleanUp): Promise<MixRun> {
  const { log } = settings;
  const opened = await openBenchStore(settings.serverUrl, { poolMax: POOL_MAX, prefix: 'kgw-bench-mix' });
  undo.push(() => opened.dispose());
  const databaseUrl = opened.databaseUrl!;
  const database = new URL(databaseUrl).pathname.slice(1);
  await migrate(opened.db);
  await seedOrg(opened.db, mixOrg(settings.agents));
  const tokens = await Promise.all(Array.from({ length: settings.agents }, (_, n) => issueToken(opened.db, TENANT, agentName(n), SCOPES)));
  // One blob folder for every replica unless S3 is configured: the replicas run on this one
  // machine, and a file written through one must be readable through the other.
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'kgw-bench-mix-data-'));
  undo.push(() => rm(dataDir, { recursive: true, force: true }));
  const meiliIndex = `kgw_bench_mix_${randomBytes(4).toString('hex')}`;
  if (settings.meili !== undefined) {
    const meili = settings.meili;
    undo.push(async () => {
      const client = new Meilisearch({ host: meili.url, ...(meili.key === undefined ? {} : { apiKey: meili.key }) });
      await client.deleteIndex(meiliIndex).waitTask();
    });
  }
  // One after the other, each stopped at the end even when a later one fails to start.
  const servers: { url: string; child: ChildProcess }[] = [];
  undo.push(() => Promise.all(servers.map((s) => stop(s.child))).then(() => undefined));
  for (let r = 1; r <= replicas; r += 1)
    servers.push(await serve(replicaEnv(settings, databaseUrl, dataDir, meiliIndex, r), `replica ${r}`, settings.nodeFlags));
  const children: ChildProcess[] = servers.map((s) => s.child);

  // Seed the KBs through the first agent of each team, and wait until search has them all.
  const corpus = generateCorpus(settings.files, settings.seed);
  const byKb: BenchFile[][] = Array.from({ length: TEAMS }, () => []);
  for (let n = 0; n < settings.files; n += 1) byKb[n % TEAMS]!.push(corpus.file(n));
  const clients: Client[] = [];
  undo.push(() => Promise.all(clients.map((c) => c.close())).then(() => undefined));
  const connect = async (url: string, token: string) => {
    const client = await connectClient(url, token);
    clients.push(client);
    return client;
  };
  const seeder = await connect(`${servers[0]!.url}${ENDPOINTS.atmina}`, tokens[0]!);
  const engine = await searchBackend(seeder);
  const writers: Client[] = [];
  for (let t = 0; t < TEAMS; t += 1) {
    // Agent t is of team t: an Editor of that team's KB.
    const writer = t === 0 ? seeder : await connect(`${servers[0]!.url}${ENDPOINTS.atmina}`, tokens[t]!);
    await writeFiles(writer, kbSlug(t), byKb[t]!);
    writers.push(writer);
  }
  for (let t = 0; t < TEAMS; t += 1) await waitForSearchIndexing(writers[t]!, kbSlug(t), { timeoutMs: INDEXING_WAIT_MS });
  log(`- ${replicas} replica${replicas === 1 ? '' : 's'}: seeded ${settings.files} files in ${TEAMS} KBs, engine ${engine}`);

  // The agents, round-robin over the replicas, each with its own Memory.
  const agents: Agent[] = await Promise.all(
    tokens.map(async (token, n) => {
      const base = servers[n % replicas]!.url;
      const [atmina, alignbase, brain] = await Promise.all(
        (['atmina', 'alignbase', 'brain'] as const).map((endpoint) => connect(`${base}${ENDPOINTS[endpoint]}`, token)),
      );
      const memory = await callStructured(alignbase!, 'create_memory', { name: `State of ${agentName(n)}`, content: 'Starting.' });
      // The notes write_file overwrites in turn.
      const notes = Array.from({ length: NOTES_PER_AGENT }, (_, k) => ({ path: notePath(n, k), content: `# Note ${k} of ${agentName(n)}\n` }));
      await writeFiles(atmina!, kbSlug(teamOf(n)), notes);
      return {
        n,
        clients: { atmina: atmina!, alignbase: alignbase!, brain: brain! },
        kb: kbSlug(teamOf(n)),
        paths: byKb[teamOf(n)]!.map((f) => f.path),
        memory: { id: String(memory.memory_id), version: Number(memory.version) },
        random: prng(settings.seed * 1_009 + n),
        calls: 0,
      };
    }),
  );
  const queries = corpus.keywordQueries(200);

  // RSS of each replica every RSS_SAMPLE_MS while measured.
  const pids = children.map((c) => c.pid!);
  const rssPeak = pids.map(() => 0);
  let measuring = false;
  const sampler = setInterval(() => {
    if (measuring) pids.forEach((pid, i) => (rssPeak[i] = Math.max(rssPeak[i]!, rssKiB(pid) ?? 0)));
  }, RSS_SAMPLE_MS);
  undo.push(() => {
    clearInterval(sampler);
    return Promise.resolve();
  });

  const tally = newTally();
  const warmupTally = newTally();
  const now = performance.now();
  const measureFrom = now + settings.warmup * 1000;
  const end = measureFrom + settings.seconds * 1000;
  const loops = Promise.all(agents.map((agent) => agentLoop(agent, queries, measureFrom, end, tally, warmupTally)));
  await sleep(Math.max(0, measureFrom - performance.now()));
  const loadAverageStart = loadAverage();
  const pgBefore = postgresTicks(database);
  const cpuBefore = pids.map(cpuTicks);
  const ownBefore = process.cpuUsage();
  measuring = true;
  await sleep(Math.max(0, end - performance.now()));
  // The calls in flight at the end were started inside the window: they are waited for and counted.
  await loops;
  // From the window's planned start: the calls counted are those started since.
  const measuredSeconds = (performance.now() - measureFrom) / 1000;
  measuring = false;
  const pgAfter = postgresTicks(database);
  const cpuAfter = pids.map(cpuTicks);
  const own = process.cpuUsage(ownBefore);
  const rssEnd = pids.map((pid) => rssKiB(pid) ?? 0);
  const loadAverageEnd = loadAverage();
  clearInterval(sampler);
  // What the replicas' outbox workers had still to apply at the end: a backlog is the projections
  // lagging under the load, failing rows and an error a backend refusing (Meilisearch, Neo4j).
  const states = new Map((await selectProjectionStates(opened.db)).map((p) => [p.projection, p.lastError]));
  const outboxAtEnd = (await selectBacklogs(opened.db)).map((b) => ({
    projection: b.projection,
    backlog: b.backlog,
    failing: b.failing,
    lastError: states.get(b.projection) ?? null,
  }));
  const uploadPutLimit =
    Object.keys(settings.s3).length > 0
      ? null
      : await probeUploadPutLimit(
          agents[0]!.clients.atmina,
          agents[0]!.kb,
          servers.map((s) => s.url),
        );

  const warmupErrors = [...warmupTally.errors.values()].reduce((a, b) => a + b, 0);
  if (warmupErrors > 0) log(`  (${warmupErrors} errors during the warm-up: ${JSON.stringify(Object.fromEntries(warmupTally.samples))})`);
  const perKind: MixRun['perKind'] = {};
  let calls = 0;
  let errors = 0;
  for (const m of MIX) {
    const ms = tally.ms.get(m.kind)!;
    const failed = tally.errors.get(m.kind)!;
    perKind[m.kind] = { ...latency(ms, measuredSeconds), errors: failed };
    calls += ms.length + failed;
    errors += failed;
  }
  const pgSpent = postgresSpent(pgBefore, pgAfter);
  const serverSeconds = pgSpent.server / CLOCK_TICKS;
  return {
    replicas,
    engine,
    graph: settings.neo4j === undefined ? 'postgres' : 'neo4j',
    blobs: Object.keys(settings.s3).length > 0 ? 's3' : 'shared disk folder',
    seededFiles: settings.files,
    measuredSeconds: round(measuredSeconds, 2),
    calls,
    callsPerSec: round(calls / measuredSeconds),
    errors,
    perKind,
    errorSamples: Object.fromEntries(tally.samples),
    replicaProcesses: pids.map((_, i) => ({
      rssPeakMiB: round(rssPeak[i]! / 1024),
      rssEndMiB: round(rssEnd[i]! / 1024),
      cpuSeconds: round((cpuAfter[i]! - cpuBefore[i]!) / CLOCK_TICKS, 2),
    })),
    uploadPutLimit,
    outboxAtEnd,
    benchProcessCpuSeconds: round((own.user + own.system) / 1e6, 2),
    postgresCpu: {
      benchDatabaseSeconds: round(pgSpent.database / CLOCK_TICKS, 2),
      serverSeconds: round(serverSeconds, 2),
      serverPercentOfOneCore: round((serverSeconds / measuredSeconds) * 100),
    },
    loadAverageStart,
    loadAverageEnd,
  };
}

/** Every replica count of `settings`, one after the other, each on a fresh database, cleaned up after. */
export async function runMix(settings: MixSettings, undo = new CleanUp()): Promise<MixRun[]> {
  const runs: MixRun[] = [];
  for (const replicas of settings.replicas) {
    const mark = undo.size;
    try {
      runs.push(await runOnce(settings, replicas, undo));
    } finally {
      // This run's clean-up, last step first, before the next run starts.
      await undo.undoTo(mark);
    }
  }
  return runs;
}

// ---------------------------------------------------------------------------------------------

function printTable(rows: readonly (readonly string[])[]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  for (const row of rows) console.log(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));
}

export function printRun(run: MixRun): void {
  console.log(
    `\n${run.replicas} replica${run.replicas === 1 ? '' : 's'}: ${run.calls} calls in ${run.measuredSeconds} s = ${run.callsPerSec} calls/s, ${run.errors} errors` +
      ` (engine ${run.engine}, graph ${run.graph}, blobs ${run.blobs})`,
  );
  const rows = [['kind', 'weight %', 'calls', 'calls/s', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'errors']];
  for (const m of MIX) {
    const k = run.perKind[m.kind]!;
    rows.push([
      m.kind,
      String(m.weight),
      String(k.calls),
      String(k.callsPerSec),
      String(k.p50Ms),
      String(k.p95Ms),
      String(k.p99Ms),
      String(k.maxMs),
      String(k.errors),
    ]);
  }
  printTable(rows);
  run.replicaProcesses.forEach((p, i) =>
    console.log(
      `replica ${i + 1}: RSS peak ${p.rssPeakMiB} MiB, at the end ${p.rssEndMiB} MiB; CPU ${p.cpuSeconds} s (${round((p.cpuSeconds / run.measuredSeconds) * 100)} % of a core)`,
    ),
  );
  console.log(
    `PostgreSQL: ${run.postgresCpu.serverSeconds} CPU s (${run.postgresCpu.serverPercentOfOneCore} % of a core), of which the bench database's backends ${run.postgresCpu.benchDatabaseSeconds} s`,
  );
  const limit = run.uploadPutLimit;
  if (limit !== null)
    console.log(
      `upload PUT limit (${limit.limitPerMinute} a minute per address) across the replica${run.replicas === 1 ? '' : 's'}: ${limit.accepted} of ${limit.puts} PUTs accepted, ${limit.refused} refused (429)` +
        `${limit.other.length > 0 ? `, other answers: ${limit.other.join('; ')}` : ''}: ${limit.holds ? 'holds' : 'DOES NOT HOLD'}`,
    );
  console.log(
    `outbox at the end: ${
      run.outboxAtEnd.length === 0
        ? 'empty'
        : run.outboxAtEnd
            .map((o) => `${o.projection} ${o.backlog} rows (${o.failing} failing${o.lastError === null ? '' : `, last error: ${o.lastError}`})`)
            .join(', ')
    }`,
  );
  console.log(`the bench's own process (the agents' clients): ${run.benchProcessCpuSeconds} CPU s`);
  console.log(`load average (1, 5, 15 min): ${run.loadAverageStart.join(' ')} → ${run.loadAverageEnd.join(' ')}`);
  for (const [kind, messages] of Object.entries(run.errorSamples)) for (const message of messages) console.log(`  error ${kind}: ${message}`);
}

function setting(flag: string | undefined, env: string): string | undefined {
  const value = flag ?? process.env[env];
  return value === undefined || value === '' ? undefined : value;
}

function whole(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be a whole number of at least ${min}, got "${raw}"`);
  return value;
}

/** Settings from flags, then environment variables, then defaults. */
export function settingsFromArgs(args: readonly string[]): MixSettings & { resultsDir: string; name: string | undefined } {
  const { values: flags } = parseArgs({
    args: [...args],
    options: {
      agents: { type: 'string' },
      seconds: { type: 'string' },
      warmup: { type: 'string' },
      replicas: { type: 'string' },
      files: { type: 'string' },
      store: { type: 'string' },
      'results-dir': { type: 'string' },
      'node-flags': { type: 'string' },
      name: { type: 'string' },
    },
    strict: true,
  });
  const store = setting(flags.store, 'BENCH_STORE') ?? 'postgres';
  if (store !== 'postgres')
    throw new Error(`--store ${store}: the mix runs on PostgreSQL only, since its replicas share one database server (PGlite is one process's store)`);
  const serverUrl = setting(undefined, 'BENCH_DATABASE_URL') ?? setting(undefined, 'KGW_TEST_DATABASE_URL');
  if (serverUrl === undefined)
    throw new Error('the mix needs a PostgreSQL server: set BENCH_DATABASE_URL or KGW_TEST_DATABASE_URL (bash test/services/postgres.sh)');
  const meiliUrl = setting(undefined, 'MEILI_URL') ?? setting(undefined, 'KGW_TEST_MEILI_URL');
  const meiliKey = setting(undefined, 'MEILI_API_KEY') ?? setting(undefined, 'KGW_TEST_MEILI_KEY');
  const neo4jUrl = setting(undefined, 'NEO4J_URL') ?? setting(undefined, 'KGW_TEST_NEO4J_URL');
  const s3 = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[0].startsWith('S3_') && e[1] !== undefined && e[1] !== ''));
  return {
    agents: whole('--agents (BENCH_AGENTS)', setting(flags.agents, 'BENCH_AGENTS'), 50, TEAMS),
    seconds: whole('--seconds (BENCH_SECONDS)', setting(flags.seconds, 'BENCH_SECONDS'), 60, 1),
    warmup: whole('--warmup (BENCH_WARMUP)', setting(flags.warmup, 'BENCH_WARMUP'), 5, 0),
    replicas: (setting(flags.replicas, 'BENCH_REPLICAS') ?? '2,1').split(',').map((r) => whole('--replicas (BENCH_REPLICAS)', r.trim(), 1, 1)),
    files: whole('--files (BENCH_FILES)', setting(flags.files, 'BENCH_FILES'), 200, TEAMS),
    serverUrl,
    meili: meiliUrl === undefined ? undefined : { url: meiliUrl, key: meiliKey },
    neo4j:
      neo4jUrl === undefined
        ? undefined
        : {
            url: neo4jUrl,
            user: setting(undefined, 'NEO4J_USER') ?? setting(undefined, 'KGW_TEST_NEO4J_USER') ?? 'neo4j',
            password: setting(undefined, 'NEO4J_PASSWORD') ?? setting(undefined, 'KGW_TEST_NEO4J_PASSWORD') ?? '',
          },
    s3,
    seed: 13,
    nodeFlags: (setting(flags['node-flags'], 'BENCH_NODE_FLAGS') ?? '').split(' ').filter(Boolean),
    name: setting(flags.name, 'BENCH_NAME'),
    log: (line) => console.log(line),
    resultsDir: path.resolve(setting(flags['results-dir'], 'BENCH_RESULTS_DIR') ?? path.join(HERE, 'results')),
  };
}

async function main(): Promise<void> {
  const settings = settingsFromArgs(process.argv.slice(2));
  const machine = machineInfo();
  const server = await serverSettings(settings.serverUrl);
  const undo = new CleanUp().onSignals("stopping the replicas and dropping the bench's databases");
  console.log(
    `bench mix: ${settings.agents} agents, ${settings.warmup} s warm-up + ${settings.seconds} s, replicas ${settings.replicas.join(' then ')}; ` +
      `search ${settings.meili === undefined ? 'built-in (no MEILI_URL)' : 'Meilisearch'}, graph ${settings.neo4j === undefined ? 'PostgreSQL tables (no NEO4J_URL)' : 'Neo4j'}, ` +
      `blobs ${Object.keys(settings.s3).length > 0 ? 'S3' : 'one disk folder shared by the replicas (no S3_*)'}; ` +
      `replicas started as npm start starts them${settings.nodeFlags.length === 0 ? '' : `, with ${settings.nodeFlags.join(' ')}`}`,
  );
  try {
    const runs = await runMix(settings, undo);
    for (const run of runs) printRun(run);
    const one = runs.find((r) => r.replicas === 1);
    const comparisons = runs
      .filter((r) => r.replicas > 1 && one !== undefined)
      .map((r) => ({ replicas: r.replicas, throughputRatio: round(r.callsPerSec / one!.callsPerSec, 2) }));
    for (const c of comparisons) console.log(`\n${c.replicas} replicas against 1: ${c.throughputRatio} × the throughput`);
    const engine = runs[0]?.engine.toLowerCase().replace(/[^a-z0-9]+/g, '-') ?? 'none';
    const { log: _log, serverUrl: _serverUrl, resultsDir, s3, neo4j, meili, name: given, ...recorded } = settings;
    const name = given ?? `mix-${engine}-${settings.agents}agents`;
    const report = {
      name,
      date: new Date().toISOString(),
      machine,
      server,
      settings: {
        ...recorded,
        mix: MIX,
        search: meili === undefined ? 'builtin' : 'meilisearch',
        graph: neo4j === undefined ? 'postgres' : 'neo4j',
        s3: Object.keys(s3).length > 0,
      },
      runs,
      comparisons,
    };
    await mkdir(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `${name}.json`);
    await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
    console.log(`machine: ${machine.cpu}, ${machine.cpus} CPUs, ${machine.memoryGiB} GiB, Node ${machine.node}`);
    console.log(`wrote ${path.relative(process.cwd(), file)}`);
    if (runs.some((r) => r.errors > 0 || r.uploadPutLimit?.holds === false)) process.exitCode = 1;
  } finally {
    await undo.all();
  }
}

if (import.meta.main) await main();
