import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runOp } from '../../src/admin/ops.ts';
import type { RebuildOutcome } from '../../src/admin/ops.ts';
import type { Gateway } from '../../src/app.ts';
import { createGateway } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { enqueue } from '../../src/kernel/outbox/outbox.ts';
import { pick } from '../support/fixtures.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import { TENANT, TableProjection, backlog, logRows, openOutboxStore, projectionSet, waitFor } from './support.ts';

const SECRET = 'outbox-test-admin-secret';

interface ReadyBody {
  status: string;
  projections: Record<string, { backlog: number; oldest_age_ms: number; failing: number; last_error: string | null }>;
}

for (const backend of storeBackends()) {
  describe(`outbox in a running gateway on ${backend.name}`, () => {
    let store: TestStore;
    let dataDir: string;
    let gateway: Gateway;
    let url: string;
    let projection: TableProjection;

    before(async () => {
      store = await openOutboxStore(backend);
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'kgw-outbox-'));
      projection = new TableProjection(store.db);
      const config = loadConfig({ KGW_PORT: '0', KGW_LOG_LEVEL: 'silent', KGW_DATA_DIR: dataDir });
      gateway = await createGateway(config, {
        db: store.db,
        adminSecret: SECRET,
        projections: projectionSet([projection]),
        outboxWorker: { idleMs: 5, backoff: { baseMs: 1, maxMs: 20 } },
      });
      url = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
    });
    after(async () => {
      await gateway.close();
      await store.dispose();
      await rm(dataDir, { recursive: true, force: true });
    });

    const ready = async (): Promise<{ code: number; body: ReadyBody }> => {
      const response = await fetch(`${url}/readyz`);
      return { code: response.status, body: (await response.json()) as ReadyBody };
    };

    it('drains writes through its own worker', async () => {
      await store.db.tx((tx) => enqueue(tx, [{ tenantId: TENANT, projection: 'search', resourceKey: 'kb_file:1', operation: 'upsert', payload: { n: 1 } }]));
      await waitFor(async () => (await backlog(store.db)) === 0);
      assert.deepEqual(Object.fromEntries(await projection.docs()), { 'kb_file:1': 1 });
      const { code, body } = await ready();
      assert.equal(code, 200);
      assert.deepEqual(body.projections.search, { ...body.projections.search, backlog: 0, oldest_age_ms: 0, failing: 0, last_error: null });
    });

    it('stays ready (200) with a backlog while the backend is down, shows lag and the error, then catches up', async () => {
      projection.down = true;
      try {
        for (let i = 0; i < 20; i++) {
          await store.db.tx((tx) =>
            enqueue(tx, [{ tenantId: TENANT, projection: 'search', resourceKey: `kb_file:${i % 4}`, operation: 'upsert', payload: { n: 100 + i } }]),
          );
        }
        await waitFor(async () => ((await ready()).body.projections.search?.last_error ?? '').includes('ECONNREFUSED'));
        const { code, body } = await ready();
        assert.equal(code, 200, 'a backlog alone never makes the gateway unready');
        assert.equal(body.status, 'ready');
        assert.equal(body.projections.search?.backlog, 20);
        assert.ok((body.projections.search?.failing ?? 0) >= 1);
        const [status] = await runOp(gateway.services, 'projections.status', {});
        assert.equal(status?.projection, 'search');
        assert.equal(status?.backlog, 20);
      } finally {
        projection.down = false;
      }
      await waitFor(async () => (await ready()).body.projections.search?.backlog === 0);
      const log = await logRows(store.db);
      assert.equal(new Set(log.map((r) => Number(r.outbox_id))).size, log.length, 'nothing applied twice');
      assert.equal(log.length, 21);
      assert.deepEqual(Object.fromEntries(await projection.docs()), { 'kb_file:0': 116, 'kb_file:1': 117, 'kb_file:2': 118, 'kb_file:3': 119 });
    });

    it('rebuilds through the admin endpoint the CLI uses, from Postgres alone', async () => {
      await store.db.tx((tx) => tx.query("INSERT INTO test_source (tenant_id, key, n) VALUES ($1, 'kb_file:0', 7), ($1, 'kb_file:9', 9)", [TENANT]));
      const response = await fetch(`${url}/admin/rpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRET}` },
        body: JSON.stringify({ op: 'projections.rebuild', args: { names: ['search', 'graph'] } }),
      });
      assert.equal(response.status, 200);
      const { result } = (await response.json()) as { result: RebuildOutcome };
      assert.deepEqual(result, { configured: ['search'], rebuilt: [{ projection: 'search', enqueued: 2 }], skipped: ['graph'] });
      await waitFor(async () => (await backlog(store.db)) === 0);
      assert.deepEqual(Object.fromEntries(await projection.docs()), { 'kb_file:0': 7, 'kb_file:9': 9 });
    });
  });

  describe(`the configured projections on ${backend.name}`, () => {
    let store: TestStore;
    let dataDir: string;
    let gateway: Gateway;

    before(async () => {
      store = await openOutboxStore(backend);
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'kgw-outbox-'));
      gateway = await createGateway(loadConfig({ KGW_PORT: '0', KGW_LOG_LEVEL: 'silent', KGW_DATA_DIR: dataDir }), { db: store.db });
    });
    after(async () => {
      await gateway.close();
      await store.dispose();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('are the graph (on the store itself without NEO4J_URL) and the built-in search, rebuilt with no tenant as empty', async () => {
      assert.equal(gateway.services.graph.backend, 'postgres');
      assert.equal(gateway.services.search.name, 'builtin');
      assert.deepEqual(await runOp(gateway.services, 'projections.rebuild', { names: ['graph', 'search'] }), {
        configured: ['graph', 'search'],
        rebuilt: [
          { projection: 'graph', enqueued: 0 },
          { projection: 'search', enqueued: 0 },
        ],
        skipped: [],
      });
      const status = await runOp(gateway.services, 'projections.status', {});
      assert.deepEqual(
        status.map((s) => pick(s, ['projection', 'backlog', 'lastError'])),
        [
          { projection: 'graph', backlog: 0, lastError: null },
          { projection: 'search', backlog: 0, lastError: null },
        ],
      );
      const body = (await gateway.app.inject({ method: 'GET', url: '/readyz' })).json<ReadyBody>();
      assert.deepEqual(Object.keys(body.projections), ['graph', 'search']);
      assert.equal(body.projections.graph?.backlog, 0);
    });
  });
}
