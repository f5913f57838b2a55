import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import { AuditLog } from '../../src/kernel/audit/audit-log.ts';
import type { AuditResource } from '../../src/kernel/audit/audit-log.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * Migration 0035: the large columns are compressed with lz4 where the server has it (PostgreSQL
 * here), and the migration passes on a store without it (PGlite), which keeps pglz. A large
 * value still reads back exactly.
 */

const COLUMNS = [
  ['audit_events', 'resources'],
  ['audit_events', 'details'],
  ['context_versions', 'content'],
  ['search_docs', 'body'],
  ['search_docs', 'stems'],
] as const;

for (const backend of storeBackends()) {
  describe(`column compression on ${backend.name}`, () => {
    it(backend.name === 'postgres' ? 'is lz4 for the large columns' : 'keeps the default where lz4 is missing', async () => {
      const store = await backend.open({ migrated: true });
      try {
        const rows = await store.db.query<{ relname: string; attname: string; compression: string }>(
          `SELECT c.relname, a.attname, a.attcompression::text AS compression FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
            WHERE (c.relname, a.attname) IN (${COLUMNS.map((_, i) => `($${2 * i + 1}, $${2 * i + 2})`).join(', ')}) ORDER BY c.relname, a.attname`,
          COLUMNS.flat(),
        );
        assert.equal(rows.length, COLUMNS.length);
        const expected = backend.name === 'postgres' ? 'l' : '';
        for (const row of rows) assert.equal(row.compression.replace('\u0000', ''), expected, `${row.relname}.${row.attname}`);
      } finally {
        await store.dispose();
      }
    });

    it("stores a call's 1,000 audit resources compressed and reads them back exactly", async () => {
      const store = await backend.open({ migrated: true });
      try {
        const tenantId = randomUUID();
        await store.db.tx((tx) => tx.query("INSERT INTO tenants (id, slug, name) VALUES ($1, 'lz4', 'Lz4')", [tenantId]));
        const resources = Array.from({ length: 1000 }, (_, i): AuditResource => ({
          type: 'knowledge',
          id: randomUUID(),
          version: i + 1,
          version_id: randomUUID(),
        }));
        resources[0] = { ...resources[0]!, id: 'ü\u202e𝄞' };
        await new AuditLog(store.db).append({ tenantId, surface: 'mcp', action: 'context.request', result: 'ok', resources });
        const [row] = await store.db.query<{ resources: unknown; stored: number; raw: number }>(
          'SELECT resources, pg_column_size(resources) AS stored, octet_length(resources::text) AS raw FROM audit_events WHERE tenant_id = $1',
          [tenantId],
        );
        assert.deepEqual(row?.resources, resources);
        assert.ok(Number(row?.stored) < Number(row?.raw) / 1.5, `stored ${row?.stored} bytes of ${row?.raw}: compressed`);
      } finally {
        await store.dispose();
      }
    });
  });
}
