import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignalledCache } from '../../src/kernel/signalled-cache.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * The cache that the token check and get_current_context's reading share, over a real store:
 * a signal on its channel forgets everything, a read that a signal overtook is not kept, nothing
 * is trusted while the channel is not heard, and it keeps within its bounds of entries, weight
 * and time. Its two users are tested through MCP in test/access/token-cache.test.ts and
 * test/alignbase/context.test.ts.
 */

const CHANNEL = 'kgw_test_cache';

for (const backend of storeBackends()) {
  describe(`SignalledCache on ${backend.name}`, () => {
    let store: TestStore;
    let clock = 1_000_000;
    let reads = 0;
    let cache: SignalledCache<string>;
    const read = (value: string | undefined) => () => {
      reads += 1;
      return Promise.resolve(value);
    };
    /** Whether a get of `key` read the store. */
    const readsAgain = async (key: string, value = 'v'): Promise<boolean> => {
      const before = reads;
      await cache.get(key, read(value));
      return reads > before;
    };
    /** A cache on its own channel, once its signals are heard. */
    const open = async (options: Partial<ConstructorParameters<typeof SignalledCache<string>>[1]> = {}): Promise<SignalledCache<string>> => {
      const opened = new SignalledCache<string>(store.db, { channel: CHANNEL, entries: 4, now: () => clock, ...options });
      await opened.get('warm-up', read('v'));
      for (let i = 0; i < 500 && !store.db.hears(CHANNEL); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.ok(store.db.hears(CHANNEL), 'the channel is heard');
      return opened;
    };
    const signal = () => store.db.tx((tx) => tx.signal(CHANNEL));

    before(async () => {
      store = await backend.open({ migrated: true });
      cache = await open();
    });
    after(async () => {
      cache.close();
      await store?.dispose();
    });

    it('answers from memory until a signal, and then reads again', async () => {
      await cache.get('a', read('one'));
      assert.equal(await readsAgain('a'), false);
      assert.equal(await cache.get('a', read('two')), 'one');
      await signal();
      // PostgreSQL hears its own process's signal at commit; another replica's through NOTIFY.
      assert.equal(await cache.get('a', read('two')), 'two');
      assert.equal(await cache.get('a', read('three')), 'two');
    });

    it('does not keep a read that a signal overtook', async () => {
      await signal();
      const overtaken = await cache.get('b', async () => {
        reads += 1;
        await signal();
        return 'stale';
      });
      assert.equal(overtaken, 'stale', 'the caller still gets what it read');
      assert.equal(await readsAgain('b'), true);
      assert.equal(await readsAgain('b'), false);
    });

    it('never keeps undefined: what was not found is found as soon as it exists', async () => {
      assert.equal(await cache.get('missing', read(undefined)), undefined);
      assert.equal(await cache.get('missing', read('found')), 'found');
    });

    it('keeps at most its entries, dropping the one used longest ago', async () => {
      await signal();
      for (const key of ['k1', 'k2', 'k3', 'k4']) await cache.get(key, read(key));
      assert.equal(cache.size, 4);
      assert.equal(await readsAgain('k1'), false, 'k1 is now the one used last');
      await cache.get('k5', read('k5'));
      assert.equal(cache.size, 4);
      assert.equal(await readsAgain('k2'), true, 'k2 was used longest ago');
      assert.equal(await readsAgain('k1'), false);
    });

    it('keeps within its weight, and never a value heavier than all of it', async () => {
      const weighed = await open({ entries: 100, weight: 10, weigh: (value) => value.length });
      try {
        const before = reads;
        await weighed.get('w1', read('aaaa'));
        await weighed.get('w2', read('bbbb'));
        await weighed.get('w3', read('cccc'));
        assert.equal(weighed.size, 2, 'three of 4 weigh more than 10');
        await weighed.get('w2', read('bbbb'));
        await weighed.get('w3', read('cccc'));
        assert.equal(reads - before, 3, 'w2 and w3 were kept');
        await weighed.get('heavy', read('x'.repeat(11)));
        assert.equal(weighed.size, 2, 'a value heavier than the bound is not kept and drops nothing');
        await weighed.get('w1', read('aaaa'));
        assert.equal(reads - before, 5, 'w1 had gone first');
      } finally {
        weighed.close();
      }
    });

    it('keeps a value only until the time it is given, and not at all for a time already past', async () => {
      const timed = await open({ until: (value, now) => (value === 'past' ? now : now + 1_000) });
      try {
        await timed.get('t', read('soon'));
        clock += 999;
        assert.equal(await timed.get('t', read('later')), 'soon');
        clock += 1;
        assert.equal(await timed.get('t', read('later')), 'later');
        await timed.get('p', read('past'));
        assert.equal(await timed.get('p', read('now')), 'now', 'a value whose time has come is not kept');
      } finally {
        timed.close();
      }
    });

    it('reads every time when the store cannot be asked for the signals, or once closed', async () => {
      const refused = new SignalledCache<string>(store.db, { channel: CHANNEL, entries: 4, prepare: () => Promise.reject(new Error('no')) });
      const before = reads;
      for (let i = 0; i < 3; i++) await refused.get('r', read('r'));
      assert.equal(reads - before, 3);
      assert.equal(refused.size, 0);
      refused.close();

      const closed = await open();
      await closed.get('c', read('c'));
      closed.close();
      assert.equal(closed.size, 0);
      const again = reads;
      await closed.get('c', read('c'));
      await closed.get('c', read('c'));
      assert.equal(reads - again, 2);
    });
  });
}
