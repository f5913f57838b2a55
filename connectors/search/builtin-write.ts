import { offload } from '../../src/kernel/offload.ts';
import type { Queryable } from '../../src/store/db.ts';
import type { RankingOptions } from './builtin-options.ts';
import type { SearchDocument } from './contract.ts';
import { INDEX_DOC_MODULE, indexDoc } from './index-doc.ts';

/*
 * The built-in engine's index writes (tables in migrations/0017_search.sql): a document's row
 * and postings replaced, and the document frequencies, scope totals and dictionary kept in step.
 * Rows are locked and written in key order, so two writers never wait on each other in a cycle.
 */

const byKey = (a: { tenantId: string; id: string }, b: { tenantId: string; id: string }) =>
  a.tenantId < b.tenantId ? -1 : a.tenantId > b.tenantId ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

interface ExistingRow {
  tenant_id: string;
  doc_id: string;
  doc_no: string;
  scope: string;
  length: number;
}

/** Locks the documents' rows (in key order, so two writers never wait on each other in a cycle) and returns those present. */
async function lockExisting(tx: Queryable, refs: readonly { tenantId: string; id: string }[]): Promise<ExistingRow[]> {
  if (refs.length === 0) return [];
  return tx.query<ExistingRow>(
    `SELECT d.tenant_id, d.doc_id, d.doc_no, d.scope, d.length FROM search_docs d
       JOIN unnest($1::uuid[], $2::text[]) AS r(tenant_id, doc_id) ON d.tenant_id = r.tenant_id AND d.doc_id = r.doc_id
      ORDER BY d.tenant_id, d.doc_id FOR UPDATE OF d`,
    [refs.map((r) => r.tenantId), refs.map((r) => r.id)],
  );
}

/** Adds documents and length to the scopes' totals, in key order. */
async function adjustScopes(tx: Queryable, deltas: Map<string, { tenantId: string; scope: string; docs: number; length: number }>): Promise<void> {
  const rows = [...deltas.values()]
    .filter((d) => d.docs !== 0 || d.length !== 0)
    .sort((a, b) => byKey({ tenantId: a.tenantId, id: a.scope }, { tenantId: b.tenantId, id: b.scope }));
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO search_scopes (tenant_id, scope, docs, total_length)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::float8[])
     ON CONFLICT (tenant_id, scope) DO UPDATE SET docs = search_scopes.docs + EXCLUDED.docs,
       total_length = GREATEST(search_scopes.total_length + EXCLUDED.total_length, 0)`,
    [rows.map((r) => r.tenantId), rows.map((r) => r.scope), rows.map((r) => r.docs), rows.map((r) => r.length)],
  );
}

/**
 * Changes to search_term_df: +1 per new posting, −1 per removed one, by scope number, then term.
 * Nested maps, not one joined key: a batch of 400 documents makes about 100 k changes, and
 * building and hashing a long key for each was a visible share of the worker's time.
 */
type DfDeltas = Map<number, Map<string, number>>;

function addDf(deltas: DfDeltas, scopeNo: number, term: string, n: number): void {
  let terms = deltas.get(scopeNo);
  if (terms === undefined) deltas.set(scopeNo, (terms = new Map<string, number>()));
  terms.set(term, (terms.get(term) ?? 0) + n);
}

/** Deletes the documents' postings, counting what each term's document frequency loses. */
async function removePostings(tx: Queryable, docNos: readonly string[], deltas: DfDeltas): Promise<void> {
  if (docNos.length === 0) return;
  const gone = await tx.query<{ term: string; scope_no: number; n: string }>(
    `WITH gone AS (DELETE FROM search_postings WHERE doc_no = ANY($1::bigint[]) RETURNING term, scope_no)
     SELECT term, scope_no, count(*) AS n FROM gone GROUP BY term, scope_no`,
    [docNos],
  );
  for (const row of gone) addDf(deltas, Number(row.scope_no), row.term, -Number(row.n));
}

/** Applies document-frequency changes in one statement, in key order (so two writers never wait on each other in a cycle). */
async function adjustDf(tx: Queryable, deltas: DfDeltas): Promise<void> {
  const terms: string[] = [];
  const scopeNos: number[] = [];
  const counts: number[] = [];
  for (const [scopeNo, byTerm] of deltas) {
    for (const [term, n] of byTerm) {
      if (n === 0) continue;
      terms.push(term);
      scopeNos.push(scopeNo);
      counts.push(n);
    }
  }
  if (terms.length === 0) return;
  await tx.query(
    `INSERT INTO search_term_df (term, scope_no, df)
     SELECT * FROM unnest($1::text[], $2::int[], $3::int[]) AS d(term, scope_no, n)
      ORDER BY term COLLATE "C", scope_no
     ON CONFLICT (term, scope_no) DO UPDATE SET df = search_term_df.df + EXCLUDED.df`,
    [arrayLiteral(terms), `{${scopeNos.join(',')}}`, `{${counts.join(',')}}`],
  );
}

/**
 * The scope numbers of the documents' scopes (by `tenant\0scope`), adding rows for scopes new
 * to search_scopes. DO NOTHING takes no lock on a scope row that exists, so writers to one
 * KB do not queue here: its counts are changed at the end of the transaction (adjustScopes),
 * as before numbers existed. A second statement reads the numbers: under READ COMMITTED it sees
 * a row another writer committed while this one waited on it, which the first would not return.
 */
async function scopeNumbers(tx: Queryable, docs: readonly { tenantId: string; scope: string }[]): Promise<Map<string, number>> {
  const pairs = new Map<string, { tenantId: string; scope: string }>();
  for (const d of docs) pairs.set(`${d.tenantId.toLowerCase()}\u0000${d.scope}`, { tenantId: d.tenantId.toLowerCase(), scope: d.scope });
  const sorted = [...pairs.values()].sort((a, b) => byKey({ tenantId: a.tenantId, id: a.scope }, { tenantId: b.tenantId, id: b.scope }));
  const tenants = sorted.map((p) => p.tenantId);
  const scopes = sorted.map((p) => p.scope);
  await tx.query(
    `INSERT INTO search_scopes (tenant_id, scope, docs, total_length)
     SELECT t, s, 0, 0 FROM unnest($1::uuid[], $2::text[]) AS n(t, s) ORDER BY t, s COLLATE "C"
     ON CONFLICT (tenant_id, scope) DO NOTHING`,
    [tenants, scopes],
  );
  const rows = await tx.query<{ tenant_id: string; scope: string; scope_no: number }>(
    `SELECT s.tenant_id, s.scope, s.scope_no FROM search_scopes s
       JOIN unnest($1::uuid[], $2::text[]) AS n(t, s) ON s.tenant_id = n.t AND s.scope = n.s`,
    [tenants, scopes],
  );
  return new Map(rows.map((r) => [`${r.tenant_id}\u0000${r.scope}`, Number(r.scope_no)]));
}

/**
 * A PostgreSQL array literal for text values, every element quoted. The driver's own conversion
 * escapes element by element through a regular expression each; for the 60 k terms of a batch
 * this is several times faster, and it is the same text the driver would send.
 */
function arrayLiteral(values: readonly string[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i] ?? '';
    const plain = v.indexOf('"') < 0 && v.indexOf('\\') < 0;
    out += `${i === 0 ? '' : ','}"${plain ? v : v.replace(/["\\]/g, '\\$&')}"`;
  }
  return `${out}}`;
}

function addDelta(
  deltas: Map<string, { tenantId: string; scope: string; docs: number; length: number }>,
  tenantId: string,
  scope: string,
  docs: number,
  length: number,
) {
  const key = `${tenantId}\u0000${scope}`;
  const entry = deltas.get(key) ?? { tenantId, scope, docs: 0, length: 0 };
  entry.docs += docs;
  entry.length += length;
  deltas.set(key, entry);
}

/**
 * Writes the documents (the last of each key) in one transaction: their rows, postings, new
 * dictionary terms, and the document frequencies and scope totals they change. Returns how many
 * documents were written.
 */
export async function writeDocs(tx: Queryable, docs: readonly SearchDocument[], ranking: RankingOptions): Promise<number> {
  const latest = new Map<string, SearchDocument>();
  for (const doc of docs) latest.set(`${doc.tenantId}\u0000${doc.id}`, doc);
  const ordered = [...latest.values()].sort(byKey);
  if (ordered.length === 0) return 0;
  const existing = await lockExisting(tx, ordered);
  const deltas = new Map<string, { tenantId: string; scope: string; docs: number; length: number }>();
  for (const row of existing) addDelta(deltas, row.tenant_id, row.scope, -1, -Number(row.length));
  const dfDeltas: DfDeltas = new Map();
  await removePostings(
    tx,
    existing.map((r) => r.doc_no),
    dfDeltas,
  );
  // Postings go as one row per posting of only what differs per posting (term, tf, fields and
  // the document's place in the batch); tenant, scope, doc_no and length go once per document
  // and are picked by that place (fixed-width arrays, so each pick is a direct offset).
  const postings = { docs: [] as number[], terms: [] as string[], tfs: [] as number[], fields: [] as number[] };
  const perDoc = { scopeNos: [] as number[], docNos: [] as string[], lengths: [] as number[] };
  const dictionary = new Map<string, Set<string>>();
  // Tokenising and counting a large body runs on a worker thread (src/kernel/offload.ts).
  const indexed = await Promise.all(ordered.map((doc) => offload(INDEX_DOC_MODULE, indexDoc, doc.body.length, doc, ranking)));
  // One statement for every document of the batch, inserting in key order (WITH ORDINALITY keeps
  // the sorted order, so new rows take their doc_no and their key's index slot in that order).
  // Tags go as JSON text, one element per document, since unnest flattens an array of arrays.
  const rows = await tx.query<{ tenant_id: string; doc_id: string; doc_no: string }>(
    `INSERT INTO search_docs (tenant_id, doc_id, kind, scope, language, path, title, body, stems, length, tags, media_type, content_kind, updated_at, ref, indexed_at)
     SELECT r.tenant_id, r.doc_id, r.kind, r.scope, r.language, r.path, r.title, r.body, r.stems, r.length,
            ARRAY(SELECT jsonb_array_elements_text(r.tags::jsonb)), r.media_type, r.content_kind, r.updated_at, r.ref::jsonb, clock_timestamp()
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::real[],
                   $11::text[], $12::text[], $13::text[], $14::timestamptz[], $15::text[])
            WITH ORDINALITY AS r(tenant_id, doc_id, kind, scope, language, path, title, body, stems, length, tags, media_type, content_kind, updated_at, ref, ord)
      ORDER BY r.ord
     ON CONFLICT (tenant_id, doc_id) DO UPDATE SET kind = EXCLUDED.kind, scope = EXCLUDED.scope, language = EXCLUDED.language,
       path = EXCLUDED.path, title = EXCLUDED.title, body = EXCLUDED.body, stems = EXCLUDED.stems, length = EXCLUDED.length,
       tags = EXCLUDED.tags, media_type = EXCLUDED.media_type, content_kind = EXCLUDED.content_kind, updated_at = EXCLUDED.updated_at,
       ref = EXCLUDED.ref, indexed_at = EXCLUDED.indexed_at
     RETURNING tenant_id, doc_id, doc_no`,
    [
      ordered.map((d) => d.tenantId),
      ordered.map((d) => d.id),
      ordered.map((d) => d.kind),
      ordered.map((d) => d.scope),
      ordered.map((d) => d.language),
      ordered.map((d) => d.path.toWellFormed()),
      ordered.map((d) => d.title.toWellFormed()),
      indexed.map((x) => x.body),
      indexed.map((x) => x.stems),
      indexed.map((x) => x.length),
      ordered.map((d) => JSON.stringify(d.tags)),
      ordered.map((d) => d.mediaType),
      ordered.map((d) => d.contentKind),
      ordered.map((d) => d.updatedAt),
      ordered.map((d) => JSON.stringify(d.ref)),
    ],
  );
  const docNos = new Map<string, string>();
  for (const row of rows) docNos.set(`${row.tenant_id}\u0000${row.doc_id}`, row.doc_no);
  const scopeNos = await scopeNumbers(tx, ordered);
  for (const entry of indexed) {
    const doc = entry.doc;
    // uuids come back from the store in lower case; a document may name its tenant in either.
    const tenant = doc.tenantId.toLowerCase();
    const docNo = docNos.get(`${tenant}\u0000${doc.id}`);
    const scopeNo = scopeNos.get(`${tenant}\u0000${doc.scope}`);
    if (docNo === undefined || scopeNo === undefined) throw new Error('search: a document or scope row was not written');
    addDelta(deltas, doc.tenantId, doc.scope, 1, entry.length);
    perDoc.scopeNos.push(scopeNo);
    perDoc.docNos.push(docNo);
    perDoc.lengths.push(entry.length);
    const place = perDoc.docNos.length; // PostgreSQL arrays count from 1
    const terms = dictionary.get(doc.tenantId) ?? new Set<string>();
    for (let i = 0; i < entry.terms.length; i++) {
      const term = entry.terms[i] ?? '';
      postings.docs.push(place);
      postings.terms.push(term);
      postings.tfs.push(entry.tfs[i] ?? 0);
      postings.fields.push(entry.fields[i] ?? 0);
      addDf(dfDeltas, scopeNo, term, 1);
      terms.add(term);
    }
    dictionary.set(doc.tenantId, terms);
  }
  // In document order, not key order: a document's postings then share a page or two of the
  // table, which feedback, re-ranking and the hits read document by document (in key order
  // inserting was about 12 % faster, but re-ranking 100 documents went from 4 to 60 ms at 100 k).
  if (postings.terms.length > 0) {
    await tx.query(
      `INSERT INTO search_postings (doc_no, scope_no, tf, length, fields, term)
       SELECT ($5::bigint[])[p.doc], ($6::int[])[p.doc], p.tf, ($7::real[])[p.doc], p.fields, p.term
         FROM unnest($1::int[], $2::text[], $3::real[], $4::smallint[]) AS p(doc, term, tf, fields)`,
      [
        `{${postings.docs.join(',')}}`,
        arrayLiteral(postings.terms),
        `{${postings.tfs.join(',')}}`,
        `{${postings.fields.join(',')}}`,
        `{${perDoc.docNos.join(',')}}`,
        `{${perDoc.scopeNos.join(',')}}`,
        `{${perDoc.lengths.join(',')}}`,
      ],
    );
  }
  // New terms join the dictionary in one sorted statement per tenant, so two writers adding the same new terms wait in one order.
  for (const [tenantId, terms] of [...dictionary].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const sorted = [...terms].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    await tx.query(`INSERT INTO search_terms (tenant_id, term) SELECT $1, t FROM unnest($2::text[]) AS t ORDER BY t COLLATE "C" ON CONFLICT DO NOTHING`, [
      tenantId,
      sorted,
    ]);
  }
  await adjustDf(tx, dfDeltas);
  await adjustScopes(tx, deltas);
  return ordered.length;
}

/** Removes the documents, their postings and what they added to frequencies and totals. Returns how many were present. */
export async function removeDocs(tx: Queryable, refs: readonly { tenantId: string; id: string }[]): Promise<number> {
  const existing = await lockExisting(tx, [...refs].sort(byKey));
  if (existing.length === 0) return 0;
  const deltas = new Map<string, { tenantId: string; scope: string; docs: number; length: number }>();
  for (const row of existing) addDelta(deltas, row.tenant_id, row.scope, -1, -Number(row.length));
  const docNos = existing.map((r) => r.doc_no);
  const dfDeltas: DfDeltas = new Map();
  await removePostings(tx, docNos, dfDeltas);
  await tx.query('DELETE FROM search_docs WHERE doc_no = ANY($1::bigint[])', [docNos]);
  await adjustDf(tx, dfDeltas);
  await adjustScopes(tx, deltas);
  return existing.length;
}
