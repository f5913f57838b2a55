import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { EmbeddingsClient } from '../../connectors/embeddings/client.ts';
import type { OutboxRow, Projection } from '../../connectors/projection.ts';
import { BuiltinSearchBackend } from '../../connectors/search/builtin.ts';
import type { SearchDocument, SearchQuery } from '../../connectors/search/contract.ts';
import { searchProjection } from '../../connectors/search/contract.ts';
import { insertOutboxRows } from '../../src/kernel/outbox/outbox.ts';
import { toOutboxRow } from '../../src/kernel/outbox/queries.ts';
import type { OutboxDbRow } from '../../src/kernel/outbox/queries.ts';
import { OutboxWorker, dueRows } from '../../src/kernel/outbox/worker.ts';
import { fallbackTooMany, hybridSearch } from '../../src/search/hybrid.ts';
import { VECTORS_PROJECTION, decodeVector, encodeVector, nearestVectors, textSha256, vectorEntries, vectorsProjection } from '../../src/search/vectors.ts';
import type { Db } from '../../src/store/db.ts';
import { EmbeddingsServer } from '../support/embeddings-server.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import { searchDocument } from './documents.ts';

/*
 * The vectors projection and the vector side of hybrid search (src/search/vectors.ts,
 * hybrid.ts) on a real store, fed through the outbox from the built-in engine, embedded by the
 * local embeddings server.
 */

const DIMENSIONS = 256;

describe('a stored vector', () => {
  it('reads back as written, from an aligned or an unaligned buffer', () => {
    const vector = new Float32Array([0.5, -0.25, 1e-7, 3]);
    const bytes = encodeVector(vector);
    const unaligned = Buffer.alloc(bytes.length + 1);
    bytes.copy(unaligned, 1);
    assert.deepEqual(
      { aligned: [...decodeVector(bytes, 4)], unaligned: [...decodeVector(unaligned.subarray(1), 4)], first: bytes.readFloatLE(0) },
      { aligned: [...vector], unaligned: [...vector], first: 0.5 },
    );
  });

  it('of the wrong length is refused', () => {
    assert.throws(() => decodeVector(Buffer.alloc(12), 4), /12 bytes, not 16/);
  });
});

for (const backend of storeBackends()) {
  describe(`vectors on ${backend.name}`, () => {
    let store: TestStore;
    let db: Db;
    let server: EmbeddingsServer;
    let client: EmbeddingsClient;
    let projections: Projection[];
    let worker: OutboxWorker;
    const tenantId = randomUUID();
    const otherTenant = randomUUID();
    const engine = () => new BuiltinSearchBackend(db);
    const doc = (id: string, body: string, extra: Partial<SearchDocument> = {}) => searchDocument({ tenantId, id, scope: 'kb:a', title: id, body, ...extra });

    /** Documents into search through the outbox, as the gateway writes them, and the vectors projection after it. */
    async function index(docs: readonly SearchDocument[]): Promise<void> {
      await db.tx((tx) =>
        insertOutboxRows(
          tx,
          docs.map((d) => ({ tenantId: d.tenantId, projection: 'search', resourceKey: d.id, operation: 'upsert', payload: { doc: d } })),
        ),
      );
      await worker.drainAll();
    }

    const queryVector = async (text: string) => (await client.embed([text]))[0] ?? new Float32Array(DIMENSIONS);

    before(async () => {
      store = await backend.open({ migrated: true });
      db = store.db;
      server = await EmbeddingsServer.start({ dimensions: DIMENSIONS, synonyms: [['car', 'automobile', 'vehicle']] });
      client = new EmbeddingsClient({
        url: server.url,
        model: 'test-hash',
        dimensions: DIMENSIONS,
        apiKey: undefined,
        timeoutMs: 5000,
        batch: 4,
        maxChars: 1000,
      });
      projections = [
        searchProjection(engine(), undefined, { changed: (tx, docs) => insertOutboxRows(tx, vectorEntries(docs.filter((d) => d.operation === 'upsert'))) }),
        vectorsProjection(client, db),
      ];
      worker = new OutboxWorker(db, projections, { idleMs: 5, backoff: { baseMs: 1, maxMs: 5 } });
      await index([
        doc('near', 'car car automobile'),
        doc('far', 'a car among boundary layers swept wings tips thickening flows', { tags: ['aero'] }),
        doc('none', 'boundary layer'),
        doc('hidden', 'car car car', { scope: 'kb:b' }),
        searchDocument({ tenantId: otherTenant, id: 'other', scope: 'kb:a', body: 'car car car' }),
      ]);
    });
    after(async () => {
      await server?.close();
      await store?.dispose();
    });

    it('embeds each document the search projection indexed, once', async () => {
      const rows = await db.query<{ doc_id: string; model: string; dims: number }>('SELECT doc_id, model, dims FROM search_vectors ORDER BY doc_id');
      assert.deepEqual(
        rows.map((r) => [r.doc_id, r.model, r.dims]),
        [
          ['far', 'test-hash', DIMENSIONS],
          ['hidden', 'test-hash', DIMENSIONS],
          ['near', 'test-hash', DIMENSIONS],
          ['none', 'test-hash', DIMENSIONS],
          ['other', 'test-hash', DIMENSIONS],
        ],
      );
    });

    it('finds the nearest documents of the caller scopes and tenant, best first, only those with some similarity', async () => {
      const found = await nearestVectors(db, { tenantId, scopes: ['kb:a'], phrases: [], model: 'test-hash', vector: await queryVector('vehicle'), k: 10 });
      assert.deepEqual(found.status === 'ok' ? found.hits.map((h) => h.docId) : found, ['near', 'far']);
    });

    it('finds the nearest documents of the scopes a prefix starts, and none of another tenant', async () => {
      const found = await nearestVectors(db, {
        tenantId,
        scopes: [],
        scopePrefixes: ['kb:'],
        phrases: [],
        model: 'test-hash',
        vector: await queryVector('car'),
        k: 10,
      });
      assert.deepEqual(found.status === 'ok' ? found.hits.map((h) => h.docId).sort() : found, ['far', 'hidden', 'near']);
    });

    it('applies the filters before it ranks and limits', async () => {
      const found = await nearestVectors(db, {
        tenantId,
        scopes: ['kb:a', 'kb:b'],
        filters: { tags: ['aero'] },
        phrases: [],
        model: 'test-hash',
        vector: await queryVector('car'),
        k: 1,
      });
      assert.deepEqual(found.status === 'ok' ? found.hits.map((h) => h.docId) : found, ['far']);
    });

    it('scores no vector of another model', async () => {
      const found = await nearestVectors(db, { tenantId, scopes: ['kb:a'], phrases: [], model: 'another-model', vector: await queryVector('car'), k: 10 });
      assert.deepEqual(found, { status: 'ok', hits: [] });
    });

    it('refuses to score more vectors than its bound, and hybrid search answers lexically saying why', async () => {
      const vector = await queryVector('car');
      const bounded = await nearestVectors(db, { tenantId, scopes: ['kb:a'], phrases: [], model: 'test-hash', vector, k: 10, scanMax: 2 });
      const query: SearchQuery = { tenantId, text: 'car', language: 'english', scopes: ['kb:a'], limit: 10, offset: 0, snippets: 1 };
      const builtin = engine();
      const answer = await hybridSearch({ db, embedder: client, lexical: (q) => builtin.search(q), scanMax: 2 }, query);
      assert.deepEqual(
        { bounded, retrieval: answer.retrieval, ids: answer.result.hits.map((h) => h.id), fallback: answer.result.hits[0]?.reasons.fallback },
        { bounded: { status: 'too_many', vectors: 3 }, retrieval: 'lexical', ids: ['near', 'far'], fallback: fallbackTooMany(2) },
      );
    });

    it('enqueues a document again when its text changed after it was prepared, and embeds it in the next round', async () => {
      const vectors = projections[1];
      assert.ok(vectors !== undefined && vectors.prepare !== undefined);
      await index([doc('moving', 'first text')]);
      await db.tx((tx) => insertOutboxRows(tx, vectorEntries([{ tenantId, id: 'moving' }])));
      // Changed behind the prepared vector's back: the body the vector was fetched for is gone.
      await db.tx((tx) => tx.query("UPDATE search_docs SET body = 'second text' WHERE tenant_id = $1 AND doc_id = 'moving'", [tenantId]));
      await vectors.prepare({ db, rows: await dueRows(db, VECTORS_PROJECTION, 10), signal: AbortSignal.timeout(10_000) });
      await db.tx((tx) => tx.query("UPDATE search_docs SET body = 'third text' WHERE tenant_id = $1 AND doc_id = 'moving'", [tenantId]));
      await db.tx(async (tx) => {
        const rows = (await tx.query<OutboxDbRow>('SELECT * FROM outbox WHERE projection = $1 ORDER BY id', [VECTORS_PROJECTION])).map(toOutboxRow);
        await vectors.apply(rows, { tx, signal: AbortSignal.timeout(10_000) });
        await tx.query('DELETE FROM outbox WHERE id = ANY($1::bigint[])', [rows.map((r: OutboxRow) => r.id)]);
      });
      const waiting = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE projection = $1', [VECTORS_PROJECTION]))[0]?.n;
      await worker.drainAll();
      const [stored] = await db.query<{ sha: string }>("SELECT text_sha256 AS sha FROM search_vectors WHERE tenant_id = $1 AND doc_id = 'moving'", [tenantId]);
      const third = 'moving\nmoving.md\nthird text';
      assert.deepEqual({ waiting, stored: stored?.sha, embeddedLast: server.texts.at(-1) }, { waiting: 1, stored: textSha256(third), embeddedLast: third });
    });
  });
}
