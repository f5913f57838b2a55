import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { TestContext } from 'node:test';
import { Meilisearch } from 'meilisearch';
import type { CandidateRanker, SearchDocument, SearchHit, SearchQuery, SearchResult, TermFrequencies } from '../../connectors/search/contract.ts';
import type { ApplyContext } from '../../connectors/projection.ts';
import { CHUNK_POSITIONS_MAX, chunkBody, chunkId, filterLiteral, searchFilter, uploads } from '../../connectors/search/meili-index.ts';
import {
  COMMON_TERM_DOCS_MIN,
  COMMON_TERM_SHARE,
  QUERY_WORDS_MAX,
  candidateQueries,
  informativeWords,
  queryTerms,
} from '../../connectors/search/meili-query.ts';
import { DEFAULT_INDEX_UID, MeiliSearchBackend, checkSettings } from '../../connectors/search/meilisearch.ts';
import { meiliProbe } from '../../connectors/search/probe.ts';
import type { MeiliConfig } from '../../src/config.ts';
import { freePort } from '../support/services.ts';
import { searchDocument } from './documents.ts';

/** The Meilisearch of test/services/meilisearch.sh; CI must provide it, a developer may not. */
function testMeili(): MeiliConfig | undefined {
  const url = process.env.KGW_TEST_MEILI_URL;
  if (url === undefined || url === '') {
    if (process.env.CI === 'true') throw new Error('KGW_TEST_MEILI_URL must be set in CI (eval "$(bash test/services/meilisearch.sh)")');
    return undefined;
  }
  return { url, apiKey: process.env.KGW_TEST_MEILI_KEY, index: DEFAULT_INDEX_UID };
}
const meili = testMeili();
const skip = meili === undefined ? 'KGW_TEST_MEILI_URL is not set (eval "$(bash test/services/meilisearch.sh)")' : false;

/** A Meilisearch that is down: nothing listens on a port that was just free, so connections are refused at once. */
async function down(): Promise<MeiliConfig> {
  return { url: `http://127.0.0.1:${await freePort()}`, apiKey: 'none', index: DEFAULT_INDEX_UID };
}

/**
 * A test double of the ranker, which arrives with the built-in engine: it orders the candidates
 * by id, returns them as hits without snippets (unless told to give some), and remembers what
 * it was asked.
 */
class FakeRanker implements CandidateRanker {
  readonly calls: { query: SearchQuery; candidateIds: readonly string[] }[] = [];
  snippets: readonly string[] = [];
  /** What termFrequencies gives (df 0 for a term not named), and the terms it was asked about. */
  documents = 0;
  df = new Map<string, number>();
  readonly frequenciesAsked: (readonly string[])[] = [];

  termFrequencies(_query: SearchQuery, terms: readonly string[]): Promise<TermFrequencies> {
    this.frequenciesAsked.push(terms);
    return Promise.resolve({ documents: this.documents, df: new Map(terms.map((t) => [t, this.df.get(t) ?? 0])) });
  }

  rank(query: SearchQuery, candidateIds: readonly string[]): Promise<SearchResult> {
    this.calls.push({ query, candidateIds });
    const ids = [...candidateIds].sort();
    const hits = ids.slice(query.offset ?? 0, (query.offset ?? 0) + query.limit).map((id, i): SearchHit => ({
      id,
      kind: 'kb_file',
      scope: '',
      score: ids.length - i,
      path: '',
      title: '',
      ref: {},
      snippets: this.snippets,
      reasons: { terms: [], expansions: [], phrases: [] },
    }));
    return Promise.resolve({ hits, total: ids.length });
  }

  get lastCandidates(): readonly string[] {
    return this.calls.at(-1)?.candidateIds ?? [];
  }
}

/** How long the test's own Meilisearch calls wait for their tasks (the client's default of 5 s is short on a busy machine). */
const TASK_WAIT = { timeout: 60_000 };

const context = (): ApplyContext => ({ tx: undefined as never, signal: AbortSignal.timeout(120_000) });

function query(fields: Partial<SearchQuery> & Pick<SearchQuery, 'text'>): SearchQuery {
  return { tenantId: 't1', language: 'english', scopes: ['kb:test'], limit: 10, snippets: 0, ...fields };
}

interface Fixture {
  readonly backend: MeiliSearchBackend;
  readonly ranker: FakeRanker;
  readonly raw: Meilisearch;
  readonly index: string;
  /** The chunks Meilisearch holds of one document. */
  chunks(tenantId: string, docId: string): Promise<number>;
}

/** A backend on its own index (random uid), settings applied; the index is deleted after the test. */
async function open(t: TestContext): Promise<Fixture> {
  if (meili === undefined) throw new Error('no Meilisearch');
  const index = `kgw_test_${randomBytes(6).toString('hex')}`;
  const ranker = new FakeRanker();
  const backend = new MeiliSearchBackend(meili, ranker, { index });
  const raw = new Meilisearch({ host: meili.url, apiKey: meili.apiKey });
  t.after(async () => {
    await backend.close();
    await raw.deleteIndex(index).waitTask(TASK_WAIT);
  });
  await backend.ensureSettings();
  return {
    backend,
    ranker,
    raw,
    index,
    chunks: async (tenantId, docId) =>
      (await raw.index(index).getDocuments({ filter: `tenantId = ${filterLiteral(tenantId)} AND docId = ${filterLiteral(docId)}`, limit: 1 })).total,
  };
}

async function upsert(fixture: Fixture, ...docs: SearchDocument[]): Promise<void> {
  await fixture.backend.upsert(docs, context());
}

// Two-letter words of consonants: no stop word, no typo (too short for one), 3 bytes with a space.
const CONSONANTS = 'bcdfghjklmnpqrstvwxz';
const filler = (i: number) => `${CONSONANTS[i % 20] ?? 'b'}${CONSONANTS[Math.floor(i / 20) % 20] ?? 'b'}`;

describe('Meilisearch backend: chunks, ids, filters, query words', () => {
  it('puts the chunks of a body together to the body', () => {
    const body = Array.from({ length: 50_000 }, (_, i) => (i % 700 === 0 ? `${filler(i)}.\n\n` : `${filler(i)} `)).join('');
    assert.equal(chunkBody(body, 5_000).join(''), body);
  });

  it('keeps every chunk within its position bound, counting punctuation eight', () => {
    const body = Array.from({ length: 20_000 }, (_, i) => filler(i)).join(', ');
    const chunks = chunkBody(body, 3_000);
    // A word and a ", " after it take 9 positions: 333 words fit in 3,000.
    assert.equal(chunks[0]?.split(', ').filter((w) => w !== '').length, 334);
    assert.equal(chunks.length, Math.ceil(20_000 / 334));
  });

  it('cuts a chunk at its last paragraph break when that keeps half of it', () => {
    const paragraph = `${Array.from({ length: 300 }, (_, i) => filler(i)).join(' ')}\n\n`;
    const chunks = chunkBody(paragraph.repeat(10), 1_000);
    assert.equal(chunks[0], paragraph);
  });

  it('gives each distinct term of a question with its first surface form', () => {
    assert.deepEqual(queryTerms('Flows of the flow, Wings', 'english'), [
      { word: 'Flows', term: 'flow' },
      { word: 'Wings', term: 'wing' },
    ]);
  });

  it('leaves out of the one-word queries the words held by more than COMMON_TERM_SHARE of many documents', () => {
    const terms = [
      { word: 'notes', term: 'note' },
      { word: 'laminar', term: 'laminar' },
      { word: 'flows', term: 'flow' },
    ];
    const documents = 100_000;
    const df = new Map([
      ['note', documents],
      ['laminar', 40],
      ['flow', documents * COMMON_TERM_SHARE],
    ]);
    assert.deepEqual(informativeWords(terms, { documents, df }), ['laminar', 'flows']);
  });

  it('leaves no word out where fewer than COMMON_TERM_DOCS_MIN documents hold it', () => {
    const terms = [
      { word: 'customer', term: 'custom' },
      { word: 'data', term: 'data' },
    ];
    const df = new Map([
      ['custom', 4],
      ['data', COMMON_TERM_DOCS_MIN - 1],
    ]);
    assert.deepEqual(informativeWords(terms, { documents: COMMON_TERM_DOCS_MIN, df }), ['customer', 'data']);
  });

  it('asks about the rarest word when every word is common', () => {
    const terms = [
      { word: 'notes', term: 'note' },
      { word: 'flows', term: 'flow' },
      { word: 'wings', term: 'wing' },
    ];
    const df = new Map([
      ['note', 10_000],
      ['flow', 4_000],
      ['wing', 5_000],
    ]);
    assert.deepEqual(informativeWords(terms, { documents: 10_000, df }), ['flows']);
    assert.deepEqual(informativeWords([], { documents: 10_000, df }), []);
  });

  it('asks about each word and the whole question as asked', () => {
    assert.deepEqual(candidateQueries('laminar flows?', 2, ['laminar', 'flows']), [
      { q: 'laminar', matchingStrategy: 'all' },
      { q: 'flows', matchingStrategy: 'all' },
      { q: 'laminar flows?', matchingStrategy: 'last' },
    ]);
  });

  it('leaves the common words out of the whole question too', () => {
    assert.deepEqual(candidateQueries('which notes explain laminar flows', 4, ['explain', 'laminar', 'flows']).at(-1), {
      q: 'explain laminar flows',
      matchingStrategy: 'last',
    });
  });

  it('asks no whole question about one word', () => {
    assert.deepEqual(candidateQueries('the notes on flows', 2, ['flows']), [{ q: 'flows', matchingStrategy: 'all' }]);
  });

  it('puts small chunks in one upload, in order', () => {
    const chunks = Array.from({ length: 400 }, (_, i) => ({ path: `p${i}.md`, title: '', body: filler(i) }));
    assert.deepEqual(uploads(chunks), [chunks]);
  });

  it('starts a new upload before 16 MiB of text, and sends a larger chunk alone', () => {
    const mib = 'x'.repeat(1024 * 1024);
    const chunks = [
      { path: 'a', title: '', body: mib.repeat(10) },
      { path: 'b', title: '', body: mib.repeat(7) },
      { path: 'c', title: '', body: mib.repeat(20) },
      { path: 'd', title: '', body: 'small' },
    ];
    assert.deepEqual(
      uploads(chunks).map((u) => u.map((c) => c.path)),
      [['a'], ['b'], ['c'], ['d']],
    );
  });

  it("counts an upload's bytes as UTF-8", () => {
    // 6 Mi characters of three bytes each: 18 MiB, over the bound, though 6 Mi characters.
    const chunks = [
      { path: 'a', title: '', body: '€'.repeat(6 * 1024 * 1024) },
      { path: 'b', title: '', body: 'small' },
    ];
    assert.deepEqual(
      uploads(chunks).map((u) => u.map((c) => c.path)),
      [['a'], ['b']],
    );
  });

  it('puts at most 5,000 chunks in one upload', () => {
    const chunks = Array.from({ length: 12_000 }, (_, i) => ({ path: String(i), title: '', body: 'x' }));
    assert.deepEqual(
      uploads(chunks).map((u) => u.length),
      [5000, 5000, 2000],
    );
  });

  it('makes one empty chunk of an empty body', () => {
    assert.deepEqual(chunkBody(''), ['']);
  });

  it('gives chunk ids of the characters Meilisearch allows for any tenant and document id', () => {
    const id = chunkId('tenant "quoted" \\ /', `kb_file:${'ü'.repeat(600)}`, 12);
    assert.match(id, /^[A-Za-z0-9_-]{43}-12$/);
  });

  it('escapes quotes and backslashes in filter literals', () => {
    assert.equal(filterLiteral('a"b\\c'), '"a\\"b\\\\c"');
  });

  it('always filters by tenant and scopes', () => {
    assert.equal(searchFilter('t1', ['kb:a', 'kb:b']), 'tenantId = "t1" AND scope IN ["kb:a", "kb:b"]');
  });

  it('filters by scope prefix, alone or beside the scopes named', () => {
    assert.deepEqual(
      { alone: searchFilter('t1', [], {}, ['memory:']), beside: searchFilter('t1', ['kb:a'], {}, ['memory:', 'knowledge.latest:"x']) },
      {
        alone: 'tenantId = "t1" AND scope STARTS WITH "memory:"',
        beside: 'tenantId = "t1" AND (scope IN ["kb:a"] OR scope STARTS WITH "memory:" OR scope STARTS WITH "knowledge.latest:\\"x")',
      },
    );
  });

  it('filters nothing in when the caller holds no scope', () => {
    assert.equal(searchFilter('t1', []), undefined);
  });

  it('sends the surface form of each distinct informative word, at most 32', () => {
    const words = (text: string) => queryTerms(text, 'english').map((t) => t.word);
    assert.deepEqual(words('What are the Flows and the flowing layers?'), ['Flows', 'layers']);
    const many = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    assert.equal(words(many).length, QUERY_WORDS_MAX);
  });

  it('bounds chunks well below the Meilisearch limit of 65,535 positions', () => {
    assert.ok(CHUNK_POSITIONS_MAX * 2 < 65_535);
  });

  it('finds nothing for an empty scope list without asking Meilisearch', async () => {
    const ranker = new FakeRanker();
    const backend = new MeiliSearchBackend(await down(), ranker);
    const result = await backend.search(query({ text: 'flow', scopes: [] }));
    assert.equal(result.total, 0);
    assert.equal(ranker.calls.length, 0);
  });

  it('throws with a clear message when Meilisearch is down, and health rejects', async () => {
    const config = await down();
    const backend = new MeiliSearchBackend(config, new FakeRanker());
    await assert.rejects(backend.upsert([searchDocument({ tenantId: 't1', id: 'kb_file:1', body: 'flow' })], context()), {
      message: `Meilisearch at ${config.url} could not be reached: ECONNREFUSED`,
    });
    await assert.rejects(backend.health(AbortSignal.timeout(10_000)), /could not be reached: ECONNREFUSED/);
  });
});

describe('Meilisearch backend on a real server', { skip }, () => {
  it('applies its settings, and checkSettings finds no difference', async (t) => {
    const { backend } = await open(t);
    assert.deepEqual(await backend.checkSettings(), []);
  });

  it('applies its settings again without error (idempotent)', async (t) => {
    const { backend } = await open(t);
    await backend.ensureSettings();
    assert.deepEqual(await backend.checkSettings(), []);
  });

  it('reports a drifted setting', async (t) => {
    const { backend, raw, index } = await open(t);
    await raw.index(index).updateSortableAttributes(['title']).waitTask(TASK_WAIT);
    assert.deepEqual(await backend.checkSettings(), ['sortableAttributes lacks updatedAt; also has title']);
  });

  it('turns facet search off, and reports it turned on', async (t) => {
    const { backend, raw, index } = await open(t);
    assert.equal(await raw.index(index).getFacetSearch(), false);
    await raw.index(index).updateFacetSearch(true).waitTask(TASK_WAIT);
    assert.deepEqual(await backend.checkSettings(), ['facetSearch is enabled']);
  });

  it('keeps word proximity by attribute, and reports it by word', async (t) => {
    const { backend, raw, index } = await open(t);
    assert.equal(await raw.index(index).getProximityPrecision(), 'byAttribute');
    await raw.index(index).updateProximityPrecision('byWord').waitTask(TASK_WAIT);
    assert.deepEqual(await backend.checkSettings(), ['proximityPrecision is byWord, not byAttribute']);
    await backend.ensureSettings();
    assert.deepEqual(await backend.checkSettings(), []);
  });

  it('reports a missing index, or none when told a missing one is fine', async () => {
    if (meili === undefined) throw new Error('no Meilisearch');
    const index = `kgw_test_missing_${randomBytes(6).toString('hex')}`;
    assert.deepEqual(await checkSettings(meili, { index }), [`index ${index} does not exist`]);
    assert.deepEqual(await checkSettings(meili, { index, missingOk: true }), []);
  });

  it('fails the readiness probe (kgw doctor) on a drifted index', async (t) => {
    if (meili === undefined) throw new Error('no Meilisearch');
    const { raw, index } = await open(t);
    await raw.index(index).updateFilterableAttributes(['tenantId', 'scope']).waitTask(TASK_WAIT);
    await assert.rejects(meiliProbe(meili, { index }).check(AbortSignal.timeout(10_000)), /index kgw_test_\w+ has drifted .*filterableAttributes lacks kind/);
  });

  it('passes the readiness probe on an index with the wanted settings', async (t) => {
    if (meili === undefined) throw new Error('no Meilisearch');
    const { index } = await open(t);
    await meiliProbe(meili, { index }).check(AbortSignal.timeout(10_000));
  });

  it('finds an upserted document', async (t) => {
    const fixture = await open(t);
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:1', body: 'Boundary layers separate near the trailing edge.' }));
    const result = await fixture.backend.search(query({ text: 'where do boundary layers separate?' }));
    assert.deepEqual(
      result.hits.map((h) => h.id),
      ['kb_file:1'],
    );
  });

  it('finds a document by its title and path', async (t) => {
    const fixture = await open(t);
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:1', path: 'guides/turbulence.md', title: 'Vortex shedding', body: 'nothing here' }));
    await fixture.backend.search(query({ text: 'vortex turbulence' }));
    assert.deepEqual(fixture.ranker.lastCandidates, ['kb_file:1']);
  });

  it('chunks a long body so its last words are found', async (t) => {
    const fixture = await open(t);
    const body = `${Array.from({ length: 300_000 }, (_, i) => filler(i)).join(' ')} penultimate terminus`;
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:long', body }));
    await fixture.backend.search(query({ text: 'terminus' }));
    assert.deepEqual(fixture.ranker.lastCandidates, ['kb_file:long']);
  });

  it('keeps a punctuation-heavy body below the position limit', async (t) => {
    const fixture = await open(t);
    // With ", " between words, Meilisearch drops every word past the 8,198th of an attribute.
    const body = `${Array.from({ length: 100_000 }, (_, i) => filler(i)).join(', ')}, terminus`;
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:csv', body }));
    await fixture.backend.search(query({ text: 'terminus' }));
    assert.deepEqual(fixture.ranker.lastCandidates, ['kb_file:csv']);
  });

  it('stores a long body as several chunks', async (t) => {
    const fixture = await open(t);
    const body = Array.from({ length: 300_000 }, (_, i) => filler(i)).join(' ');
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:long', body }));
    assert.equal(await fixture.chunks('t1', 'kb_file:long'), chunkBody(body).length);
  });

  it('removes the extra chunks when a long document is upserted short', async (t) => {
    const fixture = await open(t);
    const long = `${Array.from({ length: 300_000 }, (_, i) => filler(i)).join(' ')} terminus`;
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:long', body: long }));
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:long', body: 'short now' }));
    assert.equal(await fixture.chunks('t1', 'kb_file:long'), 1);
  });

  it('no longer finds the words of the removed chunks', async (t) => {
    const fixture = await open(t);
    const long = `${Array.from({ length: 300_000 }, (_, i) => filler(i)).join(' ')} terminus`;
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:long', body: long }));
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:long', body: 'short now' }));
    const result = await fixture.backend.search(query({ text: 'terminus' }));
    assert.equal(result.total, 0);
  });

  it('upserts the same document twice as one', async (t) => {
    const fixture = await open(t);
    const doc = searchDocument({ tenantId: 't1', id: 'kb_file:1', body: 'flow' });
    await upsert(fixture, doc);
    await upsert(fixture, doc);
    assert.equal((await fixture.backend.stats()).documents, 1);
  });

  it('deletes a document, twice, and an id never stored, without error', async (t) => {
    const fixture = await open(t);
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:1', body: 'flow' }), searchDocument({ tenantId: 't1', id: 'kb_file:2', body: 'flow' }));
    const refs = [
      { tenantId: 't1', id: 'kb_file:1' },
      { tenantId: 't1', id: 'kb_file:never' },
    ];
    await fixture.backend.delete(refs, context());
    await fixture.backend.delete(refs, context());
    await fixture.backend.search(query({ text: 'flow' }));
    assert.deepEqual(fixture.ranker.lastCandidates, ['kb_file:2']);
  });

  it('deletes every chunk of a long document', async (t) => {
    const fixture = await open(t);
    const body = Array.from({ length: 300_000 }, (_, i) => filler(i)).join(' ');
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:long', body }));
    await fixture.backend.delete([{ tenantId: 't1', id: 'kb_file:long' }], context());
    assert.equal(await fixture.chunks('t1', 'kb_file:long'), 0);
  });

  it("deletes only the given tenant's document of an id", async (t) => {
    const fixture = await open(t);
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:1', body: 'flow' }), searchDocument({ tenantId: 't2', id: 'kb_file:1', body: 'flow' }));
    await fixture.backend.delete([{ tenantId: 't2', id: 'kb_file:1' }], context());
    assert.equal(await fixture.chunks('t1', 'kb_file:1'), 1);
  });

  it("never returns another tenant's document, even one that matches better", async (t) => {
    const fixture = await open(t);
    await upsert(
      fixture,
      searchDocument({ tenantId: 't1', id: 'kb_file:mine', body: 'laminar flow' }),
      searchDocument({ tenantId: 't2', id: 'kb_file:theirs', title: 'Laminar flow', body: 'laminar flow laminar flow' }),
    );
    await fixture.backend.search(query({ text: 'laminar flow' }));
    assert.deepEqual(fixture.ranker.lastCandidates, ['kb_file:mine']);
  });

  it('never returns a document of a scope the caller does not hold', async (t) => {
    const fixture = await open(t);
    await upsert(
      fixture,
      searchDocument({ tenantId: 't1', id: 'kb_file:open', scope: 'kb:open', body: 'laminar flow' }),
      searchDocument({ tenantId: 't1', id: 'kb_file:hidden', scope: 'kb:hidden', title: 'Laminar flow', body: 'laminar flow laminar flow' }),
    );
    await fixture.backend.search(query({ text: 'laminar flow', scopes: ['kb:open'] }));
    assert.deepEqual(fixture.ranker.lastCandidates, ['kb_file:open']);
  });

  it('filters tenants and scopes whose values hold quotes and backslashes', async (t) => {
    const fixture = await open(t);
    const tenant = 'acme "inc" \\ o\'neil';
    await upsert(
      fixture,
      searchDocument({ tenantId: tenant, id: 'kb_file:1', scope: 'kb:"a\\', body: 'laminar flow' }),
      searchDocument({ tenantId: tenant, id: 'kb_file:2', scope: 'kb:"a', body: 'laminar flow' }),
      searchDocument({ tenantId: 'acme "inc"', id: 'kb_file:3', scope: 'kb:"a\\', body: 'laminar flow' }),
    );
    await fixture.backend.search(query({ tenantId: tenant, text: 'laminar', scopes: ['kb:"a\\'] }));
    assert.deepEqual(fixture.ranker.lastCandidates, ['kb_file:1']);
  });

  it('filters by tags', async (t) => {
    const fixture = await open(t);
    await upsert(
      fixture,
      searchDocument({ tenantId: 't1', id: 'kb_file:1', tags: ['aero', 'draft'], body: 'flow' }),
      searchDocument({ tenantId: 't1', id: 'kb_file:2', tags: ['hydro'], body: 'flow' }),
      searchDocument({ tenantId: 't1', id: 'kb_file:3', body: 'flow' }),
    );
    await fixture.backend.search(query({ text: 'flow', filters: { tags: ['draft', 'hydro'] } }));
    assert.deepEqual(fixture.ranker.lastCandidates.toSorted(), ['kb_file:1', 'kb_file:2']);
  });

  it('filters by kind', async (t) => {
    const fixture = await open(t);
    await upsert(
      fixture,
      searchDocument({ tenantId: 't1', id: 'kb_file:1', body: 'flow' }),
      searchDocument({ tenantId: 't1', id: 'memory:1', kind: 'memory', body: 'flow' }),
    );
    await fixture.backend.search(query({ text: 'flow', filters: { kinds: ['memory'] } }));
    assert.deepEqual(fixture.ranker.lastCandidates, ['memory:1']);
  });

  it('filters by the time of the last update', async (t) => {
    const fixture = await open(t);
    await upsert(
      fixture,
      searchDocument({ tenantId: 't1', id: 'kb_file:old', updatedAt: '2026-01-01T00:00:00.000Z', body: 'flow' }),
      searchDocument({ tenantId: 't1', id: 'kb_file:new', updatedAt: '2026-03-01T00:00:00.000Z', body: 'flow' }),
    );
    await fixture.backend.search(query({ text: 'flow', filters: { updatedSince: '2026-03-01T00:00:00.000Z' } }));
    assert.deepEqual(fixture.ranker.lastCandidates, ['kb_file:new']);
  });

  it('filters by a path prefix within a scope', async (t) => {
    const fixture = await open(t);
    await upsert(
      fixture,
      searchDocument({ tenantId: 't1', id: 'kb_file:1', path: 'guides/flow.md', body: 'flow' }),
      searchDocument({ tenantId: 't1', id: 'kb_file:2', path: 'notes/flow.md', body: 'flow' }),
    );
    await fixture.backend.search(query({ text: 'flow', filters: { paths: [{ scope: 'kb:test', prefix: 'guides/' }] } }));
    assert.deepEqual(fixture.ranker.lastCandidates, ['kb_file:1']);
  });

  it('takes snippets from Meilisearch crops when the ranker gives none', async (t) => {
    const fixture = await open(t);
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:1', body: 'The boundary layer separates near the trailing edge of the wing.' }));
    const result = await fixture.backend.search(query({ text: 'trailing edge', snippets: 1 }));
    assert.deepEqual(result.hits[0]?.snippets, ['The boundary layer separates near the <mark>trailing</mark> <mark>edge</mark> of the wing.']);
  });

  it("keeps the ranker's own snippets when they mark a word", async (t) => {
    const fixture = await open(t);
    fixture.ranker.snippets = ['from the <mark>ranker</mark>'];
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:1', body: 'trailing edge' }));
    const result = await fixture.backend.search(query({ text: 'trailing edge', snippets: 1 }));
    assert.deepEqual(result.hits[0]?.snippets, ['from the <mark>ranker</mark>']);
  });

  it("takes Meilisearch's crop when the ranker's snippet marks nothing (a match past the part of the body the ranker reads)", async (t) => {
    const fixture = await open(t);
    fixture.ranker.snippets = ['The start of a long file…'];
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:1', body: 'The start of a long file. Much later: the trailing edge.' }));
    const result = await fixture.backend.search(query({ text: 'trailing edge', snippets: 1 }));
    assert.equal(result.hits[0]?.snippets.length, 1);
    assert.match(result.hits[0]?.snippets[0] ?? '', /<mark>trailing<\/mark> <mark>edge<\/mark>/);
  });

  it("keeps the ranker's unmarked snippet when Meilisearch's crops mark nothing either (a match in the title only)", async (t) => {
    const fixture = await open(t);
    fixture.ranker.snippets = ['Nothing about it here.'];
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:1', title: 'Trailing edge', body: 'Nothing about it here.' }));
    const result = await fixture.backend.search(query({ text: 'trailing edge', snippets: 1 }));
    assert.deepEqual(result.hits[0]?.snippets, ['Nothing about it here.']);
  });

  it('crops only the hits of the page, from their own chunks, best chunk first', async (t) => {
    const fixture = await open(t);
    const chunk = Array.from({ length: CHUNK_POSITIONS_MAX / 2 }, (_, i) => filler(i)).join(' ');
    await upsert(
      fixture,
      // Three chunks; only the last holds the words, so its crop is the snippet.
      searchDocument({ tenantId: 't1', id: 'kb_file:a', body: `${chunk} ${chunk} ${chunk} trailing edge` }),
      searchDocument({ tenantId: 't1', id: 'kb_file:b', body: 'the trailing edge of b' }),
    );
    // The fake ranker orders by id: a page of one holds kb_file:a only.
    const result = await fixture.backend.search(query({ text: 'trailing edge', snippets: 2, limit: 1 }));
    assert.deepEqual(
      result.hits.map((h) => h.id),
      ['kb_file:a'],
    );
    assert.equal(result.hits[0]?.snippets.length, 1);
    assert.match(result.hits[0]?.snippets[0] ?? '', /<mark>trailing<\/mark> <mark>edge<\/mark>$/);
  });

  it("asks the ranker for the question's terms' frequencies, and finds a rare word's documents past a common word", async (t) => {
    const fixture = await open(t);
    fixture.ranker.documents = 100_000;
    fixture.ranker.df = new Map([['note', 100_000]]);
    await upsert(
      fixture,
      searchDocument({ tenantId: 't1', id: 'kb_file:1', path: 'notes/1.md', body: 'nothing of interest' }),
      searchDocument({ tenantId: 't1', id: 'kb_file:2', path: 'notes/2.md', body: 'laminar flow' }),
    );
    await fixture.backend.search(query({ text: 'Notes on laminar flows' }));
    assert.deepEqual(fixture.ranker.frequenciesAsked, [['note', 'laminar', 'flow']]);
    assert.ok(fixture.ranker.lastCandidates.includes('kb_file:2'));
  });

  it('hands the ranker the query as asked', async (t) => {
    const fixture = await open(t);
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:1', body: 'flow' }));
    const asked = query({ text: 'flow', limit: 3, offset: 1 });
    await fixture.backend.search(asked);
    assert.equal(fixture.ranker.calls[0]?.query, asked);
  });

  it('does not call the ranker when nothing matches', async (t) => {
    const fixture = await open(t);
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:1', body: 'flow' }));
    const result = await fixture.backend.search(query({ text: 'zeppelin' }));
    assert.equal(result.total, 0);
    assert.equal(fixture.ranker.calls.length, 0);
  });

  it('sends a batch of many small documents as one task', async (t) => {
    const fixture = await open(t);
    const docs = Array.from({ length: 400 }, (_, i) => searchDocument({ tenantId: 't1', id: `kb_file:${i}`, body: `flow ${filler(i)}` }));
    await upsert(fixture, ...docs);
    const tasks = await fixture.raw.tasks.getTasks({ indexUids: [fixture.index], types: ['documentAdditionOrUpdate'] });
    assert.equal(tasks.results.length, 1);
    assert.equal((await fixture.backend.stats()).documents, 400);
  });

  it('counts documents, not chunks', async (t) => {
    const fixture = await open(t);
    const long = Array.from({ length: 300_000 }, (_, i) => filler(i)).join(' ');
    await upsert(
      fixture,
      searchDocument({ tenantId: 't1', id: 'kb_file:long', body: long }),
      searchDocument({ tenantId: 't2', id: 'kb_file:1', body: 'flow' }),
    );
    assert.equal((await fixture.backend.stats()).documents, 2);
  });

  it('clears every document of every tenant', async (t) => {
    const fixture = await open(t);
    await upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:1', body: 'flow' }), searchDocument({ tenantId: 't2', id: 'kb_file:1', body: 'flow' }));
    await fixture.backend.clear();
    assert.equal((await fixture.backend.stats()).documents, 0);
  });

  it('throws with Meilisearch error text when a task fails', async (t) => {
    const fixture = await open(t);
    // Without chunk filterable, the task that removes the chunks past the new count is refused.
    await fixture.raw.index(fixture.index).updateFilterableAttributes(['tenantId', 'docId']).waitTask(TASK_WAIT);
    await assert.rejects(
      upsert(fixture, searchDocument({ tenantId: 't1', id: 'kb_file:1', body: 'flow' })),
      /Meilisearch task \d+ \(documentDeletion on kgw_test_\w+\) failed: .*chunk.* \(invalid_document_filter\)/,
    );
  });

  it('throws with Meilisearch error text when a search is refused', async (t) => {
    const fixture = await open(t);
    await fixture.raw.index(fixture.index).updateFilterableAttributes(['docId']).waitTask(TASK_WAIT);
    await assert.rejects(fixture.backend.search(query({ text: 'flow' })), /Meilisearch refused: .* is not filterable\..* \(invalid_search_filter\)$/);
  });

  it('sends nothing once the caller has given up', async (t) => {
    const fixture = await open(t);
    const doc = searchDocument({ tenantId: 't1', id: 'kb_file:1', body: 'flow' });
    await assert.rejects(fixture.backend.upsert([doc], { signal: AbortSignal.abort() }), /Meilisearch write given up/);
    assert.equal(await fixture.chunks('t1', 'kb_file:1'), 0);
  });

  it('answers its health check', async (t) => {
    const { backend } = await open(t);
    await backend.health(AbortSignal.timeout(10_000));
  });
});
