/**
 * `npm run bench`: two suites over loopback, each scenario in a fresh server child, loaded with
 * autocannon from this process. `whoami`: tools/call of Atmina's whoami through the real
 * gateway against a plain Fastify route doing the same work and the naive per-request SDK
 * pattern. `files`: Atmina's write_file (1 KiB to a new path each time) and read_file through
 * the gateway. See bench/README.md.
 */
import type { ChildProcess } from 'node:child_process';
import { AuditLog } from '../src/kernel/audit/audit-log.ts';
import { AuditTrail } from '../src/kernel/audit/trail.ts';
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { DiskBlobStore } from '../connectors/blob/disk.ts';
import { applyOrgFile } from '../src/org-sections.ts';
import { createToken } from '../src/kernel/tokens/tokens.ts';
import type { Db } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { openPglite } from '../src/store/pglite.ts';
import { openPostgres } from '../src/store/postgres.ts';
import type { WrittenCheck } from './files.ts';
import { FILES_CALLER, FILES_ORG_YAML, READ_BODY, SEED_FILES, WriteLoad, checkRead, checkWritten } from './files.ts';
import type { ChildSpec, FromChild, Scenario, StoreSpec, Suite, ToChild, Usage } from './scenarios.ts';
import { BENCH_KB_WRITES_PER_MINUTE, CALLER, ORG_YAML, PATHS, SCENARIOS, SUITES, SUITE_NAMES, checkBody, requestBody, requestHeaders } from './scenarios.ts';
import { adminQuery, machineInfo } from './machine.ts';

const GOAL_PCT = 25;
/**
 * The MCP call against the bare `GET /healthz` of the same gateway, per store: what a whole tool
 * call (token, JSON-RPC, validation, the read and its audit) costs above the HTTP floor.
 */
const HEALTHZ_GOAL_PCT = { postgres: 5, pglite: 2.5 } as const;
const HERE = path.dirname(new URL(import.meta.url).pathname);

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number, got "${raw}"`);
  return value;
}

const databaseUrl = process.env.BENCH_DATABASE_URL || undefined;
const settings = {
  store: databaseUrl === undefined ? ('pglite' as const) : ('postgres' as const),
  durationSec: positive('BENCH_DURATION', 10),
  warmupSec: positive('BENCH_WARMUP', 3),
  connections: positive('BENCH_CONNECTIONS', 10),
  pipelining: 1,
  scenarios: (process.env.BENCH_SCENARIOS?.split(',').map((s) => s.trim()) ?? [...SCENARIOS]).filter((s): s is Scenario =>
    (SCENARIOS as readonly string[]).includes(s),
  ),
  cpuProfile: process.env.BENCH_CPU_PROF === '1',
};
const suites = (process.env.BENCH_SUITE?.split(',').map((s) => s.trim()) ?? [...SUITE_NAMES]).filter((s): s is Suite =>
  (SUITE_NAMES as readonly string[]).includes(s),
);
/** Each suite runs the selected scenarios of its own, and is left out when none is selected. */
const plan = suites
  .map((suite) => ({ suite, scenarios: SUITES[suite].filter((scenario) => settings.scenarios.includes(scenario)) }))
  .filter((entry) => entry.scenarios.length > 0);

/** The result file's name: BENCH_NAME for a single suite, BENCH_NAME-<suite> for several, <suite>-<store> by default. */
function resultName(suite: Suite): string {
  const given = process.env.BENCH_NAME || undefined;
  if (given === undefined) return `${suite}-${settings.store}`;
  return plan.length === 1 ? given : `${given}-${suite}`;
}

interface Store {
  readonly spec: StoreSpec;
  /** KGW_DATA_DIR of the gateway children: the disk blob store seeded files live in. */
  readonly dataDir: string;
  readonly token: string;
  /** Opens the store in this process, while no child has it open (PGlite has one owner at a time). */
  open(): Promise<Db>;
  dispose(): Promise<void>;
}

/**
 * Migrates and seeds the store as `kgw migrate`, `kgw apply` and `kgw token create` would,
 * audited on the CLI surface as they are. The files suite adds its KB (with the file to read,
 * whose bytes go to the blob store in `dataDir`) and a token of an Editor of that KB.
 */
async function seed(db: Db, suite: Suite, dataDir: string): Promise<string> {
  await migrate(db);
  const log = new AuditLog(db);
  if (suite === 'whoami') {
    await applyOrgFile(db, { source: ORG_YAML }, AuditTrail.forSurface(log, 'cli'));
    return (await createToken(db, { ...CALLER, ttlMs: undefined, label: 'bench' }, AuditTrail.forSurface(log, 'cli'))).token;
  }
  const blob = new DiskBlobStore({ dataDir, publicUrl: 'http://127.0.0.1' });
  await applyOrgFile(db, { source: FILES_ORG_YAML, files: SEED_FILES, blob }, AuditTrail.forSurface(log, 'cli'));
  return (await createToken(db, { ...FILES_CALLER, ttlMs: undefined, label: 'bench' }, AuditTrail.forSurface(log, 'cli'))).token;
}

/** A fresh, seeded store the children open in turn: a PGlite folder or a new PostgreSQL database. */
async function prepareStore(suite: Suite): Promise<Store> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kgw-bench-'));
  const dataDir = path.join(dir, 'gateway');
  const removeDir = () => rm(dir, { recursive: true, force: true });
  if (databaseUrl === undefined) {
    const pgData = path.join(dir, 'pgdata');
    const db = await openPglite(pgData);
    try {
      return {
        spec: { kind: 'pglite', dataDir: pgData },
        dataDir,
        token: await seed(db, suite, dataDir),
        open: () => openPglite(pgData),
        dispose: removeDir,
      };
    } finally {
      await db.close();
    }
  }
  const database = `kgw_bench_${randomBytes(6).toString('hex')}`;
  await adminQuery(databaseUrl, `CREATE DATABASE ${database}`);
  const url = new URL(databaseUrl);
  url.pathname = `/${database}`;
  const db = openPostgres(url.toString(), { max: 2 });
  try {
    return {
      spec: { kind: 'postgres', url: url.toString() },
      dataDir,
      token: await seed(db, suite, dataDir),
      open: () => Promise.resolve(openPostgres(url.toString(), { max: 1 })),
      async dispose() {
        await adminQuery(databaseUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        await removeDir();
      },
    };
  } finally {
    await db.close();
  }
}

/** The next message of `type` from the child; rejects when it fails or exits first. */
function receive<T extends FromChild['type']>(child: ChildProcess, type: T): Promise<Extract<FromChild, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: FromChild) => {
      if (message.type === 'failed') finish(() => reject(new Error(`server child failed: ${message.message}`)));
      else if (message.type === type) finish(() => resolve(message as Extract<FromChild, { type: T }>));
    };
    const onExit = (code: number | null) => finish(() => reject(new Error(`server child exited (${code}) before "${type}"`)));
    const finish = (settle: () => void) => {
      child.off('message', onMessage);
      child.off('exit', onExit);
      settle();
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

async function askUsage(child: ChildProcess): Promise<Usage> {
  const answer = receive(child, 'usage');
  child.send({ type: 'usage' } satisfies ToChild);
  return (await answer).usage;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.connected) child.send({ type: 'stop' } satisfies ToChild);
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

const MiB = (kib: number) => Math.round((kib / 1024) * 10) / 10;
const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

interface ScenarioResult {
  scenario: Scenario;
  path: string;
  verified: boolean;
  problem?: string;
  flagged: boolean;
  requestsPerSec?: number;
  requests?: number;
  latencyP50Ms?: number;
  latencyP99Ms?: number;
  non2xx?: number;
  errors?: number;
  timeouts?: number;
  mismatches?: number;
  rssAtReadyMiB?: number;
  peakRssMiB?: number;
  heapTotalMiB?: number;
  /** The child's RSS right after the run (peakRssMiB also counts transient peaks). */
  rssAfterMiB?: number;
  serverCpuMicrosPerRequest?: number;
  /** write_file: the first answer that failed its check, when one did. */
  firstMismatch?: string;
  /** write_file: what the store holds afterwards, against the answers. */
  written?: WrittenCheck;
}

type LoadOptions = Pick<autocannon.Options, 'body' | 'expectBody' | 'requests' | 'verifyBody'>;

/** What a scenario sends and how its answers are checked. */
interface Load {
  readonly method: 'GET' | 'POST';
  /** The body of the one request verified before the load (none for a GET). */
  first(): string | undefined;
  /** Why that request's answer is wrong, or undefined when it is right. */
  check(body: string): string | undefined;
  /** autocannon's request options, given the verified answer. */
  options(verified: string): LoadOptions;
}

/** A load of one body whose every answer must equal the verified one byte for byte. */
function sameBody(body: string, check: (answer: string) => string | undefined): Load {
  return { method: 'POST', first: () => body, check, options: (verified) => ({ body, expectBody: verified }) };
}

/** `GET /healthz`: its answer must be the gateway's `{"status":"ok"}` every time. */
const HEALTHZ_LOAD: Load = {
  method: 'GET',
  first: () => undefined,
  check: (body) => (body === '{"status":"ok"}' ? undefined : `not the health answer: ${body.slice(0, 200)}`),
  options: (verified) => ({ expectBody: verified }),
};

/** A new path for every write; each answer is checked against the write that named its path. */
function writeLoad(writes: WriteLoad): Load {
  return {
    method: 'POST',
    first: () => writes.body(),
    check: (body) => writes.check(body),
    options: () => ({
      // autocannon builds each request just before sending it, so every request gets a new body.
      requests: [{ setupRequest: (request) => ({ ...request, body: writes.body() }) }],
      verifyBody: (body) => writes.check(typeof body === 'string' ? body : String(body)) === undefined,
    }),
  };
}

function loadOf(scenario: Scenario, writes: WriteLoad): Load {
  if (scenario === 'write_file') return writeLoad(writes);
  if (scenario === 'read_file') return sameBody(READ_BODY, checkRead);
  if (scenario === 'healthz') return HEALTHZ_LOAD;
  return sameBody(requestBody(scenario), (body) => checkBody(scenario, body));
}

async function runScenario(name: string, scenario: Scenario, store: Store, load: Load): Promise<ScenarioResult> {
  const spec: ChildSpec = { scenario, store: store.spec, dataDir: store.dataDir };
  const profileDir = path.join(HERE, 'results', 'profiles');
  if (settings.cpuProfile) await mkdir(profileDir, { recursive: true });
  const child = fork(path.join(HERE, 'server.ts'), [JSON.stringify(spec)], {
    execPath: process.execPath,
    execArgv: [
      ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
      ...(settings.cpuProfile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}-${scenario}.cpuprofile`] : []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const base: ScenarioResult = { scenario, path: PATHS[scenario], verified: false, flagged: true };
  try {
    const ready = await receive(child, 'ready');
    const url = `http://127.0.0.1:${ready.port}${PATHS[scenario]}`;
    const headers = requestHeaders(store.token, scenario);
    const response = await fetch(url, { method: load.method, headers, body: load.first() });
    const body = await response.text();
    const problem = response.status !== 200 ? `status ${response.status}: ${body.slice(0, 200)}` : load.check(body);
    if (problem !== undefined) return { ...base, problem };
    const run = {
      url,
      method: load.method,
      headers,
      ...load.options(body),
      connections: settings.connections,
      pipelining: settings.pipelining,
    };
    await autocannon({ ...run, duration: settings.warmupSec });
    const before = await askUsage(child);
    // Every answer is checked (byte-identical to the verified one, or against its own write); anything else counts as a mismatch.
    const result = await autocannon({ ...run, duration: settings.durationSec });
    const after = await askUsage(child);
    const requests = result.requests.total;
    return {
      ...base,
      verified: true,
      flagged: result.non2xx + result.errors + result.timeouts + result.mismatches > 0,
      requestsPerSec: round(result.requests.mean, 1),
      requests,
      latencyP50Ms: result.latency.p50,
      latencyP99Ms: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      mismatches: result.mismatches,
      rssAtReadyMiB: MiB(ready.usage.maxRssKiB),
      peakRssMiB: MiB(after.maxRssKiB),
      heapTotalMiB: MiB(after.heapTotalKiB),
      rssAfterMiB: MiB(after.rssKiB),
      serverCpuMicrosPerRequest: requests > 0 ? Math.round((after.cpuMicros - before.cpuMicros) / requests) : 0,
    };
  } catch (error) {
    return { ...base, problem: error instanceof Error ? error.message : String(error) };
  } finally {
    await stopChild(child);
  }
}

/** Adds to a write_file result what the store holds, read once its child has stopped. */
async function withWrittenCheck(result: ScenarioResult, store: Store, writes: WriteLoad): Promise<ScenarioResult> {
  if (!result.verified) return result;
  const db = await store.open();
  try {
    const written = await checkWritten(db, writes);
    const firstMismatch = result.flagged ? writes.firstProblem : undefined;
    return { ...result, flagged: result.flagged || !written.linear, written, ...(firstMismatch === undefined ? {} : { firstMismatch }) };
  } finally {
    await db.close();
  }
}

function ratio(results: readonly ScenarioResult[], scenario: Scenario, base: Scenario = 'plain'): number | null {
  const against = results.find((r) => r.scenario === base)?.requestsPerSec;
  const other = results.find((r) => r.scenario === scenario)?.requestsPerSec;
  return against && other !== undefined ? round((other / against) * 100, 2) : null;
}

function printTable(results: readonly ScenarioResult[]): void {
  const rows = [['scenario', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'peak RSS MiB', 'CPU µs/req', '']];
  for (const r of results) {
    const cell = (value: number | undefined) => (value === undefined ? '-' : String(value));
    const errors = r.errors === undefined ? undefined : r.errors + (r.timeouts ?? 0) + (r.mismatches ?? 0);
    const flag = r.problem !== undefined ? `FAILED: ${r.problem}` : r.flagged ? 'FLAGGED: errors during the run' : '';
    rows.push([
      r.scenario,
      cell(r.requestsPerSec),
      cell(r.latencyP50Ms),
      cell(r.latencyP99Ms),
      cell(r.non2xx),
      cell(errors),
      cell(r.peakRssMiB),
      cell(r.serverCpuMicrosPerRequest),
      flag,
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  for (const row of rows)
    console.log(
      row
        .map((cell, i) => (i === 0 || i === row.length - 1 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
        .join('  ')
        .trimEnd(),
    );
}

function printWritten(written: WrittenCheck): void {
  console.log(
    `write_file: ${written.acknowledged} writes answered as expected; the KB holds ${written.files} files under writes/ with ${written.versions} versions` +
      ` (${written.writtenUnanswered} written while the load stopped, before their answer was read), ` +
      (written.linear
        ? 'one version each: the history is linear'
        : `NOT LINEAR: ${written.missing} answered writes missing, ${written.unexpected} unexpected files`),
  );
}

async function runSuite(suite: Suite, scenarios: readonly Scenario[], machine: Record<string, unknown>): Promise<ScenarioResult[]> {
  const name = resultName(suite);
  console.log(
    `bench ${name}: ${settings.store}, ${settings.connections} connections, ${settings.warmupSec} s warm-up + ${settings.durationSec} s per scenario`,
  );
  const store = await prepareStore(suite);
  const writes = new WriteLoad();
  const results: ScenarioResult[] = [];
  try {
    for (const scenario of scenarios) {
      console.log(`- ${scenario} …`);
      const result = await runScenario(name, scenario, store, loadOf(scenario, writes));
      results.push(scenario === 'write_file' ? await withWrittenCheck(result, store, writes) : result);
    }
  } finally {
    await store.dispose();
  }
  const suiteSettings = { ...settings, suite, scenarios, ...(suite === 'files' ? { kbWritesPerMinute: BENCH_KB_WRITES_PER_MINUTE } : {}) };
  const report: Record<string, unknown> = { name, date: new Date().toISOString(), machine, settings: suiteSettings, results };
  const ratios = {
    mcpVsPlainPct: ratio(results, 'mcp'),
    mcp2026VsPlainPct: ratio(results, 'mcp-2026'),
    naiveSdkVsPlainPct: ratio(results, 'naive-sdk'),
    mcpVsHealthzPct: ratio(results, 'mcp', 'healthz'),
  };
  const healthzGoal = HEALTHZ_GOAL_PCT[settings.store];
  if (suite === 'whoami') {
    report.ratios = ratios;
    report.goal = { mcpVsPlainMinPct: GOAL_PCT, met: ratios.mcpVsPlainPct === null ? null : ratios.mcpVsPlainPct >= GOAL_PCT };
    report.healthzGoal = { mcpVsHealthzMinPct: healthzGoal, met: ratios.mcpVsHealthzPct === null ? null : ratios.mcpVsHealthzPct >= healthzGoal };
  }
  const file = path.join(HERE, 'results', `${name}.json`);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log();
  printTable(results);
  if (suite === 'whoami')
    console.log(
      `\nmcp/plain ${ratios.mcpVsPlainPct ?? '-'} % (goal ≥ ${GOAL_PCT} %), mcp-2026/plain ${ratios.mcp2026VsPlainPct ?? '-'} %, naive-sdk/plain ${ratios.naiveSdkVsPlainPct ?? '-'} %` +
        `, mcp/healthz ${ratios.mcpVsHealthzPct ?? '-'} % (goal ≥ ${healthzGoal} %)`,
    );
  for (const result of results) {
    if (result.firstMismatch !== undefined) console.log(`${result.scenario}: first refused answer: ${result.firstMismatch}`);
    if (result.written !== undefined) printWritten(result.written);
  }
  console.log(`wrote ${path.relative(process.cwd(), file)}\n`);
  return results;
}

async function main(): Promise<void> {
  const machine = machineInfo();
  if (plan.length === 0) throw new Error('BENCH_SUITE and BENCH_SCENARIOS leave no scenario to run');
  const results: ScenarioResult[] = [];
  for (const { suite, scenarios } of plan) results.push(...(await runSuite(suite, scenarios, machine)));
  console.log(`machine: ${machine.cpu}, ${machine.cpus} CPUs, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.platform}`);
  if (results.some((r) => !r.verified)) process.exitCode = 1;
}

await main();
