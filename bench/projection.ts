/**
 * `npm run bench:projection`: how fast the outbox worker drains graph-like rows into a
 * projection kept in the store itself, with one worker and with two. See bench/README.md.
 *
 * Each scenario enqueues its rows into the outbox of a fresh store (PGlite in a temporary
 * folder, or a new database on BENCH_DATABASE_URL), then starts the workers and measures the
 * time until the outbox is empty. The projection writes one row per applied outbox row through
 * the claim transaction, as a projection kept in Postgres does; afterwards every row must have
 * been applied once, and each resource's rows in enqueue order.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { OutboxEntry, OutboxRow, Projection } from '../connectors/projection.ts';
import { enqueue } from '../src/kernel/outbox/outbox.ts';
import { OutboxWorker } from '../src/kernel/outbox/worker.ts';
import type { Queryable } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { machineInfo } from './machine.ts';
import type { BenchStore } from './store.ts';
import { openBenchStore } from './store.ts';

const HERE = path.dirname(new URL(import.meta.url).pathname);
const PROJECTION = 'graph';
/** Entries per enqueueing transaction: an org file's apply enqueues its graph rows in a few large transactions. */
const ENQUEUE_CHUNK = 1000;
/** How often the parent looks whether the outbox is empty yet. */
const POLL_MS = 20;
/** A drain that takes longer than this is reported as failed rather than waited for. */
const DRAIN_LIMIT_MS = 15 * 60_000;
/** How long a worker loop sleeps when it found nothing (the gateway's default is 1 s; the bench wants no idle gaps). */
const IDLE_MS = 5;
/** Connections of each worker's pool on PostgreSQL: one claim transaction at a time, plus the poll. */
const POOL_MAX = 2;

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number, got "${raw}"`);
  return value;
}

const SCENARIOS = ['one-key', 'distinct-keys', 'mixed'] as const;
type Scenario = (typeof SCENARIOS)[number];

const databaseUrl = process.env.BENCH_DATABASE_URL || undefined;
const settings = {
  store: databaseUrl === undefined ? ('pglite' as const) : ('postgres' as const),
  rows: positive('BENCH_ROWS', 20_000),
  batchSize: positive('BENCH_BATCH', 100),
  workers: (process.env.BENCH_WORKERS ?? '1,2').split(',').map((w) => Number(w.trim())),
  scenarios: (process.env.BENCH_SCENARIOS?.split(',').map((s) => s.trim()) ?? [...SCENARIOS]).filter((s): s is Scenario =>
    (SCENARIOS as readonly string[]).includes(s),
  ),
};
if (settings.workers.some((w) => !Number.isInteger(w) || w <= 0)) throw new Error('BENCH_WORKERS must list positive whole numbers');

const TENANT = randomUUID();

/**
 * The rows of a scenario, in enqueue order. `one-key`: `rows` rows under the tenant's graph key
 * (`tenant:<id>`, as the directory's nodes and relations). `distinct-keys`: `rows` rows each under
 * a key of its own (`kb_file:<uuid>`, as file writes). `mixed`: both, alternating.
 */
function entries(scenario: Scenario, rows: number): OutboxEntry[] {
  const tenantRow = (n: number): OutboxEntry => ({
    tenantId: TENANT,
    projection: PROJECTION,
    resourceKey: `tenant:${TENANT}`,
    operation: 'upsert',
    payload: { node: { id: `person:${n}`, kind: 'person', name: `Person ${n}` } },
  });
  const fileRow = (n: number): OutboxEntry => ({
    tenantId: TENANT,
    projection: PROJECTION,
    resourceKey: `kb_file:${randomUUID()}`,
    operation: 'upsert',
    payload: { file: n },
  });
  const range = (make: (n: number) => OutboxEntry) => Array.from({ length: rows }, (_, n) => make(n));
  if (scenario === 'one-key') return range(tenantRow);
  if (scenario === 'distinct-keys') return range(fileRow);
  return Array.from({ length: rows }, (_, n) => [tenantRow(n), fileRow(n)]).flat();
}

const BENCH_TABLE = `CREATE TABLE IF NOT EXISTS bench_projection (
  outbox_id    bigint PRIMARY KEY,
  seq          bigserial,
  resource_key text NOT NULL,
  payload      jsonb NOT NULL
)`;

/** Writes one row per applied outbox row through the claim transaction; applying a row again overwrites it (idempotent). */
const tableProjection: Projection = {
  name: PROJECTION,
  async apply(rows: readonly OutboxRow[], context: { tx: Queryable }) {
    for (const row of rows) {
      await context.tx.query(
        `INSERT INTO bench_projection (outbox_id, resource_key, payload) VALUES ($1, $2, $3)
         ON CONFLICT (outbox_id) DO UPDATE SET payload = EXCLUDED.payload`,
        [row.id, row.resourceKey, JSON.stringify(row.payload)],
      );
    }
  },
  clear: () => Promise.resolve(),
};

/** A fresh store for one run: its second handle is a second worker's (its own pool on PostgreSQL). */
const openStore = (): Promise<BenchStore> => openBenchStore(databaseUrl, { poolMax: POOL_MAX, prefix: 'kgw-bench-projection' });

async function count(db: Queryable, sql: string): Promise<number> {
  const [row] = await db.query<{ n: string | number }>(sql);
  return Number(row?.n ?? 0);
}

/** How many outbox rows were applied more than once or before an earlier row of their resource (none, when the worker is right). */
async function orderProblems(db: Queryable): Promise<number> {
  return count(
    db,
    `SELECT count(*) AS n FROM (
       SELECT outbox_id, lag(outbox_id) OVER (PARTITION BY resource_key ORDER BY seq) AS previous FROM bench_projection
     ) t WHERE previous IS NOT NULL AND previous > outbox_id`,
  );
}

interface RunResult {
  scenario: Scenario;
  workers: number;
  rows: number;
  seconds: number;
  rowsPerSec: number;
  applied: number;
  outOfOrder: number;
  problem?: string;
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

async function run(scenario: Scenario, workerCount: number): Promise<RunResult> {
  const store = await openStore();
  try {
    await migrate(store.db);
    await store.db.tx((tx) => tx.query(BENCH_TABLE));
    const all = entries(scenario, settings.rows);
    for (let start = 0; start < all.length; start += ENQUEUE_CHUNK) {
      const chunk = all.slice(start, start + ENQUEUE_CHUNK);
      await store.db.tx((tx) => enqueue(tx, chunk));
    }
    const handles = Array.from({ length: workerCount }, (_, i) => (i === 0 ? store.db : store.second()));
    const errors: string[] = [];
    const workers = handles.map(
      (db) =>
        new OutboxWorker(db, [tableProjection], {
          batchSize: settings.batchSize,
          idleMs: IDLE_MS,
          onError: (error) => errors.push(error instanceof Error ? error.message : String(error)),
        }),
    );
    const started = performance.now();
    for (const worker of workers) worker.start();
    let problem: string | undefined;
    try {
      // Whether a row waits, not how many: counting the outbox every poll kept the server busy while it drained.
      while ((await count(store.db, 'SELECT (EXISTS (SELECT 1 FROM outbox))::int AS n')) > 0) {
        if (performance.now() - started > DRAIN_LIMIT_MS) {
          problem = `not drained within ${DRAIN_LIMIT_MS / 1000} s`;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    const seconds = (performance.now() - started) / 1000;
    const applied = await count(store.db, 'SELECT count(*) AS n FROM bench_projection');
    const outOfOrder = await orderProblems(store.db);
    if (problem === undefined && errors.length > 0) problem = `worker errors: ${errors[0]}`;
    if (problem === undefined && (applied !== all.length || outOfOrder > 0)) problem = `${applied} of ${all.length} applied, ${outOfOrder} out of order`;
    return {
      scenario,
      workers: workerCount,
      rows: all.length,
      seconds: round(seconds, 2),
      rowsPerSec: round(all.length / seconds),
      applied,
      outOfOrder,
      ...(problem === undefined ? {} : { problem }),
    };
  } finally {
    await store.dispose();
  }
}

async function main(): Promise<void> {
  const machine = machineInfo();
  const name = `projection-${settings.store}`;
  console.log(`bench ${name}: ${settings.rows} rows per kind, batch ${settings.batchSize}, workers ${settings.workers.join(' and ')}`);
  const results: RunResult[] = [];
  for (const scenario of settings.scenarios) {
    for (const workers of settings.workers) {
      const result = await run(scenario, workers);
      results.push(result);
      console.log(
        `${scenario.padEnd(13)}  ${String(workers)} worker${workers === 1 ? ' ' : 's'}  ${String(result.rows).padStart(6)} rows  ${String(result.seconds).padStart(8)} s  ${String(result.rowsPerSec).padStart(8)} rows/s` +
          (result.problem === undefined ? '' : `  FAILED: ${result.problem}`),
      );
    }
  }
  const file = path.join(HERE, 'results', `${name}.json`);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify({ name, date: new Date().toISOString(), machine, settings, results }, null, 2)}\n`);
  console.log(`wrote ${path.relative(process.cwd(), file)}`);
  if (results.some((r) => r.problem !== undefined)) process.exitCode = 1;
}

await main();
