import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PostgresGraphStore } from '../../connectors/graph/postgres.ts';
import { graphEntries, graphProjection, isGraphRow } from '../../connectors/graph/projection.ts';
import type { GraphChange, GraphStore } from '../../connectors/graph/contract.ts';
import type { OutboxRow } from '../../connectors/projection.ts';
import type { SearchBackend, SearchDocument } from '../../connectors/search/contract.ts';
import { searchProjection } from '../../connectors/search/contract.ts';
import { searchDocument } from '../search/documents.ts';
import { kbFileEntries, kbFileRebuilders, kbFileResourceKey } from '../../src/atmina/kb/projection.ts';
import type { KbFile } from '../../src/atmina/kb/queries.ts';
import { configuredProjections } from '../../src/open-services.ts';
import { enqueue } from '../../src/kernel/outbox/outbox.ts';
import { rebuildProjection } from '../../src/kernel/outbox/rebuild.ts';
import { OutboxWorker } from '../../src/kernel/outbox/worker.ts';
import type { Queryable } from '../../src/store/db.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import { GLOBEX_KB_ORG, KbSuite, backendLabel } from './support.ts';
import { seedOrg } from '../support/gateway.ts';

/*
 * Knowledge-Base file rows in the outbox: a graph projection without a file source skips them
 * and search without one skips upserts that carry no document, so neither holds back or fails
 * on them; with a source the graph records each file as it now is, or forgets it.
 */

const FILE: KbFile = {
  id: '5d1c8a2e-0c1f-4a57-9f0e-1b2c3d4e5f60',
  kbId: '6e2d9b3f-1d2a-4b68-8a1f-2c3d4e5f6071',
  path: 'a.md',
  version: 1,
  sha256: 'a'.repeat(64),
  sizeBytes: 1,
  mediaType: 'text/markdown',
  kind: 'text',
  tags: [],
  createdAt: new Date(),
  createdBy: undefined,
  updatedAt: new Date(),
  updatedBy: undefined,
  deletedAt: undefined,
};

function row(entry: ReturnType<typeof kbFileEntries>[number], id: number): OutboxRow {
  return { ...entry, payload: entry.payload ?? {}, id: String(id), createdAt: new Date(), attempts: 0 };
}

describe('KB file rows in the projections', () => {
  it('enqueues one row per projection under kb_file:<id>', () => {
    assert.deepEqual(
      kbFileEntries('t', FILE, 'upsert').map((e) => ({ projection: e.projection, resourceKey: e.resourceKey, operation: e.operation })),
      [
        { projection: 'search', resourceKey: kbFileResourceKey(FILE.id), operation: 'upsert' },
        { projection: 'graph', resourceKey: kbFileResourceKey(FILE.id), operation: 'upsert' },
      ],
    );
  });

  it('tells the graph’s own rows from KB file rows', () => {
    const [, graph] = kbFileEntries('t', FILE, 'upsert');
    assert.ok(graph);
    assert.deepEqual({ own: isGraphRow(graphEntries.deleteNode('t', 'n')), file: isGraphRow(graph) }, { own: true, file: false });
  });

  it('records a KB file its source shows, and forgets one it does not', async () => {
    const written: GraphChange[] = [];
    const store = { write: (changes: readonly GraphChange[]) => Promise.resolve(void written.push(...changes)) } as unknown as GraphStore;
    const shown = { ...FILE, id: '7f3e0c4a-2e3b-4c79-9b20-3d4e5f607182' };
    const source = {
      load: () =>
        Promise.resolve([
          { file: { tenantId: 't', kbId: shown.kbId, fileId: shown.id, path: shown.path, kind: 'text' as const, mediaType: shown.mediaType }, links: [] },
        ]),
    };
    const [gone] = kbFileEntries('t', FILE, 'upsert').filter((e) => e.projection === 'graph');
    const [kept] = kbFileEntries('t', shown, 'upsert').filter((e) => e.projection === 'graph');
    assert.ok(gone && kept);
    await graphProjection(store, source).apply([row(gone, 1), row(kept, 2)], {
      tx: { query: () => Promise.resolve([]) },
      signal: new AbortController().signal,
    });
    assert.deepEqual(
      written.map((c) => (c.op === 'putKbFile' ? `put ${c.file.fileId}` : c.op === 'removeKbFile' ? `remove ${c.fileId}` : c.op)),
      [`remove ${FILE.id}`, `put ${shown.id}`],
    );
  });

  it('passes search deletes of KB files on and skips their document-less upserts', async () => {
    const calls: string[] = [];
    const backend: SearchBackend = {
      name: 'recording',
      upsert: (docs: readonly SearchDocument[]) => Promise.resolve(void calls.push(`upsert ${docs.map((d) => d.id).join(',')}`)),
      delete: (refs) => Promise.resolve(void calls.push(`delete ${refs.map((r) => r.id).join(',')}`)),
      search: () => Promise.resolve({ hits: [], total: 0 }),
      stats: () => Promise.resolve({ backend: 'recording', documents: 0 }),
      clear: () => Promise.resolve(),
    };
    const [upsert] = kbFileEntries('t', FILE, 'upsert');
    const [remove] = kbFileEntries('t', FILE, 'delete');
    assert.ok(upsert && remove);
    const doc: SearchDocument = searchDocument({ tenantId: 't', id: 'memory:1', kind: 'memory', body: 'x' });
    await searchProjection(backend).apply([row(upsert, 1), { ...row(upsert, 2), resourceKey: doc.id, payload: { doc } }, row(remove, 3)], {
      tx: { query: () => Promise.resolve([]) },
      signal: new AbortController().signal,
    });
    assert.deepEqual(calls, ['upsert memory:1', `delete ${kbFileResourceKey(FILE.id)}`]);
  });

  for (const backend of storeBackends()) {
    describe(`the graph projection on ${backend.name}`, () => {
      let store: TestStore;
      let tenantId: string;
      before(async () => {
        store = await backend.open({ migrated: true });
        await seedOrg(store.db, GLOBEX_KB_ORG);
        const [tenant] = await store.db.query<{ id: string }>("SELECT id FROM tenants WHERE slug = 'globex'");
        assert.ok(tenant);
        tenantId = tenant.id;
        // The org file's own graph rows are applied first, so only this test's rows are left.
        await new OutboxWorker(store.db, [graphProjection(new PostgresGraphStore(store.db))]).drainAll();
      });
      after(async () => {
        await store?.dispose();
      });

      it('applies the tenant’s graph rows around KB file rows, failing none', async () => {
        const graph = new PostgresGraphStore(store.db);
        const node = graphEntries.upsertNode({ tenantId, id: 'project:atlas', type: 'project', properties: { title: 'Atlas' }, access: 'public' });
        await store.db.tx((tx) => enqueue(tx, [...kbFileEntries(tenantId, FILE, 'upsert'), node, ...kbFileEntries(tenantId, FILE, 'delete')]));
        const result = await new OutboxWorker(store.db, [graphProjection(graph)]).drainAll();
        const left = await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox WHERE projection = 'graph'");
        assert.deepEqual({ ...result, left: left[0]?.n, nodes: (await graph.counts(tenantId)).nodes > 0 }, { applied: 3, failed: 0, left: 0, nodes: true });
      });
    });
  }
});

describe('the KB file rebuilder’s keys', () => {
  it('walks each tenant’s files by id a page at a time, listing each file once', async () => {
    const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
    const files: Record<string, string[]> = { t1: Array.from({ length: 1201 }, (_, n) => uuid(n)), t2: [uuid(5000)], t3: [] };
    const pages: number[] = [];
    // Answers the two statements keys() runs: the tenants, and a page of a tenant's files after an id.
    const db: Queryable = {
      query<R>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
        if (sql.includes('FROM tenants')) return Promise.resolve(Object.keys(files).map((id) => ({ id })) as R[]);
        const [tenantId, after, limit] = params as [string, string | null, number];
        const page = (files[tenantId] ?? []).filter((id) => after === null || id > after).slice(0, limit);
        pages.push(page.length);
        return Promise.resolve(page.map((id) => ({ id })) as R[]);
      },
    };
    const rebuilder = kbFileRebuilders.find((r) => r.projection === 'graph');
    assert.ok(rebuilder);
    const keys: string[] = [];
    for await (const ref of rebuilder.keys(db)) keys.push(`${ref.tenantId} ${ref.resourceKey}`);
    const expected = Object.entries(files).flatMap(([tenant, ids]) => ids.map((id) => `${tenant} ${kbFileResourceKey(id)}`));
    assert.deepStrictEqual({ keys, pages }, { keys: expected, pages: [500, 500, 201, 1, 0] });
  });
});

for (const backend of storeBackends()) {
  describe(`rebuilding projections of KB files on ${backendLabel(backend)}`, () => {
    let suite: KbSuite;
    before(async () => {
      suite = await KbSuite.open(backend);
    });
    after(async () => {
      await suite?.close();
    });

    it('enqueues one graph row per live file of a live KB, none for deleted files or archived KBs', async () => {
      const admin = await suite.agent('admin-bot');
      const live = await suite.kb();
      const kept = [await suite.file(live.kb_id, 'a.md', 'a'), await suite.file(live.kb_id, 'notes/b.md', 'b')];
      await suite.file(live.kb_id, 'gone.md', 'gone');
      await admin.ok('delete_file', { kb_id: live.kb_id, path: 'gone.md', confirm: 'gone.md' });
      const archived = await suite.kb();
      await suite.file(archived.kb_id, 'c.md', 'c');
      await admin.ok('delete_kb', { kb_id: archived.kb_id, confirm: archived.slug });
      const globex = await (
        await suite.agent('globex-bot', 'context.read context.write', 'globex')
      ).ok<{ kb_id: string }>('create_kb', {
        name: 'Ops',
        team: 'ops',
      });
      const elsewhere = await (
        await suite.agent('globex-bot', 'context.read context.write', 'globex')
      ).ok<{ file_id: string }>('write_file', {
        kb_id: globex.kb_id,
        path: 'run.md',
        mode: 'create',
        content: 'run',
      });
      const [mark] = await suite.db.query<{ id: string }>('SELECT coalesce(max(id), 0)::text AS id FROM outbox');

      const report = await rebuildProjection(suite.db, configuredProjections(new PostgresGraphStore(suite.db)), 'graph');
      const rows = await suite.db.query<{ projection: string; resource_key: string; operation: string; payload: { path?: string } | string }>(
        'SELECT projection, resource_key, operation, payload FROM outbox WHERE id > $1::bigint ORDER BY id',
        [mark?.id ?? '0'],
      );
      const files = rows.filter((r) => r.resource_key.startsWith('kb_file:'));
      assert.deepStrictEqual(
        {
          enqueued: report.enqueued,
          keys: files.map((r) => r.resource_key).sort(),
          projections: [...new Set(files.map((r) => `${r.projection} ${r.operation}`))],
        },
        {
          enqueued: rows.length,
          keys: [...kept.map((f) => f.file_id), elsewhere.file_id].map(kbFileResourceKey).sort(),
          projections: ['graph upsert'],
        },
      );
    });

    it('leaves out a file deleted after its key was listed', async () => {
      const kb = await suite.kb();
      const file = await suite.file(kb.kb_id, 'late.md', 'late');
      const rebuilder = kbFileRebuilders.find((r) => r.projection === 'graph');
      assert.ok(rebuilder);
      const ref = { tenantId: await suite.tenantIdOf('acme'), resourceKey: kbFileResourceKey(file.file_id) };
      const before = await rebuilder.load(suite.db, [ref]);
      await (await suite.agent('admin-bot')).ok('delete_file', { kb_id: kb.kb_id, path: 'late.md', confirm: 'late.md' });
      const afterDelete = await rebuilder.load(suite.db, [ref]);
      assert.deepStrictEqual(
        { before: before.map((e) => ({ resourceKey: e.resourceKey, operation: e.operation })), after: afterDelete },
        { before: [{ resourceKey: ref.resourceKey, operation: 'upsert' }], after: [] },
      );
    });
  });
}
