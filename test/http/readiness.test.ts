import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../support/gateway.ts';
import { ACME_ORG, connectClient, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

// Port 9 (discard) has no listener on loopback: each configured backend there is down.
const DOWN = {
  MEILI_URL: 'http://127.0.0.1:9',
  NEO4J_URL: 'bolt://127.0.0.1:9',
  NEO4J_PASSWORD: 'x',
  S3_ENDPOINT: 'http://127.0.0.1:9',
  S3_BUCKET: 'kgw',
  S3_ACCESS_KEY_ID: 'a',
  S3_SECRET_ACCESS_KEY: 'b',
};

for (const backend of storeBackends()) {
  describe(`readiness with backends down on ${backend.name}`, () => {
    let store: TestStore;
    let running: RunningGateway;
    let token: string;

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ACME_ORG);
      token = await issueToken(store.db, 'acme', 'alice@acme.test', 'context.read');
      running = await startGateway(store.db, DOWN);
    });
    after(async () => {
      await running.close();
      await store.dispose();
    });

    it('answers /readyz 503 naming each backend that is down, and /healthz 200', async () => {
      const response = await fetch(`${running.url}/readyz`);
      assert.equal(response.status, 503);
      const body = (await response.json()) as { status: string; backends: Record<string, { backend: string; ok: boolean; error?: string }> };
      assert.equal(body.status, 'unavailable');
      assert.equal(body.backends.store?.ok, true);
      for (const [role, name] of [
        ['blob', 's3'],
        ['search', 'meilisearch'],
        ['graph', 'neo4j'],
      ] as const) {
        assert.equal(body.backends[role]?.backend, name);
        assert.equal(body.backends[role]?.ok, false, role);
        assert.ok((body.backends[role]?.error ?? '').length > 0, role);
      }
      assert.equal((await fetch(`${running.url}/healthz`)).status, 200);
    });

    it('reports degraded through the Atmina health tool without leaking backend errors', async () => {
      const client = await connectClient(`${running.url}/atmina/mcp`, token);
      try {
        const result = await client.callTool({ name: 'health', arguments: {} });
        const health = result.structuredContent as { status: string; backends: Record<string, unknown>[] };
        assert.equal(health.status, 'degraded');
        assert.equal(health.backends.filter((b) => b.ok === false).length, 3);
        assert.ok(health.backends.every((b) => !('error' in b)));
      } finally {
        await client.close();
      }
    });
  });
}

for (const backend of storeBackends()) {
  describe(`readiness on the embedded defaults on ${backend.name}`, () => {
    let store: TestStore;
    let running: RunningGateway;

    before(async () => {
      store = await backend.open({ migrated: true });
      running = await startGateway(store.db);
    });
    after(async () => {
      await running.close();
      await store.dispose();
    });

    it('names a row per role, the graph tables among them, as a Neo4j gateway does', async () => {
      const response = await fetch(`${running.url}/readyz`);
      const body = (await response.json()) as { status: string; backends: Record<string, { backend: string; ok: boolean }> };
      assert.deepEqual(
        { status: response.status, backends: Object.entries(body.backends).map(([role, b]) => [role, b.backend, b.ok]) },
        {
          status: 200,
          backends: [
            ['store', backend.name, true],
            ['blob', 'disk', true],
            ['search', 'builtin', true],
            ['graph', 'builtin', true],
          ],
        },
      );
    });
  });
}
