import { createHash } from 'node:crypto';
import type { SearchFilters, SearchQuery, SearchRanking, SearchResult } from '../../connectors/search/contract.ts';
import { SEARCH_WINDOW_MAX } from '../../connectors/search/builtin-options.ts';
import { KgwError, backendUnavailable, validation } from '../kernel/errors.ts';
import type { Services } from '../kernel/services.ts';
import { unstorableText } from '../kernel/text.ts';
import { analyzerLanguage } from '../search-text/analyzer.ts';
import { checkRanking } from '../search-text/ranking.ts';
import { QUERY_TEXT_MAX_CHARS } from '../search-text/query.ts';
import { hybridSearch } from './hybrid.ts';

/*
 * The search service: one page of a search over the engine scopes a caller may read, which the
 * product asking works out from its own access model (and from the sources the composition root
 * plugs in beside its own), so the engine filters by access inside its query. It knows no
 * product. A page is addressed by a cursor that carries its offset and a digest of the search it
 * belongs to, so a cursor cannot be replayed against another query.
 */

/** The engine scopes of a source a caller may search: scopes named one by one, and whole families as prefixes. */
export interface CallerScopes {
  readonly scopes: readonly string[];
  readonly prefixes: readonly string[];
}

/** `validation` naming `field` when `value` is text the store cannot keep or longer than `max`. */
export function checkText(field: string, value: string, max: number): void {
  const bad = unstorableText(value);
  if (bad !== undefined) throw validation(`${field} ${bad}`);
  if (value.length > max) throw validation(`${field} is longer than ${max} characters`);
}

/** The query's text checked: storable, within QUERY_TEXT_MAX_CHARS, not empty. */
export function checkQueryText(text: string): void {
  checkText('query', text, QUERY_TEXT_MAX_CHARS);
  if (text.trim() === '') throw validation('query must not be empty');
}

/**
 * The ranking controls as asked, checked (undefined when they ask for nothing), and whether the
 * retrieval asked for can be given: hybrid needs an embeddings endpoint.
 */
export function checkRetrieval(services: Services, ranking: SearchRanking | undefined, retrieval: 'lexical' | 'hybrid' | undefined): SearchRanking | undefined {
  const checked = checkRanking(ranking);
  if (retrieval === 'hybrid' && services.embedder === undefined)
    throw validation('hybrid retrieval needs an embeddings endpoint, and none is configured (KGW_EMBEDDINGS_URL): use lexical');
  return checked;
}

function digestOf(identity: object, scopes: readonly string[], scopePrefixes: readonly string[]): string {
  return createHash('sha256')
    .update(JSON.stringify({ ...identity, scopes, scopePrefixes }))
    .digest('base64url')
    .slice(0, 16);
}

function encodeCursor(offset: number, digest: string): string {
  return Buffer.from(JSON.stringify({ o: offset, d: digest })).toString('base64url');
}

function decodeCursor(cursor: string, digest: string): number {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw validation('cursor is not a cursor this search returned');
  }
  const { o, d } = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as { o?: unknown; d?: unknown };
  if (typeof o !== 'number' || !Number.isInteger(o) || o < 0 || o >= SEARCH_WINDOW_MAX || typeof d !== 'string')
    throw validation('cursor is not a cursor this search returned');
  if (d !== digest) throw validation('cursor belongs to another search: repeat the search without cursor');
  return o;
}

/**
 * The engine's answer, or `unavailable` when it cannot give one (Meilisearch down): the
 * engine's own message stays in the operator's view (readiness, kgw doctor), not the caller's.
 */
export async function engineSearch(services: Services, query: SearchQuery, signal: AbortSignal | undefined): Promise<SearchResult> {
  try {
    return await services.search.search(query, signal);
  } catch (error) {
    if (error instanceof KgwError) throw error;
    throw backendUnavailable('search', services.search.name, error);
  }
}

/** One page of a search, as a product asks for it (its text and ranking checked already). */
export interface PageRequest {
  readonly tenantId: string;
  /** The tenant's language, as it is set. */
  readonly language: string;
  readonly text: string;
  /** The scopes and scope prefixes the caller may search, each sorted. */
  readonly scopes: readonly string[];
  readonly scopePrefixes: readonly string[];
  readonly filters: SearchFilters;
  readonly ranking: SearchRanking | undefined;
  readonly retrieval: 'lexical' | 'hybrid' | undefined;
  /** Results per page, and the cursor of the page asked for. */
  readonly pageSize: number;
  readonly cursor: string | undefined;
  readonly snippets: number;
  /** What identifies the search for its cursors, beside its scopes: the caller's input, without its cursor and page size. */
  readonly identity: object;
}

export interface PageAnswer {
  /** The query the engine was asked (a product may ask the engine again within it). */
  readonly query: SearchQuery;
  readonly result: SearchResult;
  readonly offset: number;
  /** What was done: a hybrid request answers lexically when the vector side was skipped (reasons.fallback says why). */
  readonly retrieval: 'lexical' | 'hybrid';
  /** The cursor of the next page once `shown` results of this one are shown; undefined at the end. */
  cursorAfter(shown: number): string | undefined;
}

/** Runs one page of a search: its cursor checked against the search, lexically or hybrid. */
export async function searchPage(services: Services, request: PageRequest, signal: AbortSignal | undefined): Promise<PageAnswer> {
  const digest = digestOf(request.identity, request.scopes, request.scopePrefixes);
  const offset = request.cursor === undefined ? 0 : decodeCursor(request.cursor, digest);
  const query: SearchQuery = {
    tenantId: request.tenantId,
    text: request.text,
    language: analyzerLanguage(request.language),
    scopes: request.scopes,
    ...(request.scopePrefixes.length === 0 ? {} : { scopePrefixes: request.scopePrefixes }),
    filters: request.filters,
    limit: Math.min(request.pageSize, SEARCH_WINDOW_MAX - offset),
    offset,
    snippets: request.snippets,
    ...(request.ranking === undefined ? {} : { ranking: request.ranking }),
  };
  const embedder = services.embedder;
  const { result, retrieval } =
    request.retrieval === 'hybrid' && embedder !== undefined
      ? await hybridSearch({ db: services.db, embedder, lexical: (q) => engineSearch(services, q, signal) }, query, signal)
      : { result: await engineSearch(services, query, signal), retrieval: 'lexical' as const };
  return {
    query,
    result,
    offset,
    retrieval,
    cursorAfter(shown) {
      const next = offset + shown;
      return shown > 0 && next < Math.min(result.total, SEARCH_WINDOW_MAX) ? encodeCursor(next, digest) : undefined;
    },
  };
}
