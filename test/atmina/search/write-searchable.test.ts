import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { storeBackends } from '../../support/stores.ts';
import type { KbWire } from '../support.ts';
import { KbSuite, backendLabel } from '../support.ts';

/*
 * A write is searchable without waiting for the outbox worker's poll: the gateway's worker
 * polls only once an hour here, so the file can be found only because the write's commit
 * woke it.
 */

interface SearchWire {
  results: { path: string }[];
  total: number;
}

for (const backend of storeBackends()) {
  describe(`a write wakes the search projection on ${backendLabel(backend)}`, () => {
    let suite: KbSuite;
    let kb: KbWire;
    before(async () => {
      suite = await KbSuite.open(backend, {}, { projections: true, idleMs: 3_600_000 });
      kb = await suite.kb();
      await suite.settled();
    });
    after(async () => {
      await suite?.close();
    });

    it('finds a file written after the worker went to sleep', { timeout: 60_000 }, async () => {
      const viewer = await suite.agent('viewer-bot');
      await suite.file(kb.kb_id, 'notes/heliotrope.md', '# Heliotrope\n\nThe heliotrope garden opens in spring.\n');
      let answer: SearchWire = { results: [], total: 0 };
      while (answer.total === 0) {
        answer = await viewer.ok<SearchWire>('search', { query: 'heliotrope garden' });
        if (answer.total === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.deepEqual(
        answer.results.map((r) => r.path),
        ['notes/heliotrope.md'],
      );
    });
  });
}
