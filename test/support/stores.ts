import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Db } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { openPglite } from '../../src/store/pglite.ts';
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

const pglite: StoreBackend = {
  name: 'pglite',
  async open(options = {}) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'kgw-test-'));
    const db = await openPglite(path.join(dir, 'pgdata'));
    if (options.migrated) await migrate(db);
    return {
      db,
      databaseUrl: undefined,
      async dispose() {
        await db.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
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
