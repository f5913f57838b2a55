import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { storeBackends } from '../../support/stores.ts';
import type { KbWire } from '../support.ts';
import { KbSuite, assertAtminaError, backendLabel } from '../support.ts';
import type { SearchEngine } from '../../search/engines.ts';
import { searchEngines } from '../../search/engines.ts';
import type { SearchWire } from './wire.ts';
import { paths } from './wire.ts';

/*
 * search's ranking controls through the MCP client on /atmina/mcp, on each engine: recency,
 * path boosts and the exact-phrase preference each change the order they should, and bad values
 * are validation errors naming the field.
 */

for (const backend of storeBackends()) {
  for (const choice of searchEngines())
    describe(`search ranking controls with the ${choice.name} engine on ${backendLabel(backend)}`, () => {
      let engine: SearchEngine;
      let suite: KbSuite;
      let kb: KbWire;
      before(async () => {
        engine = choice.open();
        suite = await KbSuite.open(backend, engine.env, { projections: true });
        kb = await suite.kb();
        // The old note is the more relevant (it says budget three times), the new one is fresh.
        await suite.file(kb.kb_id, 'notes/old.md', '# Budget review\n\nThe budget review covers the budget for travel.\n');
        await suite.file(kb.kb_id, 'notes/new.md', '# Budget review\n\nThe review covers costs for travel.\n');
        // The archived copy is the more relevant; the policy is where a reader should land.
        await suite.file(kb.kb_id, 'archive/hangar.md', '# Hangar rules\n\nHangar doors, hangar keys and hangar lights.\n');
        await suite.file(kb.kb_id, 'policies/hangar.md', '# Rules\n\nClose the hangar at night.\n');
        // The scattered file holds the words more often; the other holds them in order, once.
        await suite.file(kb.kb_id, 'scattered.md', 'Retention of data for each customer: customer data, data retention, retention for the customer.\n');
        await suite.file(kb.kb_id, 'phrase.md', 'Our customer data retention period is thirty days.\n');
        await suite.settled();
        // A year old, as the index knows it (the age ranking reads).
        await suite.db.tx((tx) => tx.query("UPDATE search_docs SET updated_at = now() - interval '365 days' WHERE path = 'notes/old.md'"));
      });
      after(async () => {
        await suite?.close();
        await engine?.dispose();
      });

      const search = async (query: string, ranking?: Record<string, unknown>) =>
        (await suite.agent('viewer-bot')).ok<SearchWire>('search', { query, scope: { kb_ids: [kb.kb_id] }, ...(ranking === undefined ? {} : { ranking }) });

      it('recency lifts the newer file over a more relevant old one', async () => {
        assert.deepEqual(paths(await search('budget review')), ['notes/old.md', 'notes/new.md']);
        assert.deepEqual(paths(await search('budget review', { recency: 0 })), ['notes/old.md', 'notes/new.md']);
        assert.deepEqual(paths(await search('budget review', { recency: 1 })), ['notes/new.md', 'notes/old.md']);
      });

      it('path_boosts lift the files under a prefix, and a weight below 1 lowers them', async () => {
        assert.deepEqual(paths(await search('hangar')), ['archive/hangar.md', 'policies/hangar.md']);
        assert.deepEqual(paths(await search('hangar', { path_boosts: [{ prefix: 'policies/', weight: 5 }] })), ['policies/hangar.md', 'archive/hangar.md']);
        assert.deepEqual(paths(await search('hangar', { path_boosts: [{ prefix: 'archive/', weight: 0.1 }] })), ['policies/hangar.md', 'archive/hangar.md']);
        // The longest prefix wins: policies/ lifted, policies/hangar.md itself lowered below the archive.
        const longest = await search('hangar', {
          path_boosts: [
            { prefix: 'policies/', weight: 5 },
            { prefix: 'policies/hangar', weight: 0.1 },
          ],
        });
        assert.deepEqual(paths(longest), ['archive/hangar.md', 'policies/hangar.md']);
      });

      it('prefer_exact_phrase lifts the file holding the query’s words in order', async () => {
        assert.deepEqual(paths(await search('customer data retention')), ['scattered.md', 'phrase.md']);
        assert.deepEqual(paths(await search('customer data retention', { prefer_exact_phrase: false })), ['scattered.md', 'phrase.md']);
        assert.deepEqual(paths(await search('customer data retention', { prefer_exact_phrase: true })), ['phrase.md', 'scattered.md']);
      });

      it('pages the reordered results with the cursor, and the cursor belongs to its ranking', async () => {
        const ranking = { recency: 1 };
        const viewer = await suite.agent('viewer-bot');
        const first = await viewer.ok<SearchWire>('search', { query: 'budget review', scope: { kb_ids: [kb.kb_id] }, ranking, max_files: 1 });
        assert.deepEqual(paths(first), ['notes/new.md']);
        assert.ok(first.next_cursor);
        const second = await viewer.ok<SearchWire>('search', {
          query: 'budget review',
          scope: { kb_ids: [kb.kb_id] },
          ranking,
          max_files: 1,
          cursor: first.next_cursor,
        });
        assert.deepEqual(paths(second), ['notes/old.md']);
        assertAtminaError(
          await viewer.fail('search', { query: 'budget review', scope: { kb_ids: [kb.kb_id] }, max_files: 1, cursor: first.next_cursor }),
          'validation',
          'cursor belongs to another search',
        );
      });

      for (const [name, ranking, field] of [
        ['a recency above 1', { recency: 1.5 }, 'recency'],
        ['a negative recency', { recency: -0.1 }, 'recency'],
        ['eleven path boosts', { path_boosts: Array.from({ length: 11 }, (_, i) => ({ prefix: `p${i}/`, weight: 2 })) }, 'path_boosts'],
        ['a weight of 0', { path_boosts: [{ prefix: 'policies/', weight: 0 }] }, 'weight'],
        ['a weight above 10', { path_boosts: [{ prefix: 'policies/', weight: 11 }] }, 'weight'],
        ['an empty prefix', { path_boosts: [{ prefix: '', weight: 2 }] }, 'prefix'],
        ['an unknown control', { freshness: 1 }, 'freshness'],
      ] as const) {
        it(`refuses ${name} as validation naming the field`, async () => {
          const text = await (await suite.agent('viewer-bot')).fail('search', { query: 'hangar', ranking });
          assertAtminaError(text, 'validation', field);
        });
      }
    });
}
