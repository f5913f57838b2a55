import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Db } from '../../src/store/db.ts';
import { loadMigrations, migrate } from '../../src/store/migrate.ts';
import { dumpPglite, openPglite } from '../../src/store/pglite.ts';
import { openPostgres } from '../../src/store/postgres.ts';

export interface TestStore {
  readonly db: Db;
  /** Set for real PostgreSQL: the URL of this test's own database. */
  readonly databaseUrl: string | undefined;
  /** Closes the store and removes its database or folder. */
  dispose(): Promise<void>;
}

export interface StoreBackend {
  readonly name: 'pglite' | 'postgres';
  /** A fresh, empty store; `migrated` applies the schema first. */
  open(options?: { migrated?: boolean }): Promise<TestStore>;
}

/** The server URL of real PostgreSQL for tests; CI must provide it, a developer may not. */
export function testDatabaseUrl(): string | undefined {
  const url = process.env.KGW_TEST_DATABASE_URL;
  if ((url === undefined || url === '') && process.env.CI === 'true') {
    throw new Error('KGW_TEST_DATABASE_URL must be set in CI: the store suites run against real PostgreSQL too');
  }
  return url === '' ? undefined : url;
}

/** Creates an empty database on the test server and returns its URL and a dropper. */
export async function createTestDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `kgw_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Where the dumps and data folders that stand for a fresh store are kept between test processes:
 * named by PGlite's version and the migrations' checksums, so a changed migration (or PGlite)
 * makes new ones.
 */
const SNAPSHOTS = fileURLToPath(new URL('../../.cache/test-stores/', import.meta.url));

let snapshotKey: Promise<string> | undefined;
function keyOfSnapshots(): Promise<string> {
  snapshotKey ??= (async () => {
    const pglitePackage = await readFile(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url));
    const hash = createHash('sha256').update(pglitePackage);
    for (const migration of await loadMigrations()) hash.update(migration.checksum);
    const key = hash.digest('hex').slice(0, 16);
    // Those of earlier migrations (40 MB each) are of no use any more.
    const kept = await readdir(SNAPSHOTS).catch(() => []);
    await Promise.all(kept.filter((name) => !name.startsWith(key)).map((name) => rm(path.join(SNAPSHOTS, name), { recursive: true, force: true })));
    return key;
  })();
  return snapshotKey;
}

/**
 * Makes `target` (a file or a folder) with `make` unless it exists: made under a temporary name
 * beside it and renamed, so two test processes racing for it both end up with a whole one.
 */
async function cached(target: string, make: (scratch: string) => Promise<void>): Promise<string> {
  if (existsSync(target)) return target;
  await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
  const scratch = `${target}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await make(scratch);
    try {
      await rename(scratch, target);
    } catch (error) {
      // Another process renamed its own first (a folder cannot replace a non-empty one).
      if (!existsSync(target)) throw error;
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return target;
}

const dumps = new Map<boolean, Promise<Blob>>();

/**
 * A dump of an empty embedded database, migrated or not. PGlite's initdb takes seconds and the
 * suites open hundreds of stores, so each is unpacked from this dump (a fraction of a second)
 * into memory: what the tests of the embedded store's SQL need. Suites of the data folder itself
 * (file modes, locks, restarts) open one on disk with `openPglite`.
 */
function pgliteDump(migrated: boolean): Promise<Blob> {
  let dump = dumps.get(migrated);
  if (dump === undefined) {
    dump = (async () => {
      const file = path.join(SNAPSHOTS, `${await keyOfSnapshots()}-${migrated ? 'migrated' : 'empty'}.tar`);
      await cached(file, async (scratch) => {
        const db = await openPglite(undefined);
        try {
          if (migrated) await migrate(db);
          await writeFile(scratch, Buffer.from(await (await dumpPglite(db)).arrayBuffer()), { mode: 0o600 });
        } finally {
          await db.close();
        }
      });
      return new Blob([await readFile(file)]);
    })();
    dumps.set(migrated, dump);
  }
  return dump;
}

/**
 * A data folder (its `pgdata`) as \`kgw migrate\` leaves a new one, for suites that run kgw as a
 * process: copied, because a new folder's initdb would take seconds at each one's first command.
 */
export async function migratedDataFolder(): Promise<string> {
  return cached(path.join(SNAPSHOTS, `${await keyOfSnapshots()}-data`), async (scratch) => {
    await mkdir(scratch, { mode: 0o700 });
    const db = await openPglite(path.join(scratch, 'pgdata'));
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
  });
}

const pglite: StoreBackend = {
  name: 'pglite',
  async open(options = {}) {
    const db = await openPglite(undefined, { from: await pgliteDump(options.migrated === true) });
    return { db, databaseUrl: undefined, dispose: () => db.close() };
  },
};

function postgres(serverUrl: string): StoreBackend {
  return {
    name: 'postgres',
    async open(options = {}) {
      const database = await createTestDatabase(serverUrl);
      const db = openPostgres(database.url, { max: 20 });
      if (options.migrated) await migrate(db);
      return {
        db,
        databaseUrl: database.url,
        async dispose() {
          await db.close();
          await database.drop();
        },
      };
    },
  };
}

/** Every store the suites run against: PGlite always, real PostgreSQL when configured. */
export function storeBackends(): StoreBackend[] {
  const url = testDatabaseUrl();
  return url === undefined ? [pglite] : [pglite, postgres(url)];
}

/** A fresh store of one kind: PGlite in a temporary folder, or a new database on the PostgreSQL server at `serverUrl`. */
export function storeBackendAt(serverUrl: string | undefined): StoreBackend {
  return serverUrl === undefined ? pglite : postgres(serverUrl);
}
