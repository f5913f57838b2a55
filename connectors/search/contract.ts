import { createHash } from 'node:crypto';
import type { Queryable } from '../../src/store/db.ts';
import type { SearchRanking } from '../../src/search-text/ranking.ts';
import type { ApplyContext, OutboxRow, PrepareContext, Projection, ResourceRef } from '../projection.ts';

// The ranking controls and the snippet mark belong to the text machinery both engines share.
export type { SearchRanking } from '../../src/search-text/ranking.ts';
export { SNIPPET_MARK } from '../../src/search-text/snippets.ts';

/**
 * The contract every search backend implements (built-in Postgres full text, Meilisearch).
 * The gateway never talks to a backend directly: writes reach it through the outbox (see
 * `searchProjection`), reads through `search`. Every call is scoped to one tenant.
 */

/** What a document is: a KB file, or an Alignbase resource (when those are indexed). */
/** What a document is; `brain_node` is a Company Brain node (src/brain/search-source.ts). */
export type SearchKind = 'kb_file' | 'knowledge' | 'skill' | 'memory' | 'artifact' | 'brain_node';

/**
 * One searchable document: a projection of a Postgres row, rebuilt from it at will. The text is
 * as written; each engine analyses it with the shared analyser of `language`
 * (src/search-text/analyzer.ts), so both rank the same terms.
 */
export interface SearchDocument {
  readonly tenantId: string;
  /**
   * Stable id: the outbox resource key ('kb_file:<uuid>'), or for a resource shown as several
   * documents one of the ids its source's `documentIds` names ('knowledge.latest:<uuid>').
   */
  readonly id: string;
  readonly kind: SearchKind;
  /**
   * The access scope a caller must hold to see it, e.g. 'kb:<uuid>'. Every query names the
   * scopes its caller holds and the engine filters by them before ranking, so what a caller
   * may not read never takes a place in its results or its totals.
   */
  readonly scope: string;
  /** The analyser language (a Snowball algorithm name, or 'simple'). */
  readonly language: string;
  /** Ranked above the title and the body: a KB file's path. */
  readonly path: string;
  /** Ranked above the body: the first heading, or the front-matter title. */
  readonly title: string;
  /** The text, at most SEARCH_BODY_MAX_BYTES of UTF-8 (the caller cuts it). */
  readonly body: string;
  /** Lower-cased front-matter tags. */
  readonly tags: readonly string[];
  readonly mediaType: string;
  /** 'text', or 'asset' for a picture or PDF whose body is its Companion text. */
  readonly contentKind: 'text' | 'asset';
  readonly updatedAt: string;
  /** Identifiers a hit hands back unchanged (kb_id, file_id, version, sha256 ...). */
  readonly ref: Readonly<Record<string, string | number>>;
}

/** The longest body an engine indexes: 1 MiB of UTF-8 (a longer file is searchable by its first MiB). */
export const SEARCH_BODY_MAX_BYTES = 1024 * 1024;

/** Filters applied inside the engine's query, with the scopes, before ranking and limits. */
export interface SearchFilters {
  readonly kinds?: readonly SearchKind[];
  /** A path prefix within a scope; a document matches when any entry does. */
  readonly paths?: readonly { readonly scope: string; readonly prefix: string }[];
  /** Lower-cased tags; a document matches when it has any of them. */
  readonly tags?: readonly string[];
  readonly mediaTypes?: readonly string[];
  readonly contentKind?: 'text' | 'asset';
  /** ISO instant: only documents updated at or after it. */
  readonly updatedSince?: string;
}

export interface SearchQuery {
  readonly tenantId: string;
  /** The question or keywords as the caller wrote them; `"…"` marks a phrase, a trailing `*` a prefix. */
  readonly text: string;
  /** The analyser language of the tenant. */
  readonly language: string;
  /** The scopes the caller may read; with no prefixes either, the query finds nothing. */
  readonly scopes: readonly string[];
  /**
   * Scope prefixes the caller may read: a document matches when its scope is in `scopes` or
   * starts with one of these (a grant on a whole type: `memory:`), so a query stays small
   * however many resources a grant reaches. The statistics are those of the matched scopes.
   */
  readonly scopePrefixes?: readonly string[];
  readonly filters?: SearchFilters;
  readonly limit: number;
  readonly offset?: number;
  /** Snippets per hit (0 for none). */
  readonly snippets: number;
  /** Ranking controls; absent: relevance alone. */
  readonly ranking?: SearchRanking;
}

/** Whether a query may read nothing at all (no scopes, no prefixes): an engine answers it without looking. */
export const readsNothing = (query: Pick<SearchQuery, 'scopes' | 'scopePrefixes'>): boolean =>
  query.scopes.length === 0 && (query.scopePrefixes ?? []).length === 0;

/** Why a hit ranked where it did. */
export interface SearchReasons {
  /** Query terms (as analysed) the document contains, with the fields holding them. */
  readonly terms: readonly { readonly term: string; readonly fields: readonly ('path' | 'title' | 'body')[] }[];
  /** Terms the engine added (pseudo-relevance feedback, typo corrections, prefix expansions). */
  readonly expansions: readonly string[];
  /** The same terms as the document writes them (its first word for each), for a person to read; the term itself where none was read. */
  readonly expansionWords?: readonly string[];
  /** Phrases of the query the document contains. */
  readonly phrases: readonly string[];
  /** Hybrid retrieval: the ranked lists the document was in, and its rank (from 1) in each (docs/search.md). */
  readonly lists?: readonly { readonly list: 'lexical' | 'vector'; readonly rank: number }[];
  /** Hybrid retrieval was asked for and the answer is lexical: why. */
  readonly fallback?: string;
}

export interface SearchHit {
  readonly id: string;
  readonly kind: SearchKind;
  readonly scope: string;
  /** Higher is better; comparable only within one answer. */
  readonly score: number;
  readonly path: string;
  readonly title: string;
  readonly ref: Readonly<Record<string, string | number>>;
  /** Passages of the body around matched terms, the terms marked with SNIPPET_MARK. */
  readonly snippets: readonly string[];
  /**
   * The snippets mark no word because the matches are in a Markdown document's front matter,
   * which snippets leave out: another engine keeps them rather than cropping the indexed text.
   */
  readonly snippetsFinal?: boolean;
  readonly reasons: SearchReasons;
}

export interface SearchResult {
  readonly hits: readonly SearchHit[];
  /** Documents the query matched within the caller's scopes and filters. */
  readonly total: number;
}

/** Ranks given candidate documents of one query with the gateway's own BM25 statistics (the built-in engine's tables). */
export interface CandidateRanker {
  rank(query: SearchQuery, candidateIds: readonly string[], signal?: AbortSignal): Promise<SearchResult>;
  /**
   * How many documents the query's scopes hold, and how many of them hold each analysed term (0
   * for a term none holds), so the engine finding candidates can leave out the words nearly
   * every document holds.
   */
  termFrequencies(query: SearchQuery, terms: readonly string[]): Promise<TermFrequencies>;
}

export interface TermFrequencies {
  readonly documents: number;
  readonly df: ReadonlyMap<string, number>;
}

export interface SearchStats {
  readonly backend: string;
  readonly documents: number;
  readonly tenants?: number;
}

/**
 * What a search apply hands its backend: the claim's transaction, and what the projection's
 * `prepare` already had a remote engine confirm (fingerprints, see `remoteFingerprint`), which
 * the backend need not send again inside the transaction.
 */
export interface SearchApplyContext extends ApplyContext {
  readonly confirmed?: ReadonlySet<string>;
}

/** The fingerprint of a document's state as a remote engine was told it: its whole content, or its deletion. */
export function remoteFingerprint(change: { readonly doc: SearchDocument } | { readonly deleted: { readonly tenantId: string; readonly id: string } }): string {
  if ('doc' in change) return `u\u0000${createHash('sha256').update(JSON.stringify(change.doc)).digest('hex')}`;
  return `d\u0000${change.deleted.tenantId.toLowerCase()}\u0000${change.deleted.id}`;
}

export interface SearchBackend {
  readonly name: string;
  /** Rows the search projection claims per round when the engine wants its own batch (see Projection.batchSize). */
  readonly batchSize?: number;
  /** Adds or replaces documents by (tenantId, id); idempotent. */
  upsert(docs: readonly SearchDocument[], context: SearchApplyContext): Promise<void>;
  /** Removes documents; ids that are absent are not an error. */
  delete(refs: readonly { tenantId: string; id: string }[], context: SearchApplyContext): Promise<void>;
  /**
   * An engine outside the store (Meilisearch): sends upserts and deletions and resolves once
   * the engine reports them applied, throwing when it refused them or cannot be reached. Called
   * by the projection's `prepare`, outside any transaction; `upsert` and `delete` then skip
   * what `context.confirmed` names.
   */
  pushRemote?(upserts: readonly SearchDocument[], deletes: readonly { tenantId: string; id: string }[], signal: AbortSignal): Promise<void>;
  search(query: SearchQuery, signal?: AbortSignal): Promise<SearchResult>;
  stats(signal?: AbortSignal): Promise<SearchStats>;
  /** Removes every document of every tenant (before a rebuild). */
  clear(): Promise<void>;
  health?(signal: AbortSignal): Promise<void>;
  close?(): Promise<void>;
}

/** The outbox payload of a search upsert that carries its document. */
export interface SearchUpsertPayload {
  readonly doc: SearchDocument;
}

/** The document an upsert row carries, or undefined when it carries none. */
function documentOf(row: OutboxRow): SearchDocument | undefined {
  const doc = (row.payload as Partial<SearchUpsertPayload>).doc;
  return typeof doc === 'object' && doc !== null ? doc : undefined;
}

/**
 * Where the documents of rows that only name a resource come from: KB file rows carry the
 * file's identifiers, not its text, and the source reads the file as it now is (in the
 * transaction that claimed the rows). A resource it does not return is no longer shown
 * (deleted, or its KB archived) and is removed from the engine.
 */
export interface SearchSource {
  load(tx: Queryable, refs: readonly ResourceRef[], signal: AbortSignal): Promise<SearchDocument[]>;
  /**
   * Every document id the resource can be shown as (a Knowledge: its published and its latest
   * version). Those `load` does not return now are removed, so a resource that yields fewer
   * documents than before leaves none stale. Omitted: the resource key is the only id.
   */
  documentIds?(ref: ResourceRef): readonly string[];
}

/** The document ids of a resource: the source's, else the resource key alone. */
const idsOf = (source: SearchSource | undefined, ref: ResourceRef): readonly string[] => source?.documentIds?.(ref) ?? [ref.resourceKey];

const refKey = (tenantId: string, id: string) => `${tenantId}\u0000${id}`;

/**
 * What a run of upsert rows leaves in the engine: the documents the rows carry, then those the
 * source shows of the resources they name (read through `q`), and as gone the ids of those
 * resources it no longer shows.
 */
async function upsertedDocuments(
  rows: readonly OutboxRow[],
  source: SearchSource | undefined,
  q: Queryable,
  signal: AbortSignal,
): Promise<{ docs: SearchDocument[]; gone: { tenantId: string; id: string }[] }> {
  const docs = new Map<string, SearchDocument>();
  const toLoad = new Map<string, ResourceRef>();
  for (const row of rows) {
    const key = refKey(row.tenantId, row.resourceKey);
    const carried = documentOf(row);
    if (carried !== undefined) docs.set(key, carried);
    else if (source !== undefined) toLoad.set(key, { tenantId: row.tenantId, resourceKey: row.resourceKey });
  }
  const loaded = toLoad.size === 0 || source === undefined ? [] : await source.load(q, [...toLoad.values()], signal);
  for (const doc of loaded) docs.set(refKey(doc.tenantId, doc.id), doc);
  const gone = [...toLoad.values()].flatMap((ref) =>
    idsOf(source, ref)
      .filter((id) => !docs.has(refKey(ref.tenantId, id)))
      .map((id) => ({ tenantId: ref.tenantId, id })),
  );
  return { docs: [...docs.values()], gone };
}

/** Every document id delete rows remove. */
const deletedIds = (rows: readonly OutboxRow[], source: SearchSource | undefined) =>
  rows.flatMap((r) => idsOf(source, r).map((id) => ({ tenantId: r.tenantId, id })));

/**
 * Wraps a search backend as the 'search' projection. Consecutive rows are grouped into
 * upsert and delete calls without reordering: a run of upserts, then a run of deletes, ...
 * An upsert that carries no document is loaded from `source` as the resource now is; one the
 * source no longer shows becomes a delete. Rows of one resource in a run collapse into one
 * document (the latest), and deleting an id the backend does not hold is harmless, so
 * applying a batch again changes nothing.
 */
export interface SearchProjectionOptions {
  /**
   * Told, in the outbox's transaction, of the documents each apply upserted or deleted (the
   * vectors projection is fed this way, after search_docs shows them).
   */
  readonly changed?: (
    tx: Queryable,
    docs: readonly { readonly tenantId: string; readonly id: string; readonly operation: 'upsert' | 'delete' }[],
  ) => Promise<void>;
  /**
   * Have the backend's remote engine confirm the due rows' documents in `prepare`, outside any
   * transaction, instead of waiting for it inside the claim's transaction. Only where a single
   * worker applies the rows (PGlite: one process owns the folder): with several, another could
   * apply a newer state of a resource between this one's prepare and its claim, and the older
   * state pushed here would be left in the remote engine.
   */
  readonly prepareRemote?: boolean;
}

export function searchProjection(backend: SearchBackend, source?: SearchSource, options: SearchProjectionOptions = {}): Projection {
  // Fingerprints the remote engine confirmed in the last prepare (one batch's worth).
  let confirmed: ReadonlySet<string> = new Set();
  const pushRemote = options.prepareRemote === true ? backend.pushRemote?.bind(backend) : undefined;
  return {
    name: 'search',
    ...(backend.batchSize === undefined ? {} : { batchSize: backend.batchSize }),
    ...(pushRemote === undefined
      ? {}
      : {
          async prepare({ db, rows: due, signal }: PrepareContext) {
            confirmed = new Set();
            // Each resource's state after its last due row: what applying them leaves in the engine.
            const last = new Map<string, OutboxRow>();
            for (const r of due) last.set(refKey(r.tenantId, r.resourceKey), r);
            const rows = [...last.values()];
            const { docs, gone } = await upsertedDocuments(
              rows.filter((r) => r.operation === 'upsert'),
              source,
              db,
              signal,
            );
            const deletes = [
              ...gone,
              ...deletedIds(
                rows.filter((r) => r.operation === 'delete'),
                source,
              ),
            ];
            if (docs.length === 0 && deletes.length === 0) return;
            try {
              await pushRemote(docs, deletes, signal);
            } catch {
              // Nothing confirmed: the claim sends them inside its transaction, and when the
              // engine refuses them there, or is down, the rows fail, back off and show their
              // error in the indexing status, as they do without this step.
              return;
            }
            confirmed = new Set([...docs.map((doc) => remoteFingerprint({ doc })), ...deletes.map((d) => remoteFingerprint({ deleted: d }))]);
          },
        }),
    async apply(rows: readonly OutboxRow[], outer: ApplyContext) {
      const context: SearchApplyContext = { ...outer, confirmed };
      let run: OutboxRow[] = [];
      const flush = async () => {
        const first = run[0];
        if (first === undefined) return;
        if (first.operation === 'upsert') {
          const { docs, gone } = await upsertedDocuments(run, source, context.tx, context.signal);
          if (docs.length > 0) await backend.upsert(docs, context);
          if (gone.length > 0) await backend.delete(gone, context);
          await options.changed?.(context.tx, [
            ...docs.map((d) => ({ tenantId: d.tenantId, id: d.id, operation: 'upsert' as const })),
            ...gone.map((g) => ({ ...g, operation: 'delete' as const })),
          ]);
        } else {
          const gone = deletedIds(run, source);
          await backend.delete(gone, context);
          await options.changed?.(
            context.tx,
            gone.map((g) => ({ ...g, operation: 'delete' as const })),
          );
        }
        run = [];
      };
      for (const row of rows) {
        if (run.length > 0 && run[0]?.operation !== row.operation) await flush();
        run.push(row);
      }
      await flush();
    },
    clear: () => backend.clear(),
    ...(backend.health === undefined ? {} : { health: (signal: AbortSignal) => backend.health?.(signal) ?? Promise.resolve() }),
  };
}
