import type { MeiliConfig } from '../../src/config.ts';
import type { Db } from '../../src/store/db.ts';
import { BuiltinSearchBackend } from './builtin.ts';
import type { SearchApplyContext, SearchBackend, SearchDocument, SearchQuery, SearchResult, SearchStats } from './contract.ts';
import { remoteFingerprint } from './contract.ts';
import { MeiliSearchBackend } from './meilisearch.ts';

/*
 * The search engine the configuration names. Without MEILI_URL, the built-in engine. With it,
 * Meilisearch finds the candidates and the built-in engine's statistics rank them (see
 * docs/search.md): every write goes to both, in the outbox's own transaction, so a write
 * Meilisearch refuses is undone in the built-in tables too and retried as a whole.
 */

/**
 * Rows the search projection claims per round with Meilisearch on PostgreSQL. Each Meilisearch
 * task costs a share of work that grows with the index, whatever its size (a batch of 400 files
 * took 2.9 s at 90 k files, most of it that share), so bigger batches drain a bulk import
 * faster; 1,000 keeps a batch's text in memory under 1 GiB (bodies are cut at 1 MiB) and its
 * round well inside the worker's 30 s apply timeout. PGlite keeps the worker's smaller batch,
 * which holds up every write there while it runs.
 */
export const MEILI_BATCH_ROWS = 1000;

/**
 * Waits for the built-in tables' write and Meilisearch's together: Meilisearch indexes while the
 * statistics are written (at 100 k files each took about a second of a 400-file batch). Both
 * settle before a failure is thrown, so the transaction is never rolled back while the built-in
 * write still has statements to send on it.
 */
async function both(builtin: Promise<void>, meili: Promise<void> | undefined): Promise<void> {
  const [first, second] = await Promise.allSettled([builtin, meili]);
  if (first.status === 'rejected') throw first.reason;
  if (second.status === 'rejected') throw second.reason;
}

class MeiliWithStatistics implements SearchBackend {
  readonly name = 'meilisearch';
  readonly batchSize = MEILI_BATCH_ROWS;
  readonly #builtin: BuiltinSearchBackend;
  readonly #meili: MeiliSearchBackend;
  // The index settings are applied once per process, before the first write or search, and
  // again after a failure: the gateway starts while Meilisearch is down.
  #settings: Promise<void> | undefined;

  constructor(config: MeiliConfig, db: Db) {
    this.#builtin = new BuiltinSearchBackend(db);
    this.#meili = new MeiliSearchBackend(config, this.#builtin, { index: config.index });
  }

  #ensureSettings(signal?: AbortSignal): Promise<void> {
    this.#settings ??= this.#meili.ensureSettings(signal).catch((error: unknown) => {
      this.#settings = undefined;
      throw error;
    });
    return this.#settings;
  }

  async upsert(docs: readonly SearchDocument[], context: SearchApplyContext): Promise<void> {
    await this.#ensureSettings(context.signal);
    // What the projection's prepare had Meilisearch confirm as it is now needs no wait here.
    const unconfirmed = docs.filter((doc) => context.confirmed?.has(remoteFingerprint({ doc })) !== true);
    await both(this.#builtin.upsert(docs, context), unconfirmed.length > 0 ? this.#meili.upsert(unconfirmed, context) : undefined);
  }

  async delete(refs: readonly { tenantId: string; id: string }[], context: SearchApplyContext): Promise<void> {
    await this.#ensureSettings(context.signal);
    const unconfirmed = refs.filter((ref) => context.confirmed?.has(remoteFingerprint({ deleted: ref })) !== true);
    await both(this.#builtin.delete(refs, context), unconfirmed.length > 0 ? this.#meili.delete(unconfirmed, context) : undefined);
  }

  async pushRemote(upserts: readonly SearchDocument[], deletes: readonly { tenantId: string; id: string }[], signal: AbortSignal): Promise<void> {
    await this.#ensureSettings(signal);
    if (upserts.length > 0) await this.#meili.upsert(upserts, { signal });
    if (deletes.length > 0) await this.#meili.delete(deletes, { signal });
  }

  async search(query: SearchQuery, signal?: AbortSignal): Promise<SearchResult> {
    await this.#ensureSettings(signal);
    return this.#meili.search(query, signal);
  }

  stats(): Promise<SearchStats> {
    return this.#meili.stats();
  }

  async clear(): Promise<void> {
    await this.#builtin.clear();
    await this.#meili.clear();
  }

  health(signal: AbortSignal): Promise<void> {
    return this.#meili.health(signal);
  }

  async close(): Promise<void> {
    await this.#meili.close();
  }
}

/** The configured search engine over the store `db`. */
export function openSearchBackend(meili: MeiliConfig | undefined, db: Db): SearchBackend {
  return meili === undefined ? new BuiltinSearchBackend(db) : new MeiliWithStatistics(meili, db);
}
