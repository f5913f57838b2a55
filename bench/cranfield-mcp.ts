import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CranfieldDoc, CranfieldQuery } from './cranfield.ts';
import { docContent, docIdOf, docPath } from './cranfield.ts';
import { distinct } from './ir-metrics.ts';
import { selectBacklogs, selectProjectionStates } from '../src/kernel/outbox/queries.ts';
import type { Queryable } from '../src/store/db.ts';

/**
 * What the search-quality bench does through Atmina's MCP tools, as an agent would: create a
 * KB, write the collection into it with write_files, wait on the KB's indexing-status resource
 * until search has caught up, and run the queries through the search tool. Only the SDK
 * client is used, so every figure includes the MCP layer.
 */

/** Items per write_files call: the tool's own maximum. */
export const WRITE_BATCH_ITEMS = 50;
/** How long loading may wait for search to index the collection before the bench gives up: 10 minutes. */
export const INDEXING_TIMEOUT_MS = 10 * 60_000;
/** How often the indexing-status resource is read while waiting. */
export const INDEXING_POLL_MS = 250;
/** Files asked of search per query, over as many calls as its page size needs: MAP is measured over the top 100. */
export const SEARCH_MAX_FILES = 100;
/** Queries in flight at once; each query's calls follow one another. */
export const SEARCH_CONCURRENCY = 2;

/** The structured content of a tool's answer; a tool error is thrown with its text (`code: message`). */
export async function callStructured(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError === true) {
    const content = Array.isArray(result.content) ? (result.content as { type?: string; text?: string }[]) : [];
    const text = content.map((c) => (c.type === 'text' ? c.text : '')).join(' ');
    throw new Error(`${name} failed: ${text}`);
  }
  const structured: unknown = result.structuredContent;
  if (structured === undefined || structured === null || typeof structured !== 'object') throw new Error(`${name} answered no structured content`);
  return structured as Record<string, unknown>;
}

/** Creates a KB named `name` in the caller's one Admin team; answers its kb_id. */
export async function createKb(client: Client, name: string): Promise<string> {
  const kb = await callStructured(client, 'create_kb', { name });
  if (typeof kb.kb_id !== 'string') throw new Error('create_kb answered no kb_id');
  return kb.kb_id;
}

/** The search backend the gateway reports in Atmina's health tool (search.backend). */
export async function searchBackend(client: Client): Promise<string> {
  const health = await callStructured(client, 'health', {});
  const search = health.search as { backend?: unknown } | undefined;
  if (typeof search?.backend !== 'string') throw new Error('health answered no search.backend');
  return search.backend;
}

interface BatchAnswer {
  written: number;
  failed: number;
  results: { ok: boolean; path: string; error?: string }[];
}

/** A file as write_files takes it. */
export interface BenchFile {
  readonly path: string;
  readonly content: string;
}

/**
 * Writes the files (mode create), WRITE_BATCH_ITEMS per write_files call, one call after the
 * other. Any failed item fails the load: figures over a partial collection would not compare.
 */
export async function writeFiles(client: Client, kbId: string, files: readonly BenchFile[]): Promise<number> {
  let written = 0;
  for (let start = 0; start < files.length; start += WRITE_BATCH_ITEMS) {
    const items = files.slice(start, start + WRITE_BATCH_ITEMS).map((file) => ({ path: file.path, mode: 'create', content: file.content }));
    const answer = (await callStructured(client, 'write_files', { kb_id: kbId, items })) as unknown as BatchAnswer;
    if (answer.failed !== 0) {
      const first = answer.results.find((r) => !r.ok);
      throw new Error(`write_files: ${answer.failed} of ${items.length} items failed, first ${first?.path}: ${first?.error}`);
    }
    written += answer.written;
  }
  return written;
}

/** Writes every Cranfield document as `cranfield/<id>.md` (writeFiles). */
export async function writeDocs(client: Client, kbId: string, docs: readonly CranfieldDoc[]): Promise<number> {
  return writeFiles(
    client,
    kbId,
    docs.map((doc) => ({ path: docPath(doc.id), content: docContent(doc) })),
  );
}

export interface ProjectionBacklog {
  readonly projection: string;
  readonly pending: number;
  readonly failing: number;
  readonly last_error: string | null;
}

export interface IndexingStatus {
  readonly kb_id: string;
  readonly files: number;
  readonly indexed: boolean;
  readonly projections: readonly ProjectionBacklog[];
}

/** The KB's `atmina://kb/{kb_id}/indexing-status` resource. */
export async function readIndexingStatus(client: Client, kbId: string): Promise<IndexingStatus> {
  const { contents } = await client.readResource({ uri: `atmina://kb/${kbId}/indexing-status` });
  const first = contents[0];
  if (first === undefined || !('text' in first) || typeof first.text !== 'string') throw new Error('indexing-status answered no text');
  return JSON.parse(first.text) as IndexingStatus;
}

export interface WaitOptions {
  readonly timeoutMs?: number;
  readonly pollMs?: number;
}

/**
 * Reads the indexing status until no row waits for search (the graph may lag: search results
 * do not depend on it). Throws once `timeoutMs` has passed, with what still waited and the
 * latest error, so a projection that is not running or keeps failing is named.
 */
export async function waitForSearchIndexing(client: Client, kbId: string, options: WaitOptions = {}): Promise<IndexingStatus> {
  const timeoutMs = options.timeoutMs ?? INDEXING_TIMEOUT_MS;
  const pollMs = options.pollMs ?? INDEXING_POLL_MS;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await readIndexingStatus(client, kbId);
    const search = status.projections.find((p) => p.projection === 'search');
    if (search !== undefined && search.pending === 0) return status;
    if (Date.now() >= deadline) {
      const waiting = search === undefined ? 'no search projection listed' : `${search.pending} rows pending, ${search.failing} failing`;
      const error = search?.last_error ? `, latest error: ${search.last_error}` : '';
      throw new Error(`search did not index KB ${kbId} within ${Math.round(timeoutMs / 1000)} s: ${waiting}${error}`);
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/**
 * Waits until the `vectors` projection has embedded every document search indexed. Its rows
 * are keyed by search document, not by KB file, so the KB's indexing-status resource does not
 * list them; the bench owns its store and reads the outbox there (as `kgw doctor` does). Call
 * it once search has indexed (waitForSearchIndexing): the search projection enqueues the
 * vectors rows as it applies. Throws after `timeoutMs` with the rows still waiting and the
 * projection's latest error, so a down or failing endpoint is named.
 */
export async function waitForVectors(db: Queryable, options: WaitOptions = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? INDEXING_TIMEOUT_MS;
  const pollMs = options.pollMs ?? INDEXING_POLL_MS;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const vectors = (await selectBacklogs(db)).find((b) => b.projection === 'vectors');
    if (vectors === undefined || vectors.backlog === 0) return;
    if (Date.now() >= deadline) {
      const state = (await selectProjectionStates(db)).find((p) => p.projection === 'vectors');
      const error = state?.lastError ? `, latest error: ${state.lastError}` : '';
      throw new Error(
        `vectors were not embedded within ${Math.round(timeoutMs / 1000)} s: ${vectors.backlog} rows pending, ${vectors.failing} failing${error}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

interface SearchAnswer {
  results: { kind?: string; path?: string }[];
  next_cursor?: string | null;
  retrieval?: string;
}

/** What a query needs to be searched: the number it is scored under and its text (a Cranfield query's label rides along). */
export type BenchQuery = Pick<CranfieldQuery, 'number' | 'text'> & { readonly label?: string };

/** How the queries are searched beyond the page size. */
export interface SearchOptions {
  /** The search tool's `retrieval`; unset asks as before (lexical, the tool's default). */
  readonly retrieval?: 'lexical' | 'hybrid';
  /** A result's path to the key it is judged under (a Cranfield document id by default); a path it does not know keeps its rank under itself. */
  readonly idOf?: (filePath: string) => string | undefined;
  /** Files asked per query, over as many pages as that takes: SEARCH_MAX_FILES by default; fewer when only the top few are scored. */
  readonly maxFiles?: number;
}

/**
 * Files per search call: SEARCH_MAX_FILES, or fewer when the search tool's input schema caps
 * max_files lower (as tools/list shows it to any agent); the rest comes page by page.
 */
export async function searchPageSize(client: Client): Promise<number> {
  const { tools } = await client.listTools();
  const search = tools.find((t) => t.name === 'search');
  if (search === undefined) throw new Error('the gateway lists no search tool');
  const maxFiles: unknown = search.inputSchema.properties?.max_files;
  const maximum: unknown = typeof maxFiles === 'object' && maxFiles !== null ? (maxFiles as { maximum?: unknown }).maximum : undefined;
  return typeof maximum === 'number' ? Math.min(SEARCH_MAX_FILES, maximum) : SEARCH_MAX_FILES;
}

export interface QueryRun {
  readonly number: number;
  /** Document ids best first, each once; a file that is no document keeps its rank under its path. */
  readonly ranking: readonly string[];
  /** File results the tool answered over all pages (before repeats were removed). */
  readonly returned: number;
  /** Milliseconds of each search call, from sending the tools/call to having its answer. */
  readonly callsMs: readonly number[];
  /** What the first answer says was done (`lexical`, or `hybrid` unless it fell back). */
  readonly retrieval: string | undefined;
}

/**
 * One query through the search tool, scoped to the KB: its first SEARCH_MAX_FILES files (or options.maxFiles), best
 * first, asked `pageSize` at a time and continued with next_cursor, as an agent pages.
 */
export async function searchQuery(
  client: Client,
  kbId: string,
  query: BenchQuery,
  pageSize = SEARCH_MAX_FILES,
  options: SearchOptions = {},
): Promise<QueryRun> {
  const files: string[] = [];
  const callsMs: number[] = [];
  const idOf = options.idOf ?? docIdOf;
  const maxFiles = options.maxFiles ?? SEARCH_MAX_FILES;
  let cursor: string | undefined;
  let retrieval: string | undefined;
  do {
    const started = performance.now();
    const answer = (await callStructured(client, 'search', {
      query: query.text,
      scope: { kb_ids: [kbId] },
      max_files: Math.min(pageSize, maxFiles - files.length),
      ...(options.retrieval === undefined ? {} : { retrieval: options.retrieval }),
      ...(cursor === undefined ? {} : { cursor }),
    })) as unknown as SearchAnswer;
    callsMs.push(performance.now() - started);
    retrieval ??= answer.retrieval;
    files.push(...answer.results.filter((r) => r.kind === 'file' && typeof r.path === 'string').map((r) => r.path!));
    cursor = answer.results.length > 0 ? (answer.next_cursor ?? undefined) : undefined;
  } while (cursor !== undefined && files.length < maxFiles);
  return { number: query.number, ranking: distinct(files.map((p) => idOf(p) ?? p)), returned: files.length, callsMs, retrieval };
}

/** Runs the queries, SEARCH_CONCURRENCY of them in flight; answers them in query order. */
export async function runQueries(
  client: Client,
  kbId: string,
  queries: readonly BenchQuery[],
  options: SearchOptions & { readonly pageSize?: number; readonly concurrency?: number } = {},
): Promise<QueryRun[]> {
  const concurrency = options.concurrency ?? SEARCH_CONCURRENCY;
  const runs: QueryRun[] = new Array<QueryRun>(queries.length);
  let next = 0;
  const worker = async () => {
    while (next < queries.length) {
      const index = next++;
      runs[index] = await searchQuery(client, kbId, queries[index]!, options.pageSize, options);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, queries.length) }, worker));
  return runs;
}
