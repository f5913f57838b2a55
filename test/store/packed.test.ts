import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { instantOf } from '../../src/kernel/instants.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * A statement read packed (QueryOptions.packed) travels as one JSON array on PGlite and as rows
 * on PostgreSQL; either way its caller must get the same rows as the plain statement gives, in
 * the same order: every value the same, timestamps the same instant (a Date or ISO 8601 text).
 */

/** Text a caller might have stored: what JSON must escape, what it must not, and what PGlite's decoding once dropped. */
const TEXTS = [
  'plain',
  '',
  ' ',
  '"quoted" and \\ backslashed \\"',
  '\u0001\u0007\u001b[31m\u007f\t\n\r',
  '\u202eevil\u202c \u200f\u2066',
  '\uFEFFa byte order mark first',
  'ümlaut ✓ 𝄞 😀',
  '\u2028\u2029',
  '</script><!--',
  'x'.repeat(70_000),
];

const ROWS = `SELECT n AS id, (ARRAY[${TEXTS.map((_, i) => `$${i + 1}::text`).join(', ')}])[1 + n % ${TEXTS.length}] AS label,
         gen_random_uuid() AS uid, n % 3 = 0 AS flag, CASE WHEN n % 4 = 0 THEN NULL ELSE n * 7 END AS maybe,
         (DATE '2026-02-28' + n)::text AS day,
         TIMESTAMPTZ '2026-12-06 22:13:34.123456+00' + n * INTERVAL '1 day 1.001 second' AS at,
         CASE WHEN n % 5 = 0 THEN NULL ELSE TIMESTAMPTZ '1999-12-31 23:59:59.999+14' END AS maybe_at
    FROM generate_series(1, $${TEXTS.length + 1}::int) n`;

interface Row {
  id: number;
  label: string;
  uid: string;
  flag: boolean;
  maybe: number | null;
  day: string;
  at: Date | string;
  maybe_at: Date | string | null;
}

/** The rows with their instants as milliseconds, the uuids left out (they differ between runs). */
const comparable = (rows: readonly Row[]) =>
  rows.map((row) => ({
    ...row,
    uid: typeof row.uid,
    at: instantOf(row.at).getTime(),
    maybe_at: row.maybe_at === null ? null : instantOf(row.maybe_at).getTime(),
  }));

for (const backend of storeBackends()) {
  describe(`packed reads on ${backend.name}`, () => {
    it('give the rows the plain statement gives, in its order, on the pool, named and in a transaction', async () => {
      const store = await backend.open();
      try {
        const count = 200;
        const sql = `SELECT id, label, uid, flag, maybe, day, at, maybe_at FROM (${ROWS}) r ORDER BY label DESC, id DESC`;
        const params = [...TEXTS, count];
        const plain = await store.db.query<Row>(sql, params);
        assert.equal(plain.length, count);
        const expected = comparable(plain);
        assert.deepEqual(comparable(await store.db.query<Row>(sql, params, { packed: true })), expected);
        assert.deepEqual(comparable(await store.db.query<Row>(sql, params, { packed: true, prepare: 'test_packed' })), expected);
        assert.deepEqual(
          comparable(await store.db.query<Row>(sql, params, { packed: true, prepare: 'test_packed' })),
          expected,
          'the named statement run again',
        );
        assert.deepEqual(comparable(await store.db.tx((tx) => tx.query<Row>(sql, params, { packed: true }))), expected);
        for (const row of plain) assert.match(row.uid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      } finally {
        await store.dispose();
      }
    });

    it('keep columns of any spelling, and more than a named statement packs as arrays', async () => {
      const store = await backend.open();
      try {
        const odd = `SELECT 1 AS "odd ""name""", 'two' AS "with space", NULL::text AS "Ünïcode", $1::int AS "p"`;
        const expected = [{ 'odd "name"': 1, 'with space': 'two', Ünïcode: null, p: 7 }];
        assert.deepEqual(await store.db.query(odd, [7], { packed: true, prepare: 'test_packed_odd' }), expected);
        assert.deepEqual(await store.db.query(odd, [7], { packed: true }), expected);
        // json_build_array takes at most 100 values: a wider row is packed as an object.
        const wide = `SELECT ${Array.from({ length: 120 }, (_, i) => `${i} + $1::int AS c${i}`).join(', ')} FROM generate_series(1, 3)`;
        const rows = await store.db.query<Record<string, number>>(wide, [1], { packed: true, prepare: 'test_packed_wide' });
        assert.deepEqual(rows, await store.db.query(wide, [1]));
        assert.equal(rows[2]?.c119, 120);
      } finally {
        await store.dispose();
      }
    });

    it('give no rows for a statement that finds none, and a statement’s error as the plain one does', async () => {
      const store = await backend.open();
      try {
        assert.deepEqual(await store.db.query('SELECT 1 AS one WHERE false', [], { packed: true }), []);
        assert.deepEqual(await store.db.query('SELECT 1 AS one WHERE $1::boolean', [false], { packed: true, prepare: 'test_packed_none' }), []);
        await assert.rejects(store.db.query('SELECT 1 / $1::int AS broken', [0], { packed: true }), /division by zero/);
        await assert.rejects(store.db.query('SELECT 1 / $1::int AS broken', [0]), /division by zero/);
        await assert.rejects(store.db.query('DELETE FROM tenants RETURNING id', [], { packed: true }), /read-only/);
      } finally {
        await store.dispose();
      }
    });
  });
}
