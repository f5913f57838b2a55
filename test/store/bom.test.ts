import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/** Both stores hand text back as stored: PGlite's own result decoding used to drop a leading U+FEFF. */
for (const backend of storeBackends()) {
  describe(`Text values keep a leading U+FEFF on ${backend.name}`, () => {
    let store: TestStore;
    before(async () => {
      store = await backend.open();
    });
    after(() => store.dispose());

    it('in results, parameters and column names alike', async () => {
      const rows = await store.db.query<Record<string, string>>(`SELECT U&'\\FEFFa' AS "\uFEFFname", $1::text AS given, U&'\\FEFF' AS alone`, [
        '\uFEFFb\uFEFF',
      ]);
      assert.deepEqual(rows, [{ '\uFEFFname': '\uFEFFa', given: '\uFEFFb\uFEFF', alone: '\uFEFF' }]);
    });
  });
}
