import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { OutboxRow } from '../../connectors/projection.ts';
import type { SearchBackend, SearchDocument, SearchQuery, SearchSource } from '../../connectors/search/contract.ts';
import { searchProjection } from '../../connectors/search/contract.ts';
import { openSearchBackend } from '../../connectors/search/index.ts';
import type { Db } from '../../src/store/db.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import { searchDocument } from './documents.ts';
import type { SearchEngine } from './engines.ts';
import { searchEngines } from './engines.ts';

/*
 * The contract every search engine keeps, run on the built-in engine (PGlite, PostgreSQL) and
 * on Meilisearch (with the built-in statistics ranking its candidates): writes through the
 * outbox's transaction, access by scope inside the query, filters, phrases, prefixes, typos,
 * paging, hostile text.
 */

const scopeA = 'kb:a';
const scopeB = 'kb:b';

async function write(db: Db, engine: SearchBackend, docs: readonly SearchDocument[]): Promise<void> {
  await db.tx((tx) => engine.upsert(docs, { tx, signal: new AbortController().signal }));
}

async function remove(db: Db, engine: SearchBackend, refs: readonly { tenantId: string; id: string }[]): Promise<void> {
  await db.tx((tx) => engine.delete(refs, { tx, signal: new AbortController().signal }));
}

for (const backend of storeBackends()) {
  for (const choice of searchEngines()) {
    describe(`the ${choice.name} search engine on ${backend.name}`, () => {
      let store: TestStore;
      let setup: SearchEngine;
      let engine: SearchBackend;
      let tenantId: string;
      let otherTenant: string;
      const ask = (text: string, extra: Partial<SearchQuery> = {}) =>
        engine.search({ tenantId, text, language: 'english', scopes: [scopeA], limit: 10, snippets: 1, ...extra });
      const doc = (id: string, fields: Partial<SearchDocument> = {}) => searchDocument({ tenantId, id, scope: scopeA, ...fields });

      before(async () => {
        store = await backend.open({ migrated: true });
        setup = choice.open();
        const env = setup.env;
        engine = openSearchBackend(
          env.MEILI_URL === undefined ? undefined : { url: env.MEILI_URL, apiKey: env.MEILI_API_KEY, index: env.MEILI_INDEX ?? 'kgw_documents' },
          store.db,
        );
        tenantId = randomUUID();
        otherTenant = randomUUID();
        await write(store.db, engine, [
          doc('kb_file:wing', {
            path: 'guides/wing.md',
            title: 'Wing design',
            body: 'The boundary layer over a swept wing thickens toward the tip.',
            tags: ['aero'],
          }),
          doc('kb_file:retention', {
            path: 'decisions/retention.md',
            title: 'Customer data retention',
            body: 'We keep customer data for 30 days.',
            mediaType: 'text/markdown',
          }),
          doc('kb_file:meeting', {
            path: 'notes/meeting.md',
            title: 'Weekly meeting',
            body: 'We talked about log retention and the customer survey.',
            updatedAt: '2026-06-01T00:00:00.000Z',
          }),
          doc('kb_file:scan', { path: 'scans/plan.pdf', title: '', body: 'A floor plan of the hangar.', contentKind: 'asset', mediaType: 'application/pdf' }),
          searchDocument({ tenantId: otherTenant, id: 'kb_file:other', scope: scopeA, body: 'customer data retention customer data retention' }),
        ]);
        // A thousand files in a scope the caller does not hold, each a far better match.
        const hidden = Array.from({ length: 1000 }, (_, i) =>
          doc(`kb_file:hidden-${i}`, { scope: scopeB, title: 'Customer data retention', body: 'customer data retention '.repeat(5) }),
        );
        for (let i = 0; i < hidden.length; i += 250) await write(store.db, engine, hidden.slice(i, i + 250));
      });
      after(async () => {
        await engine?.close?.();
        await store?.dispose();
        await setup?.dispose();
      });

      it('finds a document by a word of its body and hands back its fields', async () => {
        const { hits } = await ask('thickens');
        assert.deepEqual(
          hits.map((h) => ({ id: h.id, path: h.path, title: h.title, scope: h.scope })),
          [{ id: 'kb_file:wing', path: 'guides/wing.md', title: 'Wing design', scope: scopeA }],
        );
      });

      it('returns exactly the visible matches, in order and counted, when a thousand hidden ones match better', async () => {
        const answer = await ask('customer data retention', { limit: 50 });
        assert.deepEqual(
          answer.hits.map((h) => h.id),
          ['kb_file:retention', 'kb_file:meeting'],
        );
        assert.equal(answer.total, 2);
      });

      it('scores the visible matches as if the hidden ones did not exist', async () => {
        const alone = randomUUID();
        const visible = ['wing', 'retention', 'meeting', 'scan'];
        const own = await engine.search({ tenantId, text: 'customer data retention', language: 'english', scopes: [scopeA], limit: 10, snippets: 0 });
        const rows = await store.db.query<{
          doc_id: string;
          path: string;
          title: string;
          body: string;
          tags: string[];
          media_type: string;
          content_kind: 'text' | 'asset';
          updated_at: Date;
        }>('SELECT doc_id, path, title, body, tags, media_type, content_kind, updated_at FROM search_docs WHERE tenant_id = $1 AND doc_id = ANY($2::text[])', [
          tenantId,
          visible.map((v) => `kb_file:${v}`),
        ]);
        await write(
          store.db,
          engine,
          rows.map((r) =>
            searchDocument({
              tenantId: alone,
              id: r.doc_id,
              scope: scopeA,
              path: r.path,
              title: r.title,
              body: r.body,
              tags: r.tags,
              mediaType: r.media_type,
              contentKind: r.content_kind,
              updatedAt: new Date(r.updated_at).toISOString(),
            }),
          ),
        );
        const fresh = await engine.search({ tenantId: alone, text: 'customer data retention', language: 'english', scopes: [scopeA], limit: 10, snippets: 0 });
        assert.deepEqual(
          own.hits.map((h) => [h.id, h.score]),
          fresh.hits.map((h) => [h.id, h.score]),
        );
      });

      it('finds nothing for a caller with no scopes', async () => {
        assert.deepEqual(await ask('customer', { scopes: [] }), { hits: [], total: 0 });
      });

      it('never answers with another tenant’s documents', async () => {
        const answer = await engine.search({ tenantId: otherTenant, text: 'wing', language: 'english', scopes: [scopeA], limit: 10, snippets: 0 });
        assert.deepEqual(
          answer.hits.map((h) => h.id),
          [],
        );
      });

      it('ranks a title match above a body match', async () => {
        const { hits } = await ask('customer retention');
        assert.equal(hits[0]?.id, 'kb_file:retention');
      });

      it('filters by tag, media type, content kind, update time and path prefix inside the query', async () => {
        const ids = async (extra: Partial<SearchQuery>) => (await ask('wing customer hangar retention', { ...extra, limit: 10 })).hits.map((h) => h.id).sort();
        assert.deepEqual(
          {
            tags: await ids({ filters: { tags: ['aero'] } }),
            media: await ids({ filters: { mediaTypes: ['application/pdf'] } }),
            asset: await ids({ filters: { contentKind: 'asset' } }),
            since: await ids({ filters: { updatedSince: '2026-03-01T00:00:00.000Z' } }),
            paths: await ids({ filters: { paths: [{ scope: scopeA, prefix: 'decisions/' }] } }),
          },
          {
            tags: ['kb_file:wing'],
            media: ['kb_file:scan'],
            asset: ['kb_file:scan'],
            since: ['kb_file:meeting'],
            paths: ['kb_file:retention'],
          },
        );
      });

      it('requires a quoted phrase as written', async () => {
        assert.deepEqual(
          (await ask('"customer data"')).hits.map((h) => h.id),
          ['kb_file:retention'],
        );
      });

      it('expands a prefix and corrects a typo', async () => {
        assert.deepEqual(
          {
            prefix: (await ask('thick*')).hits.map((h) => h.id),
            typo: (await ask('boundray')).hits.map((h) => h.id),
          },
          { prefix: ['kb_file:wing'], typo: ['kb_file:wing'] },
        );
      });

      it('marks matched words in snippets', async () => {
        const [hit] = (await ask('swept wing')).hits;
        assert.match(hit?.snippets[0] ?? '', /<mark>swept<\/mark> <mark>wing<\/mark>/);
      });

      it('pages without repeating or skipping a document', async () => {
        const all = (await ask('customer retention wing hangar', { limit: 10 })).hits.map((h) => h.id);
        const first = (await ask('customer retention wing hangar', { limit: 2 })).hits.map((h) => h.id);
        const second = (await ask('customer retention wing hangar', { limit: 2, offset: 2 })).hits.map((h) => h.id);
        assert.deepEqual([...first, ...second], all.slice(0, 4));
      });

      it('replaces a document on upsert and forgets it on delete, twice without harm', async () => {
        await write(store.db, engine, [doc('kb_file:temp', { body: 'zeppelin hangar' })]);
        await write(store.db, engine, [doc('kb_file:temp', { body: 'airship dock' })]);
        const replaced = { zeppelin: (await ask('zeppelin')).total, airship: (await ask('airship')).total };
        await remove(store.db, engine, [{ tenantId, id: 'kb_file:temp' }]);
        await remove(store.db, engine, [
          { tenantId, id: 'kb_file:temp' },
          { tenantId, id: 'kb_file:never' },
        ]);
        assert.deepEqual({ ...replaced, gone: (await ask('airship')).total }, { zeppelin: 0, airship: 1, gone: 0 });
      });

      it('reads hostile and huge query text without failing', async () => {
        const answers = await Promise.all(
          [
            '\u0000wing',
            'wing\ud800',
            '\u202ewing\u200b',
            '"',
            '*',
            '"""',
            'w'.repeat(100_000),
            Array.from({ length: 500 }, (_, i) => `word${i}`).join(' '),
          ].map(async (text) => (await ask(text)).hits.map((h) => h.id)),
        );
        assert.deepEqual(answers.slice(0, 3), [['kb_file:wing'], ['kb_file:wing'], ['kb_file:wing']]);
      });

      it('removes the documents a resource no longer yields, through the projection and its source', async () => {
        // A resource shown as two documents (a Knowledge's published and latest versions), then as one.
        let yields: SearchDocument[] = [
          doc('knowledge:k', { kind: 'knowledge', scope: 'knowledge:k', path: '', body: 'glider published' }),
          doc('knowledge.latest:k', { kind: 'knowledge', scope: 'knowledge.latest:k', path: '', body: 'glider draft' }),
        ];
        const source: SearchSource = {
          load: () => Promise.resolve(yields),
          documentIds: (ref) => [ref.resourceKey, ref.resourceKey.replace('knowledge:', 'knowledge.latest:')],
        };
        const projection = searchProjection(engine, source);
        const row: OutboxRow = {
          id: '1',
          tenantId,
          projection: 'search',
          resourceKey: 'knowledge:k',
          operation: 'upsert',
          payload: {},
          createdAt: new Date(),
          attempts: 0,
        };
        const apply = () => store.db.tx((tx) => projection.apply([row], { tx, signal: new AbortController().signal }));
        const found = async () =>
          (await engine.search({ tenantId, text: 'glider', language: 'english', scopes: ['knowledge:k', 'knowledge.latest:k'], limit: 10, snippets: 0 })).hits
            .map((h) => h.id)
            .sort();
        await apply();
        const both = await found();
        yields = [doc('knowledge:k', { kind: 'knowledge', scope: 'knowledge:k', path: '', body: 'glider published again' })];
        await apply();
        const one = await found();
        yields = [];
        await apply();
        assert.deepEqual({ both, one, none: await found() }, { both: ['knowledge.latest:k', 'knowledge:k'], one: ['knowledge:k'], none: [] });
      });

      describe('scope prefixes', () => {
        // A tenant of its own: two Memories and a KB file visible, a hundred far better matches in
        // scopes no prefix of the query starts (another type, a scope that only looks alike).
        const prefixTenant = randomUUID();
        const visible = [
          { id: 'memory:m1', scope: 'memory:m1', title: 'Glacier walk', body: 'The glacier moves a metre a day.' },
          { id: 'memory:m2', scope: 'memory:m2', title: 'Snow notes', body: 'Fresh snow hides the glacier crevasses.' },
          { id: 'kb_file:k', scope: 'kb:k', title: 'Route', body: 'Cross the glacier early, before the sun softens it.' },
        ];
        const hidden = [
          ...Array.from({ length: 50 }, (_, i) => ({ id: `artifact:h${i}`, scope: `artifact:h${i}`, title: 'Glacier glacier', body: 'glacier '.repeat(8) })),
          ...Array.from({ length: 50 }, (_, i) => ({ id: `memoryx:h${i}`, scope: `memoryx:h${i}`, title: 'Glacier glacier', body: 'glacier '.repeat(8) })),
          { id: 'mem_ry:odd', scope: 'mem_ry:odd', title: 'Odd', body: 'An odd glacier.' },
        ];
        const pdoc = (tenant: string, d: { id: string; scope: string; title: string; body: string }) =>
          searchDocument({ tenantId: tenant, id: d.id, scope: d.scope, title: d.title, body: d.body, path: '' });
        const glacier = (tenant: string, extra: Partial<SearchQuery>) =>
          engine.search({ tenantId: tenant, text: 'glacier', language: 'english', scopes: [], limit: 50, snippets: 0, ...extra });

        before(async () => {
          await write(
            store.db,
            engine,
            [...visible, ...hidden].map((d) => pdoc(prefixTenant, d)),
          );
        });

        it('finds the documents of the scopes named and of the scopes starting with a prefix, and no others', async () => {
          const answer = await glacier(prefixTenant, { scopes: ['kb:k'], scopePrefixes: ['memory:'] });
          assert.deepEqual({ ids: answer.hits.map((h) => h.id).sort(), total: answer.total }, { ids: ['kb_file:k', 'memory:m1', 'memory:m2'], total: 3 });
        });

        it('reads a prefix as characters, not as a pattern', async () => {
          const answer = await glacier(prefixTenant, { scopePrefixes: ['mem_'] });
          assert.deepEqual(
            answer.hits.map((h) => h.id),
            ['mem_ry:odd'],
          );
        });

        it('scores prefix matches with the statistics of the matched scopes only', async () => {
          const alone = randomUUID();
          await write(
            store.db,
            engine,
            visible.map((d) => pdoc(alone, d)),
          );
          const byPrefix = await glacier(prefixTenant, { scopes: ['kb:k'], scopePrefixes: ['memory:'] });
          const named = await glacier(alone, { scopes: visible.map((d) => d.scope) });
          assert.deepEqual(
            byPrefix.hits.map((h) => [h.id, h.score]),
            named.hits.map((h) => [h.id, h.score]),
          );
        });

        it('never matches another tenant’s documents by prefix', async () => {
          const answer = await glacier(randomUUID(), { scopePrefixes: ['memory:', 'artifact:', 'kb:'] });
          assert.deepEqual({ ids: answer.hits.map((h) => h.id), total: answer.total }, { ids: [], total: 0 });
        });
      });

      it('keeps every document of two concurrent writers', async () => {
        const batch = (prefix: string) => Array.from({ length: 20 }, (_, i) => doc(`kb_file:${prefix}-${i}`, { scope: 'kb:c', body: `parallel ${prefix}` }));
        await Promise.all([write(store.db, engine, batch('left')), write(store.db, engine, batch('right'))]);
        const answer = await engine.search({ tenantId, text: 'parallel', language: 'english', scopes: ['kb:c'], limit: 50, snippets: 0 });
        assert.equal(answer.total, 40);
      });
    });
  }
}
