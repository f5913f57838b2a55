import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storeBackends } from '../support/stores.ts';

for (const backend of storeBackends()) {
  describe(`prepared statements on ${backend.name}`, () => {
    // More runs than connections and than the five custom plans PostgreSQL makes before it may keep a generic one.
    const RUNS = 24;

    it('answers a named statement with each run’s own values, on the pool and in a transaction', async () => {
      const store = await backend.open();
      try {
        const sql = 'SELECT $1::int * 2 AS doubled, $2::text AS label';
        const pooled = await Promise.all(
          Array.from({ length: RUNS }, (_, i) => store.db.query<{ doubled: number; label: string }>(sql, [i, `run ${i}`], { prepare: 'test_doubled' })),
        );
        assert.deepEqual(
          pooled.map((rows) => rows[0]),
          Array.from({ length: RUNS }, (_, i) => ({ doubled: i * 2, label: `run ${i}` })),
        );
        const inTx = await store.db.tx(async (tx) => {
          const out: number[] = [];
          for (let i = 0; i < RUNS; i++) out.push((await tx.query<{ doubled: number }>(sql, [i, 'tx'], { prepare: 'test_doubled' }))[0]?.doubled ?? -1);
          return out;
        });
        assert.deepEqual(
          inTx,
          Array.from({ length: RUNS }, (_, i) => i * 2),
        );
      } finally {
        await store.dispose();
      }
    });

    it('answers a named statement with hostile values exactly as the plain statement does', async () => {
      // PGlite runs a named statement through SQL's PREPARE and EXECUTE, its values written as literals.
      const store = await backend.open();
      try {
        const values = [
          "'",
          "''; DROP TABLE x; --",
          '\\',
          "\\'",
          "e'\\x41",
          '$1',
          'ümlaut ✓ 𝄞',
          '\u202eevil\u202c',
          '\u0007\u001b[31m',
          '\ud800',
          '-1',
          '1e309',
          ' ',
          '',
        ];
        const sql = 'SELECT $1::text AS v, $2::int AS n, $3::boolean AS b, $4::text AS missing';
        for (const value of values) {
          const plain = await store.db.query(sql, [value, 7, true, null]);
          const named = await store.db.query(sql, [value, 7, true, null], { prepare: 'test_hostile' });
          assert.deepEqual(named, plain, JSON.stringify(value));
        }
        const nul = (options?: { prepare: string }) => store.db.query(sql, ['a\0b', 1, false, null], options);
        const refused = await nul().then(
          () => 'accepted',
          (error: { code?: string }) => error.code,
        );
        assert.equal(
          await nul({ prepare: 'test_hostile' }).then(
            () => 'accepted',
            (error: { code?: string }) => error.code,
          ),
          refused,
        );
        await assert.rejects(store.db.query('SELECT $1::int AS other', [1], { prepare: 'test_hostile' }), /used for two statements/);
      } finally {
        await store.dispose();
      }
    });

    it('keeps a named statement correct when a transaction using it rolls back', async () => {
      const store = await backend.open();
      try {
        const sql = 'SELECT $1::int + 1 AS next';
        await assert.rejects(
          store.db.tx(async (tx) => {
            await tx.query(sql, [1], { prepare: 'test_next' });
            await tx.query('SELECT 1 / 0');
          }),
        );
        const rows = await Promise.all(Array.from({ length: RUNS }, (_, i) => store.db.query<{ next: number }>(sql, [i], { prepare: 'test_next' })));
        assert.deepEqual(
          rows.map((r) => r[0]?.next),
          Array.from({ length: RUNS }, (_, i) => i + 1),
        );
      } finally {
        await store.dispose();
      }
    });
  });
}
