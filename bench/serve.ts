/**
 * `npm run bench:serve`: a gateway's memory and CPU under load, run as `npm start` runs it (its
 * environment, its Node flags and `bin/kgw.js serve`, read from package.json), with settings to
 * compare. A fresh store (PGlite in a temporary folder, or a new database on BENCH_DATABASE_URL)
 * gets the context bench's org file of BENCH_SERVE_ITEMS routed Knowledge items (default 1,000)
 * and two tokens. Each set of BENCH_SERVE_FLAGS (`|`-separated; each set's words are Node flags
 * after `npm start`'s own, or `NAME=value` for the gateway's environment; an empty set is
 * `npm start` as it is; default `|KGW_MEMORY=lean`) serves each load of BENCH_SERVE_LOADS
 * (default `whoami,get_current_context`) from a fresh gateway process: its RSS once it answers,
 * BENCH_SERVE_WARMUP seconds of load (default 5), then BENCH_SERVE_SECONDS (default 20) measured
 * at BENCH_SERVE_CONNECTIONS (default 10), with the process's CPU read from /proc before and
 * after and its RSS and peak RSS at the end. The sets alternate, BENCH_SERVE_RUNS rounds
 * (default 2), so a drift of the machine's speed falls on all. Every load's first answer is
 * checked, and the measured load must answer every call with 200. Linux only (/proc).
 */
import { execFileSync } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import autocannon from 'autocannon';
import { issueToken, seedOrg } from '../test/support/gateway.ts';
import { startCommand } from '../test/support/start-command.ts';
import { check, orgFile, positiveList } from './context-org.ts';
import { ROOT, serve, stop, storeGatewayEnv } from './kgw-process.ts';
import { machineInfo } from './machine.ts';
import { field, requestHeaders, toolCall } from './scenarios.ts';
import { openBenchStore, reopenBenchStore } from './store.ts';

const LOADS = ['whoami', 'get_current_context'] as const;
type LoadName = (typeof LOADS)[number];

const [items = 1000] = positiveList('BENCH_SERVE_ITEMS', [1000]);
const [runs = 2] = positiveList('BENCH_SERVE_RUNS', [2], 20);
const [seconds = 20] = positiveList('BENCH_SERVE_SECONDS', [20], 600);
const [warmup = 5] = positiveList('BENCH_SERVE_WARMUP', [5], 600);
const [connections = 10] = positiveList('BENCH_SERVE_CONNECTIONS', [10], 1000);
const flagSets = (process.env.BENCH_SERVE_FLAGS ?? '|KGW_MEMORY=lean').split('|').map((set) => set.split(' ').filter(Boolean));
/** A word of a flag set that sets a variable of the gateway's environment rather than a Node flag. */
const ASSIGNMENT = /^([A-Z_][A-Z0-9_]*)=(.*)$/;
const loads = (process.env.BENCH_SERVE_LOADS || LOADS.join(',')).split(',').map((name) => {
  const load = LOADS.find((known) => known === name.trim());
  if (load === undefined) throw new Error(`BENCH_SERVE_LOADS names ${LOADS.join(' and ')}, got "${name}"`);
  return load;
});
const databaseUrl = process.env.BENCH_DATABASE_URL || undefined;
/** The kernel's clock ticks a second, in which /proc gives a process's CPU time. */
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

interface Measured {
  readonly flags: string;
  /** The gateway's command line as the kernel saw it (/proc/<pid>/cmdline), so a result shows the flags it ran with. */
  readonly commandLine: string;
  readonly load: LoadName;
  readonly round: number;
  readonly callsPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly cpuUsPerCall: number;
  readonly rssAtStartMiB: number;
  readonly rssAfterMiB: number;
  readonly peakRssMiB: number;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** A process's RSS and peak RSS in MiB and its CPU time (user and system) in µs, from /proc. */
async function usage(pid: number): Promise<{ rssMiB: number; peakMiB: number; cpuUs: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? Number.NaN);
  // The fields after the command's closing parenthesis; utime and stime are the 14th and 15th of the line.
  const line = await readFile(`/proc/${pid}/stat`, 'utf8');
  const stat = line.slice(line.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(stat[11]) + Number(stat[12]);
  return { rssMiB: round1(kib('VmRSS') / 1024), peakMiB: round1(kib('VmHWM') / 1024), cpuUs: (ticks / TICKS) * 1e6 };
}

/** Why a whoami answer is not the caller's (alice at acme), or undefined. */
function checkWhoami(status: number, body: string): string | undefined {
  if (status !== 200) return `status ${status}: ${body.slice(0, 200)}`;
  const profile = field(field(JSON.parse(body), 'result'), 'structuredContent');
  if (field(field(profile, 'tenant'), 'slug') !== 'acme' || field(field(profile, 'principal'), 'email') !== 'alice@acme.test')
    return `not alice at acme: ${body.slice(0, 200)}`;
  return undefined;
}

const bench = await openBenchStore(databaseUrl, { poolMax: 2, prefix: 'kgw-bench-serve' });
const { migrate } = await import('../src/store/migrate.ts');
await migrate(bench.db);
await seedOrg(bench.db, orgFile(items));
const tokens: Record<LoadName, string> = {
  whoami: await issueToken(bench.db, 'acme', 'alice@acme.test', 'context.read'),
  get_current_context: await issueToken(bench.db, 'acme', 'bot', 'context.read'),
};
await bench.close();
const { dataDir, env } = await storeGatewayEnv(bench, 'kgw-bench-serve-data');
// What `npm start` runs, for the record (kgw-process.ts's `serve` starts each gateway so).
const command = await startCommand(env);

/**
 * One load on a fresh gateway started with `npm start`'s flags and `extra` (Node flags, and
 * `NAME=value` words for its environment); the gateway is stopped before it returns.
 */
async function measure(extra: readonly string[], load: LoadName, round: number): Promise<Measured> {
  const assigned: Record<string, string> = {};
  const flags: string[] = [];
  for (const word of extra) {
    const match = ASSIGNMENT.exec(word);
    if (match === null) flags.push(word);
    else assigned[match[1]!] = match[2]!;
  }
  const { url, child } = await serve({ ...env, ...assigned }, `kgw serve ${extra.join(' ')}`, flags);
  try {
    const pid = child.pid ?? 0;
    const atStart = await usage(pid);
    // After Node and relative to the project: a gateway that restarts itself (KGW_MEMORY=lean) names its script by its full path.
    const commandLine = (await readFile(`/proc/${pid}/cmdline`, 'utf8'))
      .split('\0')
      .filter(Boolean)
      .slice(1)
      .map((word) => (word.startsWith(ROOT) ? word.slice(ROOT.length) : word))
      .join(' ');
    const run = {
      url: `${url}/${load === 'whoami' ? 'atmina' : 'alignbase'}/mcp`,
      method: 'POST' as const,
      headers: requestHeaders(tokens[load]),
      body: toolCall(load, {}),
      connections,
    };
    const first = await fetch(run.url, { method: 'POST', headers: run.headers, body: run.body });
    const text = await first.text();
    const problem = load === 'whoami' ? checkWhoami(first.status, text) : check(load, items, first.status, text);
    if (problem !== undefined) throw new Error(`${load}: ${problem}`);
    await autocannon({ ...run, duration: warmup });
    const before = await usage(pid);
    const result = await autocannon({ ...run, duration: seconds });
    const after = await usage(pid);
    const failed = result.non2xx + result.errors + result.timeouts;
    if (failed > 0) throw new Error(`${load} with ${extra.join(' ') || 'no extra flags'}: ${failed} calls failed`);
    return {
      flags: extra.join(' '),
      commandLine,
      load,
      round,
      callsPerSec: round1(result.requests.mean),
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      cpuUsPerCall: Math.round((after.cpuUs - before.cpuUs) / result.requests.total),
      rssAtStartMiB: atStart.rssMiB,
      rssAfterMiB: after.rssMiB,
      peakRssMiB: after.peakMiB,
    };
  } finally {
    await stop(child);
  }
}

const describe = (flags: readonly string[]) => flags.join(' ') || '(npm start only)';
console.log(
  `bench serve: ${bench.kind}, ${items} routed items, npm start's flags ${command.flags.join(' ')}, ` +
    `loads ${loads.join(', ')}, ${connections} connections, ${warmup} s warm-up and ${seconds} s measured, ${runs} rounds`,
);
const measured: Measured[] = [];
try {
  for (let round = 1; round <= runs; round++) {
    // Alternating: the flag sets' order turns every round, so neither always goes first.
    const order = round % 2 === 1 ? flagSets : [...flagSets].reverse();
    for (const flags of order)
      for (const load of loads) {
        const one = await measure(flags, load, round);
        measured.push(one);
        console.log(
          `round ${round}, ${describe(flags)}, ${load}: ${one.callsPerSec} calls/s, p50 ${one.p50Ms} ms, p99 ${one.p99Ms} ms, ` +
            `CPU ${one.cpuUsPerCall} µs a call, RSS ${one.rssAtStartMiB} MiB at start, ${one.rssAfterMiB} after (peak ${one.peakRssMiB})`,
        );
      }
  }
} finally {
  await (await reopenBenchStore(bench.location, { poolMax: 1 })).dispose();
  if (bench.kind === 'postgres') await rm(dataDir, { recursive: true, force: true });
}

/** The lowest and highest of a figure over the rounds, as the tables print it. */
const span = (values: readonly number[]) => {
  const low = Math.min(...values);
  const high = Math.max(...values);
  return low === high ? `${low}` : `${low}–${high}`;
};
const table = [
  '| beyond `npm start` | load | calls/s | p50 / p99 ms | CPU µs a call | RSS at start | RSS after load | peak RSS |',
  '|---|---|---|---|---|---|---|---|',
];
for (const flags of flagSets)
  for (const load of loads) {
    const rows = measured.filter((m) => m.flags === flags.join(' ') && m.load === load);
    const pick = (key: keyof Measured) => span(rows.map((r) => Number(r[key])));
    table.push(
      `| ${flags.length === 0 ? 'none' : `\`${flags.join(' ')}\``} | ${load} | ${pick('callsPerSec')} | ${pick('p50Ms')} / ${pick('p99Ms')} | ` +
        `${pick('cpuUsPerCall')} | ${pick('rssAtStartMiB')} MiB | ${pick('rssAfterMiB')} MiB | ${pick('peakRssMiB')} MiB |`,
    );
  }
console.log(table.join('\n'));
const machine = machineInfo();
const name = process.env.BENCH_NAME || `serve-${bench.kind}`;
const settings = {
  store: bench.kind,
  items,
  runs,
  seconds,
  warmup,
  connections,
  loads,
  flagSets: flagSets.map((flags) => flags.join(' ')),
  command: `${Object.entries(command.env)
    .map(([key, value]) => `${key}=${value} `)
    .join('')}node ${[...command.flags, ...command.args].join(' ')}`,
};
const file = path.join(process.env.BENCH_RESULTS_DIR || path.join(ROOT, 'bench', 'results'), `${name}.json`);
await writeFile(file, `${JSON.stringify({ name, date: new Date().toISOString(), machine, settings, measured }, null, 2)}\n`);
const header =
  `${new Date().toISOString()}, ${machine.cpu}, ${machine.cpus} CPUs, Node ${machine.node}. ${bench.kind}, ${items} routed items, ` +
  `${connections} connections, ${warmup} s warm-up and ${seconds} s measured, ${runs} rounds; each figure's range over the rounds. ` +
  `\`npm start\`: ${settings.command}`;
await writeFile(file.replace(/\.json$/, '.md'), `# ${name}\n\n${header}\n\n${table.join('\n')}\n`);
console.log(`wrote ${path.relative(process.cwd(), file)} and its .md`);
console.log(`machine: ${machine.cpu}, ${machine.cpus} CPUs, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.platform}`);
