import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { rebuildProjection } from '../../../src/kernel/outbox/rebuild.ts';
import { storeBackends } from '../../support/stores.ts';
import { EmbeddingsServer } from '../../support/embeddings-server.ts';
import type { KbWire } from '../support.ts';
import { KbSuite, backendLabel } from '../support.ts';
import type { SearchEngine } from '../../search/engines.ts';
import { searchEngines } from '../../search/engines.ts';
import type { SearchWire } from './wire.ts';
import { paths, writeSecrets } from './wire.ts';

/*
 * Hybrid retrieval through the MCP SDK's client on /atmina/mcp, with the gateway's own outbox
 * worker feeding search and vectors from a local embeddings server (test/support/
 * embeddings-server.ts: hashed words, synonyms in one bucket), on both stores and both engines.
 */

/** Characters of a document embedded: a change past them leaves its vector's text as it was. */
const MAX_CHARS = 300;

for (const backend of storeBackends()) {
  for (const choice of searchEngines())
    describe(`hybrid search with the ${choice.name} engine on ${backendLabel(backend)}`, () => {
      let engine: SearchEngine;
      let embeddings: EmbeddingsServer;
      let suite: KbSuite;
      let kb: KbWire;
      let hidden: KbWire;
      before(async () => {
        engine = choice.open();
        embeddings = await EmbeddingsServer.start({ dimensions: 1024, synonyms: [['car', 'automobile', 'vehicle']], key: 'test-embeddings-key' });
        suite = await KbSuite.open(
          backend,
          { ...engine.env, ...embeddings.env({ KGW_EMBEDDINGS_TIMEOUT_MS: '1000', KGW_EMBEDDINGS_MAX_CHARS: String(MAX_CHARS) }) },
          { projections: true },
        );
        kb = await suite.kb();
        await suite.file(kb.kb_id, 'fleet/automobile.md', '# Automobile fleet\n\nOur automobile needs new tyres every winter.\n');
        await suite.file(
          kb.kb_id,
          'notes/garage.md',
          '# Garage notes\n\nThe car park behind the office closes early; bring umbrellas, coats, boots and snacks.\n',
        );
        await suite.file(kb.kb_id, 'guides/wings.md', '# Wing design\n\nThe boundary layer over a swept wing thickens toward the tip.\n');
        // A KB of another team that viewer-bot cannot read, full of files far nearer to "car".
        hidden = await suite.kb({ team: 'support' }, 'support-bot');
        const support = await suite.agent('support-bot');
        await writeSecrets(support, hidden.kb_id, (i) => `# Vehicle ${i}\n\ncar car automobile vehicle car\n`);
        await suite.settled();
      });
      afterEach(() => {
        embeddings.mode = 'ok';
      });
      after(async () => {
        await suite?.close();
        await embeddings?.close();
        await engine?.dispose();
      });

      it('finds a file by a word only its meaning matches', async () => {
        const viewer = await suite.agent('viewer-bot');
        const lexical = await viewer.ok<SearchWire>('search', { query: 'vehicle' });
        const hybrid = await viewer.ok<SearchWire>('search', { query: 'vehicle', retrieval: 'hybrid' });
        assert.deepEqual(
          { lexical: paths(lexical), hybrid: paths(hybrid), retrieval: hybrid.retrieval },
          { lexical: [], hybrid: ['fleet/automobile.md', 'notes/garage.md'], retrieval: 'hybrid' },
        );
      });

      it('names the lists a result was in and its rank in each', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<SearchWire>('search', { query: 'car', retrieval: 'hybrid' });
        assert.deepEqual(
          answer.results.map((r) => ({ path: r.path, lists: r.reasons.lists })),
          [
            {
              path: 'notes/garage.md',
              lists: [
                { list: 'lexical', rank: 1 },
                { list: 'vector', rank: 2 },
              ],
            },
            { path: 'fleet/automobile.md', lists: [{ list: 'vector', rank: 1 }] },
          ],
        );
      });

      it('never shows nor counts a file of a KB the caller may not read, however near', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<SearchWire>('search', { query: 'car automobile vehicle', retrieval: 'hybrid', max_files: 50 });
        assert.deepEqual({ paths: paths(answer).sort(), total: answer.total }, { paths: ['fleet/automobile.md', 'notes/garage.md'], total: 2 });
      });

      it('applies the filters to the vector side too', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<SearchWire>('search', {
          query: 'vehicle',
          retrieval: 'hybrid',
          scope: { kb_ids: [kb.kb_id], path_prefixes: ['fleet/'] },
        });
        assert.deepEqual({ paths: paths(answer), total: answer.total }, { paths: ['fleet/automobile.md'], total: 1 });
      });

      it('pages the fused list with next_cursor', async () => {
        const viewer = await suite.agent('viewer-bot');
        const first = await viewer.ok<SearchWire>('search', { query: 'car', retrieval: 'hybrid', max_files: 1 });
        assert.ok(first.next_cursor);
        const second = await viewer.ok<SearchWire>('search', { query: 'car', retrieval: 'hybrid', max_files: 1, cursor: first.next_cursor });
        assert.deepEqual(
          { first: paths(first), second: paths(second), last: second.next_cursor },
          { first: ['notes/garage.md'], second: ['fleet/automobile.md'], last: null },
        );
      });

      it('answers lexically, saying why, when the embeddings endpoint fails', async () => {
        const viewer = await suite.agent('viewer-bot');
        embeddings.mode = 'fail';
        const answer = await viewer.ok<SearchWire>('search', { query: 'automobile tyres', retrieval: 'hybrid' });
        assert.deepEqual(
          { retrieval: answer.retrieval, paths: paths(answer), lists: answer.results[0]?.reasons.lists, fallback: answer.results[0]?.reasons.fallback },
          {
            retrieval: 'lexical',
            paths: ['fleet/automobile.md'],
            lists: [{ list: 'lexical', rank: 1 }],
            fallback: 'vector search was skipped: the embeddings endpoint did not answer; the results are lexical',
          },
        );
      });

      it('answers lexically when the embeddings endpoint is slower than its timeout', async () => {
        const viewer = await suite.agent('viewer-bot');
        embeddings.mode = 'slow';
        const answer = await viewer.ok<SearchWire>('search', { query: 'automobile', retrieval: 'hybrid' });
        assert.deepEqual({ retrieval: answer.retrieval, paths: paths(answer) }, { retrieval: 'lexical', paths: ['fleet/automobile.md'] });
      });

      it('does not embed a document again when the text it is embedded as did not change', async () => {
        const admin = await suite.agent('admin-bot');
        const head = `# Parking rules\n\n${'The garage gate opens at seven. '.repeat(12)}\n`;
        assert.ok(head.length > MAX_CHARS);
        await suite.file(kb.kb_id, 'rules/parking.md', head);
        await suite.settled();
        const once = embeddings.embedded('rules/parking.md');
        // A new version whose first MAX_CHARS characters are those of the last: search indexes it again, the vector stays.
        await admin.ok('write_file', { kb_id: kb.kb_id, path: 'rules/parking.md', mode: 'append', content: 'Bicycles stay outside.\n' });
        await suite.settled();
        const unchanged = embeddings.embedded('rules/parking.md');
        await admin.ok('write_file', { kb_id: kb.kb_id, path: 'rules/parking.md', mode: 'overwrite', content: `# Parking rules\n\nThe gate opens at six.\n` });
        await suite.settled();
        assert.deepEqual({ once, unchanged, changed: embeddings.embedded('rules/parking.md') }, { once: 1, unchanged: 1, changed: 2 });
      });

      it('removes the vector of a deleted file', async () => {
        const written = await suite.file(kb.kb_id, 'tmp/doomed.md', '# Doomed\n\nA vehicle to scrap.\n');
        await suite.settled();
        const count = async () =>
          (await suite.db.query<{ n: number }>('SELECT count(*)::int AS n FROM search_vectors WHERE doc_id = $1', [`kb_file:${written.file_id}`]))[0]?.n;
        const before = await count();
        await (await suite.agent('admin-bot')).ok('delete_file', { kb_id: kb.kb_id, file_id: written.file_id, confirm: 'tmp/doomed.md' });
        await suite.settled();
        assert.deepEqual({ before, after: await count() }, { before: 1, after: 0 });
      });

      it('embeds every document anew when search is rebuilt (kgw reindex --search)', async () => {
        const viewer = await suite.agent('viewer-bot');
        const before = paths(await viewer.ok<SearchWire>('search', { query: 'vehicle', retrieval: 'hybrid' }));
        const embeddedBefore = embeddings.embedded('fleet/automobile.md');
        await rebuildProjection(suite.db, suite.running.gateway.services.projections, 'search');
        await suite.settled();
        const after = paths(await viewer.ok<SearchWire>('search', { query: 'vehicle', retrieval: 'hybrid' }));
        assert.deepEqual(
          { before, after, embedded: embeddings.embedded('fleet/automobile.md') - embeddedBefore },
          { before: ['fleet/automobile.md', 'notes/garage.md'], after: ['fleet/automobile.md', 'notes/garage.md'], embedded: 1 },
        );
      });

      it('delays vectors only while the endpoint is down: lexical search sees a write at once', async () => {
        embeddings.mode = 'fail';
        const written = await suite.file(kb.kb_id, 'notes/outage.md', '# Outage\n\nThe zeppelin hangar roof leaks.\n');
        // The search row is applied; the vectors row waits for the endpoint.
        for (let round = 0; round < 3000; round++) {
          const [row] = await suite.db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox WHERE projection = 'search'");
          if (row?.n === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const viewer = await suite.agent('viewer-bot');
        const found = paths(await viewer.ok<SearchWire>('search', { query: 'zeppelin' }));
        const [vectorRows] = await suite.db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox WHERE projection = 'vectors'");
        embeddings.mode = 'ok';
        await suite.settled();
        const [stored] = await suite.db.query<{ n: number }>('SELECT count(*)::int AS n FROM search_vectors WHERE doc_id = $1', [`kb_file:${written.file_id}`]);
        assert.deepEqual({ found, waiting: (vectorRows?.n ?? 0) > 0, stored: stored?.n }, { found: ['notes/outage.md'], waiting: true, stored: 1 });
      });
    });
}
