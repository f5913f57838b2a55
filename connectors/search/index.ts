import type { MeiliConfig } from '../../src/config.ts';
import type { Db } from '../../src/store/db.ts';
import { BuiltinSearchBackend } from './builtin.ts';
import type { SearchApplyContext, SearchBackend, SearchDocument, SearchQuery, SearchResult, SearchStats } from './contract.ts';
import { remoteFingerprint } from './contract.ts';
import { MeiliSearchBackend } from './meilisearch.ts';

/*
 * The search engine the configuration names. Without MEILI_URL, the built-in engine. With it,
 * Meilisearch finds the candidates and the built-in engine's statistics rank them (see
 * docs/search.md): every write goes to both, the built-in tables first, in the outbox's own
 * transaction, so a write Meilisearch refuses is undone there too and retried as a whole.
 */

class MeiliWithStatistics implements SearchBackend {
  readonly name = 'meilisearch';
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
    await this.#builtin.upsert(docs, context);
    // What the projection's prepare had Meilisearch confirm as it is now needs no wait here.
    const unconfirmed = docs.filter((doc) => context.confirmed?.has(remoteFingerprint({ doc })) !== true);
    if (unconfirmed.length > 0) await this.#meili.upsert(unconfirmed, context);
  }

  async delete(refs: readonly { tenantId: string; id: string }[], context: SearchApplyContext): Promise<void> {
    await this.#ensureSettings(context.signal);
    await this.#builtin.delete(refs, context);
    const unconfirmed = refs.filter((ref) => context.confirmed?.has(remoteFingerprint({ deleted: ref })) !== true);
    if (unconfirmed.length > 0) await this.#meili.delete(unconfirmed, context);
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
