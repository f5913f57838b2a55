import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ProjectionStatus } from '../../src/core/outbox/outbox.ts';
import { enqueue } from '../../src/core/outbox/outbox.ts';
import type { Db } from '../../src/store/db.ts';
import { openPglite } from '../../src/store/pglite.ts';
import { openPostgres } from '../../src/store/postgres.ts';
import type { CliStore } from '../cli/support.ts';
import { cliStoreBackends, kgw, lines } from '../cli/support.ts';
import { TENANT } from './support.ts';

for (const backend of cliStoreBackends()) {
  describe(`kgw reindex and the doctor's projection table on ${backend.name}`, () => {
    let store: CliStore;

    before(async () => {
      store = await backend.open();
    });
    after(() => store.dispose());

    /** Opens the store directly; no kgw process runs meanwhile. */
    async function withDb(work: (db: Db) => Promise<void>): Promise<void> {
      const db = store.databaseUrl === undefined ? await openPglite(path.join(store.dataDir, 'pgdata')) : openPostgres(store.databaseUrl);
      try {
        await work(db);
      } finally {
        await db.close();
      }
    }

    it('says no projection is configured and exits 0', async () => {
      const run = await kgw(['reindex', '--search', '--graph'], store.env);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, 'no projection is configured; nothing to rebuild\n');
      const json = await kgw(['reindex', '--json'], store.env);
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(JSON.parse(json.stdout), { configured: [], rebuilt: [], skipped: [] });
    });

    it('refuses arguments it does not know', async () => {
      const run = await kgw(['reindex', '--everything'], store.env);
      assert.equal(run.code, 2);
      assert.match(run.stderr, /kgw reindex --help/);
    });

    it('shows a backlog in a second doctor table, without failing', async () => {
      await withDb((db) =>
        db.tx((tx) =>
          enqueue(tx, [1, 2, 3].map((n) => ({ tenantId: TENANT, projection: 'search', resourceKey: `kb_file:${n}`, operation: 'upsert' as const, payload: { n } }))),
        ),
      );
      const run = await kgw(['doctor'], store.env);
      assert.equal(run.code, 0, run.stderr + run.stdout);
      const output = lines(run.stdout);
      const header = output.findIndex((l) => /^PROJECTION +BACKLOG +OLDEST +FAILING +LAST ERROR$/.test(l));
      assert.ok(header > 0, run.stdout);
      assert.equal(output[header - 1], '');
      assert.deepEqual(output[header + 1]?.split(/ {2,}/).slice(0, 2), ['search', '3']);
      const json = await kgw(['doctor', '--json'], store.env);
      const report = JSON.parse(json.stdout) as { projections: ProjectionStatus[] };
      assert.deepEqual(
        report.projections.map((p) => [p.projection, p.backlog, p.failing, p.lastError]),
        [['search', 3, 0, null]],
      );
    });
  });
}
