import { createHash } from 'node:crypto';
import os from 'node:os';
import type { Embedder } from '../../connectors/embeddings/client.ts';
import type { ApplyContext, OutboxEntry, OutboxRow, PrepareContext, Projection, Rebuilder, ResourceRef } from '../../connectors/projection.ts';
import { filterSql, scopeSql } from '../../connectors/search/builtin-sql.ts';
import type { SearchFilters } from '../../connectors/search/contract.ts';
import type { Db, Queryable } from '../store/db.ts';
import { insertOutboxRows } from '../kernel/outbox/outbox.ts';
import type { ParsedQuery } from '../search-text/query.ts';

/*
 * The vectors of the search documents, for hybrid retrieval (docs/search.md, "Hybrid
 * retrieval"). The `vectors` outbox projection keeps search_vectors (migration 0019) in step
 * with search_docs: the search projection enqueues a row per document it upserted, in its own
 * transaction (so the row follows the document), and this projection embeds the document as
 * search_docs then holds it. The text embedded is the title, the path and the body's start;
 * its SHA-256 is kept, so a document whose text did not change is not embedded again. A
 * vector goes with its document (a foreign key with ON DELETE CASCADE), so deletes need no row.
 *
 * The embeddings endpoint is asked in `prepare`, outside any transaction (PGlite runs one at a
 * time: a slow endpoint inside one would hold up every write), for the rows about to be
 * claimed; `apply` writes what was prepared. A document whose text changed in between was not
 * prepared: its row is enqueued again, and the next round embeds it. A slow or down endpoint
 * delays vectors only: lexical indexing is the search projection's, which never waits for it.
 *
 * Queries score exactly: cosine similarity (vectors are stored at unit length, so a dot
 * product) over every vector the SQL selects by tenant, the caller's scopes (named or by prefix) and the query's
 * filters, read in pages; neither store here has pgvector (see docs/search.md).
 */

export const VECTORS_PROJECTION = 'vectors';

/** Vectors one query scores at most; with more in the caller's scopes and filters, hybrid answers lexically and says why. */
export const VECTOR_SCAN_MAX = 100_000;
/** Vectors read per statement while a query scores them. */
const VECTOR_PAGE = 1_000;
/** Documents listed per statement by a rebuild. */
const REBUILD_PAGE = 500;

const LITTLE_ENDIAN = os.endianness() === 'LE';

/** The text a document is embedded as: title, path, then the body, cut to `maxChars`. */
export function vectorText(doc: { readonly title: string; readonly path: string; readonly body: string }, maxChars: number): string {
  const text = [doc.title, doc.path, doc.body].filter((part) => part !== '').join('\n');
  let cut = text.length > maxChars ? text.slice(0, maxChars) : text;
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return cut.toWellFormed();
}

export const textSha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** A vector as stored: little-endian float32. */
export function encodeVector(vector: Float32Array): Buffer {
  const out = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) out.writeFloatLE(vector[i] ?? 0, i * 4);
  return out;
}

/** A stored vector (pg gives a Buffer, PGlite a Uint8Array) as float32 values. */
export function decodeVector(bytes: Uint8Array, dims: number): Float32Array {
  if (bytes.byteLength !== dims * 4) throw new Error(`a stored vector has ${bytes.byteLength} bytes, not ${dims * 4}`);
  if (LITTLE_ENDIAN && bytes.byteOffset % 4 === 0) return new Float32Array(bytes.buffer, bytes.byteOffset, dims);
  // Buffers from a pool start anywhere: a copy is aligned.
  if (LITTLE_ENDIAN) return new Float32Array(new Uint8Array(bytes).buffer, 0, dims);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(dims);
  for (let i = 0; i < dims; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

interface DocText {
  readonly tenantId: string;
  readonly docId: string;
  readonly scope: string;
  readonly text: string;
  readonly sha256: string;
  /** A vector of this text, model and length is stored already. */
  readonly current: boolean;
}

const docKey = (tenantId: string, docId: string) => `${tenantId}\u0000${docId}`;

/** The documents named, as search_docs now holds them, with their text and whether their stored vector is current; absent ones left out. */
async function docTexts(db: Queryable, embedder: Embedder, refs: readonly ResourceRef[], lock: boolean): Promise<DocText[]> {
  if (refs.length === 0) return [];
  const rows = await db.query<{ tenant_id: string; doc_id: string; scope: string; title: string; path: string; body: string; sha: string | null }>(
    `SELECT d.tenant_id, d.doc_id, d.scope, d.title, d.path, left(d.body, $3) AS body,
            (SELECT v.text_sha256 FROM search_vectors v
              WHERE v.tenant_id = d.tenant_id AND v.doc_id = d.doc_id AND v.model = $4 AND v.dims = $5) AS sha
       FROM search_docs d JOIN unnest($1::uuid[], $2::text[]) AS r(tenant_id, doc_id) ON d.tenant_id = r.tenant_id AND d.doc_id = r.doc_id
      ORDER BY d.tenant_id, d.doc_id${lock ? ' FOR KEY SHARE OF d' : ''}`,
    [refs.map((r) => r.tenantId), refs.map((r) => r.resourceKey), embedder.maxChars, embedder.model, embedder.dimensions],
  );
  return rows.map((row) => {
    const text = vectorText(row, embedder.maxChars);
    const sha256 = textSha256(text);
    return { tenantId: row.tenant_id, docId: row.doc_id, scope: row.scope, text, sha256, current: row.sha === sha256 };
  });
}

const unique = (refs: readonly ResourceRef[]): ResourceRef[] => [...new Map(refs.map((r) => [docKey(r.tenantId, r.resourceKey), r])).values()];

/** The outbox entries that have the vectors projection embed these documents as search_docs will hold them. */
export function vectorEntries(docs: readonly { readonly tenantId: string; readonly id: string }[]): OutboxEntry[] {
  return docs.map((d) => ({ tenantId: d.tenantId, projection: VECTORS_PROJECTION, resourceKey: d.id, operation: 'upsert', payload: {} }));
}

/**
 * The `vectors` projection over an embeddings endpoint. Claims at most one request's worth of
 * rows (the endpoint's batch), so one round makes one request.
 */
export function vectorsProjection(embedder: Embedder, db: Db): Projection {
  // Vectors fetched by the last prepare, by tenant, document and text digest.
  let prepared = new Map<string, Float32Array>();
  const preparedKey = (doc: DocText) => `${docKey(doc.tenantId, doc.docId)}\u0000${doc.sha256}`;
  return {
    name: VECTORS_PROJECTION,
    batchSize: embedder.batch,
    async prepare({ db, rows, signal }: PrepareContext) {
      const docs = await docTexts(db, embedder, unique(rows), false);
      const wanted = docs.filter((d) => !d.current);
      const kept = new Map<string, Float32Array>();
      const missing: DocText[] = [];
      for (const doc of wanted) {
        const held = prepared.get(preparedKey(doc));
        if (held === undefined) missing.push(doc);
        else kept.set(preparedKey(doc), held);
      }
      const vectors =
        missing.length === 0
          ? []
          : await embedder.embed(
              missing.map((d) => d.text),
              signal,
            );
      missing.forEach((doc, i) => {
        const vector = vectors[i];
        if (vector !== undefined) kept.set(preparedKey(doc), vector);
      });
      // Only this round's: what is kept stays bounded by one batch.
      prepared = kept;
    },
    async apply(rows: readonly OutboxRow[], context: ApplyContext) {
      const refs = unique(rows.map((r) => ({ tenantId: r.tenantId, resourceKey: r.resourceKey })));
      // Key share, in key order like the search engine's own locks: the document cannot go while its vector is written.
      const docs = await docTexts(context.tx, embedder, refs, true);
      const write: { doc: DocText; vector: Float32Array }[] = [];
      const again: DocText[] = [];
      for (const doc of docs) {
        if (doc.current) continue;
        const vector = prepared.get(preparedKey(doc));
        if (vector === undefined) again.push(doc);
        else write.push({ doc, vector });
      }
      if (write.length > 0) {
        await context.tx.query(
          `INSERT INTO search_vectors (tenant_id, doc_id, scope, text_sha256, model, dims, vector, updated_at)
           SELECT t.tenant_id, t.doc_id, t.scope, t.sha, $5, $6, t.vector, clock_timestamp()
             FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $7::bytea[]) AS t(tenant_id, doc_id, scope, sha, vector)
           ON CONFLICT (tenant_id, doc_id) DO UPDATE SET scope = EXCLUDED.scope, text_sha256 = EXCLUDED.text_sha256, model = EXCLUDED.model,
             dims = EXCLUDED.dims, vector = EXCLUDED.vector, updated_at = EXCLUDED.updated_at`,
          [
            write.map((w) => w.doc.tenantId),
            write.map((w) => w.doc.docId),
            write.map((w) => w.doc.scope),
            write.map((w) => w.doc.sha256),
            embedder.model,
            embedder.dimensions,
            write.map((w) => encodeVector(w.vector)),
          ],
        );
      }
      // Changed since it was prepared (or prepared by another process): the next round embeds it.
      if (again.length > 0) await insertOutboxRows(context.tx, vectorEntries(again.map((d) => ({ tenantId: d.tenantId, id: d.docId }))));
    },
    async clear() {
      // A rebuild (vectorsRebuilder) enqueues every document again, so all are embedded anew.
      prepared = new Map();
      await db.tx((tx) => tx.query('DELETE FROM search_vectors'));
    },
  };
}

/** How a rebuild of the vectors projection revisits every search document. */
export const vectorsRebuilder: Rebuilder = {
  projection: VECTORS_PROJECTION,
  async *keys(db: Queryable): AsyncIterable<ResourceRef> {
    let after: { tenantId: string; docId: string } | null = null;
    for (;;) {
      const page: { tenant_id: string; doc_id: string }[] = await db.query<{ tenant_id: string; doc_id: string }>(
        `SELECT tenant_id, doc_id FROM search_docs
          WHERE $1::uuid IS NULL OR (tenant_id, doc_id) > ($1::uuid, $2::text)
          ORDER BY tenant_id, doc_id LIMIT $3`,
        [after?.tenantId ?? null, after?.docId ?? null, REBUILD_PAGE],
      );
      for (const row of page) yield { tenantId: row.tenant_id, resourceKey: row.doc_id };
      const last = page.at(-1);
      if (last === undefined || page.length < REBUILD_PAGE) return;
      after = { tenantId: last.tenant_id, docId: last.doc_id };
    }
  },
  load(_tx: Queryable, refs: readonly ResourceRef[]): Promise<OutboxEntry[]> {
    return Promise.resolve(vectorEntries(refs.map((r) => ({ tenantId: r.tenantId, id: r.resourceKey }))));
  },
};

export interface NearestQuery {
  readonly tenantId: string;
  readonly scopes: readonly string[];
  /** Scope prefixes the caller may read too (SearchQuery's `scopePrefixes`). */
  readonly scopePrefixes?: readonly string[];
  readonly filters?: SearchFilters;
  readonly phrases: ParsedQuery['phrases'];
  readonly model: string;
  readonly vector: Float32Array;
  /** Candidates returned at most. */
  readonly k: number;
  /** Vectors scored at most (VECTOR_SCAN_MAX unless given). */
  readonly scanMax?: number;
}

export type NearestResult =
  | { readonly status: 'ok'; readonly hits: readonly { readonly docId: string; readonly similarity: number }[] }
  // vectors: how many were found before counting stopped (one more than may be scored).
  | { readonly status: 'too_many'; readonly vectors: number };

/**
 * The `k` documents nearest the query vector among the tenant's documents in the caller's
 * scopes that pass the filters (the lexical query's own: filterSql), by cosine similarity,
 * best first (ties by document id); only similarities above 0. Access and filters are in the
 * SQL, before scoring and limits, so what the caller may not read takes no place.
 */
export async function nearestVectors(db: Db, query: NearestQuery): Promise<NearestResult> {
  const scopes = [...new Set(query.scopes)];
  const prefixes = [...new Set(query.scopePrefixes ?? [])];
  const scanMax = query.scanMax ?? VECTOR_SCAN_MAX;
  if ((scopes.length === 0 && prefixes.length === 0) || query.k <= 0) return { status: 'ok', hits: [] };
  const filter = filterSql(query.filters, query.phrases, 6);
  const where = `v.tenant_id = $1 AND ${scopeSql('d.scope', '$2', '$5', prefixes.length > 0)} AND v.model = $3 AND v.dims = $4${filter.sql === '' ? '' : ` AND ${filter.sql}`}`;
  const from = 'search_vectors v JOIN search_docs d ON d.tenant_id = v.tenant_id AND d.doc_id = v.doc_id';
  const base = [query.tenantId, scopes, query.model, query.vector.length, prefixes, ...filter.params];
  const next = base.length + 1;
  // One statement selects the documents in scope (bounded: one more than may be scored tells
  // "too many"); the vectors are then read by key, a page at a time. Paging the joined query by
  // key instead costs a scan of the whole scope per page where the planner has no statistics
  // (PGlite): 28 s rather than seconds for 100,000 vectors.
  const selected = await db.query<{ doc_id: string }>(`SELECT v.doc_id FROM ${from} WHERE ${where} LIMIT $${next}`, [...base, scanMax + 1]);
  if (selected.length > scanMax) return { status: 'too_many', vectors: selected.length };
  const ids = selected.map((r) => r.doc_id);
  // The best k so far, best first; a candidate better than the last is put in its place.
  const best: { docId: string; similarity: number }[] = [];
  const better = (a: { docId: string; similarity: number }, b: { docId: string; similarity: number }) =>
    a.similarity > b.similarity || (a.similarity === b.similarity && a.docId < b.docId);
  // PGlite hands bytea over as hex text and parses it slowly: as base64 the vectors arrive about
  // twice as fast there. pg parses bytea faster than it would base64.
  const base64 = db.kind === 'pglite';
  for (let at = 0; at < ids.length; at += VECTOR_PAGE) {
    const page = await db.query<{ doc_id: string; vector: Uint8Array | string }>(
      `SELECT doc_id, ${base64 ? "encode(vector, 'base64')" : 'vector'} AS vector FROM search_vectors
        WHERE tenant_id = $1 AND doc_id = ANY($2::text[]) AND model = $3 AND dims = $4`,
      [query.tenantId, ids.slice(at, at + VECTOR_PAGE), query.model, query.vector.length],
    );
    for (const row of page) {
      const bytes = typeof row.vector === 'string' ? Buffer.from(row.vector, 'base64') : row.vector;
      const similarity = dot(query.vector, decodeVector(bytes, query.vector.length));
      if (!(similarity > 0)) continue;
      const candidate = { docId: row.doc_id, similarity };
      const worst = best.at(-1);
      if (best.length >= query.k && worst !== undefined && !better(candidate, worst)) continue;
      // Binary search for its place, then insert and drop the one pushed past k.
      let lo = 0;
      let hi = best.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        const held = best[mid];
        if (held !== undefined && better(held, candidate)) lo = mid + 1;
        else hi = mid;
      }
      best.splice(lo, 0, candidate);
      if (best.length > query.k) best.pop();
    }
  }
  return { status: 'ok', hits: best };
}
