import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliEnv, lines, serve, tempDir } from '../cli/support.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { ACME_ORG, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const WHOAMI = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } };

for (const backend of storeBackends()) {
  describe(`request ids on ${backend.name}`, () => {
    let store: TestStore;
    let running: RunningGateway;
    let token: string;

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ACME_ORG);
      token = await issueToken(store.db, 'acme', 'release-bot', 'context.read');
      running = await startGateway(store.db);
    });
    after(async () => {
      await running.close();
      await store.dispose();
    });

    it('answers with its own id, never the X-Request-Id a client chose', async () => {
      const ids = new Set<string>();
      for (const given of ['client-chosen-id', 'client-chosen-id', 'a'.repeat(64), '']) {
        const response = await fetch(`${running.url}/healthz`, { headers: given === '' ? {} : { 'x-request-id': given } });
        assert.equal(response.status, 200);
        const id = response.headers.get('x-request-id') ?? '';
        assert.match(id, UUID);
        assert.notEqual(id, given);
        ids.add(id);
      }
      assert.equal(ids.size, 4, 'every request gets a fresh id, even when two clients send the same one');
    });

    it('records the generated id in the audit log, not the client one', async () => {
      const forged = 'forged-audit-request-id';
      const response = await fetch(`${running.url}/atmina/mcp`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, 'x-request-id': forged },
        body: JSON.stringify(WHOAMI),
      });
      assert.equal(response.status, 200, await response.clone().text());
      const id = response.headers.get('x-request-id') ?? '';
      assert.match(id, UUID);
      const recorded = await store.db.query<{ request_id: string; tool: string }>(
        'SELECT request_id, tool FROM audit_events WHERE request_id = $1 OR request_id = $2',
        [id, forged],
      );
      assert.deepEqual(recorded, [{ request_id: id, tool: 'whoami' }]);
    });
  });
}

describe('the client request id in the logs', () => {
  it('logs a bounded, printable clientRequestId beside the generated reqId', async () => {
    const dir = await tempDir('kgw-reqid-');
    try {
      const gateway = await serve(cliEnv({ KGW_DATA_DIR: path.join(dir, 'data'), KGW_LOG_LEVEL: 'debug' }));
      let id: string;
      try {
        // Latin-1 and spaces pass HTTP's header rules but not the log field's: they become "_".
        const response = await fetch(`${gateway.url}/healthz`, { headers: { 'x-request-id': `corr 1\u00e9${'x'.repeat(100)}` } });
        assert.equal(response.status, 200);
        id = response.headers.get('x-request-id') ?? '';
        assert.match(id, UUID);
      } finally {
        await gateway.stop();
      }
      const entries = lines(gateway.output().stdout)
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((entry) => entry.reqId === id);
      assert.ok(entries.length > 0, gateway.output().stdout);
      for (const entry of entries) assert.equal(entry.clientRequestId, `corr_1_${'x'.repeat(57)}`);
      const others = lines(gateway.output().stdout).filter((line) => line.includes('corr_1_') && !line.includes(id));
      assert.deepEqual(others, [], 'the client value appears only on its own request');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
