/**
 * `npm run bench:search-quality`: the relevance of the gateway's search on the Cranfield
 * collection, measured through Atmina's MCP tools as an agent would use them. A gateway runs
 * in this process on a loopback port over a fresh store; the SDK client creates a KB, writes
 * the 1,400 documents with write_files, waits on the KB's indexing-status resource, then runs
 * the queries through the search tool and scores the answers (nDCG@10, MAP@100) against the
 * collection's judgements. See bench/README.md.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { connectClient, issueToken, seedOrg, startGateway } from '../test/support/gateway.ts';
import { storeBackendAt } from '../test/support/stores.ts';
import type { QueryRun } from './cranfield-mcp.ts';
import { CleanUp } from './clean-up.ts';
import {
  SEARCH_CONCURRENCY,
  SEARCH_MAX_FILES,
  WRITE_BATCH_ITEMS,
  createKb,
  runQueries,
  searchBackend,
  searchPageSize,
  waitForSearchIndexing,
  waitForVectors,
  writeDocs,
} from './cranfield-mcp.ts';
import { benchEmbeddings, embeddingsGatewayEnv } from './embeddings.ts';
import { readCranfield } from './cranfield.ts';
import { MAP_DEPTH, NDCG_DEPTH, averagePrecisionAt, mean, ndcgAt } from './ir-metrics.ts';
import { BENCH_KB_WRITES_PER_MINUTE, CALLER, ORG_YAML } from './scenarios.ts';
import { machineInfo } from './machine.ts';

const HERE = path.dirname(new URL(import.meta.url).pathname);
/** Where the collection sits relative to the folder beside the repository. */
const DATASET_BESIDE = path.join('shared', 'datasets', 'cranfield');
/** The collection README's reference: textbook BM25 (k1 1.2, b 0.75) with the Porter stemmer over title and body. */
const REFERENCE = { ndcg10: 0.361, map100: 0.308 } as const;
/** alice is the Admin of the example org's one team, so create_kb needs no team; writing needs context.write. */
const SCOPES = 'context.read context.write';
const KB_NAME = 'Cranfield';

const SELECTIONS = ['all', 'odd', 'even'] as const;
type Selection = (typeof SELECTIONS)[number];

/**
 * The collection's folder: BENCH_CRANFIELD_DIR, else `shared/datasets/cranfield` beside the
 * repository; in a linked git worktree, `shared/` sits beside the main checkout instead.
 */
function datasetDir(): string {
  const given = process.env.BENCH_CRANFIELD_DIR || undefined;
  if (given !== undefined) return path.resolve(given);
  const root = path.join(HERE, '..');
  const candidates = [path.join(root, '..', DATASET_BESIDE)];
  try {
    const common = execFileSync('git', ['-C', root, 'rev-parse', '--path-format=absolute', '--git-common-dir'], { encoding: 'utf8' }).trim();
    candidates.push(path.join(path.dirname(common), '..', DATASET_BESIDE));
  } catch {
    // Not a git checkout: only the folder beside it is looked at.
  }
  const found = candidates.find((dir) => existsSync(path.join(dir, 'cran.qry')));
  if (found === undefined) throw new Error(`no Cranfield collection at ${candidates.join(' or ')}; set BENCH_CRANFIELD_DIR`);
  return found;
}

function selection(): Selection {
  const raw = process.env.BENCH_QUERIES || 'all';
  const found = SELECTIONS.find((s) => s === raw);
  if (found === undefined) throw new Error(`BENCH_QUERIES must be one of ${SELECTIONS.join(', ')}, got "${raw}"`);
  return found;
}

/** Whether query `number` (1..225) is in selection `s`. */
const selects = (s: Selection, number: number): boolean => s === 'all' || (number % 2 === 1) === (s === 'odd');

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

/** The nearest-rank percentile of `values` (milliseconds). */
function percentile(values: readonly number[], pct: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((pct / 100) * sorted.length));
  return sorted[rank - 1] ?? 0;
}

interface Scored extends QueryRun {
  readonly label: string;
  readonly ndcg10: number;
  readonly ap100: number;
}

interface GroupFigures {
  readonly queries: number;
  readonly ndcg10: number;
  readonly map100: number;
}

function figures(scored: readonly Scored[]): GroupFigures {
  return { queries: scored.length, ndcg10: round(mean(scored.map((s) => s.ndcg10)), 4), map100: round(mean(scored.map((s) => s.ap100)), 4) };
}

/** The groups reported: all, odd and even queries of a full run; the one selected otherwise. */
function groups(chosen: Selection, scored: readonly Scored[]): Partial<Record<Selection, GroupFigures>> {
  const of = (s: Selection) => figures(scored.filter((q) => selects(s, q.number)));
  return chosen === 'all' ? { all: of('all'), odd: of('odd'), even: of('even') } : { [chosen]: of(chosen) };
}

function printTable(rows: readonly (readonly string[])[]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  for (const row of rows) console.log(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));
}

async function main(): Promise<void> {
  const chosen = selection();
  const databaseUrl = process.env.BENCH_DATABASE_URL || undefined;
  const store = databaseUrl === undefined ? 'pglite' : 'postgres';
  const collection = await readCranfield(datasetDir());
  const queries = collection.queries.filter((q) => selects(chosen, q.number));
  const machine = machineInfo();
  // With an embeddings endpoint the queries also run with retrieval hybrid, after the lexical run.
  const embeddings = benchEmbeddings();

  // Undone last first: the client, the gateway, the store (its folder, or its database on the server).
  const undo = new CleanUp().onSignals("removing the bench's store");
  try {
    const opened = await storeBackendAt(databaseUrl).open({ migrated: true });
    undo.push(() => opened.dispose());
    await seedOrg(opened.db, ORG_YAML);
    const token = await issueToken(opened.db, CALLER.tenant, CALLER.principal, SCOPES);
    // The configuration picks the engine: Meilisearch when MEILI_URL is set, the built-in one otherwise.
    const engineEnv: Record<string, string> = {};
    for (const name of ['MEILI_URL', 'MEILI_API_KEY', 'MEILI_INDEX']) if (process.env[name]) engineEnv[name] = process.env[name];
    const gateway = await startGateway(opened.db, {
      KGW_LOG_LEVEL: 'error',
      KGW_KB_WRITES_PER_MINUTE: String(BENCH_KB_WRITES_PER_MINUTE),
      ...engineEnv,
      ...embeddingsGatewayEnv(embeddings),
    });
    undo.push(() => gateway.close());
    const client = await connectClient(`${gateway.url}/atmina/mcp`, token);
    undo.push(() => client.close());

    const kbId = await createKb(client, KB_NAME);
    console.log(`search-quality: ${store}, ${collection.docs.length} documents, ${queries.length} queries (${chosen})`);
    const loadStart = performance.now();
    const written = await writeDocs(client, kbId, collection.docs);
    const writeSeconds = (performance.now() - loadStart) / 1000;
    console.log(`- wrote ${written} files in ${round(writeSeconds, 1)} s; waiting for search to index them …`);
    const status = await waitForSearchIndexing(client, kbId);
    const indexedSeconds = (performance.now() - loadStart) / 1000;
    const engine = await searchBackend(client);
    if (embeddings !== undefined) await waitForVectors(opened.db);
    const pageSize = await searchPageSize(client);
    console.log(`- indexed after ${round(indexedSeconds, 1)} s (${status.files} files); engine ${engine}; searching, ${pageSize} files a call …`);

    // One run's query against its judgements; the lexical and the hybrid runs are scored alike.
    const score = (run: QueryRun, index: number): Scored => {
      const judgments = collection.judgments.get(run.number) ?? new Map<string, number>();
      return {
        ...run,
        label: queries[index]!.label,
        ndcg10: ndcgAt(run.ranking, judgments, NDCG_DEPTH),
        ap100: averagePrecisionAt(run.ranking, judgments, MAP_DEPTH),
      };
    };
    const runs = await runQueries(client, kbId, queries, { pageSize });
    const scored = runs.map(score);
    const hybridRuns = embeddings === undefined ? undefined : await runQueries(client, kbId, queries, { pageSize, retrieval: 'hybrid' });
    const hybridScored = hybridRuns?.map(score);
    const hybrid =
      hybridRuns === undefined || hybridScored === undefined || embeddings === undefined
        ? undefined
        : {
            model: embeddings.model,
            dimensions: embeddings.dimensions,
            // A hybrid search that could not search by meaning answers lexically: the count says whether the figures are hybrid.
            fallbacks: hybridRuns.filter((r) => r.retrieval !== 'hybrid').length,
            results: groups(chosen, hybridScored),
            perQuery: hybridScored.map((s) => ({ number: s.number, ndcg10: round(s.ndcg10, 4), ap100: round(s.ap100, 4) })),
          };
    const calls = runs.flatMap((r) => r.callsMs);
    const perQuery = runs.map((r) => r.callsMs.reduce((sum, ms) => sum + ms, 0));
    const results = groups(chosen, scored);
    const load = {
      files: written,
      writeSeconds: round(writeSeconds, 2),
      writeFilesPerSec: round(written / writeSeconds, 1),
      indexedSeconds: round(indexedSeconds, 2),
      indexedFilesPerSec: round(written / indexedSeconds, 1),
    };
    // Per search call, and per query (all the calls that brought its top SEARCH_MAX_FILES).
    const latency = {
      calls: calls.length,
      p50Ms: round(percentile(calls, 50), 1),
      p95Ms: round(percentile(calls, 95), 1),
      queryP50Ms: round(percentile(perQuery, 50), 1),
      queryP95Ms: round(percentile(perQuery, 95), 1),
    };
    const safeEngine = engine.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    const name = `search-quality-${safeEngine}-${store}${chosen === 'all' ? '' : `-${chosen}`}`;
    const report = {
      name,
      date: new Date().toISOString(),
      machine,
      settings: {
        store,
        engine,
        queries: chosen,
        maxFiles: SEARCH_MAX_FILES,
        pageSize,
        concurrency: SEARCH_CONCURRENCY,
        writeBatchItems: WRITE_BATCH_ITEMS,
        ndcgDepth: NDCG_DEPTH,
        mapDepth: MAP_DEPTH,
      },
      reference: REFERENCE,
      results,
      load,
      latency,
      perQuery: scored.map((s) => ({
        number: s.number,
        label: s.label,
        ndcg10: round(s.ndcg10, 4),
        ap100: round(s.ap100, 4),
        returned: s.returned,
        callsMs: s.callsMs.map((ms) => round(ms, 1)),
      })),
      ...(hybrid === undefined ? {} : { hybrid }),
    };
    const file = path.join(HERE, 'results', `${name}.json`);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);

    console.log();
    const rows = [['queries', 'count', 'nDCG@10', 'MAP@100']];
    for (const [group, f] of Object.entries(results)) rows.push([group, String(f.queries), f.ndcg10.toFixed(3), f.map100.toFixed(3)]);
    if (hybrid !== undefined)
      for (const [group, f] of Object.entries(hybrid.results)) rows.push([`${group}, hybrid`, String(f.queries), f.ndcg10.toFixed(3), f.map100.toFixed(3)]);
    rows.push(['reference (BM25 + Porter)', '225', REFERENCE.ndcg10.toFixed(3), REFERENCE.map100.toFixed(3)]);
    printTable(rows);
    console.log(
      `\nengine ${engine}, store ${store}: load ${load.writeFilesPerSec} files/s written, ${load.indexedFilesPerSec} files/s indexed; ` +
        `search through MCP p50 ${latency.p50Ms} ms, p95 ${latency.p95Ms} ms a call (${latency.calls} calls, ${SEARCH_CONCURRENCY} at a time), ` +
        `p50 ${latency.queryP50Ms} ms, p95 ${latency.queryP95Ms} ms a query (top ${SEARCH_MAX_FILES})`,
    );
    if (hybrid !== undefined) console.log(`hybrid with ${hybrid.model}: ${hybrid.fallbacks} of ${hybridRuns?.length} queries fell back to lexical`);
    console.log(`machine: ${machine.cpu}, ${machine.cpus} CPUs, ${machine.memoryGiB} GiB, Node ${machine.node}`);
    console.log(`wrote ${path.relative(process.cwd(), file)}`);
  } finally {
    await undo.all();
  }
}

await main();
