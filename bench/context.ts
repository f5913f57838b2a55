/**
 * `npm run bench:context`: the calls an agent makes at the start of every conversation, at scale.
 * For each size N (BENCH_CONTEXT_SIZES, default 10,100,1000), a fresh store holds N published
 * Knowledge items routed to one agent (with Viewer on all Knowledge), applied by the org file;
 * a real gateway serves it on loopback and the bench calls get_current_context, list_knowledge,
 * list_skills and list_memories over HTTP as that agent, one call at a time, every answer checked
 * (200, no tool error, the N items there). Median and p90 latency and the answer's size go to
 * bench/results/context-<store>.json. See bench/README.md.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { drainedOutbox, issueToken, seedOrg, startGateway } from '../test/support/gateway.ts';
import { postToolCall } from '../test/support/mcp-client.ts';
import type { Tool } from './context-org.ts';
import { TOOLS, check, orgFile, positiveList, toolsFromEnvironment } from './context-org.ts';
import { machineInfo } from './machine.ts';
import { openBenchStore } from './store.ts';

const HERE = path.dirname(new URL(import.meta.url).pathname);

const databaseUrl = process.env.BENCH_DATABASE_URL || undefined;
const store = databaseUrl === undefined ? 'pglite' : 'postgres';
const sizes = positiveList('BENCH_CONTEXT_SIZES', [10, 100, 1000]);
const [runs = 50] = positiveList('BENCH_CONTEXT_RUNS', [50]);
const [warmup = 30] = positiveList('BENCH_CONTEXT_WARMUP', [30]);
const tools = toolsFromEnvironment(TOOLS);

interface ToolResult {
  readonly tool: Tool;
  readonly medianMs: number;
  readonly p90Ms: number;
  readonly bytes: number;
}

async function measureSize(n: number): Promise<ToolResult[]> {
  const bench = await openBenchStore(databaseUrl, { poolMax: 10, prefix: 'kgw-bench-context' });
  try {
    const { migrate } = await import('../src/store/migrate.ts');
    await migrate(bench.db);
    await seedOrg(bench.db, orgFile(n));
    const token = await issueToken(bench.db, 'acme', 'bot', 'context.read');
    const running = await startGateway(bench.db);
    try {
      await drainedOutbox(bench.db);
      const results: ToolResult[] = [];
      for (const tool of tools) {
        const call = async (): Promise<{ ms: number; bytes: number }> => {
          const started = performance.now();
          const response = await postToolCall(`${running.url}/alignbase/mcp`, token, tool);
          const body = await response.text();
          const ms = performance.now() - started;
          const problem = check(tool, n, response.status, body);
          if (problem !== undefined) throw new Error(`${tool} at ${n}: ${problem}`);
          return { ms, bytes: Buffer.byteLength(body) };
        };
        for (let i = 0; i < warmup; i++) await call();
        const times: number[] = [];
        let bytes = 0;
        for (let i = 0; i < runs; i++) {
          const one = await call();
          times.push(one.ms);
          bytes = one.bytes;
        }
        times.sort((a, b) => a - b);
        const at = (q: number) => Math.round((times[Math.min(times.length - 1, Math.floor(times.length * q))] ?? 0) * 10) / 10;
        results.push({ tool, medianMs: at(0.5), p90Ms: at(0.9), bytes });
      }
      return results;
    } finally {
      await running.close();
    }
  } finally {
    await bench.dispose();
  }
}

const machine = machineInfo();
const report: { size: number; results: ToolResult[] }[] = [];
console.log(`bench context: ${store}, sizes ${sizes.join(', ')}, ${warmup} warm-up and ${runs} measured calls per tool, one at a time`);
for (const size of sizes) {
  console.log(`- ${size} routed Knowledge items …`);
  report.push({ size, results: await measureSize(size) });
}
console.log(`\n${'items'.padStart(6)}  ${'tool'.padEnd(20)}  ${'median ms'.padStart(9)}  ${'p90 ms'.padStart(7)}  ${'bytes'.padStart(9)}`);
for (const { size, results } of report)
  for (const r of results)
    console.log(
      `${String(size).padStart(6)}  ${r.tool.padEnd(20)}  ${String(r.medianMs).padStart(9)}  ${String(r.p90Ms).padStart(7)}  ${String(r.bytes).padStart(9)}`,
    );
const name = process.env.BENCH_NAME || `context-${store}`;
const file = path.join(HERE, 'results', `${name}.json`);
await mkdir(path.dirname(file), { recursive: true });
await writeFile(
  file,
  `${JSON.stringify({ name, date: new Date().toISOString(), machine, settings: { store, sizes, runs, warmup, tools }, report }, null, 2)}\n`,
);
console.log(`wrote ${path.relative(process.cwd(), file)}`);
console.log(`machine: ${machine.cpu}, ${machine.cpus} CPUs, ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.platform}`);
