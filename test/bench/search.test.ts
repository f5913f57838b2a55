import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { generateCorpus } from '../../bench/corpus.ts';

/*
 * `npm run bench:search` on a tiny corpus, so the bench cannot rot: bench/search.ts runs as
 * its own process (as npm runs it) on PGlite with the built-in engine, and its result file
 * must hold every figure it promises. The figures themselves are not checked: they are times.
 */

const FILES = 50;
const QUERIES = 3;
const WRITES = 2;
/** The whole run, as a bound on the child (it takes about half a minute on a loaded machine). */
const RUN_LIMIT_MS = 5 * 60_000;
const SCRIPT = new URL('../../bench/search.ts', import.meta.url).pathname;

interface Timed {
  samples: number;
  p50Ms: number;
  p95Ms: number;
  meilisearch?: { samples: number; p50Ms: number; p95Ms: number };
  p95OverMeilisearch?: number | null;
}

/** Runs the bench as npm does, into `dir`, and reads its two result files. */
async function runBench(dir: string, store: string, engine: string): Promise<{ report: Report; table: string }> {
  const env = { ...process.env, BENCH_DATABASE_URL: '', KGW_TEST_DATABASE_URL: '' };
  await promisify(execFile)(
    process.execPath,
    [
      SCRIPT,
      `--files=${FILES}`,
      `--queries=${QUERIES}`,
      `--writes=${WRITES}`,
      `--store=${store}`,
      `--engine=${engine}`,
      '--name=smoke',
      `--results-dir=${dir}`,
    ],
    { env, timeout: RUN_LIMIT_MS },
  );
  return {
    report: JSON.parse(await readFile(path.join(dir, 'smoke.json'), 'utf8')) as Report,
    table: await readFile(path.join(dir, 'smoke.md'), 'utf8'),
  };
}

interface Report {
  settings: { files: number; store: string; engine: string; load: string };
  machine: { cpus: number };
  loadAverageStart: number[];
  results: {
    load: { files: number; links: number; via: string };
    projection: { replicas: number; graphLinks: number; problem?: string; projections: Record<string, { rows: number }> }[];
    keywords: Timed;
    questions: Timed;
    writes: { searchable: { samples: number; timeouts: number } };
  };
}

describe('bench:search on a tiny corpus (pglite, builtin)', () => {
  let dir: string;
  let report: Report;
  let table: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'kgw-bench-search-test-'));
    ({ report, table } = await runBench(dir, 'pglite', 'builtin'));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads every generated file through MCP', () => {
    assert.deepEqual({ files: report.results.load.files, via: report.results.load.via }, { files: FILES, via: 'mcp' });
  });

  it('drains with one replica and with two', () => {
    assert.deepEqual(
      report.results.projection.map((p) => p.replicas),
      [1, 2],
    );
  });

  it('gives each drain every file as a search row', () => {
    assert.deepEqual(
      report.results.projection.map((p) => p.projections.search?.rows),
      [FILES, FILES],
    );
  });

  it('keeps every reference of the corpus in the graph after each drain', () => {
    const links = Array.from({ length: FILES }, (_, n) => generateCorpus(FILES).file(n).links).reduce((a, b) => a + b, 0);
    assert.deepEqual(
      report.results.projection.map((p) => p.graphLinks),
      [links, links],
    );
  });

  it('reports no failed drain', () => {
    assert.deepEqual(
      report.results.projection.map((p) => p.problem),
      [undefined, undefined],
    );
  });

  it('times every keyword query and question', () => {
    assert.deepEqual({ keywords: report.results.keywords.samples, questions: report.results.questions.samples }, { keywords: QUERIES, questions: QUERIES });
  });

  it("times no engine's own part with the built-in engine", () => {
    assert.deepEqual([report.results.keywords.meilisearch, report.results.questions.meilisearch], [undefined, undefined]);
    assert.doesNotMatch(table, /Meilisearch's own/);
  });

  it('finds every probe write through search', () => {
    assert.deepEqual(report.results.writes.searchable, { ...report.results.writes.searchable, samples: WRITES, timeouts: 0 });
  });

  it('records the machine and its load average', () => {
    assert.equal(report.loadAverageStart.length, 3);
  });

  it('writes the markdown table beside the JSON', () => {
    assert.match(table, /\| search, keywords \(1–3 words\) \| 3 \|/);
  });
});

describe('bench:search corpus', () => {
  it('generates the same file for the same seed and number', () => {
    assert.equal(generateCorpus(10, 7).file(3).content, generateCorpus(10, 7).file(3).content);
  });

  it('asks questions of 6 to 12 words', () => {
    const lengths = generateCorpus(10)
      .questions(50)
      .map((q) => q.split(' ').length);
    assert.deepEqual(
      lengths.filter((n) => n < 6 || n > 12),
      [],
    );
  });

  it('asks keyword queries of 1 to 3 words', () => {
    const lengths = generateCorpus(10)
      .keywordQueries(50)
      .map((q) => q.split(' ').length);
    assert.deepEqual(
      lengths.filter((n) => n < 1 || n > 3),
      [],
    );
  });
});

describe('bench:search on a tiny corpus with Meilisearch', { skip: process.env.KGW_TEST_MEILI_URL ? false : 'KGW_TEST_MEILI_URL is not set' }, () => {
  let dir: string;
  let report: Report;
  let table: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'kgw-bench-search-meili-test-'));
    ({ report, table } = await runBench(dir, 'pglite', 'meilisearch'));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("times Meilisearch's own multi-searches in every query, within the whole call", () => {
    for (const kind of ['keywords', 'questions'] as const) {
      const timed = report.results[kind];
      assert.equal(timed.meilisearch?.samples, QUERIES, kind);
      assert.ok((timed.meilisearch?.p50Ms ?? 0) > 0, `${kind}: no multi-search was timed`);
      // Meilisearch's part is inside the call, so the call is never the shorter.
      assert.ok((timed.p95OverMeilisearch ?? 0) >= 1, `${kind}: ${JSON.stringify(timed)}`);
    }
  });

  it('writes the engine rows into the markdown table', () => {
    assert.match(table, /\| Meilisearch's own multi-search time in those keywords \(× [\d.]+ at p95\) \| 3 \|/);
    assert.match(table, /\| Meilisearch's own multi-search time in those questions \(× [\d.]+ at p95\) \| 3 \|/);
  });
});
