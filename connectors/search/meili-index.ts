import { createHash } from 'node:crypto';
import type { Settings } from 'meilisearch';
import { STOP_WORDS } from '../../src/search-text/analyzer.ts';
import { SEARCH_BODY_MAX_BYTES } from './contract.ts';
import type { SearchDocument, SearchFilters } from './contract.ts';

/*
 * What the Meilisearch index holds (meilisearch.ts): its settings, a document as chunks within
 * Meilisearch's position limit, the uploads they go in, and the filter of a query's tenant,
 * scopes and SearchFilters.
 */

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

/** One stored chunk of a document (a type, not an interface: the client wants an index signature). */
export type MeiliChunk = {
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
    // The gateway ranks what Meilisearch finds by its own scores, so Meilisearch's word-pair
    // distances only order candidates; by attribute, indexing 10 k files took 18 s, not 27,
    // at the same nDCG@10 on Cranfield (docs/search.md).
    proximityPrecision: 'byAttribute',
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
  if (actual.proximityPrecision !== 'byAttribute') differences.push(`proximityPrecision is ${actual.proximityPrecision ?? 'unset'}, not byAttribute`);
  return differences;
}

/** A value as a Meilisearch filter string literal: in double quotes, with `\` and `"` escaped. */
export function filterLiteral(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

export const inList = (attribute: string, values: readonly string[]) => `${attribute} IN [${values.map(filterLiteral).join(', ')}]`;

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
