import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { CONTEXT_CHANNEL, DELIVERED_CACHE_LIMITS, DeliveredCache } from '../../../src/alignbase/context/delivered-cache.ts';
import type { TestStore } from '../../support/stores.ts';
import { storeBackends } from '../../support/stores.ts';

/*
 * DeliveredCache over a real store: the signals of migration 0037 reach it as a change commits,
 * for every table the bundle's statement reads, and for nothing else; and it keeps within its
 * bounds. The end-to-end check, through get_current_context, is in test/alignbase/context.test.ts.
 */

interface Row {
  readonly v_content: string | null;
}

const TABLES = ['context_resources', 'context_routes', 'group_members', 'principals'] as const;

describe('DeliveredCache on PGlite', () => {
  let store: TestStore;
  let cache: DeliveredCache<Row>;
  let reads = 0;
  const read =
    (content = 'x') =>
    () => {
      reads += 1;
      return Promise.resolve([{ v_content: content }]);
    };
  /** Whether a call for the agent read the store. */
  const readsAgain = async (agent = 'agent'): Promise<boolean> => {
    const before = reads;
    await cache.rows('tenant', agent, read());
    return reads > before;
  };

  before(async () => {
    const pglite = storeBackends().find((backend) => backend.name === 'pglite');
    assert.ok(pglite);
    store = await pglite.open({ migrated: true });
    cache = new DeliveredCache<Row>(store.db);
    // The first calls read while the LISTEN is being set up; then the reading is kept.
    for (let i = 0; i < 100 && (await readsAgain()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(await readsAgain(), false);
  });
  after(() => store?.dispose());

  for (const table of TABLES) {
    it(`forgets what it kept when a statement on ${table} commits, and not when it rolls back`, async () => {
      await cache.rows('tenant', 'agent', read());
      assert.equal(await readsAgain(), false);
      await assert.rejects(
        store.db.tx(async (tx) => {
          await tx.query(`UPDATE ${table} SET tenant_id = tenant_id WHERE false`);
          throw new Error('rolled back');
        }),
        /rolled back/,
      );
      assert.equal(await readsAgain(), false, 'a rollback changes nothing');
      await store.db.tx((tx) => tx.query(`UPDATE ${table} SET tenant_id = tenant_id WHERE false`));
      assert.equal(await readsAgain(), true, 'read again after the commit');
      assert.equal(await readsAgain(), false, 'and kept again');
    });
  }

  it('keeps what it read across writes to anything else', async () => {
    await cache.rows('tenant', 'agent', read());
    await store.db.tx((tx) => tx.query("INSERT INTO tenants (id, slug, name) VALUES (gen_random_uuid(), 'cache-other', 'Other')"));
    await store.db.tx((tx) => tx.query('UPDATE context_grants SET role = role WHERE false'));
    assert.equal(await readsAgain(), false);
  });

  it('does not keep a reading a signal overtook', async () => {
    await store.db.tx((tx) => tx.query('UPDATE context_routes SET tenant_id = tenant_id WHERE false'));
    // The read runs while a change commits: what it read may predate the change.
    await cache.rows('tenant', 'agent', async () => {
      reads += 1;
      await store.db.tx((tx) => tx.query('UPDATE context_routes SET tenant_id = tenant_id WHERE false'));
      return [{ v_content: 'old' }];
    });
    assert.equal(await readsAgain(), true);
  });

  it('keeps readings per agent within its bounds, the one used longest ago going first', async () => {
    await store.db.tx((tx) => tx.query('UPDATE principals SET tenant_id = tenant_id WHERE false'));
    for (let i = 0; i <= DELIVERED_CACHE_LIMITS.entries; i++) await cache.rows('tenant', `agent-${i}`, read());
    assert.equal(cache.size, DELIVERED_CACHE_LIMITS.entries);
    assert.equal(await readsAgain('agent-0'), true, 'the first one went');
    assert.equal(await readsAgain(`agent-${DELIVERED_CACHE_LIMITS.entries}`), false);
    // A reading with more content than the bound is not kept; one that fills it is kept alone.
    // Each row weighs 512 besides its content.
    const huge = 'h'.repeat(DELIVERED_CACHE_LIMITS.weight - 512 + 1);
    await cache.rows('tenant', 'huge', read(huge));
    assert.equal(await readsAgain('huge'), true);
    await cache.rows('tenant', 'full', read('f'.repeat(DELIVERED_CACHE_LIMITS.weight - 512)));
    assert.equal(cache.size, 1);
    assert.equal(await readsAgain('full'), false);
  });
});

describe('the context signals on PostgreSQL', () => {
  const postgres = storeBackends().find((backend) => backend.name === 'postgres');
  let store: TestStore;
  before(async () => {
    if (postgres !== undefined) store = await postgres.open({ migrated: true });
  });
  after(() => store?.dispose());

  it(
    "are sent only to a session that asks for them, so a server's writers pay no NOTIFY",
    { skip: postgres === undefined && 'needs PostgreSQL (KGW_TEST_DATABASE_URL)' },
    async () => {
      const client = new pg.Client({ connectionString: store.databaseUrl });
      await client.connect();
      try {
        const heard: string[] = [];
        client.on('notification', (message) => heard.push(message.channel));
        await client.query(`LISTEN ${CONTEXT_CHANNEL}`);
        // The gateway's own sessions never ask: no signal.
        for (const table of TABLES) await store.db.tx((tx) => tx.query(`UPDATE ${table} SET tenant_id = tenant_id WHERE false`));
        // A session that asks gets one, which proves the listener above would have heard.
        await client.query("SELECT set_config('kgw.context_signals', 'on', false)");
        await client.query('UPDATE context_routes SET tenant_id = tenant_id WHERE false');
        await client.query('SELECT 1');
        assert.deepEqual(heard, [CONTEXT_CHANNEL]);
      } finally {
        await client.end();
      }
    },
  );
});
