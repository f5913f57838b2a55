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
  /** Where the store is, to open it again (`reopenBenchStore`): the PGlite folder or the database URL. */
  readonly location: string;
  /** Closes every handle and removes the folder or drops the database. */
  dispose(): Promise<void>;
  /** Closes every handle and leaves the store as it is. */
  close(): Promise<void>;
}

/** Opens a fresh, empty store: PGlite when `serverUrl` is undefined; `poolMax` connections per pool on PostgreSQL. */
export async function openBenchStore(serverUrl: string | undefined, options: { readonly poolMax: number; readonly prefix: string }): Promise<BenchStore> {
  if (serverUrl === undefined) {
    const dir = await mkdtemp(path.join(os.tmpdir(), `${options.prefix}-`));
    return pgliteStore(dir);
  }
  const database = `kgw_bench_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${database}`);
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return postgresStore(url.toString(), options.poolMax, serverUrl);
}

/** A store a bench kept (`BenchStore.location`): a PGlite folder, or a `postgres://` URL. */
export async function reopenBenchStore(location: string, options: { readonly poolMax: number }): Promise<BenchStore> {
  return /^postgres(ql)?:/.test(location) ? postgresStore(location, options.poolMax) : pgliteStore(location);
}

async function pgliteStore(dir: string): Promise<BenchStore> {
  const db = await openPglite(path.join(dir, 'pgdata'));
  return {
    kind: 'pglite',
    db,
    databaseUrl: undefined,
    location: dir,
    second: () => db,
    close: () => db.close(),
    async dispose() {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** `adminUrl`: a database of the same server to drop this one from (by default its `postgres` database). */
function postgresStore(databaseUrl: string, poolMax: number, adminUrl?: string): BenchStore {
  const db = openPostgres(databaseUrl, { max: poolMax });
  const others: Db[] = [];
  const close = async () => {
    await Promise.all([db, ...others].map((d) => d.close()));
  };
  return {
    kind: 'postgres',
    db,
    databaseUrl,
    location: databaseUrl,
    second() {
      const other = openPostgres(databaseUrl, { max: poolMax });
      others.push(other);
      return other;
    },
    close,
    async dispose() {
      await close();
      const url = new URL(databaseUrl);
      const database = url.pathname.slice(1);
      url.pathname = '/postgres';
      await adminQuery(adminUrl ?? url.toString(), `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    },
  };
}
