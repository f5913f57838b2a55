import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyOrgFile } from '../../src/org-sections.ts';
import type { Db } from '../../src/store/db.ts';
import { openPostgres } from '../../src/store/postgres.ts';
import { cliTrail } from '../support/audit.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import { ACME, directoryOf } from './support.ts';

const RUNNERS = 4;

/** Separate pools on real PostgreSQL, so the applies really race; PGlite serialises them itself. */
function connections(store: TestStore): Db[] {
  if (store.databaseUrl === undefined) return Array.from({ length: RUNNERS }, () => store.db);
  const url = store.databaseUrl;
  return Array.from({ length: RUNNERS }, () => openPostgres(url, { max: 2 }));
}

async function closeAll(store: TestStore, dbs: readonly Db[]): Promise<void> {
  await Promise.all(dbs.filter((db) => db !== store.db).map((db) => db.close()));
}

async function count(db: Db, table: string): Promise<number> {
  return (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]?.n ?? -1;
}

for (const backend of storeBackends()) {
  describe(`concurrent org file applies on ${backend.name}`, () => {
    it('creates a new tenant once when the same file is applied several times at once', async () => {
      const store = await backend.open({ migrated: true });
      const dbs = connections(store);
      try {
        const results = await Promise.all(dbs.map((db) => applyOrgFile(db, { source: ACME }, cliTrail(db))));
        const counts = results.map((result) => result.changes.length).sort((a, b) => a - b);
        assert.deepEqual(counts, [...Array<number>(RUNNERS - 1).fill(0), 9], 'one apply creates everything, the others find it done');
        assert.equal(await count(store.db, 'tenants'), 1);
        assert.equal(await count(store.db, 'principals'), 2);
        assert.equal(await count(store.db, 'group_members'), 2);
        assert.equal(await count(store.db, 'team_members'), 2);
      } finally {
        await closeAll(store, dbs);
        await store.dispose();
      }
    });

    it('applies a change once and keeps concurrent tenants apart', async () => {
      const store = await backend.open({ migrated: true });
      const dbs = connections(store);
      try {
        await applyOrgFile(store.db, { source: ACME }, cliTrail(store.db));
        const changed = ACME.replace('name: Alice', 'name: Alice Smith\n  - email: bob@acme.test\n    name: Bob').replace(
          '[release-bot, alice@acme.test]',
          '[bob@acme.test]',
        );
        const globex = ACME.replace('tenant: acme', 'tenant: globex');
        const results = await Promise.all(
          dbs.flatMap((db) => [applyOrgFile(db, { source: changed }, cliTrail(db)), applyOrgFile(db, { source: globex }, cliTrail(db))]),
        );
        const acmeChanges = results
          .filter((result) => result.tenant === 'acme')
          .map((result) => result.changes.length)
          .sort((a, b) => a - b);
        const globexChanges = results
          .filter((result) => result.tenant === 'globex')
          .map((result) => result.changes.length)
          .sort((a, b) => a - b);
        assert.deepEqual(acmeChanges, [...Array<number>(RUNNERS - 1).fill(0), 5]);
        assert.deepEqual(globexChanges, [...Array<number>(RUNNERS - 1).fill(0), 9]);
        const acme = await directoryOf(store.db, 'acme');
        assert.deepEqual(acme.people, { 'alice@acme.test': 'Alice Smith', 'bob@acme.test': 'Bob' });
        assert.deepEqual(acme.groups, { eng: ['bob@acme.test'] });
        assert.deepEqual((await directoryOf(store.db, 'globex')).people, { 'alice@acme.test': 'Alice' });
      } finally {
        await closeAll(store, dbs);
        await store.dispose();
      }
    });
  });
}
