import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RebuildOutcome } from '../../src/admin/ops.ts';
import type { ProjectionStatus } from '../../src/kernel/outbox/outbox.ts';
import { enqueue } from '../../src/kernel/outbox/outbox.ts';
import type { Db } from '../../src/store/db.ts';
import { openPglite } from '../../src/store/pglite.ts';
import { openPostgres } from '../../src/store/postgres.ts';
import type { CliStore } from '../cli/support.ts';
import { cliStoreBackends, kgw, lines } from '../cli/support.ts';
import { pick } from '../support/fixtures.ts';
import { TENANT } from './support.ts';

const REINDEX_ORG = `tenant: reindexco
name: Reindex Co
people:
  - email: ada@reindex.test
    name: Ada
    departments: [research]
    projects: [engine]
  - email: bo@reindex.test
    name: Bo
    departments: [research]
agents:
  - name: helper
    owner: ada@reindex.test
`;

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

    it('rebuilds the graph from the directory and search from the KB files', async () => {
      const org = path.join(store.workDir, 'reindex-org.yaml');
      await writeFile(org, REINDEX_ORG);
      const applied = await kgw(['apply', org], store.env);
      assert.equal(applied.code, 0, applied.stderr);
      // organization, 2 people, 1 agent, 1 department, 1 project; 2 "is part of", 2 "belongs to", 1 "works on", 1 "owns".
      // Search: no KB file, and each of the 6 nodes is a document for Company Brain's query_index.
      const run = await kgw(['reindex', '--search', '--graph'], store.env);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, 'search: cleared, 6 changes enqueued for the outbox worker\ngraph: cleared, 12 changes enqueued for the outbox worker\n');
      const json = await kgw(['reindex', '--json'], store.env);
      assert.equal(json.code, 0, json.stderr);
      const outcome = JSON.parse(json.stdout) as RebuildOutcome;
      assert.deepEqual(outcome, {
        configured: ['graph', 'search'],
        rebuilt: [
          { projection: 'graph', enqueued: 12 },
          { projection: 'search', enqueued: 6 },
        ],
        skipped: [],
      });
      // No gateway ran: the apply's rows and both rebuilds' rows wait for a worker.
      await withDb(async (db) => {
        const [row] = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox WHERE projection = 'graph'");
        assert.ok((row?.n ?? 0) >= 24, `backlog ${String(row?.n)}`);
      });
    });

    it('refuses arguments it does not know', async () => {
      const run = await kgw(['reindex', '--everything'], store.env);
      assert.equal(run.code, 2);
      assert.match(run.stderr, /kgw reindex --help/);
    });

    it('shows a backlog in a second doctor table, without failing', async () => {
      // What earlier tests left waiting (no worker runs here), and 3 more.
      let waiting = 0;
      await withDb(async (db) => {
        waiting = (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox WHERE projection = 'search'"))[0]?.n ?? 0;
        await db.tx((tx) =>
          enqueue(
            tx,
            [1, 2, 3].map((n) => ({ tenantId: TENANT, projection: 'search', resourceKey: `kb_file:${n}`, operation: 'upsert' as const, payload: { n } })),
          ),
        );
      });
      const run = await kgw(['doctor'], store.env);
      assert.equal(run.code, 0, run.stderr + run.stdout);
      const output = lines(run.stdout);
      const header = output.findIndex((l) => /^PROJECTION +BACKLOG +OLDEST +FAILING +LAST ERROR$/.test(l));
      assert.ok(header > 0, run.stdout);
      assert.equal(output[header - 1], '');
      const search = output.slice(header + 1).find((l) => l.startsWith('search '));
      assert.deepEqual(search?.split(/ {2,}/).slice(0, 2), ['search', String(waiting + 3)], run.stdout);
      // The configured graph projection is listed even with nothing waiting.
      assert.ok(
        output.slice(header + 1).some((l) => l.startsWith('graph ')),
        run.stdout,
      );
      const json = await kgw(['doctor', '--json'], store.env);
      const report = JSON.parse(json.stdout) as { projections: ProjectionStatus[] };
      assert.deepEqual(
        report.projections.filter((p) => p.projection === 'search').map((p) => pick(p, ['projection', 'backlog', 'failing', 'lastError'])),
        [{ projection: 'search', backlog: waiting + 3, failing: 0, lastError: null }],
      );
    });
  });
}
