import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openPglite, PGLITE_SHARED_BUFFERS } from '../../src/store/pglite.ts';

/*
 * PGlite's page cache is memory of the gateway's own process, kept once touched: it runs with
 * shared_buffers of 32 MB rather than PostgreSQL's 128 MB (docs/decisions.md, "PGlite's memory").
 */
describe("PGlite's shared_buffers", () => {
  it('is the 32 MB the gateway starts it with', async () => {
    const db = await openPglite(undefined);
    try {
      const [row] = await db.query<{ shared_buffers: string }>('SHOW shared_buffers');
      assert.equal(PGLITE_SHARED_BUFFERS, '32MB');
      assert.equal(row?.shared_buffers, '32MB');
    } finally {
      await db.close();
    }
  });
});
