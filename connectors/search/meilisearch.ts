import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Meilisearch, MeilisearchApiError, MeilisearchRequestError, MeilisearchRequestTimeOutError } from 'meilisearch';
import type { Index, MultiSearchQuery, Settings, Task } from 'meilisearch';
import { backendUnavailable } from '../../src/kernel/errors.ts';
import { QUERY_TEXT_MAX_CHARS } from '../../src/search-text/query.ts';
import type { MeiliConfig } from '../../src/config.ts';
import { STOP_WORDS, analyzer } from '../../src/search-text/analyzer.ts';
import type { ApplyContext } from '../projection.ts';
import { SEARCH_BODY_MAX_BYTES, SNIPPET_MARK } from './contract.ts';
import type {
  CandidateRanker,
  SearchBackend,
  SearchDocument,
  SearchFilters,
  SearchHit,
  SearchQuery,
  SearchResult,
  SearchStats,
  TermFrequencies,
} from './contract.ts';

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
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

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

/**
 * Meilisearch indexes at most 65,535 positions per attribute and silently drops the words past
 * it. A word takes one position, and a separator with punctuation in it takes eight (measured:
 * with ", " between words, the 8,199th word of an attribute is the first one lost), so a chunk's
 * positions are estimated that way, every separator counting at least one, and a body is cut
 * into chunks of at most 30,000 estimated positions: under half the limit, so a tokenizer that
 * splits words more finely than the shared analyser still stays below it. That is about 3,300
 * words of comma-separated values and 10,000 of prose.
 */
export const CHUNK_POSITIONS_MAX = 30_000;
/** Positions a separator holding anything but spaces and line breaks is counted as. */
const HARD_SEPARATOR_POSITIONS = 8;

/** One multi-search sends at most 32 one-word queries (and the whole question): the first 32 distinct terms of a question. */
export const QUERY_WORDS_MAX = 32;
/**
 * A word held by more than this share of the caller's documents, and by at least
 * COMMON_TERM_DOCS_MIN of them, gets no query of its own (the whole question still holds it).
 * Chosen on Cranfield's odd queries: 0.25 left them as they were (nDCG@10 0.410, MAP@100 0.356),
 * 0.1 lowered them (0.407, 0.350).
 */
export const COMMON_TERM_SHARE = 0.25;
export const COMMON_TERM_DOCS_MIN = 1000;
/** Candidates each query of a multi-search returns (distinct documents). */
export const CANDIDATES_PER_QUERY = 100;
/** Words of a crop Meilisearch returns as a snippet. */
export const SNIPPET_CROP_WORDS = 30;
/** Chunks each query of a crop request returns at most (its filter names at most a page of documents, 50). */
const CROP_CHUNKS_MAX = 200;

/**
 * What one upload (one Meilisearch task) carries at most: 16 MiB of chunk text (path, title and
 * body, as UTF-8; Meilisearch refuses payloads over 100 MB by default) and 5,000 chunks. A batch of
 * small files is one task: each task costs Meilisearch a fixed share of its work (a batch of 400
 * files had been eight tasks of 50).
 */
const UPLOAD_BYTES_MAX = 16 * 1024 * 1024;
const UPLOAD_CHUNKS_MAX = 5000;

/** The chunks in uploads within UPLOAD_BYTES_MAX and UPLOAD_CHUNKS_MAX, in order; a chunk larger than the bound alone goes alone. */
export function uploads<T extends { readonly path: string; readonly title: string; readonly body: string }>(chunks: readonly T[]): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const chunk of chunks) {
    const size = Buffer.byteLength(chunk.path) + Buffer.byteLength(chunk.title) + Buffer.byteLength(chunk.body);
    if (current.length > 0 && (bytes + size > UPLOAD_BYTES_MAX || current.length >= UPLOAD_CHUNKS_MAX)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(chunk);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}
/** Documents one delete-by-filter task names at most: bounds the filter's length. */
const DELETE_FILTER_DOCS_MAX = 100;

/** One stored chunk of a document (a type, not an interface: the client wants an index signature). */
type MeiliChunk = {
  readonly id: string;
  readonly docId: string;
  readonly tenantId: string;
  readonly scope: string;
  readonly kind: string;
  readonly path: string;
  readonly title: string;
  readonly body: string;
  readonly tags: readonly string[];
  readonly mediaType: string;
  readonly contentKind: string;
  /** Epoch milliseconds, so `updatedAt >= n` filters numerically. */
  readonly updatedAt: number;
  readonly chunk: number;
};

/** The fields a search hit is retrieved with: a candidate needs only its document id, a crop its chunk too. */
type CandidateHit = { readonly docId: string; readonly chunk: number; readonly body?: string };

const SEARCHABLE = ['path', 'title', 'body'];
// path for the path-prefix filter (STARTS WITH) and chunk for removing the chunks past a new count.
const FILTERABLE = ['tenantId', 'scope', 'kind', 'tags', 'mediaType', 'contentKind', 'updatedAt', 'docId', 'chunk', 'path'];
const SORTABLE = ['updatedAt'];
/** Meilisearch's default ranking rules (as of 1.50): set explicitly, so a change to them is drift. */
const RANKING_RULES = ['words', 'typo', 'proximity', 'attributeRank', 'sort', 'wordPosition', 'exactness'];

/** The index settings the backend needs. */
export function wantedSettings(): Settings {
  return {
    searchableAttributes: SEARCHABLE,
    filterableAttributes: FILTERABLE,
    sortableAttributes: SORTABLE,
    rankingRules: RANKING_RULES,
    stopWords: [...new Set(Object.values(STOP_WORDS).flatMap((words) => [...words]))].sort(),
    typoTolerance: { enabled: true },
    // The gateway never searches facet values (the facet-search route), and keeping them
    // searchable cost every indexing batch: one file's update at 100 k files took 220 ms with
    // it, 85 ms without (docs/search.md).
    facetSearch: false,
  };
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && new Set([...a, ...b]).size === new Set(a).size;
const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

function setDifference(name: string, wanted: readonly string[], actual: readonly string[]): string | undefined {
  if (sameSet(wanted, actual)) return undefined;
  const missing = wanted.filter((x) => !actual.includes(x));
  const extra = actual.filter((x) => !wanted.includes(x));
  const parts = [missing.length > 0 ? `lacks ${missing.join(', ')}` : '', extra.length > 0 ? `also has ${extra.join(', ')}` : ''].filter((p) => p !== '');
  return `${name} ${parts.join('; ')}`;
}

/** What differs between the wanted settings and an index's actual ones, one line each; [] when none. */
export function settingsDifferences(actual: Settings): string[] {
  const wanted = wantedSettings();
  const differences: string[] = [];
  const searchable = actual.searchableAttributes ?? [];
  if (!sameList(wanted.searchableAttributes ?? [], searchable)) {
    differences.push(`searchableAttributes are [${searchable.join(', ')}], not [${(wanted.searchableAttributes ?? []).join(', ')}]`);
  }
  // Granular filterable rules (objects) are never what this backend sets: they count by their patterns.
  const filterable = (actual.filterableAttributes ?? []).flatMap((rule) => (typeof rule === 'string' ? [rule] : rule.attributePatterns));
  const filterableDifference = setDifference('filterableAttributes', FILTERABLE, filterable);
  if (filterableDifference !== undefined) differences.push(filterableDifference);
  const sortableDifference = setDifference('sortableAttributes', SORTABLE, actual.sortableAttributes ?? []);
  if (sortableDifference !== undefined) differences.push(sortableDifference);
  const ranking = actual.rankingRules ?? [];
  if (!sameList(RANKING_RULES, ranking)) differences.push(`rankingRules are [${ranking.join(', ')}], not [${RANKING_RULES.join(', ')}]`);
  // Meilisearch hands stop words back decomposed (NFD): compared composed.
  const composed = (words: readonly string[]) => words.map((w) => w.normalize('NFC'));
  const stopDifference = setDifference('stopWords', composed(wanted.stopWords ?? []), composed(actual.stopWords ?? []));
  if (stopDifference !== undefined) differences.push(stopDifference);
  if (actual.typoTolerance?.enabled !== true) differences.push('typoTolerance is disabled');
  if (actual.facetSearch !== false) differences.push('facetSearch is enabled');
  return differences;
}

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

/** A value as a Meilisearch filter string literal: in double quotes, with `\` and `"` escaped. */
export function filterLiteral(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

const inList = (attribute: string, values: readonly string[]) => `${attribute} IN [${values.map(filterLiteral).join(', ')}]`;

/**
 * The filter of a query: its tenant, its scopes (named, or by prefix: `scope STARTS WITH`), and
 * its SearchFilters; undefined when it can match nothing (no scopes and no prefixes, or a filter
 * list that is empty), so Meilisearch is not asked.
 */
export function searchFilter(tenantId: string, scopes: readonly string[], filters: SearchFilters = {}, prefixes: readonly string[] = []): string | undefined {
  const reach = [
    ...(scopes.length === 0 ? [] : [inList('scope', [...new Set(scopes)])]),
    ...[...new Set(prefixes)].map((prefix) => `scope STARTS WITH ${filterLiteral(prefix)}`),
  ];
  if (reach.length === 0) return undefined;
  const parts = [`tenantId = ${filterLiteral(tenantId)}`, reach.length === 1 ? (reach[0] ?? '') : `(${reach.join(' OR ')})`];
  const lists: [string, readonly string[] | undefined][] = [
    ['kind', filters.kinds],
    ['tags', filters.tags],
    ['mediaType', filters.mediaTypes],
  ];
  for (const [attribute, values] of lists) {
    if (values === undefined) continue;
    // A document matches when it has any of the values: none are given, so none matches.
    if (values.length === 0) return undefined;
    parts.push(inList(attribute, values));
  }
  if (filters.paths !== undefined) {
    if (filters.paths.length === 0) return undefined;
    const alternatives = filters.paths.map((p) =>
      p.prefix === '' ? `scope = ${filterLiteral(p.scope)}` : `(scope = ${filterLiteral(p.scope)} AND path STARTS WITH ${filterLiteral(p.prefix)})`,
    );
    parts.push(`(${alternatives.join(' OR ')})`);
  }
  if (filters.contentKind !== undefined) parts.push(`contentKind = ${filterLiteral(filters.contentKind)}`);
  if (filters.updatedSince !== undefined) {
    const since = Date.parse(filters.updatedSince);
    if (!Number.isFinite(since)) throw new Error(`updatedSince is not an instant: ${filters.updatedSince}`);
    parts.push(`updatedAt >= ${since}`);
  }
  return parts.join(' AND ');
}

/** The Meilisearch id of a chunk: a hash of tenant and document id (any characters, any length) and the chunk number. */
export function chunkId(tenantId: string, docId: string, chunk: number): string {
  // base64url is within Meilisearch's id alphabet [a-zA-Z0-9_-]; 43 characters and the number stay far below its 511 bytes.
  const hash = createHash('sha256').update(tenantId).update('\u0000').update(docId).digest('base64url');
  return `${hash}-${chunk}`;
}

/** The first SEARCH_BODY_MAX_BYTES of UTF-8 of a body, cut on a character boundary. */
function capBody(body: string): string {
  if (body.length * 3 <= SEARCH_BODY_MAX_BYTES || Buffer.byteLength(body) <= SEARCH_BODY_MAX_BYTES) return body;
  // A character cut in two decodes as U+FFFD at the end: drop it.
  return Buffer.from(body)
    .subarray(0, SEARCH_BODY_MAX_BYTES)
    .toString('utf8')
    .replace(/\uFFFD$/u, '');
}

const WORD = /[\p{L}\p{M}\p{N}]+/gu;
const PARAGRAPH_BREAK = /\n[^\S\n]*\n/;
const HARD = /[^\s]/;

/**
 * A body cut into chunks of at most CHUNK_POSITIONS_MAX estimated positions, each cut at the
 * last paragraph break of the chunk when that keeps at least half of it, else between words.
 * The chunks put together give the body back; an empty body is one empty chunk.
 */
export function chunkBody(body: string, maxPositions = CHUNK_POSITIONS_MAX): string[] {
  const chunks: string[] = [];
  let start = 0;
  let used = 0;
  // The first word after the chunk's last paragraph break, and the positions used before it.
  let lastBreak: { offset: number; used: number } | undefined;
  let previousEnd = 0;
  for (const match of body.matchAll(WORD)) {
    const separator = body.slice(previousEnd, match.index);
    const separatorCost = HARD.test(separator) ? HARD_SEPARATOR_POSITIONS : 1;
    previousEnd = match.index + match[0].length;
    if (used > 0 && used + separatorCost + 1 > maxPositions) {
      const atBreak = lastBreak !== undefined && lastBreak.used * 2 >= used ? lastBreak : undefined;
      const cut = atBreak?.offset ?? match.index;
      chunks.push(body.slice(start, cut));
      start = cut;
      // The words from the break on move to the new chunk (at most half of one, so this word fits).
      used = atBreak === undefined ? 0 : used - atBreak.used;
      lastBreak = undefined;
    } else if (used > 0 && PARAGRAPH_BREAK.test(separator)) {
      lastBreak = { offset: match.index, used };
    }
    used += (used === 0 ? 0 : separatorCost) + 1;
  }
  chunks.push(body.slice(start));
  return chunks;
}

/** The chunks of a document as Meilisearch stores them. */
export function documentChunks(doc: SearchDocument): MeiliChunk[] {
  const updatedAt = Date.parse(doc.updatedAt);
  return chunkBody(capBody(doc.body)).map((body, chunk) => ({
    id: chunkId(doc.tenantId, doc.id, chunk),
    docId: doc.id,
    tenantId: doc.tenantId,
    scope: doc.scope,
    kind: doc.kind,
    path: doc.path,
    title: doc.title,
    body,
    tags: doc.tags,
    mediaType: doc.mediaType,
    contentKind: doc.contentKind,
    updatedAt: Number.isFinite(updatedAt) ? updatedAt : 0,
    chunk,
  }));
}

/** Each distinct term of a question with its first surface form (what a one-word query sends), in order, at most QUERY_WORDS_MAX. */
export function queryTerms(text: string, language: string): { readonly word: string; readonly term: string }[] {
  const seen = new Set<string>();
  const terms: { word: string; term: string }[] = [];
  for (const token of analyzer(language).tokens(text)) {
    if (seen.has(token.term)) continue;
    seen.add(token.term);
    terms.push({ word: text.slice(token.start, token.end), term: token.term });
    if (terms.length === QUERY_WORDS_MAX) break;
  }
  return terms;
}

/**
 * The words a multi-search asks about one by one: all but the common ones, those held by more
 * than COMMON_TERM_SHARE of the caller's documents and by at least COMMON_TERM_DOCS_MIN (by
 * the ranker's statistics); when every word is common, the rarest. A word nearly every
 * document holds adds almost nothing to a BM25 score, and Meilisearch ranks every document
 * holding it to find its first 100: at 100 k files a word of every path ("notes") took about
 * 450 ms. In a small collection every word is cheap to ask about, so none is left out there.
 */
export function informativeWords(terms: readonly { word: string; term: string }[], frequencies: TermFrequencies): string[] {
  const df = (term: string) => frequencies.df.get(term) ?? 0;
  const common = (term: string) => df(term) >= COMMON_TERM_DOCS_MIN && df(term) > frequencies.documents * COMMON_TERM_SHARE;
  const kept = terms.filter((t) => !common(t.term));
  if (kept.length > 0) return kept.map((t) => t.word);
  const rarest = terms.reduce<{ word: string; term: string } | undefined>(
    (best, t) => (best === undefined || df(t.term) < df(best.term) ? t : best),
    undefined,
  );
  return rarest === undefined ? [] : [rarest.word];
}

/**
 * The stems of the words asked about that differ from the words as typed (at least three
 * letters). Meilisearch matches words as written, not stems, and takes a query's last word as a
 * prefix: asking for the stem as well finds the files that hold the word only in another form
 * ("deploy", "deployed" for "deploying"; "own", "owner" for "owned"), which the ranker scores
 * by the same stems as the built-in engine, so both engines see the same candidates.
 */
export function stemWords(terms: readonly { word: string; term: string }[], words: readonly string[]): string[] {
  const asked = new Set(words);
  const stems = new Set<string>();
  for (const { word, term } of terms) {
    if (asked.has(word) && term.length >= 3 && term !== word.toLowerCase() && !asked.has(term)) stems.add(term);
  }
  return [...stems];
}

/**
 * The queries of a multi-search: one per word asked about, all of it required, one per stem of
 * such a word that differs from it (stemWords), and the whole
 * question with Meilisearch's own `last` strategy, which finds the files holding most of its
 * words. The whole question is left out when one word is asked about (that query is the
 * word's), and loses its common words when some were left out: Meilisearch's `last` drops
 * words from the end until enough files match, down to a common word every file holds, and
 * then ranks them all (questions holding a word of every path took 400-490 ms at 100 k files).
 */
export function candidateQueries(
  text: string,
  terms: number,
  words: readonly string[],
  stems: readonly string[] = [],
): Pick<MultiSearchQuery, 'q' | 'matchingStrategy'>[] {
  const whole = words.length < 2 ? undefined : words.length < terms ? words.join(' ') : text;
  return [
    ...words.map((word) => ({ q: word, matchingStrategy: 'all' as const })),
    ...stems.map((stem) => ({ q: stem, matchingStrategy: 'all' as const })),
    // Serde refuses a lone surrogate's JSON escape, and controls only separate words anyway.
    ...(whole === undefined ? [] : [{ q: whole.slice(0, QUERY_TEXT_MAX_CHARS).toWellFormed().replace(CONTROLS, ' '), matchingStrategy: 'last' as const }]),
  ];
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
