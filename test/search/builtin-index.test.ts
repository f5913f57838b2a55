import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { BuiltinSearchBackend } from '../../connectors/search/builtin.ts';
import { DEFAULT_RANKING } from '../../connectors/search/builtin-options.ts';
import type { SearchDocument } from '../../connectors/search/contract.ts';
import type { Db } from '../../src/store/db.ts';
import { loadMigrations, migrate } from '../../src/store/migrate.ts';
import { openPostgres } from '../../src/store/postgres.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import { searchDocument } from './documents.ts';

/** `db`, counting the statements it runs whose text holds `marker`. */
function counting(db: Db, marker: string): { db: Db; count: () => number } {
  let n = 0;
  return {
    db: {
      ...db,
      query: (sql, params, options) => {
        if (sql.includes(marker)) n++;
        return db.query(sql, params, options);
      },
    },
    count: () => n,
  };
}

/*
 * What the built-in engine keeps beside its postings for speed (migration 0020): each term's
 * document frequency per scope, which must stay exactly the count of the term's postings
 * through replacements, moves between scopes, deletes and concurrent writers; and the
 * rescoring window of pseudo-relevance feedback, which must not change what is counted.
 */

const signal = new AbortController().signal;

async function write(db: Db, engine: BuiltinSearchBackend, docs: readonly SearchDocument[]): Promise<void> {
  await db.tx((tx) => engine.upsert(docs, { tx, signal }));
}

/** Rows where search_term_df and a count of the postings disagree (a missing df row counts as 0). */
async function dfMismatches(db: Db, tenantId: string): Promise<unknown[]> {
  return db.query(
    `WITH sc AS (SELECT scope_no, scope FROM search_scopes WHERE tenant_id = $1),
          counted AS (SELECT p.term, sc.scope, count(*)::int AS n FROM search_postings p JOIN sc ON sc.scope_no = p.scope_no GROUP BY p.term, sc.scope),
          kept AS (SELECT d.term, sc.scope, d.df FROM search_term_df d JOIN sc ON sc.scope_no = d.scope_no)
     SELECT coalesce(c.term, k.term) AS term, coalesce(c.scope, k.scope) AS scope, coalesce(c.n, 0) AS counted, coalesce(k.df, 0) AS kept
       FROM counted c FULL JOIN kept k ON k.term = c.term AND k.scope = c.scope
      WHERE coalesce(c.n, 0) <> coalesce(k.df, 0)`,
    [tenantId],
  );
}

for (const backend of storeBackends()) {
  describe(`the built-in engine's document frequencies on ${backend.name}`, () => {
    let store: TestStore;
    let engine: BuiltinSearchBackend;
    before(async () => {
      store = await backend.open({ migrated: true });
      engine = new BuiltinSearchBackend(store.db);
    });
    after(() => store?.dispose());

    it('counts each term once per document and scope through inserts, replacements, moves and deletes', async () => {
      const tenantId = randomUUID();
      const doc = (id: string, scope: string, body: string) => searchDocument({ tenantId, id, scope, body });
      await write(store.db, engine, [doc('a', 'kb:one', 'wing wing flap'), doc('b', 'kb:one', 'wing rudder'), doc('c', 'kb:two', 'flap')]);
      await write(store.db, engine, [doc('a', 'kb:two', 'rudder only'), doc('b', 'kb:one', 'wing rudder')]);
      await store.db.tx((tx) => engine.delete([{ tenantId, id: 'c' }], { tx, signal }));
      assert.deepEqual(await dfMismatches(store.db, tenantId), []);
      const [wing] = await store.db.query<{ df: number }>(
        `SELECT sum(d.df)::int AS df FROM search_term_df d JOIN search_scopes s ON s.scope_no = d.scope_no WHERE s.tenant_id = $1 AND d.term = 'wing'`,
        [tenantId],
      );
      assert.equal(wing?.df, 1);
    });

    it("counts the documents in the query's scopes and those holding each term, for another engine's candidates", async () => {
      const tenantId = randomUUID();
      const doc = (id: string, scope: string, body: string) => searchDocument({ tenantId, id, scope, body });
      await write(store.db, engine, [
        doc('a', 'kb:one', 'wing flap'),
        doc('b', 'kb:one', 'wing rudder'),
        doc('c', 'kb:one', 'wing'),
        doc('d', 'kb:one', 'rudder'),
        // Another scope's documents count for neither the share nor the whole.
        doc('e', 'kb:two', 'flap flap'),
        doc('f', 'kb:two', 'flap'),
      ]);
      const query = { tenantId, text: 'wing flap', language: 'english', scopes: ['kb:one'], limit: 10, snippets: 0 };
      const counted = async (q: typeof query, terms: string[]) => {
        const { documents, df } = await engine.termFrequencies(q, terms);
        return { documents, df: Object.fromEntries(df) };
      };
      assert.deepEqual(await counted(query, ['wing', 'flap', 'aileron']), { documents: 4, df: { wing: 3, flap: 1, aileron: 0 } });
      assert.deepEqual(await counted({ ...query, scopes: [] }, ['wing']), { documents: 0, df: {} });
      assert.deepEqual(await counted({ ...query, tenantId: randomUUID() }, ['wing']), { documents: 0, df: { wing: 0 } });
    });

    it('keeps the counts exact when two writers change documents sharing terms at once', async () => {
      const tenantId = randomUUID();
      const batch = (prefix: string, body: string) =>
        Array.from({ length: 40 }, (_, i) => searchDocument({ tenantId, id: `${prefix}-${i % 20}`, scope: 'kb:shared', body: `${body} ${i}` }));
      // The second handle is a second pool on PostgreSQL, so the two transactions really overlap.
      const other = store.databaseUrl === undefined ? store.db : openPostgres(store.databaseUrl, { max: 2 });
      try {
        const otherEngine = new BuiltinSearchBackend(other);
        // Different documents at once (the outbox never applies one resource's rows concurrently), each writer replacing its own.
        await Promise.all([
          write(store.db, engine, batch('left', 'shared common left')).then(() => write(store.db, engine, batch('left', 'shared again'))),
          write(other, otherEngine, batch('right', 'shared common right')).then(() => write(other, otherEngine, batch('right', 'common again'))),
        ]);
      } finally {
        if (other !== store.db) await other.close();
      }
      assert.deepEqual(await dfMismatches(store.db, tenantId), []);
      const answer = await engine.search({ tenantId, text: 'again', language: 'english', scopes: ['kb:shared'], limit: 50, snippets: 0 });
      assert.equal(answer.total, 40); // 20 documents of each writer
    });

    it('counts every match in the total of a question that feedback re-ranks', async () => {
      const tenantId = randomUUID();
      // More matching documents than the rescoring window, so feedback re-ranks a part of them.
      const docs = Array.from({ length: DEFAULT_RANKING.feedback.rerank + 50 }, (_, i) =>
        searchDocument({ tenantId, id: `d${i}`, scope: 'kb:big', body: `wing flap rudder ${i % 7 === 0 ? 'aileron trim' : 'spar'} note${i}` }),
      );
      for (let i = 0; i < docs.length; i += 250) await write(store.db, engine, docs.slice(i, i + 250));
      const answer = await engine.search({ tenantId, text: 'wing flap rudder', language: 'english', scopes: ['kb:big'], limit: 10, snippets: 0 });
      assert.equal(answer.total, docs.length);
      assert.equal(answer.hits.length, 10);
    });

    // Last in this suite: clearing empties the index of every tenant.
    it('empties the index for a rebuild while another writer adds documents, leaving that writer whole or not at all', async () => {
      const before = randomUUID();
      const during = randomUUID();
      await write(store.db, engine, [searchDocument({ tenantId: before, id: 'a', scope: 'kb:one', body: 'wing flap' })]);
      const other = store.databaseUrl === undefined ? store.db : openPostgres(store.databaseUrl, { max: 2 });
      try {
        const otherEngine = new BuiltinSearchBackend(other);
        const docs = Array.from({ length: 40 }, (_, i) => searchDocument({ tenantId: during, id: `d${i}`, scope: 'kb:one', body: `rudder trim ${i}` }));
        await Promise.all([engine.clear(), write(other, otherEngine, docs)]);
      } finally {
        if (other !== store.db) await other.close();
      }
      const gone = await engine.search({ tenantId: before, text: 'wing', language: 'english', scopes: ['kb:one'], limit: 10, snippets: 0 });
      assert.equal(gone.total, 0);
      const [kept] = await store.db.query<{ docs: number; scoped: number | null }>(
        `SELECT (SELECT count(*)::int FROM search_docs WHERE tenant_id = $1) AS docs,
                (SELECT docs FROM search_scopes WHERE tenant_id = $1 AND scope = 'kb:one') AS scoped`,
        [during],
      );
      assert.ok(kept?.docs === 0 || kept?.docs === 40, `the concurrent batch is whole or absent, got ${kept?.docs}`);
      assert.equal(kept?.scoped ?? 0, kept?.docs);
      assert.deepEqual(await dfMismatches(store.db, during), []);
      await write(store.db, engine, [searchDocument({ tenantId: before, id: 'a', scope: 'kb:one', body: 'wing flap' })]);
      const again = await engine.search({ tenantId: before, text: 'wing', language: 'english', scopes: ['kb:one'], limit: 10, snippets: 0 });
      assert.equal(again.total, 1);
    });
  });

  describe(`the built-in engine leaving frequent terms out of the candidates on ${backend.name}`, () => {
    let store: TestStore;
    let pruning: BuiltinSearchBackend;
    let full: BuiltinSearchBackend;
    const tenantId = randomUUID();
    // 200 documents: "everywhere" in all, "often" in 180, "stilt" in the 20 others, rarer words in a few; varied counts and lengths.
    const docs = Array.from({ length: 200 }, (_, i) => {
      const words = ['everywhere', ...(i % 10 === 0 ? ['stilt'] : ['often']), ...(i % 20 === 1 ? ['often'] : [])];
      if (i % 13 === 0) words.push('heron', ...(i % 26 === 0 ? ['heron'] : []));
      if (i % 17 === 0) words.push('egret');
      if (i % 40 === 1) words.push('bittern', 'filler', 'filler', 'filler');
      return searchDocument({ tenantId, id: `d${String(i).padStart(3, '0')}`, scope: 'kb:birds', body: `${words.join(' ')} ${'padding '.repeat(i % 9)}` });
    });
    const ask = (engine: BuiltinSearchBackend, text: string, limit: number, offset = 0) =>
      engine.search({ tenantId, text, language: 'english', scopes: ['kb:birds'], limit, offset, snippets: 0 });
    const ranked = (answer: { hits: readonly { id: string; score: number }[] }) => answer.hits.map((h) => `${h.id}:${h.score}`);
    before(async () => {
      store = await backend.open({ migrated: true });
      pruning = new BuiltinSearchBackend(store.db, { ranking: { ...DEFAULT_RANKING, prune: { dfMin: 10, share: 0.25, reach: 0.4 } } });
      full = new BuiltinSearchBackend(store.db, { ranking: { ...DEFAULT_RANKING, prune: { dfMin: Infinity, share: 0.25, reach: 0.4 } } });
      await write(store.db, full, docs);
    });
    after(() => store?.dispose());

    for (const [text, limit, offset] of [
      ['everywhere heron', 5, 0],
      ['everywhere heron egret', 10, 0],
      ['often heron', 5, 5],
      ['everywhere often bittern', 3, 0],
      ['everywhere often heron egret bittern', 20, 0],
      ['everywhere often', 10, 0],
      ['often stilt', 10, 15],
    ] as const)
      it(`ranks "${text}" (limit ${limit}, offset ${offset}) exactly as scoring every posting does`, async () => {
        assert.deepEqual(ranked(await ask(pruning, text, limit, offset)), ranked(await ask(full, text, limit, offset)));
      });

    it('ranks exactly as full scoring when the scopes are read by prefix', async () => {
      const byPrefix = (engine: BuiltinSearchBackend) =>
        engine.search({ tenantId, text: 'everywhere heron egret', language: 'english', scopes: [], scopePrefixes: ['kb:bi'], limit: 10, snippets: 0 });
      const [pruned, scored] = [await byPrefix(pruning), await byPrefix(full)];
      assert.equal(pruned.hits.length, 10);
      assert.deepEqual(ranked(pruned), ranked(scored));
    });

    it('gives the exact total when a left-out term is in every document', async () => {
      const [pruned, scored] = [await ask(pruning, 'everywhere heron', 5), await ask(full, 'everywhere heron', 5)];
      assert.deepEqual({ pruned: pruned.total, scored: scored.total }, { pruned: 200, scored: 200 });
    });

    it('ranks and counts as grouping every posting does when the terms are joined or grouped without filters, whole or in halves by document number', async () => {
      // A filter every document passes makes the engine score by grouping the postings, the reference here.
      const grouped = (text: string, limit: number, offset: number) =>
        full.search({ tenantId, text, language: 'english', scopes: ['kb:birds'], filters: { contentKind: 'text' }, limit, offset, snippets: 0 });
      // The statements scoring the joined postings, counted: two a query where the halves are split (PostgreSQL), one on PGlite.
      const joined = counting(store.db, 'ORDER BY score DESC, doc_no LIMIT $6');
      const halves = new BuiltinSearchBackend(joined.db, {
        ranking: { ...DEFAULT_RANKING, prune: { dfMin: Infinity, share: 0.25, reach: 0.4 } },
        scoring: { splitPostingsMin: 1, countedPostingsMax: Infinity },
      });
      for (const [text, limit, offset] of [
        ['heron', 5, 0],
        ['often heron', 10, 5],
        ['everywhere heron egret', 10, 0],
        ['stilt egret bittern', 20, 0],
      ] as const) {
        const reference = await grouped(text, limit, offset);
        for (const engine of [full, halves]) {
          const before = joined.count();
          const answer = await ask(engine, text, limit, offset);
          assert.deepEqual({ ranked: ranked(answer), total: answer.total }, { ranked: ranked(reference), total: reference.total }, text);
          if (engine === halves) assert.equal(joined.count() - before, store.db.kind === 'postgres' ? 2 : 1, `statements scoring "${text}"`);
        }
      }
    });

    it('ranks given candidates and a question re-ranked with its feedback terms exactly, whole or with the candidates in halves', async () => {
      // The statements scoring given candidates, counted: two a scoring where the candidates are split (PostgreSQL), one otherwise.
      const scorings = counting(store.db, 'p.doc_no = ANY($');
      const whole = new BuiltinSearchBackend(store.db, { scoring: { splitLookupsMin: Infinity } });
      const split = new BuiltinSearchBackend(scorings.db, { scoring: { splitLookupsMin: 1 } });
      const candidates = docs.filter((_, i) => i % 3 !== 1).map((d) => d.id);
      const rankBoth = (engine: BuiltinSearchBackend) =>
        engine.rank({ tenantId, text: 'often heron egret', language: 'english', scopes: ['kb:birds'], limit: 30, snippets: 0 }, candidates);
      const [wholeRanked, splitRanked] = [await rankBoth(whole), await rankBoth(split)];
      assert.equal(wholeRanked.hits.length, 30);
      assert.deepEqual({ ranked: ranked(splitRanked), total: splitRanked.total }, { ranked: ranked(wholeRanked), total: wholeRanked.total });
      // Two scorings of the candidates (three terms: the first pass, then the re-ranking with feedback terms), each in two halves on PostgreSQL.
      assert.equal(scorings.count(), store.db.kind === 'postgres' ? 4 : 2);
      // Three terms or more: the first pass's top documents are re-ranked with feedback terms, as candidates.
      const question = 'heron egret bittern stilt';
      const [wholeAnswer, splitAnswer] = [await ask(whole, question, 10), await ask(split, question, 10)];
      assert.equal(wholeAnswer.hits.length, 10);
      assert.deepEqual({ ranked: ranked(splitAnswer), total: splitAnswer.total }, { ranked: ranked(wholeAnswer), total: wholeAnswer.total });
    });

    it('estimates the total of a query past the postings it counts, and counts it with filters', async () => {
      const estimating = new BuiltinSearchBackend(store.db, {
        ranking: { ...DEFAULT_RANKING, prune: { dfMin: Infinity, share: 0.25, reach: 0.4 } },
        scoring: { splitPostingsMin: 1, countedPostingsMax: 0 },
      });
      const plain = await ask(estimating, 'often stilt', 5);
      const filtered = await estimating.search({
        tenantId,
        text: 'often stilt',
        language: 'english',
        scopes: ['kb:birds'],
        filters: { contentKind: 'text' },
        limit: 5,
        snippets: 0,
      });
      assert.deepEqual({ estimated: plain.total, counted: filtered.total }, { estimated: 182, counted: 200 });
      assert.deepEqual(ranked(plain), ranked(filtered));
    });

    it('estimates the total otherwise, as if the terms fell independently, within the largest term count and the documents in scope', async () => {
      const [pruned, scored] = [await ask(pruning, 'often stilt', 5), await ask(full, 'often stilt', 5)];
      // Every document holds one of the two, but the estimate takes them as independent:
      // 200 × (1 − (1 − 180/200) × (1 − 20/200)) = 182.
      assert.deepEqual({ pruned: pruned.total, scored: scored.total }, { pruned: 182, scored: 200 });
    });
  });

  if (backend.name === 'pglite')
    describe('the built-in engine on PGlite, which runs no autovacuum', () => {
      let store: TestStore;
      let engine: BuiltinSearchBackend;
      before(async () => {
        store = await backend.open({ migrated: true });
        engine = new BuiltinSearchBackend(store.db);
      });
      after(() => store?.dispose());

      it('analyses its tables once a thousand documents were written, so the planner knows their size', async () => {
        const tenantId = randomUUID();
        const docs = Array.from({ length: 1200 }, (_, i) => searchDocument({ tenantId, id: `d${i}`, scope: 'kb:a', body: `wing ${i}` }));
        const estimate = async () =>
          Number((await store.db.query<{ n: number }>("SELECT reltuples::float8 AS n FROM pg_class WHERE relname = 'search_docs'"))[0]?.n);
        await write(store.db, engine, docs.slice(0, 600));
        assert.ok((await estimate()) < 600, 'not analysed before the threshold');
        await write(store.db, engine, docs.slice(600));
        assert.equal(await estimate(), 1200);
      });
    });

  describe(`the built-in engine's typo corrections on ${backend.name}`, () => {
    let store: TestStore;
    let engine: BuiltinSearchBackend;
    const tenantId = randomUUID();
    const otherTenant = randomUUID();
    before(async () => {
      store = await backend.open({ migrated: true });
      engine = new BuiltinSearchBackend(store.db);
      await write(store.db, engine, [
        searchDocument({ tenantId, id: 'hangar', scope: 'kb:a', body: 'the hangar doors' }),
        searchDocument({ tenantId, id: 'rudder', scope: 'kb:a', body: 'rudder pedals' }),
        searchDocument({ tenantId, id: 'hidden', scope: 'kb:b', body: 'slat tracks' }),
        searchDocument({ tenantId: otherTenant, id: 'flap', scope: 'kb:a', body: 'flap hinge' }),
      ]);
    });
    after(() => store?.dispose());
    const ask = (text: string, tenant = tenantId) => engine.search({ tenantId: tenant, text, language: 'english', scopes: ['kb:a'], limit: 10, snippets: 0 });

    it('corrects every misspelled word of one query', async () => {
      const answer = await ask('hagnar rudedr');
      assert.deepEqual(
        answer.hits.map((h) => ({ id: h.id, expansions: h.reasons.expansions })).sort((x, y) => (x.id < y.id ? -1 : 1)),
        [
          { id: 'hangar', expansions: ['hangar'] },
          { id: 'rudder', expansions: ['rudder'] },
        ],
      );
    });

    it('corrects only to terms of the caller’s tenant and scopes, and within the budget', async () => {
      assert.deepEqual(
        {
          otherTenant: (await ask('flpa')).hits.length,
          otherScope: (await ask('slta')).hits.length,
          tooFar: (await ask('hagnarrr')).hits.length,
        },
        { otherTenant: 0, otherScope: 0, tooFar: 0 },
      );
    });

    it('looks up words of characters outside the BMP without error, each character counted once', async () => {
      await write(store.db, engine, [searchDocument({ tenantId, id: 'astral', scope: 'kb:a', body: '𠀀𠀁𠀂𠀃 notes' })]);
      // One character changed of four: within the budget of one edit, though it is two UTF-16 units.
      const answer = await ask('𠀀𠀁𠀂𠀄');
      assert.deepEqual(
        answer.hits.map((h) => h.id),
        ['astral'],
      );
    });
  });

  describe(`migration 0020 on ${backend.name}`, () => {
    let store: TestStore;
    before(async () => {
      store = await backend.open({ migrated: false });
    });
    after(() => store?.dispose());

    it('fills the document frequencies from the postings a store already holds', async () => {
      const all = await loadMigrations();
      await migrate(
        store.db,
        all.filter((m) => m.number < 20),
      );
      const tenantId = randomUUID();
      await store.db.tx(async (tx) => {
        await tx.query(
          `INSERT INTO search_postings (tenant_id, term, scope, doc_no, tf, length, fields)
           VALUES ($1, 'wing', 'kb:a', 1, 1, 3, 4), ($1, 'wing', 'kb:a', 2, 2, 3, 4), ($1, 'wing', 'kb:b', 3, 1, 3, 4), ($1, 'flap', 'kb:a', 1, 1, 3, 4)`,
          [tenantId],
        );
      });
      await migrate(
        store.db,
        all.filter((m) => m.number < 22),
      );
      const rows = await store.db.query<{ term: string; scope: string; df: number }>(
        'SELECT term, scope, df FROM search_term_df WHERE tenant_id = $1 ORDER BY term, scope',
        [tenantId],
      );
      assert.deepEqual(rows, [
        { term: 'flap', scope: 'kb:a', df: 1 },
        { term: 'wing', scope: 'kb:a', df: 2 },
        { term: 'wing', scope: 'kb:b', df: 1 },
      ]);
    });
  });

  describe(`migration 0022 on ${backend.name}`, () => {
    let store: TestStore;
    before(async () => {
      store = await backend.open({ migrated: false });
    });
    after(() => store?.dispose());

    it('numbers the scopes and keeps every posting and frequency of every tenant, the tenants apart', async () => {
      const all = await loadMigrations();
      await migrate(
        store.db,
        all.filter((m) => m.number < 22),
      );
      // Two tenants with the same scope name; one scope has postings but (against the writers'
      // rule) no row in search_scopes, which the migration adds rather than losing its postings.
      const [one, two] = [randomUUID(), randomUUID()];
      await store.db.tx(async (tx) => {
        await tx.query(`INSERT INTO search_scopes (tenant_id, scope, docs, total_length) VALUES ($1, 'kb:a', 2, 6), ($2, 'kb:a', 1, 3)`, [one, two]);
        await tx.query(
          `INSERT INTO search_postings (tenant_id, term, scope, doc_no, tf, length, fields)
           VALUES ($1, 'wing', 'kb:a', 1, 1, 3, 4), ($1, 'flap', 'kb:a', 2, 2, 3, 6), ($2, 'wing', 'kb:a', 3, 1, 3, 4), ($2, 'wing', 'kb:lost', 4, 1, 3, 4)`,
          [one, two],
        );
        await tx.query(
          `INSERT INTO search_term_df (tenant_id, term, scope, df) VALUES ($1, 'wing', 'kb:a', 1), ($1, 'flap', 'kb:a', 1), ($2, 'wing', 'kb:a', 1), ($2, 'wing', 'kb:lost', 1)`,
          [one, two],
        );
      });
      await migrate(store.db, all);
      const postings = await store.db.query(
        `SELECT s.tenant_id = $1 AS first, s.scope, p.term, p.doc_no::int, p.tf, p.length, p.fields
           FROM search_postings p JOIN search_scopes s ON s.scope_no = p.scope_no ORDER BY p.doc_no`,
        [one],
      );
      assert.deepEqual(postings, [
        { first: true, scope: 'kb:a', term: 'wing', doc_no: 1, tf: 1, length: 3, fields: 4 },
        { first: true, scope: 'kb:a', term: 'flap', doc_no: 2, tf: 2, length: 3, fields: 6 },
        { first: false, scope: 'kb:a', term: 'wing', doc_no: 3, tf: 1, length: 3, fields: 4 },
        { first: false, scope: 'kb:lost', term: 'wing', doc_no: 4, tf: 1, length: 3, fields: 4 },
      ]);
      const frequencies = await store.db.query(
        `SELECT s.tenant_id = $1 AS first, s.scope, d.term, d.df FROM search_term_df d JOIN search_scopes s ON s.scope_no = d.scope_no
          ORDER BY first DESC, s.scope, d.term`,
        [one],
      );
      assert.deepEqual(frequencies, [
        { first: true, scope: 'kb:a', term: 'flap', df: 1 },
        { first: true, scope: 'kb:a', term: 'wing', df: 1 },
        { first: false, scope: 'kb:a', term: 'wing', df: 1 },
        { first: false, scope: 'kb:lost', term: 'wing', df: 1 },
      ]);
      const scopes = await store.db.query<{ n: number; numbers: number }>(
        'SELECT count(*)::int AS n, count(DISTINCT scope_no)::int AS numbers FROM search_scopes',
      );
      assert.deepEqual(scopes[0], { n: 3, numbers: 3 });
      // The engine reads the migrated index: each tenant finds its own documents only.
      const engine = new BuiltinSearchBackend(store.db);
      await store.db.tx((tx) =>
        tx.query(
          `INSERT INTO search_docs (tenant_id, doc_id, doc_no, kind, scope, language, path, title, body, stems, length, media_type, content_kind, updated_at)
           VALUES ($1, 'w', 1, 'file', 'kb:a', 'english', 'w.md', 'w', 'wing', ' | wing ', 3, 'text/markdown', 'text', now()),
                  ($2, 'w', 3, 'file', 'kb:a', 'english', 'w.md', 'w', 'wing', ' | wing ', 3, 'text/markdown', 'text', now())`,
          [one, two],
        ),
      );
      const found = await engine.search({ tenantId: one, text: 'wing', language: 'english', scopes: ['kb:a'], limit: 10, snippets: 0 });
      assert.deepEqual(
        found.hits.map((h) => h.id),
        ['w'],
      );
      assert.equal(found.total, 1);
    });
  });
}
