/**
 * `node bench/profile.ts FILE.cpuprofile [TOP]`: the top self-time functions of a V8 CPU profile
 * (as written by `BENCH_CPU_PROF=1 npm run bench`) and self time by package.
 */
import { readFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where code comes from: a package, the project (src/, bench/), Node itself or V8. */
function origin(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node:internal';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg?.[1]) return pkg[1];
  const own = /\/(src|bench|test)\/(.*)$/.exec(url);
  return own ? `${own[1]}/${own[2]?.split('/')[0]}` : url;
}

function short(url: string): string {
  return url.replace(/^file:\/\/.*?\/(node_modules|src|bench)\//, '$1/');
}

const [file, topArg] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: node bench/profile.ts FILE.cpuprofile [TOP]');
const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const byFunction = new Map<string, number>();
const byOrigin = new Map<string, number>();
let total = 0;
let busy = 0;
profile.samples.forEach((id, i) => {
  const node = nodes.get(id);
  const micros = profile.timeDeltas[i] ?? 0;
  if (!node) return;
  const { functionName, url, lineNumber } = node.callFrame;
  const key = `${functionName || '(anonymous)'}  ${url ? `${short(url)}:${lineNumber + 1}` : ''}`.trimEnd();
  byFunction.set(key, (byFunction.get(key) ?? 0) + micros);
  total += micros;
  if (functionName === '(idle)') return;
  busy += micros;
  const from = origin(url, functionName);
  byOrigin.set(from, (byOrigin.get(from) ?? 0) + micros);
});
const pct = (micros: number) => `${((micros / busy) * 100).toFixed(1).padStart(5)} %`;
console.log(`${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy (percentages of busy time)\n`);
console.log('self time by origin:');
for (const [name, micros] of [...byOrigin].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${pct(micros)}  ${name}`);
console.log('\ntop self-time functions:');
const top = Number(topArg ?? 30);
for (const [key, micros] of [...byFunction]
  .filter(([key]) => !key.startsWith('(idle)'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top))
  console.log(`  ${pct(micros)}  ${key}`);
