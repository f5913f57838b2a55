/**
 * `npm run bench:start`: how long a gateway takes to start on a store that already holds data,
 * started as `npm start` starts it (its Node flags, `bin/kgw.js serve`, and so the compile cache
 * the launcher keeps). A fresh store (PGlite in a temporary folder, or a new database on
 * BENCH_DATABASE_URL) gets BENCH_START_ITEMS routed Knowledge items (default 1,000) and a token;
 * then the gateway starts once unmeasured (it may fill the compile cache) and BENCH_START_RUNS
 * times measured (default 5), each timed from the spawn to its first /healthz answer and to its
 * first get_current_context answer, checked, with its RSS then. BENCH_START_COMPILE_CACHE=off
 * starts it with the cache turned off, to see what the cache buys.
 */
import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { issueToken, seedOrg } from '../test/support/gateway.ts';
import { postToolCall } from '../test/support/mcp-client.ts';
import { check, orgFile, positiveList } from './context-org.ts';
import { ROOT, freePort, stop, storeGatewayEnv } from './kgw-process.ts';
import { startCommand } from '../test/support/start-command.ts';
import { machineInfo } from './machine.ts';
import { openBenchStore, reopenBenchStore } from './store.ts';

const [items = 1000] = positiveList('BENCH_START_ITEMS', [1000]);
const [runs = 5] = positiveList('BENCH_START_RUNS', [5], 100);
const cache = process.env.BENCH_START_COMPILE_CACHE !== 'off';
const databaseUrl = process.env.BENCH_DATABASE_URL || undefined;
/** How long one start may take before the bench gives up on it. */
const START_TIMEOUT_MS = 60_000;

interface Start {
  readonly healthzMs: number;
  readonly firstContextMs: number;
  readonly rssMiB: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One start, timed; the gateway is stopped before it returns. */
async function start(args: readonly string[], env: NodeJS.ProcessEnv, port: number, token: string): Promise<Start> {
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...env, KGW_PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    let healthzMs: number | undefined;
    while (healthzMs === undefined) {
      if (child.exitCode !== null) throw new Error(`kgw serve exited ${child.exitCode}`);
      if (performance.now() - started > START_TIMEOUT_MS) throw new Error(`kgw serve did not answer within ${START_TIMEOUT_MS} ms`);
      try {
        if ((await fetch(`${url}/healthz`)).ok) healthzMs = performance.now() - started;
      } catch {
        await sleep(5); // Not listening yet.
      }
    }
    const response = await postToolCall(`${url}/alignbase/mcp`, token, 'get_current_context');
    const problem = check('get_current_context', items, response.status, await response.text());
    if (problem !== undefined) throw new Error(`get_current_context: ${problem}`);
    const firstContextMs = performance.now() - started;
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
    const rssKiB = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN);
    return { healthzMs, firstContextMs, rssMiB: Math.round(rssKiB / 102.4) / 10 };
  } finally {
    await stop(child);
  }
}

const round1 = (n: number) => Math.round(n);
const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

const bench = await openBenchStore(databaseUrl, { poolMax: 2, prefix: 'kgw-bench-start' });
const { migrate } = await import('../src/store/migrate.ts');
await migrate(bench.db);
await seedOrg(bench.db, orgFile(items));
const token = await issueToken(bench.db, 'acme', 'bot', 'context.read');
await bench.close();
const { dataDir, env } = await storeGatewayEnv(bench, 'kgw-bench-start-data');
if (!cache) env.NODE_DISABLE_COMPILE_CACHE = '1';
const command = await startCommand(env);
Object.assign(env, command.env);
const args = [...command.flags, ...command.args];
const port = await freePort();
console.log(`bench start: ${bench.kind}, ${items} routed items, ${runs} starts after one unmeasured, compile cache ${cache ? 'on' : 'off'}`);
const starts: Start[] = [];
try {
  await start(args, env, port, token);
  for (let i = 0; i < runs; i++) {
    const one = await start(args, env, port, token);
    starts.push(one);
    console.log(`start ${i + 1}: /healthz ${round1(one.healthzMs)} ms, first get_current_context ${round1(one.firstContextMs)} ms, RSS ${one.rssMiB} MiB`);
  }
} finally {
  await (await reopenBenchStore(bench.location, { poolMax: 1 })).dispose();
  if (bench.kind === 'postgres') await rm(dataDir, { recursive: true, force: true });
}
const summary = {
  healthzMs: { median: round1(median(starts.map((s) => s.healthzMs))), min: round1(Math.min(...starts.map((s) => s.healthzMs))) },
  firstContextMs: { median: round1(median(starts.map((s) => s.firstContextMs))), min: round1(Math.min(...starts.map((s) => s.firstContextMs))) },
  rssMiB: { median: median(starts.map((s) => s.rssMiB)) },
};
console.log(`median: /healthz ${summary.healthzMs.median} ms, first get_current_context ${summary.firstContextMs.median} ms, RSS ${summary.rssMiB.median} MiB`);
const machine = machineInfo();
const name = process.env.BENCH_NAME || `start-${bench.kind}${cache ? '' : '-no-compile-cache'}`;
const file = path.join(ROOT, 'bench', 'results', `${name}.json`);
const settings = {
  store: bench.kind,
  items,
  runs,
  compileCache: cache,
  command: `${Object.entries(command.env)
    .map(([name, value]) => `${name}=${value} `)
    .join('')}node ${args.join(' ')}`,
};
await writeFile(file, `${JSON.stringify({ name, date: new Date().toISOString(), machine, settings, summary, starts }, null, 2)}\n`);
console.log(`wrote ${path.relative(process.cwd(), file)}`);
console.log(`machine: ${machine.cpu}, ${machine.cpus} CPUs, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.platform}`);
