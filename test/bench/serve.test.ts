import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { leanFlags } from '../../src/memory-mode.ts';
import { testDatabaseUrl } from '../support/stores.ts';

/*
 * `npm run bench:serve` in miniature, so the bench cannot rot: ten routed items, one round of a
 * second's load after a second's warm-up, `npm start` as it is against `npm start` with a Node
 * flag and a variable (`--no-maglev KGW_MEMORY=lean`), on a fresh PostgreSQL database. The
 * figures are times and sizes and not checked beyond being there; what is checked is that every
 * gateway ran with the Node flags it was meant to run with, the variable's among them.
 */

const postgres = testDatabaseUrl();
const ROOT = new URL('../../', import.meta.url);

interface Measured {
  readonly flags: string;
  readonly commandLine: string;
  readonly load: string;
  readonly callsPerSec: number;
  readonly cpuUsPerCall: number;
  readonly rssAtStartMiB: number;
  readonly rssAfterMiB: number;
  readonly peakRssMiB: number;
}

describe('bench:serve in miniature (PostgreSQL)', { skip: postgres === undefined ? 'KGW_TEST_DATABASE_URL is not set' : false, timeout: 240_000 }, () => {
  let dir: string;
  let measured: readonly Measured[];
  let table: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'kgw-bench-serve-test-'));
    await promisify(execFile)(process.execPath, ['bench/serve.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        BENCH_DATABASE_URL: postgres,
        BENCH_SERVE_ITEMS: '10',
        BENCH_SERVE_RUNS: '1',
        BENCH_SERVE_SECONDS: '1',
        BENCH_SERVE_WARMUP: '1',
        BENCH_SERVE_CONNECTIONS: '2',
        BENCH_SERVE_FLAGS: '|--no-maglev KGW_MEMORY=lean',
        BENCH_RESULTS_DIR: dir,
        BENCH_NAME: 'serve-test',
      },
    });
    measured = (JSON.parse(await readFile(path.join(dir, 'serve-test.json'), 'utf8')) as { measured: Measured[] }).measured;
    table = await readFile(path.join(dir, 'serve-test.md'), 'utf8');
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('measures each load under each set', () => {
    assert.deepEqual(measured.map((m) => `${m.flags}/${m.load}`).sort(), [
      '--no-maglev KGW_MEMORY=lean/get_current_context',
      '--no-maglev KGW_MEMORY=lean/whoami',
      '/get_current_context',
      '/whoami',
    ]);
    for (const m of measured) {
      assert.ok(m.callsPerSec > 0 && m.cpuUsPerCall > 0, JSON.stringify(m));
      assert.ok(m.rssAtStartMiB > 0 && m.rssAfterMiB > 0 && m.peakRssMiB >= m.rssAfterMiB, JSON.stringify(m));
    }
    assert.match(table, /\| `--no-maglev KGW_MEMORY=lean` \| whoami \|/);
  });

  it("starts each gateway as npm start does, with the set's Node flags after npm start's own and its environment", async () => {
    const pkg = JSON.parse(await readFile(new URL('package.json', ROOT), 'utf8')) as { scripts: { start: string } };
    const startFlags = pkg.scripts.start.split(/\s+/).filter((word) => word.startsWith('--'));
    for (const m of measured) {
      // KGW_MEMORY=lean restarts the gateway (same pid) with what it lacks of the lean flags first.
      const expected =
        m.flags === ''
          ? [...startFlags, 'bin/kgw.js serve']
          : [...leanFlags(false).filter((flag) => flag !== '--no-maglev'), ...startFlags, '--no-maglev', 'bin/kgw.js serve'];
      assert.equal(m.commandLine, expected.join(' '));
    }
  });
});
