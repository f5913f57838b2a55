import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { storeBackends } from '../../support/stores.ts';
import type { KbWire, ReadWire } from '../support.ts';
import { KbSuite, assertAtminaError, backendLabel } from '../support.ts';
import type { SearchEngine } from '../../search/engines.ts';
import { searchEngines } from '../../search/engines.ts';
import type { SearchWire } from './wire.ts';
import { paths, writeSecrets } from './wire.ts';

/*
 * Atmina's `search` through the MCP SDK's client on /atmina/mcp, with the gateway's own outbox
 * worker feeding the built-in engine: what a write puts in, a caller finds, within what it
 * may read.
 */

for (const backend of storeBackends()) {
  for (const choice of searchEngines())
    describe(`Atmina search with the ${choice.name} engine on ${backendLabel(backend)}`, () => {
      let engine: SearchEngine;
      let suite: KbSuite;
      let kb: KbWire;
      let hidden: KbWire;
      before(async () => {
        engine = choice.open();
        suite = await KbSuite.open(backend, engine.env, { projections: true });
        kb = await suite.kb();
        await suite.file(kb.kb_id, 'decisions/retention.md', '# Customer data retention\n\nWe keep customer data for 30 days after the contract ends.\n');
        await suite.file(kb.kb_id, 'notes/meeting.md', '# Weekly meeting\n\nWe talked about retention of logs and the customer survey.\n');
        await suite.file(kb.kb_id, 'guides/wings.md', '# Wing design\n\nThe boundary layer over a swept wing thickens toward the tip.\n');
        // A KB of another team that viewer-bot cannot read, full of files that match better.
        hidden = await suite.kb({ team: 'support' }, 'support-bot');
        const support = await suite.agent('support-bot');
        await writeSecrets(support, hidden.kb_id, (i) => `# Customer data retention ${i}\n\ncustomer data retention customer data retention\n`);
        await suite.settled();
      });
      after(async () => {
        await suite?.close();
        await engine?.dispose();
      });

      it('finds a file by the words of a question and ranks the one about it first', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<SearchWire>('search', { query: 'How long do we keep customer data?' });
        assert.equal(answer.results[0]?.path, 'decisions/retention.md');
      });

      it('gives each result the identifiers its read_ref passes to read_file', async () => {
        const viewer = await suite.agent('viewer-bot');
        const [first] = (await viewer.ok<SearchWire>('search', { query: 'boundary layer' })).results;
        assert.ok(first);
        assert.equal(first.read_ref.tool, 'read_file');
        const read = await viewer.ok<ReadWire>('read_file', first.read_ref.arguments);
        assert.equal(read.path, 'guides/wings.md');
      });

      it('marks the matched words in snippets and says which fields matched', async () => {
        const viewer = await suite.agent('viewer-bot');
        const [first] = (await viewer.ok<SearchWire>('search', { query: 'swept wing' })).results;
        assert.ok(first);
        assert.match(first.snippets[0] ?? '', /<mark>swept<\/mark> <mark>wing<\/mark>/);
        assert.deepEqual(first.reasons.terms.find((t) => t.term === 'wing')?.fields, ['path', 'title', 'body']);
      });

      it('never shows a file of a KB the caller may not read, nor counts it', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<SearchWire>('search', { query: 'customer data retention', max_files: 50 });
        assert.deepEqual(
          answer.results.map((r) => r.kb_id),
          answer.results.map(() => kb.kb_id),
        );
        assert.equal(answer.total, 2);
      });

      it('refuses a scope naming a KB the caller may not read as not found', async () => {
        const viewer = await suite.agent('viewer-bot');
        assertAtminaError(await viewer.fail('search', { query: 'retention', scope: { kb_ids: [hidden.kb_id] } }), 'not_found');
      });

      it('searches only under the path prefixes of the scope', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<SearchWire>('search', { query: 'customer retention', scope: { kb_ids: [kb.kb_id], path_prefixes: ['notes/'] } });
        assert.deepEqual(paths(answer), ['notes/meeting.md']);
      });

      it('requires a quoted phrase as written', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<SearchWire>('search', { query: '"customer data"' });
        assert.deepEqual(paths(answer), ['decisions/retention.md']);
      });

      it('expands a word ending in * to the indexed words it starts', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<SearchWire>('search', { query: 'thick*' });
        assert.deepEqual(paths(answer), ['guides/wings.md']);
      });

      it('corrects a misspelt word to an indexed one', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<SearchWire>('search', { query: 'retnetion' });
        assert.deepEqual(paths(answer).sort(), ['decisions/retention.md', 'notes/meeting.md']);
      });

      it('pages with next_cursor and refuses that cursor for another query', async () => {
        const viewer = await suite.agent('viewer-bot');
        const first = await viewer.ok<SearchWire>('search', { query: 'customer', max_files: 1 });
        assert.ok(first.next_cursor);
        const second = await viewer.ok<SearchWire>('search', { query: 'customer', max_files: 1, cursor: first.next_cursor });
        assert.notEqual(second.results[0]?.path, first.results[0]?.path);
        assertAtminaError(await viewer.fail('search', { query: 'wing', cursor: first.next_cursor }), 'validation', 'cursor belongs to another search');
      });

      it('shows a moved file under its new path and forgets a deleted one', async () => {
        const editor = await suite.agent('editor-bot');
        const written = await editor.ok<{ file_id: string }>('write_file', {
          kb_id: kb.kb_id,
          path: 'tmp/zeppelin.md',
          mode: 'create',
          content: 'zeppelin hangar',
        });
        await editor.ok('move_file', { kb_id: kb.kb_id, file_id: written.file_id, to_path: 'archive/zeppelin.md' });
        await suite.settled();
        assert.deepEqual(paths(await editor.ok<SearchWire>('search', { query: 'zeppelin' })), ['archive/zeppelin.md']);
        await (await suite.agent('admin-bot')).ok('delete_file', { kb_id: kb.kb_id, file_id: written.file_id, confirm: 'archive/zeppelin.md' });
        await suite.settled();
        assert.deepEqual(paths(await editor.ok<SearchWire>('search', { query: 'zeppelin' })), []);
      });

      for (const [name, query, part] of [
        ['an empty query', '   ', 'query must not be empty'],
        ['a NUL', 'wing\u0000', 'must not contain NUL'],
        ['a lone surrogate', 'wing\ud800', 'well-formed Unicode'],
      ] as const) {
        it(`refuses ${name} with the reason`, async () => {
          const viewer = await suite.agent('viewer-bot');
          assertAtminaError(await viewer.fail('search', { query }), 'validation', part);
        });
      }

      it('refuses a query longer than its bound', async () => {
        const viewer = await suite.agent('viewer-bot');
        assertAtminaError(await viewer.fail('search', { query: 'w'.repeat(4001) }), 'validation');
      });

      it('reads control and bidi characters in a query as separators', async () => {
        const viewer = await suite.agent('viewer-bot');
        assert.deepEqual(paths(await viewer.ok<SearchWire>('search', { query: '\u202eswept\u0007wing\u200b' })), ['guides/wings.md']);
      });

      it('refuses hybrid retrieval when no embeddings endpoint is configured', async () => {
        const viewer = await suite.agent('viewer-bot');
        assertAtminaError(await viewer.fail('search', { query: 'wing', retrieval: 'hybrid' }), 'validation', 'KGW_EMBEDDINGS_URL');
      });

      it('keeps the query text in the audit event of the KBs it searched', async () => {
        const editor = await suite.agent('editor-bot');
        await editor.ok<SearchWire>('search', { query: 'audited zeppelin question', scope: { kb_ids: [kb.kb_id] } });
        const log = await (
          await suite.agent('admin-bot')
        ).ok<{ events: { tool: string | null; action: string; query?: string }[] }>('audit_log', {
          kb_id: kb.kb_id,
          tool: 'search',
        });
        assert.deepEqual(
          log.events.filter((e) => e.query === 'audited zeppelin question').map((e) => e.action),
          ['kb.search'],
        );
      });

      it('searches a KB named by its tenant-qualified slug, as in the spec’s example, and by its bare slug alike', async () => {
        const viewer = await suite.agent('viewer-bot');
        const question = { query: 'customer data retention decision', max_files: 5 };
        const qualified = await viewer.ok<SearchWire>('search', { ...question, scope: { kb_slugs: [`acme/${kb.slug}`] } });
        const bare = await viewer.ok<SearchWire>('search', { ...question, scope: { kb_slugs: [kb.slug] } });
        assert.equal(qualified.results[0]?.path, 'decisions/retention.md');
        assert.deepEqual(qualified, bare);
      });

      it('refuses a slug qualified by another tenant, or naming a KB the caller may not read, as not found like an unknown slug', async () => {
        const viewer = await suite.agent('viewer-bot');
        const refusal = async (slug: string) =>
          (await viewer.fail('search', { query: 'retention', scope: { kb_slugs: [slug] } })).replace(JSON.stringify(slug), '"<slug>"');
        const unknown = await refusal('no-such-kb');
        assertAtminaError(unknown, 'not_found', 'no Knowledge Base "<slug>" is available to you');
        assert.deepEqual(await Promise.all([refusal(`globex/${kb.slug}`), refusal(`acme/${hidden.slug}`), refusal('acme/no-such-kb')]), [
          unknown,
          unknown,
          unknown,
        ]);
      });

      it('refuses a KB of another tenant named in the scope as not found', async () => {
        const globex = await suite.agent('globex-bot', 'context.read context.write', 'globex');
        assertAtminaError(await globex.fail('search', { query: 'retention', scope: { kb_ids: [kb.kb_id] } }), 'not_found');
      });
    });
}
