import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { MixRun } from '../../bench/mix.ts';
import { MIX, noisePng, runMix } from '../../bench/mix.ts';
import { prng } from '../../bench/corpus.ts';
import { testDatabaseUrl } from '../support/stores.ts';

/*
 * `npm run bench:mix` in miniature, so the bench cannot rot: its core (runMix) with three agents
 * for two seconds on one `kgw serve` replica over a fresh PostgreSQL database, the built-in
 * search engine and the graph in PostgreSQL. In two seconds not every kind of call is sure to
 * be picked, so the checks are on the totals; the figures themselves are times and not checked.
 */

const postgres = testDatabaseUrl();
const AGENTS = 3;
const SECONDS = 2;

describe(
  'bench:mix in miniature (one replica, PostgreSQL)',
  { skip: postgres === undefined ? 'KGW_TEST_DATABASE_URL is not set' : false, timeout: 180_000 },
  () => {
    let run: MixRun;

    before(async () => {
      const runs = await runMix({
        agents: AGENTS,
        seconds: SECONDS,
        warmup: 0,
        replicas: [1],
        files: 9,
        serverUrl: postgres!,
        meili: undefined,
        neo4j: undefined,
        s3: {},
        seed: 13,
        nodeFlags: [],
        log: () => undefined,
      });
      assert.equal(runs.length, 1);
      run = runs[0]!;
    });

    it('answers every call without an error', () => {
      assert.deepEqual({ errors: run.errors, samples: run.errorSamples }, { errors: 0, samples: {} });
    });

    it('makes calls for the whole measured time and counts each once', () => {
      assert.ok(run.calls > 0);
      assert.ok(run.measuredSeconds >= SECONDS, `measured ${run.measuredSeconds} s`);
      assert.equal(
        Object.values(run.perKind).reduce((sum, k) => sum + k.calls + k.errors, 0),
        run.calls,
      );
      assert.ok(run.callsPerSec > 0);
    });

    it('reports every kind of the mix, with ordered percentiles', () => {
      assert.deepEqual(Object.keys(run.perKind), [...MIX.map((m) => m.kind)]);
      for (const k of Object.values(run.perKind)) assert.ok(k.p50Ms <= k.p95Ms && k.p95Ms <= k.p99Ms && k.p99Ms <= k.maxMs);
    });

    it('finds the upload PUT limit holding after the mix', () => {
      assert.equal(run.uploadPutLimit?.holds, true, JSON.stringify(run.uploadPutLimit));
    });

    it('measures the replica and the PostgreSQL server', () => {
      assert.equal(run.replicaProcesses.length, 1);
      assert.ok(run.replicaProcesses[0]!.rssPeakMiB > 0);
      assert.ok(run.replicaProcesses[0]!.cpuSeconds > 0);
      assert.ok(run.postgresCpu.serverSeconds >= run.postgresCpu.benchDatabaseSeconds);
      assert.equal(run.engine, 'builtin');
    });
  },
);

describe('bench:mix pictures', () => {
  it('makes a PNG of a few KB, different each time', () => {
    const random = prng(1);
    const first = noisePng(40, random);
    const second = noisePng(40, random);
    assert.deepEqual([...first.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.ok(first.length > 2000 && first.length < 10_000, `${first.length} bytes`);
    assert.notDeepEqual(first, second);
  });
});
