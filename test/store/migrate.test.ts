import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadMigrations, migrate } from '../../src/store/migrate.ts';
import { openPostgres } from '../../src/store/postgres.ts';
import { storeBackends } from '../support/stores.ts';

for (const backend of storeBackends()) {
  describe(`migrations on ${backend.name}`, () => {
    it('applies every migration to an empty database, then nothing to an existing one', async () => {
      const store = await backend.open();
      try {
        const all = await loadMigrations();
        const first = await migrate(store.db);
        assert.equal(first.applied.length, all.length);
        assert.equal(first.current, all.length);
        const second = await migrate(store.db);
        assert.deepEqual(second.applied, []);
        const rows = await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
        assert.equal(rows[0]?.n, all.length);
      } finally {
        await store.dispose();
      }
    });

    it('enqueues a search row for each active Knowledge whose latest version is its published one (migration 21)', async () => {
      const store = await backend.open();
      try {
        const all = await loadMigrations();
        const at = all.findIndex((m) => m.name === 'knowledge_latest_documents');
        assert.equal(at, 20);
        await migrate(store.db, all.slice(0, at));
        const tenant = '00000000-0000-4000-8000-000000000001';
        const ids = {
          same: '00000000-0000-4000-8000-00000000000a',
          later: '00000000-0000-4000-8000-00000000000b',
          archived: '00000000-0000-4000-8000-00000000000c',
        };
        await store.db.tx(async (tx) => {
          await tx.query("INSERT INTO tenants (id, slug, name) VALUES ($1, 'mig', 'Mig')", [tenant]);
          await tx.query(
            `INSERT INTO context_resources (tenant_id, id, type, name, status, latest_version, published_version) VALUES
               ($1, $2, 'knowledge', 'same', 'active', 2, 2), ($1, $3, 'knowledge', 'later', 'active', 2, 1),
               ($1, $4, 'knowledge', 'archived', 'archived', 1, 1), ($1, gen_random_uuid(), 'memory', 'memory', 'active', 1, NULL)`,
            [tenant, ids.same, ids.later, ids.archived],
          );
        });
        await migrate(store.db, all);
        const rows = await store.db.query<{ projection: string; resource_key: string; operation: string; payload: unknown }>(
          'SELECT projection, resource_key, operation, payload FROM outbox ORDER BY id',
        );
        assert.deepEqual(rows, [
          { projection: 'search', resource_key: `knowledge:${ids.same}`, operation: 'upsert', payload: { type: 'knowledge', id: ids.same } },
        ]);
      } finally {
        await store.dispose();
      }
    });

    it('refuses a database that is ahead of this build or whose history differs', async () => {
      const store = await backend.open({ migrated: true });
      try {
        const all = await loadMigrations();
        await assert.rejects(migrate(store.db, all.slice(0, -1).length ? all.slice(0, -1) : []), /newer than this build/);
        const changed = all.map((m, i) => (i === 0 ? { ...m, checksum: 'x' } : m));
        await assert.rejects(migrate(store.db, changed), /differs from the one applied/);
      } finally {
        await store.dispose();
      }
    });

    it('rejects writes outside a transaction', async () => {
      const store = await backend.open({ migrated: true });
      try {
        await assert.rejects(store.db.query("INSERT INTO tenants (id, slug, name) VALUES (gen_random_uuid(), 'x', 'X')"), /use Db.tx for writes/);
        await assert.rejects(store.db.query('WITH x AS (DELETE FROM tenants RETURNING 1) SELECT * FROM x'), /use Db.tx for writes/);
        const rows = await store.db.query("SELECT 'insert' AS word");
        assert.equal(rows.length, 1);
      } finally {
        await store.dispose();
      }
    });

    if (backend.name === 'postgres') {
      it('applies each migration once when several processes start at once', async () => {
        const store = await backend.open();
        const pools = Array.from({ length: 6 }, () => openPostgres(store.databaseUrl!, { max: 2 }));
        try {
          const reports = await Promise.all(pools.map((db) => migrate(db)));
          const all = await loadMigrations();
          assert.equal(
            reports.reduce((sum, r) => sum + r.applied.length, 0),
            all.length,
          );
          const rows = await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations');
          assert.equal(rows[0]?.n, all.length);
        } finally {
          await Promise.all(pools.map((db) => db.close()));
          await store.dispose();
        }
      });
    }
  });
}
