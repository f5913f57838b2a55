import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dumpPglite, openPglite } from '../../src/store/pglite.ts';
import { openPostgres } from '../../src/store/postgres.ts';

/*
 * An embedded database opened from a dump of another (`openPglite`'s `from`): what the test
 * suites start each store from instead of PGlite's initdb (test/support/stores.ts).
 */
describe('an embedded database opened from a dump', () => {
  it('holds what the dumped one held, and the two go their own ways after', async () => {
    const source = await openPglite(undefined);
    try {
      await source.tx((tx) => tx.exec("CREATE TABLE notes (id int PRIMARY KEY, body text); INSERT INTO notes VALUES (1, 'kept ✓')"));
      const dump = await dumpPglite(source);
      const copies = [await openPglite(undefined, { from: dump }), await openPglite(undefined, { from: dump })];
      try {
        for (const copy of copies) assert.deepEqual(await copy.query('SELECT id, body FROM notes'), [{ id: 1, body: 'kept ✓' }]);
        await copies[0]?.tx((tx) => tx.query("INSERT INTO notes VALUES (2, 'only in the first copy')"));
        assert.deepEqual(await copies[1]?.query('SELECT count(*)::int AS n FROM notes'), [{ n: 1 }]);
        assert.deepEqual(await source.query('SELECT count(*)::int AS n FROM notes'), [{ n: 1 }]);
      } finally {
        for (const copy of copies) await copy.close();
      }
    } finally {
      await source.close();
    }
  });

  it('refuses to dump a store that is not embedded', async () => {
    const db = openPostgres('postgres://nobody@127.0.0.1:1/none');
    try {
      await assert.rejects(dumpPglite(db), /not an embedded \(PGlite\) store/);
    } finally {
      await db.close();
    }
  });
});
