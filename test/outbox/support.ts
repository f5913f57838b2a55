import { randomUUID } from 'node:crypto';
import type { OutboxRow, Projection, ProjectionSet, Rebuilder } from '../../connectors/projection.ts';
import type { Db, Queryable } from '../../src/store/db.ts';
import type { StoreBackend, TestStore } from '../support/stores.ts';

/** A fresh store with every shipped migration and the test double's table. */
export async function openOutboxStore(backend: StoreBackend): Promise<TestStore> {
  const store = await backend.open({ migrated: true });
  await store.db.tx((tx) =>
    tx.exec(`CREATE TABLE test_projection_log (
      seq          bigserial PRIMARY KEY,
      projection   text NOT NULL,
      outbox_id    bigint NOT NULL,
      resource_key text NOT NULL,
      operation    text NOT NULL,
      n            integer
    );
    CREATE TABLE test_projection_docs (projection text, resource_key text, n integer, PRIMARY KEY (projection, resource_key));
    CREATE TABLE test_source (tenant_id uuid NOT NULL, key text PRIMARY KEY, n integer NOT NULL);`),
  );
  return store;
}

export const TENANT = randomUUID();

/**
 * A deliberate test double for the worker contract, not a mock: a real projection whose
 * "backend" is two tables in the same store, written through the claim transaction. The log
 * records every application (to count duplicates and check order); docs holds the view.
 */
export class TableProjection implements Projection {
  readonly name: string;
  /** Set to make the backend throw on every call ("down"). */
  down = false;
  /** Calls that throw before the backend starts answering. */
  failuresLeft = 0;
  /** Rows of these keys always fail (a poison row). */
  readonly poison = new Set<string>();
  /** Rows whose payload's n is one of these always fail (one poison row in a resource's run). */
  readonly poisonN = new Set<number>();
  calls = 0;
  /** How many rows each call was given, in call order. */
  readonly callSizes: number[] = [];
  cleared = 0;
  readonly #db: Db;

  constructor(db: Db, name = 'search') {
    this.#db = db;
    this.name = name;
  }

  async apply(rows: readonly OutboxRow[], context: { tx: Queryable }): Promise<void> {
    this.calls += 1;
    this.callSizes.push(rows.length);
    if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:9');
    if (this.failuresLeft > 0) {
      this.failuresLeft -= 1;
      throw new Error(`transient failure (${this.failuresLeft} left)`);
    }
    if (rows.some((r) => this.poison.has(r.resourceKey) || (typeof r.payload.n === 'number' && this.poisonN.has(r.payload.n))))
      throw new Error('backend refused the document');
    for (const row of rows) {
      const n = typeof row.payload.n === 'number' ? row.payload.n : null;
      await context.tx.query('INSERT INTO test_projection_log (projection, outbox_id, resource_key, operation, n) VALUES ($1, $2, $3, $4, $5)', [
        this.name,
        row.id,
        row.resourceKey,
        row.operation,
        n,
      ]);
      if (row.operation === 'delete')
        await context.tx.query('DELETE FROM test_projection_docs WHERE projection = $1 AND resource_key = $2', [this.name, row.resourceKey]);
      else {
        await context.tx.query(
          'INSERT INTO test_projection_docs (projection, resource_key, n) VALUES ($1, $2, $3) ON CONFLICT (projection, resource_key) DO UPDATE SET n = EXCLUDED.n',
          [this.name, row.resourceKey, n],
        );
      }
    }
  }

  async clear(): Promise<void> {
    this.cleared += 1;
    await this.#db.tx((tx) => tx.query('DELETE FROM test_projection_docs WHERE projection = $1', [this.name]));
  }

  async docs(): Promise<Map<string, number | null>> {
    const rows = await this.#db.query<{ resource_key: string; n: number | null }>('SELECT resource_key, n FROM test_projection_docs WHERE projection = $1', [
      this.name,
    ]);
    return new Map(rows.map((r) => [r.resource_key, r.n]));
  }
}

/** Rebuilds a TableProjection from the test_source table. */
export function sourceRebuilder(projection: string): Rebuilder {
  return {
    projection,
    async *keys(db) {
      const rows = await db.query<{ tenant_id: string; key: string }>('SELECT tenant_id, key FROM test_source ORDER BY key');
      for (const row of rows) yield { tenantId: row.tenant_id, resourceKey: row.key };
    },
    async load(tx, refs) {
      const rows = await tx.query<{ tenant_id: string; key: string; n: number }>('SELECT tenant_id, key, n FROM test_source WHERE key = ANY($1::text[])', [
        refs.map((r) => r.resourceKey),
      ]);
      return rows.map((r) => ({ tenantId: r.tenant_id, projection, resourceKey: r.key, operation: 'upsert' as const, payload: { n: r.n } }));
    },
  };
}

export function projectionSet(projections: readonly TableProjection[]): ProjectionSet {
  return { projections, rebuilders: projections.map((p) => sourceRebuilder(p.name)) };
}

export async function logRows(db: Queryable): Promise<{ seq: number; outbox_id: number; resource_key: string; n: number | null }[]> {
  return db.query('SELECT seq, outbox_id, resource_key, n FROM test_projection_log ORDER BY seq');
}

export async function backlog(db: Queryable, projection = 'search'): Promise<number> {
  const [row] = await db.query<{ count: number | string }>('SELECT count(*) AS count FROM outbox WHERE projection = $1', [projection]);
  return Number(row?.count ?? 0);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}
