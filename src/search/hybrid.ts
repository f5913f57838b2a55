import type { Embedder } from '../../connectors/embeddings/client.ts';
import type { PageRow } from '../../connectors/search/builtin.ts';
import { snippetText, surfaceWords } from '../search-text/shown-text.ts';
import type { SearchHit, SearchQuery, SearchReasons, SearchResult } from '../../connectors/search/contract.ts';
import { readsNothing } from '../../connectors/search/contract.ts';
import type { Db } from '../store/db.ts';
import { analyzer } from '../search-text/analyzer.ts';
import { parseQuery } from '../search-text/query.ts';
import { SNIPPET_SCAN_CHARS, snippetsOf } from '../search-text/snippets.ts';
import { VECTOR_SCAN_MAX, nearestVectors } from './vectors.ts';

/*
 * Hybrid retrieval (docs/search.md, "Hybrid retrieval"): the engine's lexical list and the
 * nearest vectors, both within the caller's scopes and filters, fused by reciprocal rank. The
 * query is embedded once; when the endpoint fails, is slow, or the vectors in scope are too
 * many to score, the answer is the lexical one and says so. The lexical path never depends on
 * the endpoint.
 */

/** Documents taken from each list. */
export const HYBRID_LIST_DEPTH = 100;
/** Reciprocal-rank fusion's constant: a document's score is the sum over the lists of 1 / (60 + rank). */
export const RRF_K = 60;

export const FALLBACK_EMBEDDER = 'vector search was skipped: the embeddings endpoint did not answer; the results are lexical';
export const fallbackTooMany = (max: number): string =>
  `vector search was skipped: more than ${max} vectors are in the scope and filters; the results are lexical (narrow the scope to search by meaning)`;

export interface HybridDeps {
  /** The store holding search_docs and search_vectors. */
  readonly db: Db;
  readonly embedder: Embedder;
  /** The engine's lexical search. */
  readonly lexical: (query: SearchQuery) => Promise<SearchResult>;
  /** Vectors one query scores at most (VECTOR_SCAN_MAX unless given). */
  readonly scanMax?: number;
}

export interface HybridOutcome {
  readonly result: SearchResult;
  /** What was done: 'lexical' when the vector side was skipped (reasons.fallback says why). */
  readonly retrieval: 'hybrid' | 'lexical';
}

/** A document's row as the built-in engine reads it for a page of hits. */
type DocRow = Omit<PageRow, 'doc_no'>;

/** The lexical answer to the query as asked, each hit saying its lexical rank and why it is not hybrid. */
async function lexicalFallback(deps: HybridDeps, query: SearchQuery, fallback: string): Promise<HybridOutcome> {
  const result = await deps.lexical(query);
  const offset = query.offset ?? 0;
  return {
    retrieval: 'lexical',
    result: {
      total: result.total,
      hits: result.hits.map((hit, i) => ({ ...hit, reasons: { ...hit.reasons, lists: [{ list: 'lexical', rank: offset + i + 1 }], fallback } })),
    },
  };
}

export async function hybridSearch(deps: HybridDeps, query: SearchQuery, signal?: AbortSignal): Promise<HybridOutcome> {
  if (readsNothing(query) || query.limit <= 0) return { retrieval: 'hybrid', result: { hits: [], total: 0 } };
  const a = analyzer(query.language);
  const parsed = parseQuery(a, query.text);
  const [lexical, vector] = await Promise.all([
    deps.lexical({ ...query, limit: HYBRID_LIST_DEPTH, offset: 0, snippets: 0 }),
    // The endpoint's own message is the operator's (the vectors projection's status shows its failures), never the caller's.
    deps.embedder.embed([query.text], signal).then(
      ([embedded]) => embedded,
      () => undefined,
    ),
  ]);
  if (vector === undefined) return lexicalFallback(deps, query, FALLBACK_EMBEDDER);
  const nearest = await nearestVectors(deps.db, {
    tenantId: query.tenantId,
    scopes: query.scopes,
    ...(query.scopePrefixes === undefined ? {} : { scopePrefixes: query.scopePrefixes }),
    ...(query.filters === undefined ? {} : { filters: query.filters }),
    phrases: parsed.phrases,
    model: deps.embedder.model,
    vector,
    k: HYBRID_LIST_DEPTH,
    ...(deps.scanMax === undefined ? {} : { scanMax: deps.scanMax }),
  });
  if (nearest.status === 'too_many') return lexicalFallback(deps, query, fallbackTooMany(deps.scanMax ?? VECTOR_SCAN_MAX));

  const entries = new Map<string, { id: string; lexical?: number; vector?: number; hit?: SearchHit }>();
  lexical.hits.forEach((hit, i) => entries.set(hit.id, { id: hit.id, lexical: i + 1, hit }));
  nearest.hits.forEach((near, i) => {
    const entry = entries.get(near.docId) ?? { id: near.docId };
    entry.vector = i + 1;
    entries.set(near.docId, entry);
  });
  const rrf = (rank: number | undefined) => (rank === undefined ? 0 : 1 / (RRF_K + rank));
  const best = (e: { lexical?: number; vector?: number }) => Math.min(e.lexical ?? Infinity, e.vector ?? Infinity);
  // Equal fused scores: the better single rank first, then the one the lexical list holds, then by id, so an answer repeats.
  const fused = [...entries.values()]
    .map((e) => ({ ...e, score: rrf(e.lexical) + rrf(e.vector) }))
    .sort(
      (x, y) =>
        y.score - x.score || best(x) - best(y) || Number(x.lexical === undefined) - Number(y.lexical === undefined) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0),
    );
  const offset = Math.max(0, query.offset ?? 0);
  const page = fused.slice(offset, offset + query.limit);
  if (page.length === 0) return { retrieval: 'hybrid', result: { hits: [], total: fused.length } };

  const rows = await deps.db.query<DocRow>(
    `SELECT doc_id, kind, scope, path, title, ref, media_type, CASE WHEN $3 > 0 THEN left(body, ${SNIPPET_SCAN_CHARS}) ELSE '' END AS body
       FROM search_docs WHERE tenant_id = $1 AND doc_id = ANY($2::text[])`,
    [query.tenantId, page.map((e) => e.id), query.snippets],
  );
  const byId = new Map(rows.map((r) => [r.doc_id, r]));
  const queryTerms = new Set(parsed.terms.map((t) => t.term));
  const hits: SearchHit[] = [];
  for (const entry of page) {
    const row = byId.get(entry.id);
    // Deleted since the lists were read.
    if (row === undefined) continue;
    const lists: { list: 'lexical' | 'vector'; rank: number }[] = [
      ...(entry.lexical === undefined ? [] : [{ list: 'lexical' as const, rank: entry.lexical }]),
      ...(entry.vector === undefined ? [] : [{ list: 'vector' as const, rank: entry.vector }]),
    ];
    // A document found by meaning alone matched no term lexically (within the list's depth); the
    // phrases are required of both lists, so it holds them.
    const reasons: SearchReasons =
      entry.hit === undefined
        ? { terms: [], expansions: [], phrases: parsed.phrases.map((p) => p.text), lists }
        : {
            ...entry.hit.reasons,
            // The lexical list was read without bodies: the added terms' words are looked for here, in the body read for snippets.
            ...(entry.hit.reasons.expansions.length === 0
              ? {}
              : { expansionWords: surfaceWords(a, entry.hit.reasons.expansions, [row.path, row.title, row.body]) }),
            lists,
          };
    const matched = entry.hit === undefined ? queryTerms : new Set(entry.hit.reasons.terms.map((t) => t.term));
    hits.push({
      id: row.doc_id,
      kind: row.kind,
      scope: row.scope,
      score: Math.round(entry.score * 1e6) / 1e6,
      path: row.path,
      title: row.title,
      ref: row.ref,
      snippets: snippetsOf(a, snippetText(row.body, row.media_type), matched, query.snippets),
      reasons,
    });
  }
  return { retrieval: 'hybrid', result: { hits, total: fused.length } };
}
