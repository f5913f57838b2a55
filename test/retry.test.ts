import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONFLICT, CONFLICT_BACKOFF, backoffDelay, retryOnConflict } from '../src/kernel/retry.ts';

/** The ceiling of the wait after the n-th conflict: 5, 10, 20, 40, 80, 160, then 200 ms. */
const ceiling = (n: number): number => Math.min(200, 5 * 2 ** (n - 1));

describe('backoff after a version conflict', () => {
  it('uses base 5 ms, cap 200 ms and 50 attempts by default', () => {
    assert.deepEqual(CONFLICT_BACKOFF, { baseMs: 5, capMs: 200, attempts: 50 });
  });

  it('waits a whole number of milliseconds from 0 to below a ceiling that doubles up to the cap', () => {
    for (let n = 1; n <= 60; n++) {
      assert.equal(backoffDelay(n, { random: () => 0 }), 0);
      assert.equal(backoffDelay(n, { random: () => 0.999_999 }), ceiling(n) - 1, `conflict ${n}`);
      for (let i = 0; i < 200; i++) {
        const delay = backoffDelay(n);
        assert.ok(Number.isInteger(delay) && delay >= 0 && delay < ceiling(n), `conflict ${n}: ${delay} ms`);
      }
    }
    assert.deepEqual(
      Array.from({ length: 8 }, (_, i) => backoffDelay(i + 1, { random: () => 0.5 })),
      [2, 5, 10, 20, 40, 80, 100, 100],
    );
    assert.equal(backoffDelay(1_000_000, { random: () => 0.5 }), 100, 'no overflow far out');
    assert.equal(backoffDelay(3, { baseMs: 100, capMs: 1000, random: () => 0.5 }), 200);
  });

  it('is jittered: the waits after the same conflict spread over the whole range', () => {
    const delays = Array.from({ length: 2000 }, () => backoffDelay(8));
    const distinct = new Set(delays);
    assert.ok(distinct.size > 150, `only ${distinct.size} distinct waits of 0..199 ms`);
    const low = delays.filter((d) => d < 100).length;
    assert.ok(low > 800 && low < 1200, `${low} of 2000 below half the ceiling`);
    // Later conflicts wait longer on average.
    const mean = (n: number) => Array.from({ length: 2000 }, () => backoffDelay(n)).reduce((a, b) => a + b, 0) / 2000;
    assert.ok(mean(1) < mean(3) && mean(3) < mean(5) && mean(5) < mean(7), 'grows');
  });
});

describe('retryOnConflict', () => {
  it('returns the first answer that is not a conflict, waiting the backoff before each retry', async () => {
    const waits: number[] = [];
    const seen: number[] = [];
    const result = await retryOnConflict(
      (n) => {
        seen.push(n);
        return Promise.resolve(n < 5 ? CONFLICT : `won on attempt ${n}`);
      },
      { random: () => 0.5, sleep: (ms) => Promise.resolve(waits.push(ms)) },
    );
    assert.equal(result, 'won on attempt 5');
    assert.deepEqual(seen, [1, 2, 3, 4, 5]);
    assert.deepEqual(waits, [2, 5, 10, 20]);
  });

  it('does not wait when the first attempt succeeds, and passes errors through without retrying', async () => {
    const waits: number[] = [];
    const sleep = (ms: number) => Promise.resolve(waits.push(ms));
    assert.equal(await retryOnConflict(() => Promise.resolve(0), { sleep }), 0);
    let calls = 0;
    await assert.rejects(
      retryOnConflict(
        () => {
          calls += 1;
          return Promise.reject(new Error('not found'));
        },
        { sleep },
      ),
      /^Error: not found$/,
    );
    assert.deepEqual({ waits, calls }, { waits: [], calls: 1 });
  });

  it('gives up after the bounded number of attempts', async () => {
    const waits: number[] = [];
    let calls = 0;
    await assert.rejects(
      retryOnConflict(
        () => {
          calls += 1;
          return Promise.resolve(CONFLICT);
        },
        { attempts: 4, sleep: (ms) => Promise.resolve(waits.push(ms)) },
      ),
      /^Error: still a version conflict after 4 attempts$/,
    );
    assert.equal(calls, 4);
    assert.equal(waits.length, 3);
    for (const [i, ms] of waits.entries()) assert.ok(ms >= 0 && ms < ceiling(i + 1));
  });

  it('waits with the real timer by default', async () => {
    const started = performance.now();
    let calls = 0;
    assert.equal(await retryOnConflict(() => Promise.resolve(++calls < 3 ? CONFLICT : 'done')), 'done');
    assert.ok(performance.now() - started < 1000);
  });
});
