import { setTimeout as sleep } from 'node:timers/promises';
import { Meilisearch, MeilisearchApiError, MeilisearchRequestError, MeilisearchRequestTimeOutError } from 'meilisearch';
import type { Index, MultiSearchQuery, Task } from 'meilisearch';
import { backendUnavailable } from '../../src/kernel/errors.ts';
import type { MeiliConfig } from '../../src/config.ts';
import type { ApplyContext } from '../projection.ts';
import { documentChunks, filterLiteral, inList, searchFilter, settingsDifferences, uploads, wantedSettings } from './meili-index.ts';
import type { MeiliChunk } from './meili-index.ts';
import { CANDIDATES_PER_QUERY, candidateQueries, informativeWords, queryTerms, stemWords } from './meili-query.ts';
import { SNIPPET_MARK } from './contract.ts';
import type { CandidateRanker, SearchBackend, SearchDocument, SearchHit, SearchQuery, SearchResult, SearchStats } from './contract.ts';

/*
 * The search backend on Meilisearch. Meilisearch finds candidates; the gateway's own BM25
 * statistics (a CandidateRanker, the built-in engine's tables) rank them, so both engines order
 * a question's hits alike and give the same reasons. One index holds every tenant: each
 * document is one or more chunks (Meilisearch ignores the words of an attribute past its
 * position limit), each chunk carrying the tenant, scope and filter fields, and every search
 * filters by tenant and scopes (named or by prefix) inside Meilisearch, so a hidden document never comes back.
 * Writes wait until Meilisearch has applied them, so the outbox retries what failed and the
 * indexing status is true.
 */

/** The index when the caller names none. */

export const DEFAULT_INDEX_UID = 'kgw_documents';

/** Every HTTP request to Meilisearch gives up after 10 s (an upload of a full batch included). */
export const REQUEST_TIMEOUT_MS = 10_000;
/** A write waits at most 60 s for its tasks (or less, when the outbox's signal aborts first). */
export const TASK_WAIT_MAX_MS = 60_000;
/**
 * Task polling starts at 10 ms and grows by half up to 250 ms: a small write (70-90 ms on a
 * 10 k index) is seen done within a few polls, a long one costs a poll every quarter second.
 */
const TASK_POLL_FIRST_MS = 10;
const TASK_POLL_GROWTH = 1.5;
const TASK_POLL_MAX_MS = 250;

/** Words of a crop Meilisearch returns as a snippet. */
export const SNIPPET_CROP_WORDS = 30;
/** Chunks each query of a crop request returns at most (its filter names at most a page of documents, 50). */
const CROP_CHUNKS_MAX = 200;

/** Documents one delete-by-filter task names at most: bounds the filter's length. */
const DELETE_FILTER_DOCS_MAX = 100;

/** The fields a search hit is retrieved with: a candidate needs only its document id, a crop its chunk too. */
type CandidateHit = { readonly docId: string; readonly chunk: number; readonly body?: string };

/** Meilisearch's error texts put the filter they quote on a line of its own: one line reads better in a status table. */
const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ');

/** The message of a Meilisearch failure: its own error text and code, or why it could not be reached. */
function describeFailure(error: unknown, host: string): string {
  if (error instanceof MeilisearchApiError)
    return `Meilisearch refused: ${oneLine(error.message)}${error.cause?.code === undefined ? '' : ` (${error.cause.code})`}`;
  if (error instanceof MeilisearchRequestTimeOutError) return `Meilisearch at ${host} did not answer within ${REQUEST_TIMEOUT_MS} ms`;
  if (error instanceof MeilisearchRequestError) {
    // fetch's TypeError hides the reason (ECONNREFUSED, ENOTFOUND ...) in its own cause.
    let cause: unknown = error.cause;
    while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
    const code = (cause as { code?: unknown } | undefined)?.code;
    const reason = typeof code === 'string' ? code : cause instanceof Error ? cause.message : String(cause);
    return `Meilisearch at ${host} could not be reached: ${reason}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * Whether a failure says Meilisearch could not serve at all (not reached, no answer in time, a
 * 5xx, or the index gone, as after a restart on an empty data folder), rather than that it
 * refused one request: only these are an outage.
 */
function unreachable(error: unknown): boolean {
  const cause = error instanceof MeiliFailure ? error.cause : error;
  if (cause instanceof MeilisearchRequestError || cause instanceof MeilisearchRequestTimeOutError) return true;
  return cause instanceof MeilisearchApiError && (cause.response.status >= 500 || cause.cause?.code === 'index_not_found');
}

/** A Meilisearch failure as an Error whose message says what happened. */
class MeiliFailure extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'MeiliFailure';
  }
}

/** Throws when the caller (the outbox worker's apply timeout) gave up: the rest of a write is not sent. */
function givenUp(signal: AbortSignal): void {
  if (signal.aborted) throw new MeiliFailure('Meilisearch write given up: the caller aborted it before it was sent', signal.reason);
}

async function meili<T>(host: string, what: () => Promise<T>): Promise<T> {
  try {
    return await what();
  } catch (error) {
    if (error instanceof MeiliFailure) throw error;
    throw new MeiliFailure(describeFailure(error, host), error);
  }
}

function client(config: MeiliConfig): Meilisearch {
  return new Meilisearch({ host: config.url, ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }), timeout: REQUEST_TIMEOUT_MS });
}

/**
 * The differences between the wanted and the actual settings of the index (for `kgw doctor`),
 * one line each; [] when none. A missing index is one difference, unless `missingOk`: the
 * backend makes it when the gateway starts.
 */
export async function checkSettings(config: MeiliConfig, options: { index?: string; missingOk?: boolean } = {}): Promise<string[]> {
  const uid = options.index ?? DEFAULT_INDEX_UID;
  const meiliClient = client(config);
  return meili(config.url, async () => {
    try {
      return settingsDifferences(await meiliClient.index(uid).getSettings());
    } catch (error) {
      if (error instanceof MeilisearchApiError && error.cause?.code === 'index_not_found')
        return options.missingOk === true ? [] : [`index ${uid} does not exist`];
      throw error;
    }
  });
}

export interface MeiliSearchOptions {
  /** The index uid; default 'kgw_documents'. */
  readonly index?: string;
}

export class MeiliSearchBackend implements SearchBackend {
  readonly name = 'meilisearch';
  readonly #config: MeiliConfig;
  readonly #client: Meilisearch;
  readonly #index: Index<MeiliChunk>;
  readonly #ranker: CandidateRanker;
  #closed = false;

  constructor(config: MeiliConfig, ranker: CandidateRanker, options: MeiliSearchOptions = {}) {
    this.#config = config;
    this.#client = client(config);
    this.#index = this.#client.index<MeiliChunk>(options.index ?? DEFAULT_INDEX_UID);
    this.#ranker = ranker;
  }

  /** The index uid. */
  get index(): string {
    return this.#index.uid;
  }

  /** Makes the index if it is missing and applies the wanted settings; idempotent, and resolves when Meilisearch has applied them. */
  async ensureSettings(signal?: AbortSignal): Promise<void> {
    const uid = this.#index.uid;
    await this.#call(async () => {
      const exists = await this.#index.getRawInfo().then(
        () => true,
        (error: unknown) => {
          if (error instanceof MeilisearchApiError && error.cause?.code === 'index_not_found') return false;
          throw error;
        },
      );
      if (!exists) {
        const created = await this.#client.createIndex(uid, { primaryKey: 'id' });
        // Another gateway may have made it meanwhile: that is as good.
        await this.#wait([created.taskUid], signal, ['index_already_exists']);
      }
      const updated = await this.#index.updateSettings(wantedSettings());
      await this.#wait([updated.taskUid], signal);
    });
  }

  /** The differences between the wanted and the actual settings; [] when none. */
  checkSettings(): Promise<string[]> {
    return checkSettings(this.#config, { index: this.#index.uid });
  }

  async upsert(docs: readonly SearchDocument[], context: Pick<ApplyContext, 'signal'>): Promise<void> {
    this.#open();
    if (docs.length === 0) return;
    const chunked = docs.map((doc) => ({ doc, chunks: documentChunks(doc) }));
    await this.#call(async () => {
      const tasks: number[] = [];
      for (const upload of uploads(chunked.flatMap((c) => c.chunks))) {
        givenUp(context.signal);
        tasks.push((await this.#index.addDocuments(upload, { primaryKey: 'id' })).taskUid);
      }
      // Chunks past the new count are left from a longer version. Meilisearch runs an index's
      // tasks in order, so these deletions follow the additions above.
      for (let i = 0; i < chunked.length; i += DELETE_FILTER_DOCS_MAX) {
        givenUp(context.signal);
        const filter = chunked
          .slice(i, i + DELETE_FILTER_DOCS_MAX)
          .map(({ doc, chunks }) => `(tenantId = ${filterLiteral(doc.tenantId)} AND docId = ${filterLiteral(doc.id)} AND chunk >= ${chunks.length})`)
          .join(' OR ');
        tasks.push((await this.#index.deleteDocuments({ filter })).taskUid);
      }
      await this.#wait(tasks, context.signal);
    });
  }

  async delete(refs: readonly { tenantId: string; id: string }[], context: Pick<ApplyContext, 'signal'>): Promise<void> {
    this.#open();
    if (refs.length === 0) return;
    const byTenant = new Map<string, string[]>();
    for (const ref of refs) byTenant.set(ref.tenantId, [...(byTenant.get(ref.tenantId) ?? []), ref.id]);
    const groups = [...byTenant].flatMap(([tenantId, ids]) => {
      const out: { tenantId: string; ids: string[] }[] = [];
      for (let i = 0; i < ids.length; i += DELETE_FILTER_DOCS_MAX) out.push({ tenantId, ids: ids.slice(i, i + DELETE_FILTER_DOCS_MAX) });
      return out;
    });
    await this.#call(async () => {
      const tasks: number[] = [];
      for (const group of groups) {
        givenUp(context.signal);
        tasks.push((await this.#index.deleteDocuments({ filter: `tenantId = ${filterLiteral(group.tenantId)} AND ${inList('docId', group.ids)}` })).taskUid);
      }
      await this.#wait(tasks, context.signal);
    });
  }

  /** The ranked hits; `unavailable` (backend_unavailable) when Meilisearch cannot serve, so every tool that searches says so alike. */
  async search(query: SearchQuery, signal?: AbortSignal): Promise<SearchResult> {
    try {
      return await this.#search(query, signal);
    } catch (error) {
      throw unreachable(error) && signal?.aborted !== true ? backendUnavailable('search', 'meilisearch', error) : error;
    }
  }

  async #search(query: SearchQuery, signal?: AbortSignal): Promise<SearchResult> {
    this.#open();
    const filter = searchFilter(query.tenantId, query.scopes, query.filters, query.scopePrefixes);
    const terms = queryTerms(query.text, query.language);
    if (filter === undefined || terms.length === 0) return { hits: [], total: 0 };
    const words = informativeWords(
      terms,
      await this.#ranker.termFrequencies(
        query,
        terms.map((t) => t.term),
      ),
    );
    // No crops here: the ranker makes each hit's snippets from the stored body, and cropping every
    // candidate of every query took more than half the search (a keyword search at 10 k files:
    // 123 ms at the median with crops, 59 without). Crops are asked for afterwards, for the
    // hits whose snippets mark nothing (#crops).
    const common: Omit<MultiSearchQuery, 'q'> = {
      indexUid: this.#index.uid,
      filter,
      limit: CANDIDATES_PER_QUERY,
      // One chunk per document: the chunks of a long file do not crowd out the other files.
      distinct: 'docId',
      attributesToRetrieve: ['docId'],
      showRankingScore: true,
    };
    const stems = stemWords(terms, words);
    const response = await this.#multiSearch(common, candidateQueries(query.text, terms.length, words, stems), signal);
    // Each document's best Meilisearch score orders the candidates.
    const best = new Map<string, number>();
    for (const result of response.results) {
      for (const hit of result.hits) best.set(hit.docId, Math.max(best.get(hit.docId) ?? 0, hit._rankingScore ?? 0));
    }
    if (best.size === 0) return { hits: [], total: 0 };
    const candidates = [...best].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([id]) => id);
    const ranked = await this.#ranker.rank(query, candidates, signal);
    // A hit whose matches are in its front matter keeps the start of its body (snippetsFinal): a crop would show the block.
    const unmarked =
      query.snippets > 0 ? ranked.hits.filter((hit) => hit.snippetsFinal !== true && !hit.snippets.some((s) => s.includes(SNIPPET_MARK.open))) : [];
    if (unmarked.length === 0) return ranked;
    const crops = await this.#crops(
      query,
      terms.length,
      words,
      stems,
      `${filter} AND ${inList(
        'docId',
        unmarked.map((hit) => hit.id),
      )}`,
      signal,
    );
    return {
      total: ranked.total,
      hits: ranked.hits.map((hit): SearchHit => {
        const own = crops.get(hit.id);
        return own === undefined ? hit : { ...hit, snippets: own.slice(0, query.snippets) };
      }),
    };
  }

  /**
   * Meilisearch's crops of the documents `filter` names, for hits whose ranker snippets mark no
   * word: the ranker reads the first SNIPPET_SCAN_CHARS of a body and matches the analyser's
   * terms, while Meilisearch crops every chunk and matches typos and prefixes too. Per document:
   * per chunk the crop with the most marks (the queries crop the same chunk around different
   * words), chunks in order of their best score; documents whose crops mark nothing are left out.
   */
  async #crops(
    query: SearchQuery,
    terms: number,
    words: readonly string[],
    stems: readonly string[],
    filter: string,
    signal: AbortSignal | undefined,
  ): Promise<Map<string, string[]>> {
    const common: Omit<MultiSearchQuery, 'q'> = {
      indexUid: this.#index.uid,
      filter,
      limit: CROP_CHUNKS_MAX,
      attributesToRetrieve: ['docId', 'chunk'],
      showRankingScore: true,
      attributesToCrop: ['body'],
      attributesToHighlight: ['body'],
      cropLength: SNIPPET_CROP_WORDS,
      highlightPreTag: SNIPPET_MARK.open,
      highlightPostTag: SNIPPET_MARK.close,
    };
    const response = await this.#multiSearch(common, candidateQueries(query.text, terms, words, stems), signal);
    const byDoc = new Map<string, Map<number, { score: number; marks: number; text: string }>>();
    for (const result of response.results) {
      for (const hit of result.hits) {
        const score = hit._rankingScore ?? 0;
        const text = hit._formatted?.body;
        const marks = text === undefined ? 0 : text.split(SNIPPET_MARK.open).length - 1;
        if (text === undefined || marks === 0) continue;
        const chunks = byDoc.get(hit.docId) ?? new Map<number, { score: number; marks: number; text: string }>();
        byDoc.set(hit.docId, chunks);
        const held = chunks.get(hit.chunk);
        if (held === undefined || marks > held.marks) chunks.set(hit.chunk, { score: Math.max(score, held?.score ?? 0), marks, text });
        else held.score = Math.max(held.score, score);
      }
    }
    return new Map(
      [...byDoc].map(([docId, chunks]) => [docId, [...chunks.values()].sort((a, b) => b.score - a.score || b.marks - a.marks).map((c) => c.text)]),
    );
  }

  /** One multi-search: each of `queries` with the settings of `common`. */
  #multiSearch(common: Omit<MultiSearchQuery, 'q'>, queries: readonly Pick<MultiSearchQuery, 'q' | 'matchingStrategy'>[], signal: AbortSignal | undefined) {
    const all = queries.map((q): MultiSearchQuery => ({ ...common, ...q }));
    return this.#call(() => this.#client.multiSearch<{ queries: MultiSearchQuery[] }, CandidateHit>({ queries: all }, signal === undefined ? {} : { signal }));
  }

  async stats(): Promise<SearchStats> {
    this.#open();
    // Every document has a chunk 0; the index's own count is of chunks. The documents route counts exactly (search totals are estimates).
    const page = await this.#call(() => this.#index.getDocuments({ filter: 'chunk = 0', limit: 1, fields: ['id'] }));
    return { backend: this.name, documents: page.total };
  }

  async clear(): Promise<void> {
    this.#open();
    await this.#call(async () => {
      const task = await this.#index.deleteAllDocuments();
      await this.#wait([task.taskUid], undefined);
    });
  }

  async health(signal: AbortSignal): Promise<void> {
    this.#open();
    signal.throwIfAborted();
    // health() takes no signal: the race ends the wait on an abort, the client's timeout the request.
    let stop = () => {};
    const aborted = new Promise<never>((_, reject) => {
      const onAbort = () => reject(new MeiliFailure(`Meilisearch at ${this.#config.url} did not answer its health check in time`, signal.reason));
      signal.addEventListener('abort', onAbort, { once: true });
      stop = () => signal.removeEventListener('abort', onAbort);
    });
    try {
      await Promise.race([this.#call(() => this.#client.health()), aborted]);
    } finally {
      stop();
    }
  }

  close(): Promise<void> {
    // The client holds no connections of its own (fetch pools them); closing refuses later calls.
    this.#closed = true;
    return Promise.resolve();
  }

  #open(): void {
    if (this.#closed) throw new Error('the Meilisearch search backend is closed');
  }

  #call<T>(what: () => Promise<T>): Promise<T> {
    return meili(this.#config.url, what);
  }

  /**
   * Waits until every task has succeeded, and throws with Meilisearch's error text for the first
   * that failed (or was canceled). Bounded by TASK_WAIT_MAX_MS and `signal`; error codes in
   * `accept` count as success.
   */
  async #wait(taskUids: readonly number[], signal: AbortSignal | undefined, accept: readonly string[] = []): Promise<void> {
    const deadline = AbortSignal.timeout(TASK_WAIT_MAX_MS);
    const bound = signal === undefined ? deadline : AbortSignal.any([signal, deadline]);
    for (const uid of taskUids) {
      let interval = TASK_POLL_FIRST_MS;
      for (;;) {
        let task: Task;
        try {
          task = await this.#client.tasks.getTask(uid, { signal: bound });
          if (task.status === 'succeeded') break;
          if (task.status === 'failed' || task.status === 'canceled') {
            if (task.error !== null && accept.includes(task.error.code)) break;
            const reason = task.error === null ? task.status : `${oneLine(task.error.message)} (${task.error.code})`;
            throw new MeiliFailure(`Meilisearch task ${uid} (${task.type} on ${task.indexUid ?? 'no index'}) failed: ${reason}`);
          }
          await sleep(interval, undefined, { signal: bound });
        } catch (error) {
          if (bound.aborted && !(error instanceof MeiliFailure)) {
            const why = deadline.aborted ? `within ${TASK_WAIT_MAX_MS} ms` : 'before the caller gave up';
            throw new MeiliFailure(`Meilisearch task ${uid} did not finish ${why}`, error);
          }
          throw error;
        }
        interval = Math.min(interval * TASK_POLL_GROWTH, TASK_POLL_MAX_MS);
      }
    }
  }
}
