import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SHARED_RATE_LIMITS, SharedRateLimiter } from '../../src/auth/shared-rate.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * The store's fixed windows (src/auth/shared-rate.ts) on both stores: a key's window allows its
 * limit and refuses the rest with the wait, uncounted; windows are per limiter and key and start
 * again once over; keys of any text are kept apart up to the bound; old windows are swept.
 * Replicas counting at once are in test/atmina/upload-rates.test.ts, through MCP.
 */
for (const backend of storeBackends()) {
  describe(`shared rate windows on ${backend.name}`, () => {
    let store: TestStore;
    before(async () => {
      store = await backend.open({ migrated: true });
    });
    after(async () => {
      await store.dispose();
    });

    const spent = async (limiter: string, key: string) =>
      (await store.db.query<{ spent: number }>('SELECT spent FROM rate_windows WHERE limiter = $1 AND key = $2', [limiter, key]))[0]?.spent;

    it('allows the limit in a window, then answers the wait without counting the refusal', async () => {
      const limiter = new SharedRateLimiter(store.db, 'three', 3, 60_000);
      for (let n = 0; n < 3; n += 1) assert.equal(await limiter.take('a'), undefined);
      for (let n = 0; n < 3; n += 1) {
        const wait = await limiter.take('a');
        assert.ok(wait !== undefined && wait >= 59 && wait <= 60, String(wait));
      }
      assert.equal(await spent('three', 'a'), 3);
      // Another key, and another limiter with the same key, count apart.
      assert.equal(await limiter.take('b'), undefined);
      assert.equal(await new SharedRateLimiter(store.db, 'other', 1, 60_000).take('a'), undefined);
    });

    it('starts a new window once the last one is over', async () => {
      const limiter = new SharedRateLimiter(store.db, 'short', 1, 300);
      assert.equal(await limiter.take('k'), undefined);
      assert.equal(await limiter.take('k'), 1);
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(await limiter.take('k'), undefined);
      assert.equal(await spent('short', 'k'), 1);
    });

    it('counts concurrent events of one key exactly', async () => {
      const limiter = new SharedRateLimiter(store.db, 'concurrent', 7, 60_000);
      const waits = await Promise.all(Array.from({ length: 30 }, () => limiter.take('same')));
      assert.equal(waits.filter((w) => w === undefined).length, 7);
      assert.equal(await spent('concurrent', 'same'), 7);
    });

    it('keeps keys of hostile text apart, and cuts one past the bound', async () => {
      const limiter = new SharedRateLimiter(store.db, 'hostile', 1, 60_000);
      const keys = ['\u202Eevil', '\u{1F600}', 'a\u0007b', 'x'.repeat(SHARED_RATE_LIMITS.keyMaxChars + 50), '\uD800lone'];
      for (const key of keys) assert.equal(await limiter.take(key), undefined, JSON.stringify(key.slice(0, 20)));
      for (const key of keys) assert.equal(typeof (await limiter.take(key)), 'number');
      const [row] = await store.db.query<{ longest: number }>("SELECT max(length(key)) AS longest FROM rate_windows WHERE limiter = 'hostile'");
      assert.equal(row?.longest, SHARED_RATE_LIMITS.keyMaxChars);
    });

    it('refuses a limit below one when built', () => {
      assert.throws(() => new SharedRateLimiter(store.db, 'zero', 0, 60_000), /at least 1/);
    });

    it('sweeps the windows of its limiter that ended a window ago', async () => {
      const limiter = new SharedRateLimiter(store.db, 'swept', 1_000_000, 100);
      assert.equal(await limiter.take('old'), undefined);
      await new Promise((resolve) => setTimeout(resolve, 250));
      for (let n = 0; n < SHARED_RATE_LIMITS.sweepEvery - 1; n += 1) await limiter.take('fresh');
      assert.equal(await spent('swept', 'old'), undefined);
      assert.ok((await spent('swept', 'fresh')) !== undefined);
    });
  });
}
