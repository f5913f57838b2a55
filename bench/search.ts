/**
 * `npm run bench:search`: search latency, write-to-searchable time and projection throughput
 * over a generated markdown corpus (bench/corpus.ts), per engine and store. See bench/README.md
 * ("The search bench").
 *
 * 1. Load: a fresh store, the example org, a KB, and the corpus written into it while no
 *    projection runs (through MCP write_files, or through the core's writeFiles for large
 *    corpora), so the outbox holds every file's search and graph rows.
 * 2. Projection throughput: outbox workers, one replica and then two (each with its own pool
 *    on PostgreSQL, as two gateway processes have), drain the search and graph rows; the
 *    second run first rebuilds both projections from the store, as `kgw reindex` does.
 * 3. Through a gateway as configured (its own outbox worker, default settings) and the MCP
 *    SDK client over HTTP: keyword queries and questions through `search`, one at a time; then
 *    single-file writes through `write_files`, each followed by `search` polls until it is found.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Meilisearch } from 'meilisearch';
import { authenticateToken } from '../src/kernel/tokens/tokens.ts';
import { AuditLog } from '../src/kernel/audit/audit-log.ts';
import { AuditTrail } from '../src/kernel/audit/trail.ts';
import { writeFiles } from '../src/atmina/kb/batch.ts';
import { openServices } from '../src/open-services.ts';
import { rebuildProjection } from '../src/kernel/outbox/rebuild.ts';
import { OutboxWorker } from '../src/kernel/outbox/worker.ts';
import { loadConfig } from '../src/config.ts';
import type { Db } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { connectClient, issueToken, seedOrg, startGateway } from '../test/support/gateway.ts';
import { callStructured, createKb, searchBackend } from './cranfield-mcp.ts';
import { CleanUp } from './clean-up.ts';
import type { Corpus } from './corpus.ts';
import { generateCorpus } from './corpus.ts';
import { benchEmbeddings, embeddingsGatewayEnv } from './embeddings.ts';
import { adminQuery, machineInfo, serverSettings } from './machine.ts';
import { BENCH_KB_WRITES_PER_MINUTE, CALLER, ORG_YAML } from './scenarios.ts';
import { openBenchStore, reopenBenchStore } from './store.ts';

const HERE = path.dirname(new URL(import.meta.url).pathname);
const SCOPES = 'context.read context.write';
/** Items per write_files call while loading: the tool's maximum. */
const LOAD_BATCH = 50;
/** write_files calls (or core batches) in flight while loading. */
const LOAD_IN_FLIGHT = 2;
/** A progress line every this many batches while loading (every 5,000 files). */
const PROGRESS_BATCHES = 100;
/** Above this many files the load goes through the core by default: MCP loading of 100 k files takes most of an hour here. */
const MCP_LOAD_MAX_FILES = 20_000;
/** Connections per pool on PostgreSQL (each replica has its own). */
const POOL_MAX = 10;
/** How often the projection phase looks at the outbox, and the search polls of a write look for the file. */
const DRAIN_POLL_MS = 100;
const SEARCHABLE_POLL_MS = 10;
/** A drain that takes longer is reported as not finished (and the bench fails): 30 minutes. */
const DRAIN_LIMIT_MS = 30 * 60_000;
/** A write not found by search within this is counted as a timeout: 30 s. */
const SEARCHABLE_LIMIT_MS = 30_000;
/** Slowest queries of each kind kept in the result file. */
const SLOWEST_KEPT = 5;
/** Unmeasured search calls before the measured ones (caches, JIT, pool). */
const WARMUP_QUERIES = 10;
/** Idle sleep of the bench's own outbox workers: the drain's end is seen at once, not after the 1 s default. */
const WORKER_IDLE_MS = 5;
/** The projections that make a corpus searchable and linked. */
const CORE_PROJECTIONS = ['search', 'graph'] as const;

// ---------------------------------------------------------------------------------------------
// Settings: flags first, then environment variables, then defaults.

const { values: flags } = parseArgs({
  options: {
    files: { type: 'string' },
    store: { type: 'string' },
    engine: { type: 'string' },
    queries: { type: 'string' },
    writes: { type: 'string' },
    load: { type: 'string' },
    replicas: { type: 'string' },
    name: { type: 'string' },
    keep: { type: 'boolean' },
    reuse: { type: 'string' },
    'results-dir': { type: 'string' },
  },
  strict: true,
});

function setting(flag: string | undefined, env: string): string | undefined {
  const value = flag ?? process.env[env];
  return value === undefined || value === '' ? undefined : value;
}

function whole(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw.replace(/k$/i, '000'));
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be a whole number of at least ${min}, got "${raw}"`);
  return value;
}

function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  if (raw === undefined) return fallback;
  const found = allowed.find((a) => a === raw);
  if (found === undefined) throw new Error(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return found;
}

const serverUrl = setting(undefined, 'BENCH_DATABASE_URL') ?? setting(undefined, 'KGW_TEST_DATABASE_URL');
/** A `.store.json` file a `--keep` run wrote: measure searches on that store again, without loading or draining. */
const reuse = setting(flags.reuse, 'BENCH_REUSE');
const kept: KeptStore | undefined = reuse === undefined ? undefined : (JSON.parse(readFileSync(reuse, 'utf8')) as KeptStore);
// A kept store decides the corpus size and the store kind, whatever the flags say.
const files = kept?.load.files ?? whole('--files (BENCH_FILES)', setting(flags.files, 'BENCH_FILES'), 10_000, 1);
const store =
  kept === undefined
    ? oneOf('--store (BENCH_STORE)', setting(flags.store, 'BENCH_STORE'), ['pglite', 'postgres'], 'pglite')
    : kept.location.startsWith('postgres') // a database URL; a PGlite store is a folder
      ? 'postgres'
      : 'pglite';
const engine = oneOf('--engine (BENCH_ENGINE)', setting(flags.engine, 'BENCH_ENGINE'), ['builtin', 'meilisearch'], 'builtin');
const settings = {
  files,
  store,
  engine,
  queries: whole('--queries (BENCH_QUERIES)', setting(flags.queries, 'BENCH_QUERIES'), 200, 1),
  writes: whole('--writes (BENCH_WRITES)', setting(flags.writes, 'BENCH_WRITES'), 30, 1),
  load: oneOf('--load (BENCH_LOAD)', setting(flags.load, 'BENCH_LOAD'), ['mcp', 'core'], files > MCP_LOAD_MAX_FILES ? 'core' : 'mcp'),
  replicas: (setting(flags.replicas, 'BENCH_REPLICAS') ?? '1,2').split(',').map((r) => whole('--replicas (BENCH_REPLICAS)', r.trim(), 1, 1)),
  seed: 13,
  /** Keep the loaded store after the run (its description goes to a `.store.json` file), for `--reuse`. */
  keep: flags.keep === true,
  /** The kept store's file name (the results record no folder of the machine). */
  reuse: reuse === undefined ? undefined : path.basename(reuse),
};
if (store === 'postgres' && serverUrl === undefined) throw new Error('--store postgres needs BENCH_DATABASE_URL or KGW_TEST_DATABASE_URL');
const meiliUrl = setting(undefined, 'MEILI_URL') ?? setting(undefined, 'KGW_TEST_MEILI_URL');
const meiliKey = setting(undefined, 'MEILI_API_KEY') ?? setting(undefined, 'KGW_TEST_MEILI_KEY');
if (engine === 'meilisearch' && meiliUrl === undefined) throw new Error('--engine meilisearch needs MEILI_URL or KGW_TEST_MEILI_URL');
// With an embeddings endpoint (KGW_TEST_EMBEDDINGS_URL, bench/embeddings.ts) the gateway embeds every file too: the drain times the vectors projection beside the others, and the writes measure what embedding costs a write (nothing waits for the model).
const embeddings = benchEmbeddings();
const PROJECTIONS: readonly string[] = embeddings === undefined ? CORE_PROJECTIONS : [...CORE_PROJECTIONS, 'vectors'];
const name =
  setting(flags.name, 'BENCH_NAME') ??
  `search-${engine}-${store}-${files >= 1000 && files % 1000 === 0 ? `${files / 1000}k` : files}${embeddings === undefined ? '' : '-vectors'}`;
const resultsDir = path.resolve(setting(flags['results-dir'], 'BENCH_RESULTS_DIR') ?? path.join(HERE, 'results'));

// ---------------------------------------------------------------------------------------------

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const loadAverage = () => os.loadavg().map((l) => round(l, 2));

/** The nearest-rank percentile of `values`. */
function percentile(values: readonly number[], pct: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((pct / 100) * sorted.length));
  return sorted[rank - 1] ?? 0;
}

function summary(values: readonly number[]): { samples: number; p50Ms: number; p95Ms: number; p99Ms: number; maxMs: number } {
  return {
    samples: values.length,
    p50Ms: round(percentile(values, 50)),
    p95Ms: round(percentile(values, 95)),
    p99Ms: round(percentile(values, 99)),
    maxMs: round(Math.max(0, ...values)),
  };
}

/** Runs `work` over 0..count-1, `inFlight` at a time. */
async function pool(count: number, inFlight: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, lane));
}

interface WriteAnswer {
  written: number;
  failed: number;
  results: { ok: boolean; path: string; error?: string }[];
}

function checkBatch(answer: WriteAnswer, items: number): void {
  if (answer.failed === 0 && answer.written === items) return;
  const first = answer.results.find((r) => !r.ok);
  throw new Error(`write_files: ${answer.failed} of ${items} items failed, first ${first?.path}: ${first?.error}`);
}

/** Writes the whole corpus, LOAD_BATCH files a batch: through write_files, or the core function behind it. */
async function loadCorpus(corpus: Corpus, kbId: string, via: { client: Client } | { db: Db; blob: Parameters<typeof writeFiles>[0]['blob']; token: string }) {
  const batches = Math.ceil(corpus.files / LOAD_BATCH);
  const itemsOf = (batch: number) =>
    Array.from({ length: Math.min(LOAD_BATCH, corpus.files - batch * LOAD_BATCH) }, (_, i) => {
      const file = corpus.file(batch * LOAD_BATCH + i);
      return { path: file.path, mode: 'create' as const, content: file.content };
    });
  let links = 0;
  for (let n = 0; n < corpus.files; n += 1) links += corpus.file(n).links;
  let done = 0;
  const report = () => {
    done += 1;
    if (done % PROGRESS_BATCHES === 0) console.log(`  … ${done * LOAD_BATCH} files`);
  };
  if ('client' in via) {
    await pool(batches, LOAD_IN_FLIGHT, async (batch) => {
      const items = itemsOf(batch);
      checkBatch((await callStructured(via.client, 'write_files', { kb_id: kbId, items })) as unknown as WriteAnswer, items.length);
      report();
    });
    return { links };
  }
  const found = await authenticateToken(via.db, via.token);
  if (found === undefined) throw new Error("the bench's token was refused");
  const auth = found;
  const log = new AuditLog(via.db);
  await pool(batches, LOAD_IN_FLIGHT, async (batch) => {
    const items = itemsOf(batch);
    const trail = AuditTrail.forTool(log, auth.caller, { name: 'write_files', dialect: 'atmina' }, randomUUID());
    const answer = await writeFiles({ db: via.db, blob: via.blob }, auth.caller, { kbId, items: items.map((i) => ({ ...i, content: i.content })) }, trail);
    const failed = answer.results.filter((r) => !r.ok);
    if (failed.length > 0) throw new Error(`writeFiles: ${failed.length} of ${items.length} items failed, first ${failed[0]!.path}`);
    report();
  });
  return { links };
}

/** Whether the rows of a projection count: for search and vectors only the KB files' rows (the seeded organisation's Knowledge has a few too). */
const COUNTED = "(projection NOT IN ('search', 'vectors') OR resource_key LIKE 'kb_file:%')";

/**
 * The projections that still have a counted row waiting. One probe per projection along the
 * outbox's (projection, id) index, which stops at the first row: counting the whole backlog
 * every poll (200,000 rows at 100 k files) kept a core of the store busy, slowing the drain it measured.
 */
async function stillPending(db: Db): Promise<Set<string>> {
  const rows = await db.query<{ projection: string }>(
    `SELECT p.projection FROM unnest($1::text[]) AS p(projection)
      WHERE EXISTS (SELECT 1 FROM outbox WHERE projection = p.projection AND ${COUNTED})`,
    [[...PROJECTIONS]],
  );
  return new Set(rows.map((r) => r.projection));
}

/** Rows waiting per projection (the counted ones, see COUNTED). */
async function pendingByProjection(db: Db): Promise<Map<string, number>> {
  const rows = await db.query<{ projection: string; n: string | number }>(
    `SELECT projection, count(*) FILTER (WHERE ${COUNTED}) AS n FROM outbox GROUP BY projection`,
  );
  return new Map(rows.map((r) => [r.projection, Number(r.n)]));
}

interface DrainFigures {
  replicas: number;
  /** Per projection: rows waiting at the start, seconds until none waited, rows/s. */
  projections: Record<string, { rows: number; seconds: number; rowsPerSec: number }>;
  /** Seconds until search and graph had drained: the corpus searchable and linked (vectors, when embedded, are timed apart). */
  allSeconds: number;
  /** References the graph kept afterwards (graph_kb_links), to compare with the corpus's. */
  graphLinks: number;
  workerErrors: number;
  firstError?: string;
  problem?: string;
}

/**
 * Drains the outbox with `replicas` workers over the configured projections, each replica
 * with its own services and (on PostgreSQL) its own pool, and times each projection.
 */
async function drain(config: ReturnType<typeof loadConfig>, handles: readonly Db[], replicas: number): Promise<DrainFigures> {
  const opened = await Promise.all(handles.slice(0, replicas).map((db) => openServices(config, db)));
  const errors: string[] = [];
  const workers = opened.map(
    (o) =>
      new OutboxWorker(o.services.db, o.services.projections.projections, {
        idleMs: WORKER_IDLE_MS,
        onError: (error) => errors.push(error instanceof Error ? error.message : String(error)),
      }),
  );
  const db = handles[0]!;
  const start = await pendingByProjection(db);
  const seconds = new Map<string, number>();
  const started = performance.now();
  for (const worker of workers) worker.start();
  let problem: string | undefined;
  try {
    while (seconds.size < PROJECTIONS.length) {
      const pending = await stillPending(db);
      const elapsed = (performance.now() - started) / 1000;
      for (const projection of PROJECTIONS) {
        if (seconds.has(projection) || pending.has(projection)) continue;
        // The search projection enqueues the vectors' rows as it indexes (src/search/vectors.ts): none waits before it is done.
        if (projection === 'vectors' && !seconds.has('search')) continue;
        seconds.set(projection, elapsed);
      }
      if (elapsed * 1000 > DRAIN_LIMIT_MS) {
        problem = `not drained within ${DRAIN_LIMIT_MS / 60_000} minutes: ${JSON.stringify(Object.fromEntries(await pendingByProjection(db)))} rows left`;
        break;
      }
      if (seconds.size < PROJECTIONS.length) await sleep(DRAIN_POLL_MS);
    }
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await Promise.all(opened.map((o) => o.close()));
  }
  const projections: DrainFigures['projections'] = {};
  // Vectors: the documents embedded by the end (none waited at the start).
  const [embedded] = PROJECTIONS.includes('vectors') ? await db.query<{ n: string | number }>('SELECT count(*) AS n FROM search_vectors') : [];
  for (const projection of PROJECTIONS) {
    const rows = projection === 'vectors' ? Number(embedded?.n ?? 0) : (start.get(projection) ?? 0);
    const s = seconds.get(projection) ?? Number.NaN;
    projections[projection] = { rows, seconds: round(s, 2), rowsPerSec: round(rows / s) };
  }
  const [links] = await db.query<{ n: string | number }>('SELECT count(*) AS n FROM graph_kb_links');
  return {
    replicas,
    projections,
    allSeconds: round(Math.max(...CORE_PROJECTIONS.map((p) => seconds.get(p) ?? Number.NaN)), 2),
    graphLinks: Number(links?.n ?? 0),
    workerErrors: errors.length,
    ...(errors.length > 0 ? { firstError: errors[0] } : {}),
    ...(problem === undefined ? {} : { problem }),
  };
}

interface SearchAnswer {
  results: { kind?: string; path?: string }[];
}

/**
 * Meilisearch's own time in the search call under way: the wall time of the gateway's
 * multi-search requests, from sending one until its whole answer is read, summed over the call's
 * requests (the candidates and, when some hits need them, the crops). The gateway runs in this
 * process and the Meilisearch client calls the global `fetch`, so wrapping it sees every request.
 */
const engineTime = { ms: 0 };
function timeMultiSearches(): void {
  const plain = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!new URL(url).pathname.endsWith('/multi-search')) return plain(input, init);
    const started = performance.now();
    const response = await plain(input, init);
    const body = await response.arrayBuffer();
    engineTime.ms += performance.now() - started;
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

async function searchOnce(client: Client, kbId: string, query: string): Promise<{ ms: number; engineMs: number; paths: string[] }> {
  engineTime.ms = 0;
  const started = performance.now();
  const answer = (await callStructured(client, 'search', { query, scope: { kb_ids: [kbId] } })) as unknown as SearchAnswer;
  const ms = performance.now() - started;
  return { ms, engineMs: engineTime.ms, paths: answer.results.filter((r) => r.kind === 'file' && typeof r.path === 'string').map((r) => r.path!) };
}

async function measureQueries(client: Client, kbId: string, queries: readonly string[]) {
  const ms: number[] = [];
  const engineMs: number[] = [];
  let empty = 0;
  for (const query of queries) {
    const answer = await searchOnce(client, kbId, query);
    ms.push(answer.ms);
    engineMs.push(answer.engineMs);
    if (answer.paths.length === 0) empty += 1;
  }
  // The slowest queries, for whoever looks into the engine's speed next.
  const slowest = queries
    .map((query, i) => ({ query, ms: round(ms[i]!), engineMs: round(engineMs[i]!) }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, SLOWEST_KEPT);
  const engine = settings.engine === 'meilisearch' ? summary(engineMs) : undefined;
  const calls = summary(ms);
  return {
    ...calls,
    emptyAnswers: empty,
    slowest,
    // The whole call against Meilisearch's part of it, at the 95th percentile of each.
    ...(engine === undefined ? {} : { meilisearch: engine, p95OverMeilisearch: engine.p95Ms > 0 ? round(calls.p95Ms / engine.p95Ms, 2) : null }),
  };
}

/** A word no corpus file holds: letters only (so every analyser keeps it whole), unique per probe. */
const probeWord = (n: number): string =>
  `qz${randomBytes(4)
    .toString('hex')
    .replace(/[0-9]/g, (d) => 'ghijklmnop'[Number(d)]!)}w${'abcdefghij'[n % 10]}`;

/** Writes one file through write_files and polls search until it is among the hits; times both. */
async function measureWriteToSearchable(client: Client, kbId: string, count: number) {
  const searchable: number[] = [];
  const writeCalls: number[] = [];
  const run = randomBytes(4).toString('hex');
  let timeouts = 0;
  for (let n = 0; n < count; n += 1) {
    const token = probeWord(n);
    // A folder per run, so a kept store can be measured again (`--reuse`) with new files.
    const filePath = `probes/${run}/p${String(n).padStart(4, '0')}.md`;
    const started = performance.now();
    const answer = (await callStructured(client, 'write_files', {
      kb_id: kbId,
      items: [{ path: filePath, mode: 'create', content: `# Probe ${n}\n\nThe probe word ${token} is in this file only.\n` }],
    })) as unknown as WriteAnswer;
    checkBatch(answer, 1);
    writeCalls.push(performance.now() - started);
    for (;;) {
      const hit = await searchOnce(client, kbId, token);
      const elapsed = performance.now() - started;
      if (hit.paths.includes(filePath)) {
        searchable.push(elapsed);
        break;
      }
      if (elapsed > SEARCHABLE_LIMIT_MS) {
        timeouts += 1;
        break;
      }
      await sleep(SEARCHABLE_POLL_MS);
    }
  }
  return { writeCall: summary(writeCalls), searchable: { ...summary(searchable), timeouts } };
}

// ---------------------------------------------------------------------------------------------

function markdown(report: Record<string, unknown> & { results: Results }): string {
  const r = report.results;
  const m = report.machine as ReturnType<typeof machineInfo>;
  const lines = [
    `# ${String(report.name)}`,
    '',
    `${String(report.date)} · ${m.cpu}, ${m.cpus} CPUs, ${m.memoryGiB} GiB, Node ${m.node} · load average (1, 5, 15 min) at start ${JSON.stringify(report.loadAverageStart)}, before searching ${JSON.stringify(report.loadAverageSearch)}, at end ${JSON.stringify(report.loadAverageEnd)}`,
    ...(report.server === undefined
      ? []
      : [
          '',
          `PostgreSQL: ${Object.entries(report.server as Record<string, string>)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}`,
        ]),
    '',
    `${settings.files} files (${r.load.bytes} bytes, ${r.load.links} references), engine ${settings.engine}, store ${settings.store}; loaded through ${r.load.via === 'mcp' ? 'MCP write_files' : 'the core writeFiles (not MCP)'} in ${r.load.seconds} s (${r.load.filesPerSec} files/s).`,
    '',
    '| measure | samples | p50 ms | p95 ms | p99 ms |',
    '|---|---|---|---|---|',
    `| search, keywords (1–3 words) | ${r.keywords.samples} | ${r.keywords.p50Ms} | ${r.keywords.p95Ms} | ${r.keywords.p99Ms} |`,
    `| search, questions (6–12 words) | ${r.questions.samples} | ${r.questions.p50Ms} | ${r.questions.p95Ms} | ${r.questions.p99Ms} |`,
    ...(['keywords', 'questions'] as const).flatMap((kind) => {
      const own = r[kind].meilisearch;
      return own === undefined
        ? []
        : [
            `| Meilisearch's own multi-search time in those ${kind} (× ${r[kind].p95OverMeilisearch} at p95) | ${own.samples} | ${own.p50Ms} | ${own.p95Ms} | ${own.p99Ms} |`,
          ];
    }),
    `| write_files call (1 file) | ${r.writes.writeCall.samples} | ${r.writes.writeCall.p50Ms} | ${r.writes.writeCall.p95Ms} | ${r.writes.writeCall.p99Ms} |`,
    `| write to searchable | ${r.writes.searchable.samples} | ${r.writes.searchable.p50Ms} | ${r.writes.searchable.p95Ms} | ${r.writes.searchable.p99Ms} |`,
    '',
    '| replicas | search rows | search rows/s | graph rows | graph rows/s | searchable and linked, s | references kept |',
    '|---|---|---|---|---|---|---|',
    ...r.projection.map(
      (d) =>
        `| ${d.replicas} | ${d.projections.search?.rows} | ${d.projections.search?.rowsPerSec} | ${d.projections.graph?.rows} | ${d.projections.graph?.rowsPerSec} | ${d.allSeconds} | ${d.graphLinks}${d.problem === undefined ? '' : ` (${d.problem})`} |`,
    ),
    '',
    ...(r.projection.some((d) => d.projections.vectors !== undefined)
      ? [
          '| replicas | vectors embedded | vectors/s | all embedded, s |',
          '|---|---|---|---|',
          ...r.projection.map(
            (d) => `| ${d.replicas} | ${d.projections.vectors?.rows} | ${d.projections.vectors?.rowsPerSec} | ${d.projections.vectors?.seconds} |`,
          ),
          '',
        ]
      : []),
  ];
  return lines.join('\n');
}

/** What `--keep` writes and `--reuse` reads: a loaded, drained store to search again. */
interface KeptStore {
  location: string;
  dataDir: string;
  kbId: string;
  load: Results['load'];
  projection: DrainFigures[];
  meiliIndex?: string;
}

interface Results {
  load: { via: 'mcp' | 'core'; files: number; bytes: number; links: number; seconds: number; filesPerSec: number };
  projection: DrainFigures[];
  keywords: Awaited<ReturnType<typeof measureQueries>>;
  questions: Awaited<ReturnType<typeof measureQueries>>;
  writes: Awaited<ReturnType<typeof measureWriteToSearchable>>;
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const server = store === 'postgres' && serverUrl !== undefined ? await serverSettings(serverUrl) : undefined;
  const loadAverageStart = loadAverage();
  const meiliIndex = `kgw_bench_search_${randomBytes(4).toString('hex')}`;

  const undo = new CleanUp().onSignals("removing the bench's store");

  try {
    console.log(
      settings.reuse === undefined
        ? `bench ${name}: ${settings.files} files, engine ${settings.engine}, store ${settings.store}, load through ${settings.load}`
        : `bench ${name}: searches on the kept store ${settings.reuse}, engine ${settings.engine}`,
    );
    // A kept store holds the corpus of its own size (settings.files): the same seed makes the same queries.
    const corpus = generateCorpus(settings.files, settings.seed);
    const opened =
      kept === undefined
        ? await openBenchStore(settings.store === 'postgres' ? serverUrl : undefined, { poolMax: POOL_MAX, prefix: 'kgw-bench-search' })
        : await reopenBenchStore(kept.location, { poolMax: POOL_MAX });
    undo.push(() => (settings.keep || kept !== undefined ? opened.close() : opened.dispose()));
    const dataDir = kept?.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'kgw-bench-search-data-')));
    if (!settings.keep && kept === undefined) undo.push(() => rm(dataDir, { recursive: true, force: true }));
    if (kept === undefined) {
      await migrate(opened.db);
      await seedOrg(opened.db, ORG_YAML);
    }
    const token = await issueToken(opened.db, CALLER.tenant, CALLER.principal, SCOPES);
    const env: Record<string, string> = {
      KGW_PORT: '0',
      KGW_LOG_LEVEL: 'error',
      KGW_DATA_DIR: dataDir,
      KGW_KB_WRITES_PER_MINUTE: String(BENCH_KB_WRITES_PER_MINUTE),
      ...embeddingsGatewayEnv(embeddings),
      ...(settings.engine === 'meilisearch'
        ? { MEILI_URL: meiliUrl!, MEILI_INDEX: kept?.meiliIndex ?? meiliIndex, ...(meiliKey === undefined ? {} : { MEILI_API_KEY: meiliKey }) }
        : {}),
    };
    if (settings.engine === 'meilisearch' && !settings.keep && kept === undefined)
      undo.push(async () => {
        const meili = new Meilisearch({ host: meiliUrl!, ...(meiliKey === undefined ? {} : { apiKey: meiliKey }) });
        await meili.deleteIndex(meiliIndex).waitTask();
      });
    const config = loadConfig(env);

    let kbId: string;
    let load: Results['load'];
    const projection: DrainFigures[] = [];
    if (kept !== undefined) {
      ({ kbId, load } = kept);
      projection.push(...kept.projection);
    } else {
      // 1. Load, with no projection running: the outbox keeps every row for step 2.
      const loader = await startGateway(opened.db, env, { projections: { projections: [], rebuilders: [] } });
      const loaderClient = await connectClient(`${loader.url}/atmina/mcp`, token);
      kbId = await createKb(loaderClient, 'Bench notes');
      const loadStarted = performance.now();
      const { links } = await loadCorpus(
        corpus,
        kbId,
        settings.load === 'mcp' ? { client: loaderClient } : { db: opened.db, blob: loader.gateway.services.blob, token },
      );
      const loadSeconds = (performance.now() - loadStarted) / 1000;
      await loaderClient.close();
      await loader.close();
      let bytes = 0;
      for (let n = 0; n < corpus.files; n += 1) bytes += Buffer.byteLength(corpus.file(n).content);
      load = { via: settings.load, files: settings.files, bytes, links, seconds: round(loadSeconds, 2), filesPerSec: round(settings.files / loadSeconds) };
      console.log(`- loaded ${settings.files} files through ${settings.load} in ${load.seconds} s (${load.filesPerSec} files/s)`);

      // 2. Projection throughput: the first run drains the load's rows; later runs rebuild first.
      const handles = [opened.db, ...Array.from({ length: Math.max(...settings.replicas) - 1 }, () => opened.second())];
      for (const [i, replicas] of settings.replicas.entries()) {
        if (i > 0) {
          const services = await openServices(config, opened.db);
          try {
            for (const p of PROJECTIONS) await rebuildProjection(opened.db, services.services.projections, p);
          } finally {
            await services.close();
          }
        }
        const figures = await drain(config, handles, replicas);
        if (figures.problem === undefined && figures.graphLinks !== links) figures.problem = `the graph kept ${figures.graphLinks} of ${links} references`;
        projection.push(figures);
        console.log(
          `- ${replicas} replica${replicas === 1 ? '' : 's'}: ` +
            PROJECTIONS.map(
              (p) => `${p} ${figures.projections[p]!.rows} rows in ${figures.projections[p]!.seconds} s (${figures.projections[p]!.rowsPerSec} rows/s)`,
            ).join(', ') +
            `; searchable and linked after ${figures.allSeconds} s, ${figures.graphLinks} of ${links} references kept` +
            (figures.problem === undefined ? '' : `  FAILED: ${figures.problem}`),
        );
      }
      if (settings.keep) {
        const description: KeptStore = {
          location: opened.location,
          dataDir,
          kbId,
          load,
          projection,
          ...(settings.engine === 'meilisearch' ? { meiliIndex } : {}),
        };
        await mkdir(resultsDir, { recursive: true });
        const keptFile = path.join(resultsDir, `${name}.store.json`);
        await writeFile(keptFile, `${JSON.stringify(description, null, 2)}\n`);
        console.log(`- kept the store: measure again with --reuse ${path.relative(process.cwd(), keptFile)}`);
      }
    }

    // 3. Through a gateway as a user runs it: search latency, then write-to-searchable. On
    // PostgreSQL the search tables are first vacuumed as autovacuum leaves them in steady state:
    // right after a bulk load the visibility map is unset, so the postings' index-only scans
    // would visit the heap (docs/search.md, "Speed"). PGlite runs no autovacuum; it is measured as is.
    if (opened.databaseUrl !== undefined) {
      const vacuumStarted = performance.now();
      await adminQuery(opened.databaseUrl, 'VACUUM (ANALYZE) search_postings, search_term_df, search_docs, search_scopes');
      console.log(`- vacuumed the search tables in ${round((performance.now() - vacuumStarted) / 1000, 1)} s`);
    }
    const gateway = await startGateway(opened.db, env);
    undo.push(() => gateway.close());
    const client = await connectClient(`${gateway.url}/atmina/mcp`, token);
    undo.push(() => client.close());
    const backend = await searchBackend(client);
    if (backend !== settings.engine) throw new Error(`the gateway reports engine ${backend}, not ${settings.engine}`);
    if (settings.engine === 'meilisearch') timeMultiSearches();
    for (const query of corpus.keywordQueries(WARMUP_QUERIES)) await searchOnce(client, kbId, query);
    const loadAverageSearch = loadAverage();
    const keywords = await measureQueries(client, kbId, corpus.keywordQueries(settings.queries));
    console.log(
      `- keywords: p50 ${keywords.p50Ms} ms, p95 ${keywords.p95Ms} ms, p99 ${keywords.p99Ms} ms (${keywords.samples}, ${keywords.emptyAnswers} empty)` +
        (keywords.meilisearch === undefined ? '' : `; Meilisearch's own p95 ${keywords.meilisearch.p95Ms} ms (× ${keywords.p95OverMeilisearch})`),
    );
    const questions = await measureQueries(client, kbId, corpus.questions(settings.queries));
    console.log(
      `- questions: p50 ${questions.p50Ms} ms, p95 ${questions.p95Ms} ms, p99 ${questions.p99Ms} ms (${questions.samples}, ${questions.emptyAnswers} empty)` +
        (questions.meilisearch === undefined ? '' : `; Meilisearch's own p95 ${questions.meilisearch.p95Ms} ms (× ${questions.p95OverMeilisearch})`),
    );
    const writes = await measureWriteToSearchable(client, kbId, settings.writes);
    console.log(
      `- write to searchable: p50 ${writes.searchable.p50Ms} ms, p95 ${writes.searchable.p95Ms} ms (${writes.searchable.samples} found, ${writes.searchable.timeouts} timed out)`,
    );
    const loadAverageEnd = loadAverage();

    const results: Results = { load, projection, keywords, questions, writes };
    const report = {
      name,
      date: new Date().toISOString(),
      machine,
      server,
      loadAverageStart,
      loadAverageSearch,
      loadAverageEnd,
      settings: {
        ...settings,
        loadBatch: LOAD_BATCH,
        loadInFlight: LOAD_IN_FLIGHT,
        warmupQueries: WARMUP_QUERIES,
        embeddings: embeddings === undefined ? null : { model: embeddings.model, dimensions: embeddings.dimensions },
      },
      goals: { searchP95Ms: 50, writeToSearchableP95Ms: 1000, searchableAndLinkedSeconds: 300 },
      results,
    };
    await mkdir(resultsDir, { recursive: true });
    const jsonFile = path.join(resultsDir, `${name}.json`);
    await writeFile(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(path.join(resultsDir, `${name}.md`), markdown(report));
    console.log(
      `machine: ${machine.cpu}, ${machine.cpus} CPUs, ${machine.memoryGiB} GiB, Node ${machine.node}; load average ${loadAverageStart.join(' ')} → ${loadAverageEnd.join(' ')}`,
    );
    console.log(`wrote ${path.relative(process.cwd(), jsonFile)} and .md`);
    if (projection.some((p) => p.problem !== undefined) || writes.searchable.timeouts > 0) process.exitCode = 1;
  } finally {
    await undo.all();
  }
}

await main();
