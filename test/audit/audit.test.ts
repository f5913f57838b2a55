import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AuditLog } from '../../src/kernel/audit/audit-log.ts';
import { applyOrgFile } from '../../src/org-sections.ts';
import { createToken, revokeToken } from '../../src/kernel/tokens/tokens.ts';
import { cliTrail } from '../support/audit.ts';
import { pick, records } from '../support/fixtures.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { ACME_ORG, connectClient, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

interface Row {
  surface: string;
  principal_id: string;
  token_id: string;
  request_id: string | null;
  dialect: string;
  tool: string;
  action: string;
  result: string;
  error_code: string | null;
}

for (const backend of storeBackends()) {
  describe(`audit log on ${backend.name}`, () => {
    let store: TestStore;
    let running: RunningGateway;
    let token: string;
    let tenantId: string;

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ACME_ORG);
      token = await issueToken(store.db, 'acme', 'release-bot', 'context.read');
      tenantId = (await store.db.query<{ id: string }>("SELECT id FROM tenants WHERE slug = 'acme'"))[0]!.id;
      running = await startGateway(store.db);
    });
    after(async () => {
      await running.close();
      await store.dispose();
    });

    const rows = (tool: string) =>
      store.db.query<Row>(
        'SELECT surface, principal_id, token_id, request_id, dialect, tool, action, result, error_code FROM audit_events WHERE tenant_id = $1 AND tool = $2 ORDER BY at',
        [tenantId, tool],
      );

    it('records every tool call with tenant, principal, token, tool and result', async () => {
      const client = await connectClient(`${running.url}/atmina/mcp`, token);
      try {
        const me = (await client.callTool({ name: 'whoami', arguments: {} })).structuredContent as { principal: { id: string } };
        const refused = await client.callTool({ name: 'whoami', arguments: { bogus: true } });
        assert.equal(refused.isError, true);
        const events = await rows('whoami');
        assert.equal(events.length, 2);
        const [ok, failed] = events;
        const [tokenRow] = await store.db.query<{ id: string }>('SELECT id FROM tokens WHERE tenant_id = $1 AND principal_id = $2', [
          tenantId,
          me.principal.id,
        ]);
        assert.deepEqual(
          { ...ok, request_id: undefined },
          {
            surface: 'mcp',
            principal_id: me.principal.id,
            token_id: tokenRow!.id,
            request_id: undefined,
            dialect: 'atmina',
            tool: 'whoami',
            action: 'tool_call',
            result: 'ok',
            error_code: null,
          },
        );
        assert.ok((ok?.request_id ?? '').length > 0);
        assert.equal(failed?.result, 'error');
        assert.equal(failed?.error_code, 'validation');
      } finally {
        await client.close();
      }
    });

    it('keeps one record per call under concurrent callers', async () => {
      const client = await connectClient(`${running.url}/atmina/mcp`, token);
      try {
        const before = (await rows('health')).length;
        await Promise.all(Array.from({ length: 40 }, () => client.callTool({ name: 'health', arguments: {} })));
        assert.equal((await rows('health')).length - before, 40);
      } finally {
        await client.close();
      }
    });

    it('records token issue and revocation in their own transactions, never the secret', async () => {
      const { token: secret, info } = await createToken(
        store.db,
        { tenant: 'acme', principal: 'bob@acme.test', scopes: ['context.read'], ttlMs: undefined },
        cliTrail(store.db),
      );
      await revokeToken(store.db, info.id, cliTrail(store.db));
      await revokeToken(store.db, info.id, cliTrail(store.db));
      const events = await store.db.query<{ action: string; surface: string; resources: unknown; details: unknown }>(
        "SELECT action, surface, resources, details FROM audit_events WHERE tenant_id = $1 AND action LIKE 'token.%' AND resources @> $2::jsonb ORDER BY at",
        [tenantId, JSON.stringify([{ id: info.id }])],
      );
      assert.deepEqual(
        events.map((e) => pick(e, ['action', 'surface'])),
        records(
          ['action', 'surface'],
          [
            ['token.create', 'cli'],
            ['token.revoke', 'cli'],
          ],
        ),
      );
      assert.ok(!JSON.stringify(events).includes(secret));
    });

    it('records an org file apply with its change counts, and nothing for a dry run or no change', async () => {
      const file = ACME_ORG.replace('people:\n', 'people:\n  - email: dora@acme.test\n    name: Dora\n');
      await applyOrgFile(store.db, { source: file, fileName: 'acme.yaml', dryRun: true }, cliTrail(store.db));
      await applyOrgFile(store.db, { source: file, fileName: 'acme.yaml' }, cliTrail(store.db));
      await applyOrgFile(store.db, { source: file, fileName: 'acme.yaml' }, cliTrail(store.db));
      // The suite's own seeding (org.yaml) is audited too; these are the applies of acme.yaml.
      const events = await store.db.query<{ surface: string; details: { file: string; changes: Record<string, number> } }>(
        "SELECT surface, details FROM audit_events WHERE tenant_id = $1 AND action = 'org.apply' AND details->>'file' = 'acme.yaml'",
        [tenantId],
      );
      assert.deepEqual(events, [{ surface: 'cli', details: { file: 'acme.yaml', changes: { 'create person': 1 } } }]);
    });

    it('is append-only, and an event written in a rolled-back transaction is gone with it', async () => {
      await assert.rejects(
        store.db.tx((tx) => tx.query("UPDATE audit_events SET result = 'ok' WHERE tenant_id = $1", [tenantId])),
        /append-only/,
      );
      await assert.rejects(
        store.db.tx((tx) => tx.query('DELETE FROM audit_events WHERE tenant_id = $1', [tenantId])),
        /append-only/,
      );
      const log = new AuditLog(store.db);
      await assert.rejects(
        store.db.tx(async (tx) => {
          await log.appendIn(tx, { tenantId, surface: 'cli', action: 'doomed', result: 'ok' });
          throw new Error('roll back');
        }),
        /roll back/,
      );
      const doomed = await store.db.query("SELECT 1 FROM audit_events WHERE tenant_id = $1 AND action = 'doomed'", [tenantId]);
      assert.equal(doomed.length, 0);
    });
  });
}
