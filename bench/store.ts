/**
 * The fresh store a bench runs on, shared by the benches that open one in their own process
 * (bench/projection.ts, bench/search.ts): PGlite in a temporary folder, or a new
 * `kgw_bench_…` database on a PostgreSQL server, dropped when the bench disposes of it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../src/store/db.ts';
import { openPglite } from '../src/store/pglite.ts';
import { openPostgres } from '../src/store/postgres.ts';
import { adminQuery } from './machine.ts';

export interface BenchStore {
  readonly kind: 'pglite' | 'postgres';
  readonly db: Db;
  /** The URL of the bench's own database (PostgreSQL only), for a second process or replica. */
  readonly databaseUrl: string | undefined;
  /** A second handle on the same store, as a second replica has: its own pool on PostgreSQL, the same PGlite. */
  second(): Db;
  /** Closes every handle and removes the folder or drops the database. */
  dispose(): Promise<void>;
}

/** Opens a fresh, empty store: PGlite when `serverUrl` is undefined; `poolMax` connections per pool on PostgreSQL. */
export async function openBenchStore(serverUrl: string | undefined, options: { readonly poolMax: number; readonly prefix: string }): Promise<BenchStore> {
  if (serverUrl === undefined) {
    const dir = await mkdtemp(path.join(os.tmpdir(), `${options.prefix}-`));
    const db = await openPglite(path.join(dir, 'pgdata'));
    return {
      kind: 'pglite',
      db,
      databaseUrl: undefined,
      second: () => db,
      async dispose() {
        await db.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  const database = `kgw_bench_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${database}`);
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const db = openPostgres(url.toString(), { max: options.poolMax });
  const others: Db[] = [];
  return {
    kind: 'postgres',
    db,
    databaseUrl: url.toString(),
    second() {
      const other = openPostgres(url.toString(), { max: options.poolMax });
      others.push(other);
      return other;
    },
    async dispose() {
      await Promise.all([db, ...others].map((d) => d.close()));
      await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    },
  };
}
