import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { Projection } from '../../connectors/projection.ts';
import { enqueue, projectionStatus } from '../../src/kernel/outbox/outbox.ts';
import type { OutboxEntry } from '../../src/kernel/outbox/outbox.ts';
import { rebuildProjection } from '../../src/kernel/outbox/rebuild.ts';
import { OutboxWorker } from '../../src/kernel/outbox/worker.ts';
import type { Db } from '../../src/store/db.ts';
import { openPostgres } from '../../src/store/postgres.ts';
import { pick, records } from '../support/fixtures.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import { TENANT, TableProjection, backlog, logRows, openOutboxStore, projectionSet, waitFor } from './support.ts';

const FAST = { idleMs: 5, backoff: { baseMs: 1, maxMs: 5 } } as const;

const upsert = (key: string, n: number, projection = 'search'): OutboxEntry => ({
  tenantId: TENANT,
  projection,
  resourceKey: key,
  operation: 'upsert',
  payload: { n },
});
const remove = (key: string, projection = 'search'): OutboxEntry => ({ tenantId: TENANT, projection, resourceKey: key, operation: 'delete', payload: {} });

/** Each write in its own transaction, as writers do. */
async function write(db: Db, entries: readonly OutboxEntry[]): Promise<void> {
  for (const entry of entries) await db.tx((tx) => enqueue(tx, [entry]));
}

/** Every application appears once, and each resource's rows were applied in enqueue order. */
async function assertOnceInOrder(db: Db, expected: number): Promise<void> {
  const log = await logRows(db);
  assert.equal(log.length, expected);
  assert.equal(new Set(log.map((r) => Number(r.outbox_id))).size, expected, 'a row was applied twice');
  const last = new Map<string, number>();
  for (const row of log) {
    const id = Number(row.outbox_id);
    assert.ok((last.get(row.resource_key) ?? 0) < id, `${row.resource_key}: row ${id} applied after a later one`);
    last.set(row.resource_key, id);
  }
}

for (const backend of storeBackends()) {
  describe(`outbox worker on ${backend.name}`, () => {
    let store: TestStore;
    let db: Db;

    before(async () => {
      store = await openOutboxStore(backend);
      db = store.db;
    });
    after(() => store.dispose());
    beforeEach(async () => {
      await db.tx((tx) =>
        tx.exec(
          'DELETE FROM outbox; DELETE FROM projection_state; DELETE FROM test_projection_log; DELETE FROM test_projection_docs; DELETE FROM test_source;',
        ),
      );
    });

    it('enqueues inside the writer transaction: a rolled-back write leaves no row', async () => {
      await assert.rejects(
        db.tx(async (tx) => {
          await enqueue(tx, [upsert('kb_file:a', 1)]);
          throw new Error('the write failed');
        }),
        /the write failed/,
      );
      assert.equal(await backlog(db), 0);
      await write(db, [upsert('kb_file:a', 1)]);
      assert.equal(await backlog(db), 1);
      const projection = new TableProjection(db);
      assert.deepEqual(await new OutboxWorker(db, [projection], FAST).drainAll(), { applied: 1, failed: 0 });
      assert.equal(await backlog(db), 0);
      assert.deepEqual([...(await projection.docs())], [['kb_file:a', 1]]);
      const [state] = await projectionStatus(db, ['search']);
      assert.equal(state?.backlog, 0);
      assert.notEqual(state?.lastAppliedAt, null);
    });

    it('wakes a sleeping worker when a write that enqueued rows commits', { timeout: 60_000 }, async () => {
      const projection = new TableProjection(db);
      // An idle of an hour: the row is applied only if the commit wakes the loop.
      const worker = new OutboxWorker(db, [projection], { ...FAST, idleMs: 3_600_000 });
      worker.start();
      try {
        await write(db, [upsert('kb_file:woken', 1)]);
        await waitFor(async () => (await backlog(db)) === 0, 50_000);
        assert.deepEqual(Object.fromEntries(await projection.docs()), { 'kb_file:woken': 1 });
      } finally {
        await worker.stop();
      }
    });

    it('does not wake a worker for a write that rolled back', async () => {
      let heard = 0;
      const unlisten = db.listen('kgw_outbox', () => (heard += 1));
      try {
        await assert.rejects(
          db.tx(async (tx) => {
            await enqueue(tx, [upsert('kb_file:a', 1)]);
            throw new Error('the write failed');
          }),
        );
        await db.tx((tx) => tx.query('SELECT 1'));
        assert.equal(heard, 0);
        await write(db, [upsert('kb_file:a', 1)]);
        assert.ok(heard >= 1, 'a committed enqueue is heard');
      } finally {
        unlisten();
      }
    });

    it('wakes the worker of another process on the same PostgreSQL', { skip: backend.name !== 'postgres', timeout: 60_000 }, async () => {
      assert.ok(store.databaseUrl !== undefined);
      const other = openPostgres(store.databaseUrl, { max: 2 });
      const projection = new TableProjection(other);
      const worker = new OutboxWorker(other, [projection], { ...FAST, idleMs: 3_600_000 });
      worker.start();
      try {
        // Let the other process's LISTEN connection open: until then only the poll would find the row.
        await waitFor(
          async () =>
            ((
              await db.query<{ n: number }>(
                "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN kgw_outbox'",
              )
            )[0]?.n ?? 0) >= 1,
        );
        await write(db, [upsert('kb_file:remote', 1)]);
        await waitFor(async () => (await backlog(db)) === 0, 50_000);
        assert.deepEqual(Object.fromEntries(await projection.docs()), { 'kb_file:remote': 1 });
      } finally {
        await worker.stop();
        await other.close();
      }
    });

    it('wakes the worker of another process after the last of many concurrent writes', { skip: backend.name !== 'postgres', timeout: 60_000 }, async () => {
      // The NOTIFYs go after the commits, coalesced (Transaction.wake): whichever commit is last,
      // a NOTIFY starts after it, so a worker that would otherwise sleep an hour applies every row.
      assert.ok(store.databaseUrl !== undefined);
      const other = openPostgres(store.databaseUrl, { max: 2 });
      const projection = new TableProjection(other);
      const worker = new OutboxWorker(other, [projection], { ...FAST, idleMs: 3_600_000 });
      let heard = 0;
      const unlisten = other.listen('kgw_outbox', () => (heard += 1));
      worker.start();
      try {
        await waitFor(() => Promise.resolve(other.hears('kgw_outbox')));
        const writes = 40;
        await Promise.all(Array.from({ length: writes }, (_, i) => db.tx((tx) => enqueue(tx, [upsert(`kb_file:many-${i}`, i)]))));
        await waitFor(async () => (await backlog(db)) === 0, 50_000);
        assert.equal((await projection.docs()).size, writes);
        assert.ok(heard >= 1 && heard <= writes, `heard ${heard} wakes`);
      } finally {
        unlisten();
        await worker.stop();
        await other.close();
      }
    });

    it('applies the rows of several resources in one batch, each resource in order', async () => {
      await write(db, [upsert('k1', 1), upsert('k2', 1), upsert('k1', 2), remove('k1'), upsert('k2', 2), upsert('k1', 3)]);
      const projection = new TableProjection(db);
      const worker = new OutboxWorker(db, [projection], { ...FAST, batchSize: 10 });
      assert.deepEqual(await worker.drainOnce(), { applied: 6, failed: 0 }, 'each head comes with the rows after it');
      await assertOnceInOrder(db, 6);
      assert.deepEqual(
        (await logRows(db)).filter((r) => r.resource_key === 'k1').map((r) => r.n),
        [1, 2, null, 3],
      );
      assert.deepEqual(Object.fromEntries(await projection.docs()), { k1: 3, k2: 2 });
    });

    it('applies many rows of one resource in one call, in enqueue order', async () => {
      await db.tx((tx) =>
        enqueue(
          tx,
          Array.from({ length: 60 }, (_, i) => upsert('tenant:a', i)),
        ),
      );
      const projection = new TableProjection(db);
      const result = await new OutboxWorker(db, [projection], { ...FAST, batchSize: 100 }).drainOnce();
      assert.equal(result.applied, 60);
      assert.deepEqual(projection.callSizes, [60]);
      assert.deepEqual(
        (await logRows(db)).map((r) => r.n),
        Array.from({ length: 60 }, (_, i) => i),
      );
      assert.equal(await backlog(db), 0);
    });

    it('fills a batch with the first rows of a run only: the rest follow in the next rounds, in order', async () => {
      await db.tx((tx) =>
        enqueue(
          tx,
          Array.from({ length: 25 }, (_, i) => upsert('tenant:a', i)),
        ),
      );
      const projection = new TableProjection(db);
      const worker = new OutboxWorker(db, [projection], { ...FAST, batchSize: 10 });
      assert.equal((await worker.drainOnce()).applied, 10);
      assert.deepEqual(
        (await logRows(db)).map((r) => r.n),
        Array.from({ length: 10 }, (_, i) => i),
      );
      await worker.drainAll();
      assert.deepEqual(projection.callSizes, [10, 10, 5]);
      await assertOnceInOrder(db, 25);
    });

    it('hands interleaved resources to the projection in global id order, cutting the batch at the oldest rows', async () => {
      const keys = ['a', 'b', 'a', 'c', 'b', 'a', 'c', 'b', 'a'];
      await write(
        db,
        keys.map((key, i) => upsert(key, i)),
      );
      const ids = (await db.query<{ id: string }>('SELECT id FROM outbox ORDER BY id')).map((r) => Number(r.id));
      const projection = new TableProjection(db);
      const worker = new OutboxWorker(db, [projection], { ...FAST, batchSize: 5 });
      assert.equal((await worker.drainOnce()).applied, 5);
      assert.deepEqual(
        (await logRows(db)).map((r) => Number(r.outbox_id)),
        ids.slice(0, 5),
        'the five oldest rows, oldest first',
      );
      await worker.drainAll();
      assert.deepEqual(
        (await logRows(db)).map((r) => Number(r.outbox_id)),
        ids,
      );
    });

    it('a failure in the middle of a run applies the rows before it, backs it off and keeps its later rows waiting', async () => {
      // n is the position: k's run is 0, 2, 3, 4 (refused), 6; j's rows 1, 5 and 7 go alongside.
      const keys = ['k', 'j', 'k', 'k', 'k', 'j', 'k', 'j'];
      await write(
        db,
        keys.map((key, i) => upsert(key, i)),
      );
      const projection = new TableProjection(db);
      projection.poisonN.add(4);
      const worker = new OutboxWorker(db, [projection], { idleMs: 5, batchSize: 100, backoff: { baseMs: 60_000, maxMs: 60_000 } });
      assert.deepEqual(await worker.drainOnce(), { applied: 4, failed: 1 });
      assert.deepEqual(
        (await logRows(db)).map((r) => r.n),
        [0, 1, 2, 3],
        'the rows before the failing one, of both resources',
      );
      await worker.drainAll();
      assert.deepEqual(
        (await logRows(db)).map((r) => r.n),
        [0, 1, 2, 3, 5, 7],
        "j's later rows were released, then applied; k's wait",
      );
      const waiting = await db.query<{ n: number; attempts: number; due: boolean }>(
        "SELECT (payload->>'n')::int AS n, attempts, next_attempt_at <= clock_timestamp() AS due FROM outbox ORDER BY id",
      );
      assert.deepEqual(
        waiting.map((r) => pick(r, ['n', 'attempts', 'due'])),
        records(
          ['n', 'attempts', 'due'],
          [
            [4, 1, false],
            [6, 0, true],
          ],
        ),
        'the failing row backs off; the row after it waits without an attempt of its own',
      );
    });

    it('looks past the oldest rows when all of them wait behind a head that backs off', async () => {
      // 30 rows of one resource are more than the claim's first look (10 batches of 2 rows).
      await db.tx((tx) => enqueue(tx, [...Array.from({ length: 30 }, (_, i) => upsert('bad', i)), upsert('good', 30)]));
      const projection = new TableProjection(db);
      projection.poisonN.add(0);
      const worker = new OutboxWorker(db, [projection], { idleMs: 5, batchSize: 2, backoff: { baseMs: 60_000, maxMs: 60_000 } });
      assert.deepEqual(await worker.drainOnce(), { applied: 0, failed: 1 });
      assert.deepEqual(await worker.drainOnce(), { applied: 1, failed: 0 });
      assert.deepEqual(
        (await logRows(db)).map((r) => r.n),
        [30],
      );
    });

    it('passes over every row of a resource whose head another transaction holds (PostgreSQL)', async (t) => {
      if (store.databaseUrl === undefined) return t.skip('PGlite runs one transaction at a time');
      const keys = ['k', 'j', 'k', 'k', 'j'];
      await write(
        db,
        keys.map((key, i) => upsert(key, i)),
      );
      const [head] = await db.query<{ id: string }>("SELECT id FROM outbox WHERE resource_key = 'k' ORDER BY id LIMIT 1");
      const other = openPostgres(store.databaseUrl, { max: 1 });
      const projection = new TableProjection(db);
      const worker = new OutboxWorker(db, [projection], { ...FAST, batchSize: 100 });
      let release = () => undefined as void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let locked = () => undefined as void;
      const holding = new Promise<void>((resolve) => (locked = resolve));
      try {
        const holder = other.tx(async (tx) => {
          await tx.query('SELECT id FROM outbox WHERE id = $1 FOR UPDATE', [head?.id]);
          locked();
          await released;
        });
        await holding;
        try {
          assert.deepEqual(await worker.drainOnce(), { applied: 2, failed: 0 });
          assert.deepEqual(
            (await logRows(db)).map((r) => r.n),
            [1, 4],
            "only j's rows: k's head is held elsewhere, and so its later rows are too",
          );
        } finally {
          release();
          await holder;
        }
      } finally {
        await other.close();
      }
      assert.equal((await worker.drainOnce()).applied, 3);
      assert.deepEqual(
        (await logRows(db)).map((r) => r.n),
        [1, 4, 0, 2, 3],
      );
    });

    it('retries a projection that fails N times with backoff, then applies everything once', async () => {
      await write(db, [upsert('a', 1), upsert('b', 1), upsert('a', 2)]);
      const projection = new TableProjection(db);
      projection.failuresLeft = 3;
      const errors: string[] = [];
      const worker = new OutboxWorker(db, [projection], { ...FAST, onError: (e) => errors.push((e as Error).message) });
      const first = await worker.drainOnce();
      assert.equal(first.failed, 1);
      const [state] = await projectionStatus(db, ['search']);
      assert.match(state?.lastError ?? '', /transient failure/);
      assert.equal(state?.failing, 1);
      const [failed] = await db.query<{ attempts: number; last_error: string }>('SELECT attempts, last_error FROM outbox WHERE attempts > 0');
      assert.equal(failed?.attempts, 1);
      await waitFor(async () => {
        await worker.drainOnce();
        return (await backlog(db)) === 0;
      });
      assert.equal(projection.failuresLeft, 0);
      assert.ok(errors.length >= 1 && errors.every((e) => e.startsWith('transient failure')));
      await assertOnceInOrder(db, 3);
      assert.deepEqual(Object.fromEntries(await projection.docs()), { a: 2, b: 1 });
    });

    it('a failing row holds back later rows of its resource only, including while it backs off', async () => {
      await write(db, [upsert('bad', 1), upsert('good', 1), upsert('bad', 2), upsert('good', 2)]);
      const projection = new TableProjection(db);
      projection.poison.add('bad');
      const worker = new OutboxWorker(db, [projection], { idleMs: 5, backoff: { baseMs: 60_000, maxMs: 60_000 } });
      await worker.drainAll();
      assert.deepEqual(Object.fromEntries(await projection.docs()), { good: 2 });
      const waiting = await db.query<{ n: number; attempts: number }>("SELECT (payload->>'n')::int AS n, attempts FROM outbox ORDER BY id");
      assert.deepEqual(
        waiting.map((r) => pick(r, ['n', 'attempts'])),
        records(
          ['n', 'attempts'],
          [
            [1, 1],
            [2, 0],
          ],
        ),
        'the later row never ran ahead',
      );
      // The backend accepts it again; the backoff ends.
      projection.poison.clear();
      await db.tx((tx) => tx.query('UPDATE outbox SET next_attempt_at = clock_timestamp()'));
      await worker.drainAll();
      assert.deepEqual(Object.fromEntries(await projection.docs()), { good: 2, bad: 2 });
      await assertOnceInOrder(db, 4);
    });

    it('rolls back what a failed call wrote through the claim transaction', async () => {
      await write(db, [upsert('a', 1), upsert('b', 1)]);
      const projection = new TableProjection(db);
      projection.poison.add('b');
      // 'a' is written to the log before 'b' throws in the batch call; the savepoint undoes it.
      await new OutboxWorker(db, [projection], { idleMs: 5, backoff: { baseMs: 60_000, maxMs: 60_000 } }).drainAll();
      await assertOnceInOrder(db, 1);
      assert.equal(await backlog(db), 1);
    });

    it('bounds a backend that never answers: the call is aborted and fails, and so is a hanging health check', async () => {
      await write(db, [upsert('a', 1)]);
      const signals: AbortSignal[] = [];
      const never = () => new Promise<void>(() => undefined);
      const hanging: Projection = {
        name: 'search',
        apply: (_rows, context) => {
          signals.push(context.signal);
          return never();
        },
        clear: () => Promise.resolve(),
      };
      const slow = { idleMs: 5, backoff: { baseMs: 60_000, maxMs: 60_000 }, applyTimeoutMs: 50 };
      assert.deepEqual(await new OutboxWorker(db, [hanging], slow).drainOnce(), { applied: 0, failed: 1 });
      assert.equal(signals.length, 1);
      assert.equal(signals[0]?.aborted, true, 'the hanging call was told to stop');
      const [state] = await projectionStatus(db, ['search']);
      assert.equal(state?.lastError, 'projection search did not answer within 50 ms');
      assert.equal(await backlog(db), 1);
      await assertOnceInOrder(db, 0);

      let claimed = 0;
      const unhealthy: Projection = {
        name: 'search',
        apply: () => {
          claimed += 1;
          return Promise.resolve();
        },
        clear: () => Promise.resolve(),
        health: (signal) => {
          signals.push(signal);
          return never();
        },
      };
      const worker = new OutboxWorker(db, [unhealthy], slow);
      worker.start();
      try {
        await waitFor(
          async () =>
            (await projectionStatus(db, ['search']))[0]?.lastError === 'backend unavailable: projection search health check did not answer within 50 ms',
        );
      } finally {
        await worker.stop();
      }
      assert.equal(signals[1]?.aborted, true);
      assert.equal(claimed, 0, 'nothing is claimed while the health check fails');
      assert.equal(await backlog(db), 1);
    });

    it('keeps committing writes while the backend is down, then catches up with nothing lost or doubled', async () => {
      const projection = new TableProjection(db);
      projection.down = true;
      const worker = new OutboxWorker(db, [projection], FAST);
      worker.start();
      try {
        const entries = Array.from({ length: 60 }, (_, i) => upsert(`doc:${i % 12}`, i));
        await write(db, entries);
        assert.equal(await backlog(db), 60, 'every write committed; the backlog holds them');
        const [down] = await projectionStatus(db, ['search']);
        assert.equal(down?.backlog, 60);
        assert.ok((down?.oldestAgeMs ?? 0) >= 0);
        await waitFor(async () => ((await projectionStatus(db, ['search']))[0]?.lastError ?? '').includes('ECONNREFUSED'));
        projection.down = false;
        // Rows backed off; pull them forward instead of waiting out the (tiny) backoff anyway.
        await waitFor(async () => (await backlog(db)) === 0);
      } finally {
        await worker.stop();
      }
      await assertOnceInOrder(db, 60);
      const docs = await projection.docs();
      for (let k = 0; k < 12; k++) assert.equal(docs.get(`doc:${k}`), 48 + k);
    });

    it('two workers (two pools on PostgreSQL) drain 500 rows concurrently: each once, in order per resource', async () => {
      const entries = Array.from({ length: 500 }, (_, i) => upsert(`r:${i % 37}`, i));
      await db.tx((tx) => enqueue(tx, entries.slice(0, 250)));
      const second = store.databaseUrl === undefined ? db : openPostgres(store.databaseUrl, { max: 5 });
      const projections = [new TableProjection(db), new TableProjection(second)];
      const workers = projections.map((p, i) => new OutboxWorker(i === 0 ? db : second, [p], { ...FAST, batchSize: i === 0 ? 7 : 11 }));
      try {
        for (const worker of workers) worker.start();
        // Writers keep enqueueing while both drain.
        await write(db, entries.slice(250));
        await waitFor(async () => (await backlog(db)) === 0, 60_000);
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
        if (second !== db) await second.close();
      }
      await assertOnceInOrder(db, 500);
      assert.ok(
        projections.every((p) => p.calls > 0),
        'both workers took part',
      );
      const [state] = await db.query<{ applied_total: number | string }>("SELECT applied_total FROM projection_state WHERE projection = 'search'");
      assert.equal(Number(state?.applied_total), 500);
      const docs = await new TableProjection(db).docs();
      for (let k = 0; k < 37; k++) assert.equal(docs.get(`r:${k}`), k + 37 * Math.floor((499 - k) / 37), 'the last write of each resource wins');
    });

    it('two workers (two pools on PostgreSQL) drain long runs of a few resources concurrently: each row once, in order per resource', async () => {
      // Three resources with 200 rows each (a tenant's graph) among 100 resources of one row.
      const entries = Array.from({ length: 700 }, (_, i) => upsert(i % 7 < 6 ? `tenant:${i % 3}` : `kb_file:${i}`, i));
      const second = store.databaseUrl === undefined ? db : openPostgres(store.databaseUrl, { max: 5 });
      const projections = [new TableProjection(db), new TableProjection(second)];
      const workers = projections.map((p, i) => new OutboxWorker(i === 0 ? db : second, [p], { ...FAST, batchSize: i === 0 ? 13 : 29 }));
      try {
        for (const worker of workers) worker.start();
        // Writers keep enqueueing while both drain, a few rows per transaction as an org file's apply does.
        for (let start = 0; start < entries.length; start += 35) await db.tx((tx) => enqueue(tx, entries.slice(start, start + 35)));
        await waitFor(async () => (await backlog(db)) === 0, 60_000);
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
        if (second !== db) await second.close();
      }
      await assertOnceInOrder(db, 700);
      const docs = await new TableProjection(db).docs();
      for (let k = 0; k < 3; k++) assert.equal(docs.get(`tenant:${k}`), [...entries].reverse().find((e) => e.resourceKey === `tenant:${k}`)?.payload?.n);
    });

    it('prepares outside any transaction before each claim, given the rows the claim takes', async () => {
      await write(db, [upsert('kb_file:a', 1), upsert('kb_file:b', 2), upsert('kb_file:a', 3)]);
      const projection = new TableProjection(db);
      const seen: { given: string[]; stored: string[] }[] = [];
      const preparing: Projection = {
        name: projection.name,
        apply: (rows, context) => projection.apply(rows, context),
        clear: () => projection.clear(),
        async prepare({ db: store, rows }) {
          // Outside a transaction: a read on the store itself, which PGlite would make wait behind an open one.
          const stored = await store.query<{ resource_key: string }>("SELECT resource_key FROM outbox WHERE projection = 'search' ORDER BY id");
          seen.push({ given: rows.map((r) => `${r.resourceKey}=${String(r.payload.n)}`), stored: stored.map((r) => r.resource_key) });
        },
      };
      assert.deepEqual(await new OutboxWorker(db, [preparing], { ...FAST, batchSize: 10 }).drainAll(), { applied: 3, failed: 0 });
      // One round: a second finds nothing due, and prepare is not called for nothing.
      assert.deepEqual(seen, [{ given: ['kb_file:a=1', 'kb_file:b=2', 'kb_file:a=3'], stored: ['kb_file:a', 'kb_file:b', 'kb_file:a'] }]);
    });

    it('gives prepare no row of a resource whose head backs off after a failure', async () => {
      await write(db, [upsert('kb_file:late', 1), upsert('kb_file:late', 2), upsert('kb_file:ready', 3)]);
      await db.tx((tx) =>
        tx.query(
          `UPDATE outbox SET next_attempt_at = clock_timestamp() + interval '1 hour', attempts = 1
            WHERE id = (SELECT min(id) FROM outbox WHERE resource_key = 'kb_file:late')`,
        ),
      );
      const projection = new TableProjection(db);
      const given: string[][] = [];
      const preparing: Projection = {
        name: projection.name,
        apply: (rows, context) => projection.apply(rows, context),
        clear: () => projection.clear(),
        prepare({ rows }) {
          given.push(rows.map((r) => r.resourceKey));
          return Promise.resolve();
        },
      };
      await new OutboxWorker(db, [preparing], { ...FAST, batchSize: 10 }).drainBatch(preparing);
      assert.deepEqual(given, [['kb_file:ready']]);
    });

    it('claims nothing when preparing fails, and records why', async () => {
      await write(db, [upsert('kb_file:a', 1)]);
      const projection = new TableProjection(db);
      const failing: Projection = {
        name: projection.name,
        apply: (rows, context) => projection.apply(rows, context),
        clear: () => projection.clear(),
        prepare: () => Promise.reject(new Error('the embeddings endpoint could not be reached: ECONNREFUSED')),
      };
      const result = await new OutboxWorker(db, [failing], FAST).drainBatch(failing);
      const [state] = await projectionStatus(db, ['search']);
      assert.deepEqual(
        { result, calls: projection.calls, backlog: await backlog(db), lastError: state?.lastError },
        { result: { applied: 0, failed: 0, unprepared: true }, calls: 0, backlog: 1, lastError: 'the embeddings endpoint could not be reached: ECONNREFUSED' },
      );
    });

    it("claims at most the projection's own batch", async () => {
      await write(
        db,
        Array.from({ length: 5 }, (_, i) => upsert(`kb_file:${i}`, i)),
      );
      const projection = new TableProjection(db);
      const small: Projection = {
        name: projection.name,
        batchSize: 2,
        apply: (rows, context) => projection.apply(rows, context),
        clear: () => projection.clear(),
      };
      await new OutboxWorker(db, [small], { ...FAST, batchSize: 100 }).drainAll();
      assert.deepEqual(projection.callSizes, [2, 2, 1]);
    });

    it("claims more than the worker's batch for a projection that asks, on PostgreSQL only", async () => {
      await write(
        db,
        Array.from({ length: 5 }, (_, i) => upsert(`kb_file:${i}`, i)),
      );
      const projection = new TableProjection(db);
      const large: Projection = {
        name: projection.name,
        batchSize: 4,
        apply: (rows, context) => projection.apply(rows, context),
        clear: () => projection.clear(),
      };
      await new OutboxWorker(db, [large], { ...FAST, batchSize: 2 }).drainAll();
      assert.deepEqual(projection.callSizes, db.kind === 'postgres' ? [4, 1] : [2, 2, 1]);
    });

    it('rebuilds a projection from Postgres alone: clear, enqueue the current state, apply', async () => {
      const projection = new TableProjection(db);
      await db.tx((tx) => tx.query("INSERT INTO test_source (tenant_id, key, n) VALUES ($1, 'x', 1), ($1, 'y', 2), ($1, 'z', 3)", [TENANT]));
      // The view has drifted: a stale document and a missing one.
      await db.tx((tx) => tx.query("INSERT INTO test_projection_docs (projection, resource_key, n) VALUES ('search', 'gone', 9), ('search', 'x', 0)"));
      const report = await rebuildProjection(db, projectionSet([projection]), 'search');
      assert.deepEqual(report, { projection: 'search', enqueued: 3 });
      assert.equal(projection.cleared, 1);
      await new OutboxWorker(db, [projection], FAST).drainAll();
      assert.deepEqual(Object.fromEntries(await projection.docs()), { x: 1, y: 2, z: 3 });
      await assert.rejects(rebuildProjection(db, projectionSet([projection]), 'graph'), /no projection named graph/);
    });
  });
}
