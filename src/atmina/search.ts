import type { SearchFilters, SearchHit, SearchQuery, SearchRanking } from '../../connectors/search/contract.ts';
import type { Caller } from '../kernel/access/caller.ts';
import type { Searcher } from '../kernel/access/anonymous.ts';
import { isAnonymous } from '../kernel/access/anonymous.ts';
import { validation } from '../kernel/errors.ts';
import type { Services } from '../kernel/services.ts';
import type { CallerScopes } from '../search/search.ts';
import { checkQueryText, checkRetrieval, checkText, engineSearch, searchPage } from '../search/search.ts';
import { kbAllows } from './access/team-roles.ts';
import { accessibleKbs, resolveKb } from './kb/access.ts';
import type { KbWithAccess } from './kb/access.ts';
import { publicKbs } from './kb/public-kbs.ts';
import { kbScope } from './search-source.ts';
import { CONTENT_KINDS } from './searched-content.ts';
import type { SearchedContent } from './searched-content.ts';
import type { ContentKind, ContentResource } from './searched-content.ts';

/*
 * Atmina's search over what the caller may read: the KBs it can search (all of them, or those
 * the scope names) and, unless the scope names KBs, the content plugged in beside them
 * (searched-content.ts: Knowledge, Memories and Artifacts) it may read, turned into engine
 * scopes for the search service (src/search/search.ts), which runs the page.
 */

/** Files per page: 1 to 50, 10 by default. */
export const MAX_FILES_MAX = 50;
export const MAX_FILES_DEFAULT = 10;
/** KBs and path prefixes a scope may name. */
export const SCOPE_KBS_MAX = 50;
export const SCOPE_PATHS_MAX = 20;
/** Tags and media types a filter may list. */
export const FILTER_VALUES_MAX = 20;
/** Snippets per file. */
export const SNIPPETS_PER_FILE = 3;
/** flag_only KBs a search looks into for whether they hold a match (one engine query each), by slug. */
export const FLAGGED_KBS_MAX = 10;

export const RESULT_KINDS = ['file', ...CONTENT_KINDS] as const;
export type ResultKind = (typeof RESULT_KINDS)[number];

export interface SearchInput {
  readonly query: string;
  readonly kbIds?: readonly string[];
  readonly kbSlugs?: readonly string[];
  readonly pathPrefixes?: readonly string[];
  readonly tags?: readonly string[];
  readonly mediaTypes?: readonly string[];
  readonly content?: 'text' | 'asset';
  readonly updatedSince?: string;
  readonly kinds?: readonly ResultKind[];
  readonly retrieval?: 'lexical' | 'hybrid';
  /** Ranking controls applied after relevance (ranking.ts); the lexical list's, with hybrid retrieval. */
  readonly ranking?: SearchRanking;
  readonly maxFiles?: number;
  readonly cursor?: string;
}

/** A hit with what it is: a KB file (with its KB), or content found beside them. */
export type SearchPageHit = SearchHit &
  ({ readonly kb: KbWithAccess; readonly resource?: undefined } | { readonly kb?: undefined; readonly resource: ContentResource });

export interface SearchPage {
  /** The ids of the KBs searched. */
  readonly searched: readonly string[];
  /**
   * KBs whose location_policy is flag_only and which the caller may search but not read, that
   * hold a match: their files are no results (no place, count or score), only this flag.
   */
  readonly flagged: readonly KbWithAccess[];
  /** The content scopes the search covered: resources named one by one, and whole types as scope prefixes. */
  readonly context: CallerScopes;
  readonly hits: readonly SearchPageHit[];
  readonly total: number;
  readonly nextCursor: string | undefined;
  /** What was done: a hybrid request answers lexically when the vector side was skipped (reasons.fallback says why). */
  readonly retrieval: 'lexical' | 'hybrid';
}

/**
 * The KBs a search covers: those named (each must be one the caller may search), or every KB it
 * may search. An anonymous connection may search the tenant's public KBs only (kb/public-kbs.ts).
 */
async function searchedKbs(services: Services, searcher: Searcher, input: SearchInput): Promise<KbWithAccess[]> {
  const named = [...(input.kbIds ?? []), ...(input.kbSlugs ?? [])];
  if (isAnonymous(searcher)) return publicKbs(services.db, searcher.tenant, named);
  const caller: Caller = searcher;
  if (named.length === 0) return accessibleKbs(services.db, caller);
  const found = new Map<string, KbWithAccess>();
  for (const given of named) {
    const kb = await resolveKb(services.db, caller, given);
    found.set(kb.kb.id, kb);
  }
  return [...found.values()];
}

/** Whether a KB shows the caller only that it holds a match, not where: flag_only, and the caller may not read it. */
const hidesLocations = (kb: KbWithAccess): boolean => kb.kb.locationPolicy === 'flag_only' && !kbAllows(kb.access, 'viewer');

/**
 * The KBs among `kbs` that hold a match of `query` (its text and filters, `pathPrefixes` within
 * each KB): one engine query of one result and no snippet per KB, so the answer is exact however
 * low the KB's files would rank, at FLAGGED_KBS_MAX queries at most.
 */
async function kbsWithMatches(
  services: Services,
  query: SearchQuery,
  kbs: readonly KbWithAccess[],
  pathPrefixes: readonly string[] | undefined,
  signal: AbortSignal | undefined,
): Promise<KbWithAccess[]> {
  const found: KbWithAccess[] = [];
  for (const kb of kbs) {
    const scope = kbScope(kb.kb.id);
    // Whether it holds a match: neither other scopes nor an order matter.
    const { scopePrefixes: _prefixes, ranking: _ranking, ...rest } = query;
    const paths = pathPrefixes === undefined || pathPrefixes.length === 0 ? {} : { paths: pathPrefixes.map((prefix) => ({ scope, prefix })) };
    const probe: SearchQuery = { ...rest, scopes: [scope], filters: { ...query.filters, ...paths }, limit: 1, offset: 0, snippets: 0 };
    const result = await engineSearch(services, probe, signal);
    if (result.hits.length > 0) found.push(kb);
  }
  return found;
}

/** Searches KB files and, beside them, the `content` of other products the caller may read (src/atmina/searched-content.ts). */
export async function searchKbs(services: Services, content: SearchedContent, caller: Searcher, input: SearchInput, signal?: AbortSignal): Promise<SearchPage> {
  checkQueryText(input.query);
  for (const prefix of input.pathPrefixes ?? []) checkText('path_prefixes', prefix, 1024);
  for (const tag of input.tags ?? []) checkText('tags', tag, 64);
  for (const type of input.mediaTypes ?? []) checkText('media_types', type, 255);
  let updatedSince: string | undefined;
  if (input.updatedSince !== undefined) {
    const at = new Date(input.updatedSince);
    if (!/^\d{4}-\d{2}-\d{2}/.test(input.updatedSince) || Number.isNaN(at.getTime())) throw validation('updated_since must be an ISO 8601 date or date-time');
    updatedSince = at.toISOString();
  }
  const ranking = checkRetrieval(services, input.ranking, input.retrieval);
  const kinds: readonly ResultKind[] = input.kinds === undefined || input.kinds.length === 0 ? RESULT_KINDS : [...new Set(input.kinds)];
  const namesKbs = (input.kbIds?.length ?? 0) + (input.kbSlugs?.length ?? 0) > 0;
  // A scope naming KBs searches those KBs' files only; so does a path prefix, which is a KB path.
  const contentKinds = namesKbs || (input.pathPrefixes?.length ?? 0) > 0 ? [] : kinds.filter((k): k is ContentKind => k !== 'file');
  // Both reads at once (neither needs the other). An anonymous connection has no principal: it reads public KB files only.
  const [kbs, context] = await Promise.all([
    kinds.includes('file') || namesKbs ? searchedKbs(services, caller, input) : [],
    isAnonymous(caller) || contentKinds.length === 0
      ? ({ scopes: [], prefixes: [] } satisfies CallerScopes)
      : content.scopesFor(services.db, caller, contentKinds),
  ]);
  // A flag_only KB the caller may only search is not searched for results: whether it holds a
  // match is asked of it alone, below (docs/atmina.md, "location_policy").
  const shown = kbs.filter((kb) => !hidesLocations(kb));
  const flagging = kinds.includes('file')
    ? kbs
        .filter(hidesLocations)
        .sort((a, b) => (a.kb.slug < b.kb.slug ? -1 : a.kb.slug > b.kb.slug ? 1 : 0))
        .slice(0, FLAGGED_KBS_MAX)
    : [];
  // No `kinds` filter: each scope holds one kind (kb:… files, knowledge:… and knowledge.latest:…
  // Knowledge, memory:… Memories, artifact:… Artifacts), and the scopes above are those of the
  // kinds asked for, so the scopes are the kinds filter already. Sent as a filter too, it made
  // the built-in engine join every matching document's row and score every posting (no
  // pruning): 130 ms of a 170 ms keyword search at 100 k files (docs/search.md, "Speed").
  const filters: SearchFilters = {
    ...(input.pathPrefixes === undefined || input.pathPrefixes.length === 0
      ? {}
      : { paths: shown.flatMap(({ kb }) => (input.pathPrefixes ?? []).map((prefix) => ({ scope: kbScope(kb.id), prefix }))) }),
    ...(input.tags === undefined || input.tags.length === 0 ? {} : { tags: input.tags.map((t) => t.toLowerCase()) }),
    ...(input.mediaTypes === undefined || input.mediaTypes.length === 0 ? {} : { mediaTypes: input.mediaTypes.map((t) => t.toLowerCase()) }),
    ...(input.content === undefined ? {} : { contentKind: input.content }),
    ...(updatedSince === undefined ? {} : { updatedSince }),
  };
  const { cursor, maxFiles, ...identity } = input;
  const page = await searchPage(
    services,
    {
      tenantId: caller.tenant.id,
      language: caller.tenant.language,
      text: input.query,
      scopes: [...(kinds.includes('file') ? shown.map(({ kb }) => kbScope(kb.id)) : []), ...context.scopes].sort(),
      scopePrefixes: [...context.prefixes].sort(),
      filters,
      ranking,
      retrieval: input.retrieval,
      pageSize: maxFiles ?? MAX_FILES_DEFAULT,
      cursor,
      snippets: SNIPPETS_PER_FILE,
      identity,
    },
    signal,
  );
  const byScope = new Map(kbs.map((kb) => [kbScope(kb.kb.id), kb]));
  const hits = page.result.hits.flatMap((hit): SearchPageHit[] => {
    const kb = byScope.get(hit.scope);
    if (kb !== undefined) return [{ ...hit, kb }];
    const resource = content.resourceOf(hit);
    return resource === undefined ? [] : [{ ...hit, resource }];
  });
  const flagged = flagging.length === 0 ? [] : await kbsWithMatches(services, page.query, flagging, input.pathPrefixes, signal);
  return {
    searched: kbs.map(({ kb }) => kb.id),
    flagged,
    context,
    hits,
    total: page.result.total,
    nextCursor: page.cursorAfter(hits.length),
    retrieval: page.retrieval,
  };
}
