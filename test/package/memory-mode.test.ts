import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LEAN_V8_FLAGS } from '../../src/memory-mode.ts';
import type { Served } from '../cli/support.ts';
import { cliEnv, serve, tempDir } from '../cli/support.ts';
import { until } from '../support/kgw-process.ts';

/*
 * KGW_MEMORY=lean (docs/decisions.md, "The young generation"): the gateway sets two V8 flags on
 * itself, which Node refuses in NODE_OPTIONS. Checked by effect, in a Node that applies the mode
 * as `kgw serve` does (src/memory-mode.ts) and then runs a workload: a hot function reaches the
 * mid tier (Maglev) only without it, and the old generation's peak under a churn of objects that
 * live long enough to be promoted stays well below the one without it. Then `kgw serve` itself:
 * it applies the mode before its store opens and says so in its start line.
 */
const MODULE = new URL('../../src/memory-mode.ts', import.meta.url).href;

/** Runs `body` (an ES module's code, with V8's natives syntax allowed) after applying `mode`; returns its stdout as JSON. */
function afterMode<T>(mode: 'throughput' | 'lean', body: string): T {
  const code = `import { applyMemoryMode } from ${JSON.stringify(MODULE)};\napplyMemoryMode(${JSON.stringify(mode)});\n${body}`;
  const out = execFileSync(process.execPath, ['--max-semi-space-size=8', '--allow-natives-syntax', '--input-type=module', '-e', code], {
    env: { ...process.env, NODE_OPTIONS: '' },
    encoding: 'utf8',
  });
  return JSON.parse(out) as T;
}

/**
 * A hot function, called until it runs in the top tier (at most 50 million calls); which tiers it
 * was seen in. V8 compiles on background threads, so on a busy machine a tier comes later, not
 * never: only whether Maglev was ever seen is compared.
 */
const TIERS = `
function f(a) { let s = 0; for (let i = 0; i < 10; i++) s += a * i; return s; }
let maglev = false, turbofan = false;
for (let i = 0; i < 5e7 && !turbofan; i++) { f(i); if (i % 100 === 0) { maglev ||= %ActiveTierIsMaglev(f); turbofan ||= %ActiveTierIsTurbofan(f); } }
process.stdout.write(JSON.stringify({ maglev, turbofan }));
`;

/** 200,000 live objects, then 400 rounds of 20,000 that live ten rounds each; the old space's largest size in MiB. */
const CHURN = `
import v8 from 'node:v8';
const live = []; for (let i = 0; i < 200000; i++) live.push({ i, s: 'live' + i });
let peak = 0; const kept = [];
for (let round = 0; round < 400; round++) {
  kept.push(Array.from({ length: 20000 }, (_, i) => ({ round, i, s: 'g' + i })));
  if (kept.length > 10) kept.shift();
  peak = Math.max(peak, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_size);
}
process.stdout.write(JSON.stringify({ peakMiB: peak / 1048576, live: live.length }));
`;

describe('KGW_MEMORY=lean', () => {
  it('leaves out the mid-tier compiler, and throughput keeps it', () => {
    assert.equal(afterMode<{ maglev: boolean }>('throughput', TIERS).maglev, true);
    assert.deepEqual(afterMode('lean', TIERS), { maglev: false, turbofan: true });
  });

  it('narrows the old generation’s growth between collections', () => {
    const throughput = afterMode<{ peakMiB: number }>('throughput', CHURN).peakMiB;
    const lean = afterMode<{ peakMiB: number }>('lean', CHURN).peakMiB;
    assert.ok(lean < throughput * 0.7, `old space peak ${lean} MiB lean against ${throughput} MiB`);
  });

  describe('kgw serve', () => {
    let dir: string;
    let served: Served;
    before(async () => {
      dir = await tempDir('kgw-memory-');
      served = await serve(cliEnv({ KGW_DATA_DIR: path.join(dir, 'data'), KGW_MEMORY: 'lean', KGW_LOG_LEVEL: 'info' }));
    });
    after(async () => {
      await served.stop();
      await rm(dir, { recursive: true, force: true });
    });

    it('applies the mode and names it and its flags in its start line', async () => {
      const startLine = () =>
        served
          .output()
          .stdout.split('\n')
          .find((l) => l.includes('serving MCP at'));
      const line = await until('the start line', () => Promise.resolve(startLine()));
      const logged = JSON.parse(line) as { memory?: unknown; v8Flags?: unknown };
      assert.deepEqual({ memory: logged.memory, v8Flags: logged.v8Flags }, { memory: 'lean', v8Flags: [...LEAN_V8_FLAGS] });
    });
  });
});
