import type { ApplyContext, OutboxRow, Projection } from '../projection.ts';

/**
 * The contract every search backend implements (built-in Postgres full text, Meilisearch).
 * The gateway never talks to a backend directly: writes reach it through the outbox (see
 * `searchProjection`), reads through `search`. Every call is scoped to one tenant.
 */

/** One searchable document: a projection of a Postgres row, rebuilt from it at will. */
export interface SearchDocument {
  readonly tenantId: string;
  /** Stable id, equal to the outbox resource key, e.g. 'kb_file:<uuid>'. */
  readonly id: string;
  /** What kind of resource it is, e.g. 'kb_file', 'memory'. */
  readonly kind: string;
  readonly title?: string;
  readonly body: string;
  /** Fields a search may filter on by equality (collection, owner, tags ...). */
  readonly fields?: Readonly<Record<string, string | number | boolean | readonly string[]>>;
  /** Who may see it; the gateway filters by these before returning a hit. */
  readonly readers?: readonly string[];
  readonly updatedAt?: string;
}

export interface SearchQuery {
  readonly tenantId: string;
  readonly query: string;
  /** Equality filters on `kind` and `fields`; a list matches any of its values. */
  readonly filters?: Readonly<Record<string, string | number | boolean | readonly (string | number)[]>>;
  readonly limit: number;
  readonly offset?: number;
  /** Ask for highlighted snippets of the body. */
  readonly snippets?: boolean;
}

export interface SearchHit {
  readonly id: string;
  readonly kind: string;
  /** Higher is better; comparable only within one answer. */
  readonly score: number;
  readonly title?: string;
  readonly snippets?: readonly string[];
}

export interface SearchResult {
  readonly hits: readonly SearchHit[];
  /** Matches in all, when the backend knows (may be an estimate). */
  readonly total?: number;
}

export interface SearchStats {
  readonly backend: string;
  readonly documents: number;
  readonly tenants?: number;
}

export interface SearchBackend {
  readonly name: string;
  /** Adds or replaces documents by (tenantId, id); idempotent. */
  upsert(docs: readonly SearchDocument[], context?: ApplyContext): Promise<void>;
  /** Removes documents; ids that are absent are not an error. */
  delete(refs: readonly { tenantId: string; id: string }[], context?: ApplyContext): Promise<void>;
  search(query: SearchQuery, signal?: AbortSignal): Promise<SearchResult>;
  stats(signal?: AbortSignal): Promise<SearchStats>;
  /** Removes every document of every tenant (before a rebuild). */
  clear(): Promise<void>;
  health?(signal: AbortSignal): Promise<void>;
}

/** The outbox payload of a search upsert: the document itself. */
export interface SearchUpsertPayload {
  readonly doc: SearchDocument;
}

/** The document an upsert row carries, or undefined when it carries none. */
function documentOf(row: OutboxRow): SearchDocument | undefined {
  const doc = (row.payload as Partial<SearchUpsertPayload>).doc;
  return typeof doc === 'object' && doc !== null ? doc : undefined;
}

/**
 * Wraps a search backend as the 'search' projection. Consecutive rows are grouped into
 * upsert and delete calls without reordering: a run of upserts, then a run of deletes, ...
 * An upsert without a document (Knowledge-Base file rows name the file, not its text, which
 * search is yet to read from the store) is skipped rather than failed; deleting an id the
 * backend does not hold is harmless.
 */
export function searchProjection(backend: SearchBackend): Projection {
  return {
    name: 'search',
    async apply(allRows: readonly OutboxRow[], context: ApplyContext) {
      const rows = allRows.filter((row) => row.operation === 'delete' || documentOf(row) !== undefined);
      let run: OutboxRow[] = [];
      const flush = async () => {
        const first = run[0];
        if (first === undefined) return;
        if (first.operation === 'upsert') {
          await backend.upsert(
            run.flatMap((r) => documentOf(r) ?? []),
            context,
          );
        } else {
          await backend.delete(
            run.map((r) => ({ tenantId: r.tenantId, id: r.resourceKey })),
            context,
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
