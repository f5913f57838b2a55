/**
 * `npm run bench:context-ab -- <commit>`: the calls of bench/context.ts, this tree against
 * another commit, side by side. A shared machine's speed drifts by a third and more within
 * minutes, so two runs one after the other compare the machine as much as the code; here both
 * gateways serve the same N routed Knowledge items at once (each its own process and store, made
 * by bench/context-serve.ts) and one client alternates its calls between them (A B, then B A),
 * so each pair of calls meets the same machine. The other commit is checked out once into
 * `.cache/bench-ab/<commit>` (a git worktree sharing this tree's node_modules). Medians and p90
 * per tool and side, their ratio, and the machine go to bench/results/<BENCH_NAME>.json.
 * See bench/README.md.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { access, copyFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { postToolCall } from '../test/support/mcp-client.ts';
import type { Tool } from './context-org.ts';
import { check, positiveList, toolsFromEnvironment } from './context-org.ts';
import { ROOT } from './kgw-process.ts';
import { machineInfo } from './machine.ts';

const run = promisify(execFile);

const base = process.argv[2];
if (base === undefined || base.startsWith('-')) throw new Error('usage: npm run bench:context-ab -- <commit> (the code to compare this tree with)');
const [items = 1000] = positiveList('BENCH_AB_ITEMS', [1000]);
const [runs = 300] = positiveList('BENCH_CONTEXT_RUNS', [300], 100_000);
const [warmup = 30] = positiveList('BENCH_CONTEXT_WARMUP', [30], 10_000);
const tools = toolsFromEnvironment(['list_knowledge', 'get_current_context']);
const store = process.env.BENCH_DATABASE_URL ? 'postgres' : 'pglite';

/** The other commit's tree, checked out once and reused. */
async function baseTree(): Promise<{ dir: string; commit: string }> {
  const { stdout } = await run('git', ['rev-parse', '--verify', `${base}^{commit}`], { cwd: ROOT });
  const commit = stdout.trim();
  const dir = path.join(ROOT, '.cache', 'bench-ab', commit);
  try {
    await access(path.join(dir, 'package.json'));
  } catch {
    await mkdir(path.dirname(dir), { recursive: true });
    await run('git', ['worktree', 'add', '--force', '--detach', dir, commit], { cwd: ROOT });
    await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  }
  // Both sides serve the same data with the same script: this tree's.
  for (const file of ['context-serve.ts', 'context-org.ts']) await copyFile(path.join(ROOT, 'bench', file), path.join(dir, 'bench', file));
  return { dir, commit };
}

interface Side {
  readonly label: string;
  readonly child: ChildProcess;
  readonly url: string;
  readonly token: string;
}

/** Starts bench/context-serve.ts in `dir` with the flags `npm start` uses; resolves once it answers. */
async function serve(label: string, dir: string): Promise<Side> {
  const child = spawn(process.execPath, ['--max-semi-space-size=8', 'bench/context-serve.ts'], {
    cwd: dir,
    env: { ...process.env, BENCH_AB_ITEMS: String(items), NODE_COMPILE_CACHE: path.join(ROOT, '.cache', 'node-compile') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`${label}: the server stopped (exit ${String(code)}) before it answered`);
  });
  const ready = (async () => {
    for await (const line of lines) {
      if (line.startsWith('{')) return JSON.parse(line) as { url: string; token: string };
    }
    throw new Error(`${label}: the server printed no address`);
  })();
  const { url, token } = await Promise.race([ready, exited]);
  return { label, child, url, token };
}

async function stop(side: Side): Promise<void> {
  if (side.child.exitCode !== null) return;
  const exited = once(side.child, 'exit');
  side.child.kill('SIGTERM');
  await exited;
}

/** One call's time in ms, its answer checked. */
async function call(side: Side, tool: Tool): Promise<number> {
  const started = performance.now();
  const response = await postToolCall(`${side.url}/alignbase/mcp`, side.token, tool);
  const body = await response.text();
  const ms = performance.now() - started;
  const problem = check(tool, items, response.status, body);
  if (problem !== undefined) throw new Error(`${side.label} ${tool}: ${problem}`);
  return ms;
}

const at = (times: readonly number[], q: number): number => {
  const sorted = [...times].sort((a, b) => a - b);
  return Math.round((sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0) * 10) / 10;
};

const { dir, commit } = await baseTree();
const { stdout: headOut } = await run('git', ['rev-parse', 'HEAD'], { cwd: ROOT });
console.log(`bench context A/B: ${store}, ${items} routed items, ${warmup} warm-up and ${runs} measured calls per side and tool, alternating`);
console.log(`A: this tree (HEAD ${headOut.trim().slice(0, 12)}, with its uncommitted changes); B: ${commit.slice(0, 12)}`);
const sides: Side[] = [];
const report: { tool: Tool; a: { medianMs: number; p90Ms: number }; b: { medianMs: number; p90Ms: number }; medianRatio: number }[] = [];
try {
  // One after the other: two stores seeding at once would take the machine from each other.
  sides.push(await serve('A', ROOT));
  sides.push(await serve('B', dir));
  const [a, b] = sides as [Side, Side];
  for (const tool of tools) {
    for (let i = 0; i < warmup; i++) for (const side of sides) await call(side, tool);
    const times: [number[], number[]] = [[], []];
    for (let i = 0; i < runs; i++) {
      if (i % 2 === 0) {
        times[0].push(await call(a, tool));
        times[1].push(await call(b, tool));
      } else {
        times[1].push(await call(b, tool));
        times[0].push(await call(a, tool));
      }
    }
    const one = (t: number[]) => ({ medianMs: at(t, 0.5), p90Ms: at(t, 0.9) });
    const row = { tool, a: one(times[0]), b: one(times[1]), medianRatio: Math.round((at(times[0], 0.5) / at(times[1], 0.5)) * 1000) / 1000 };
    report.push(row);
    console.log(`${tool.padEnd(20)}  A ${row.a.medianMs} / ${row.a.p90Ms} ms   B ${row.b.medianMs} / ${row.b.p90Ms} ms   A/B median ${row.medianRatio}`);
  }
} finally {
  await Promise.all(sides.map(stop));
}
const machine = machineInfo();
const name = process.env.BENCH_NAME || `context-ab-${store}`;
const file = path.join(ROOT, 'bench', 'results', `${name}.json`);
await writeFile(
  file,
  `${JSON.stringify(
    {
      name,
      date: new Date().toISOString(),
      machine,
      settings: { store, items, runs, warmup, tools, a: `${headOut.trim()} (working tree)`, b: commit },
      report,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${path.relative(process.cwd(), file)}`);
console.log(`machine: ${machine.cpu}, ${machine.cpus} CPUs, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.platform}`);
