import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { leanFlags } from '../../src/memory-mode.ts';
import type { Served } from '../cli/support.ts';
import { cliEnv, serve, tempDir } from '../cli/support.ts';
import { until } from '../support/kgw-process.ts';

/*
 * KGW_MEMORY=lean (docs/decisions.md, "The young generation"): V8 flags Node refuses in
 * NODE_OPTIONS. The gateway restarts itself with them on Node's command line (same pid), or,
 * where Node cannot, sets those V8 reads as it goes at run time. Both paths checked: the restart
 * by what the process ends up with, the run-time path by effect (a hot function reaches the mid
 * tier, Maglev, only without it; the old generation's peak under a churn of objects that live
 * long enough to be promoted stays well below the one without it). Then `kgw serve` itself.
 */
const MODULE = new URL('../../src/memory-mode.ts', import.meta.url).href;

/**
 * Runs `body` (an ES module's code, with V8's natives syntax allowed) after applying `mode` with
 * no way to restart (the run-time path); returns its stdout as JSON.
 */
function afterMode<T>(mode: 'throughput' | 'lean', body: string): T {
  const code =
    `import { applyMemoryMode } from ${JSON.stringify(MODULE)};\n` +
    `applyMemoryMode(${JSON.stringify(mode)}, false, { execPath: process.execPath, execArgv: process.execArgv, argv: process.argv, env: process.env });\n${body}`;
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
  it("restarts Node with the flags first on its command line, keeping its pid and the process's own flags", () => {
    const code =
      `import { applyMemoryMode } from ${JSON.stringify(MODULE)};\n` +
      `const applied = applyMemoryMode('lean', true);\n` +
      `process.stdout.write(JSON.stringify({ pid: process.pid, execArgv: process.execArgv.slice(0, 5), applied }));`;
    const run = spawnSync(process.execPath, ['--max-semi-space-size=8', '--input-type=module', '-e', code], {
      env: { ...process.env, NODE_OPTIONS: '' },
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    const out = JSON.parse(run.stdout) as { pid: number; execArgv: string[]; applied: unknown };
    assert.equal(out.pid, run.pid);
    assert.deepEqual(out.execArgv, [...leanFlags(true), '--max-semi-space-size=8', '--input-type=module']);
    assert.deepEqual(out.applied, { flags: leanFlags(true), where: 'command line' });
  });

  it('at run time, leaves out the mid-tier compiler, and throughput keeps it', () => {
    assert.equal(afterMode<{ maglev: boolean }>('throughput', TIERS).maglev, true);
    assert.deepEqual(afterMode('lean', TIERS), { maglev: false, turbofan: true });
  });

  it('at run time, narrows the old generation’s growth between collections', () => {
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

    it('restarts with the flags on its command line, same pid, and names them in its start line', async () => {
      const startLine = () =>
        served
          .output()
          .stdout.split('\n')
          .find((l) => l.includes('serving MCP at'));
      const line = await until('the start line', () => Promise.resolve(startLine()));
      const logged = JSON.parse(line) as { memory?: unknown; v8Flags?: unknown; v8FlagsSet?: unknown; pid?: unknown };
      assert.deepEqual(
        { memory: logged.memory, v8Flags: logged.v8Flags, v8FlagsSet: logged.v8FlagsSet, pid: logged.pid },
        { memory: 'lean', v8Flags: leanFlags(true), v8FlagsSet: 'command line', pid: served.pid },
      );
      const commandLine = (await readFile(`/proc/${served.pid}/cmdline`, 'utf8')).split('\0');
      for (const flag of leanFlags(true)) assert.ok(commandLine.includes(flag), commandLine.join(' '));
    });
  });
});
