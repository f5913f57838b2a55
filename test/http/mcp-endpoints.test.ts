import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { cliTrail } from '../support/audit.ts';
import { pick } from '../support/fixtures.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { ACME_ORG, GLOBEX_ORG, connectClient, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import { until } from '../support/kgw-process.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function text(result: unknown): string {
  const content = (result as CallToolResult).content[0];
  return content?.type === 'text' ? content.text : '';
}

for (const backend of storeBackends()) {
  describe(`MCP endpoints on ${backend.name}`, () => {
    let store: TestStore;
    let running: RunningGateway;
    let aliceToken: string;
    let botToken: string;
    let brainOnlyToken: string;
    let hankToken: string;

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ACME_ORG);
      await seedOrg(store.db, GLOBEX_ORG);
      aliceToken = await issueToken(store.db, 'acme', 'alice@acme.test', 'context.read');
      botToken = await issueToken(store.db, 'acme', 'release-bot', 'context.write activity.write');
      brainOnlyToken = await issueToken(store.db, 'acme', 'release-bot', 'brain:read');
      hankToken = await issueToken(store.db, 'globex', 'hank@globex.test', 'context.read');
      running = await startGateway(store.db, { KGW_ALLOWED_ORIGINS: 'https://console.acme.test' });
    });
    after(async () => {
      await running.close();
      await store.dispose();
    });

    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${running.url}${path}`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, authorization: `Bearer ${aliceToken}`, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });

    it('initializes, lists and calls tools with the SDK client on /mcp and /atmina/mcp', async () => {
      for (const path of ['/mcp', '/atmina/mcp']) {
        const client = await connectClient(`${running.url}${path}`, aliceToken);
        try {
          const names = (await client.listTools()).tools.map((t) => t.name);
          if (path === '/atmina/mcp')
            assert.deepEqual(names.sort(), [
              'audit_log',
              'file_history',
              'get_audit_event',
              'get_context',
              'get_file_outline',
              'get_team_settings',
              'health',
              'list_files',
              'list_kbs',
              'read_file',
              'related',
              'search',
              'whoami',
            ]);
          else {
            // Every dialect's tools that context.read allows; none needing context.write or activity.write.
            for (const name of ['health', 'whoami', 'get_current_context', 'list_knowledge', 'read_skill', 'list_memories'])
              assert.ok(names.includes(name), name);
            for (const name of ['write_knowledge', 'create_skill', 'write_artifact', 'report_installation_capabilities'])
              assert.ok(!names.includes(name), name);
          }
          const whoami = await client.callTool({ name: 'whoami', arguments: {} });
          assert.equal(whoami.isError, undefined);
          const me = whoami.structuredContent as {
            tenant: { slug: string };
            principal: { email: string; kind: string };
            teams: { slug: string; role: string }[];
            groups: { name: string }[];
            scopes: string[];
          };
          assert.equal(me.tenant.slug, 'acme');
          assert.equal(me.principal.email, 'alice@acme.test');
          assert.equal(me.principal.kind, 'person');
          assert.deepEqual(
            me.teams.map((t) => pick(t, ['slug', 'role'])),
            [{ slug: 'docs', role: 'admin' }],
          );
          assert.deepEqual(
            me.groups.map((g) => g.name),
            ['eng'],
          );
          assert.deepEqual(me.scopes, ['context.read']);
          assert.deepEqual(JSON.parse(text(whoami)), me);
          const health = await client.callTool({ name: 'health', arguments: {} });
          const status = health.structuredContent as { status: string; backends: { role: string; backend: string; ok: boolean }[] };
          assert.equal(status.status, 'ok');
          assert.ok(status.backends.some((b) => b.role === 'store' && b.backend === backend.name && b.ok));
        } finally {
          await client.close();
        }
      }
    });

    it('announces each dialect as its original service does', async () => {
      const expected: Record<string, { name: string; title: string; version?: string }> = {
        '/alignbase/mcp': { name: 'alignbase', title: 'Alignbase', version: '0.1.0' },
        '/atmina/mcp': { name: 'atmina', title: 'Atmina' },
        '/brain/mcp': { name: 'company-brain', title: 'Company Brain' },
        '/mcp': { name: 'knowledge-gateway', title: 'Knowledge Gateway' },
      };
      for (const [path, info] of Object.entries(expected)) {
        const client = await connectClient(`${running.url}${path}`, aliceToken);
        try {
          const server = client.getServerVersion();
          assert.equal(server?.name, info.name, path);
          assert.equal(server?.title, info.title, path);
          if (info.version) assert.equal(server?.version, info.version, path);
          const { tools } = await client.listTools();
          // Each dialect's tools stay on their endpoints (alice's token has no brain:read scope).
          if (path === '/brain/mcp') assert.deepEqual(tools, []);
          if (path === '/alignbase/mcp') assert.ok(tools.some((t) => t.name === 'get_current_context') && !tools.some((t) => t.name === 'whoami'));
        } finally {
          await client.close();
        }
      }
    });

    it('shows and allows only the tools the scopes permit', async () => {
      const client = await connectClient(`${running.url}/mcp`, brainOnlyToken);
      try {
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), [
          'get_onboarding_action_catalog',
          'get_onboarding_status',
          'get_skill_pack',
          'list_gaps',
          'query_index',
          'read_concept',
        ]);
        await assert.rejects(client.callTool({ name: 'whoami', arguments: {} }), /permission_denied: whoami needs the context.read scope/);
        await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /Tool no_such_tool not found/);
      } finally {
        await client.close();
      }
      const writer = await connectClient(`${running.url}/mcp`, botToken);
      try {
        const me = (await writer.callTool({ name: 'whoami', arguments: {} })).structuredContent as {
          principal: { kind: string; name: string };
          scopes: string[];
        };
        assert.equal(me.principal.kind, 'agent');
        assert.equal(me.principal.name, 'release-bot');
        assert.deepEqual(me.scopes, ['context.read', 'context.write', 'activity.write']);
      } finally {
        await writer.close();
      }
    });

    it('tells a call naming a tool of another endpoint which endpoints serve it', async () => {
      const brain = await connectClient(`${running.url}/brain/mcp`, aliceToken);
      const alignbase = await connectClient(`${running.url}/alignbase/mcp`, aliceToken);
      try {
        await assert.rejects(
          brain.callTool({ name: 'search', arguments: { query: 'deploy' } }),
          /Tool search not found; this endpoint does not serve it, \/atmina\/mcp and \/mcp do$/,
        );
        await assert.rejects(
          alignbase.callTool({ name: 'query_index', arguments: { query: 'deploy' } }),
          /Tool query_index not found; this endpoint does not serve it, \/brain\/mcp and \/mcp do$/,
        );
        // A name no endpoint serves says only that, as before; one from /mcp's point of view is served nowhere else.
        await assert.rejects(brain.callTool({ name: 'no_such_tool', arguments: {} }), /Tool no_such_tool not found$/);
      } finally {
        await brain.close();
        await alignbase.close();
      }
    });

    it("answers 403 insufficient_scope, in the dialect's words, for a tool the scopes do not allow", async () => {
      const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'whoami', arguments: {} } };
      const response = await post('/atmina/mcp', call, { authorization: `Bearer ${brainOnlyToken}` });
      assert.equal(response.status, 403);
      const challenge = response.headers.get('www-authenticate') ?? '';
      assert.match(
        challenge,
        /^Bearer error="insufficient_scope", scope="brain:read context.read", resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/atmina\/mcp"$/,
      );
      const body = (await response.json()) as { id: number; error: { message: string } };
      assert.equal(body.id, 7);
      assert.equal(body.error.message, 'permission_denied: whoami needs the context.read scope');
    });

    it('refuses bad arguments with a validation error and no 5xx', async () => {
      const client = await connectClient(`${running.url}/atmina/mcp`, aliceToken);
      try {
        const result = await client.callTool({ name: 'whoami', arguments: { unexpected: 1 } });
        assert.equal(result.isError, true);
        assert.match(text(result), /^validation: /);
      } finally {
        await client.close();
      }
      const response = await post('/mcp', { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'whoami', arguments: 'nope' } });
      assert.equal(response.status, 200);
      const body = (await response.json()) as { error?: { code: number; message: string } };
      assert.match(body.error?.message ?? '', /invalid/i);
    });

    it('keeps tenants apart', async () => {
      const client = await connectClient(`${running.url}/mcp`, hankToken);
      try {
        const me = (await client.callTool({ name: 'whoami', arguments: {} })).structuredContent as {
          tenant: { slug: string; language: string };
          teams: unknown[];
          groups: unknown[];
        };
        assert.equal(me.tenant.slug, 'globex');
        assert.equal(me.tenant.language, 'de');
        assert.deepEqual(me.teams, []);
        assert.deepEqual(me.groups, []);
      } finally {
        await client.close();
      }
      await assert.rejects(issueToken(store.db, 'globex', 'alice@acme.test', 'context.read'), /no person or agent "alice@acme.test" in tenant "globex"/);
      await assert.rejects(issueToken(store.db, 'acme', 'globex-bot', 'context.read'), /no person or agent "globex-bot" in tenant "acme"/);
    });

    it('answers 401 with WWW-Authenticate without a valid token', async () => {
      const missing = await post('/mcp', INIT, { authorization: '' });
      assert.equal(missing.status, 401);
      assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer /);
      assert.doesNotMatch(missing.headers.get('www-authenticate') ?? '', /invalid_token/);

      const unknown = await post('/mcp', INIT, { authorization: 'Bearer kgw_not-a-real-token' });
      assert.equal(unknown.status, 401);
      assert.match(unknown.headers.get('www-authenticate') ?? '', /error="invalid_token"/);

      const brain = await post('/brain/mcp', INIT, { authorization: '' });
      assert.equal(brain.status, 401);
      assert.equal(((await brain.json()) as { error: { message: string } }).error.message, 'Unauthorized: the request is missing a valid Company Brain token.');

      const revocable = await issueToken(store.db, 'acme', 'bob@acme.test', 'context.read');
      assert.equal((await post('/mcp', INIT, { authorization: `Bearer ${revocable}` })).status, 200);
      const [row] = await store.db.query<{ id: string }>(
        "SELECT t.id FROM tokens t JOIN principals p ON p.tenant_id = t.tenant_id AND p.id = t.principal_id WHERE p.email = 'bob@acme.test'",
      );
      const { revokeToken } = await import('../../src/kernel/tokens/tokens.ts');
      await revokeToken(store.db, row!.id, cliTrail(store.db));
      assert.equal((await post('/mcp', INIT, { authorization: `Bearer ${revocable}` })).status, 401);

      const expiring = await issueToken(store.db, 'acme', 'bob@acme.test', 'context.read', 60_000);
      assert.equal((await post('/mcp', INIT, { authorization: `Bearer ${expiring}` })).status, 200);
      await store.db.tx((tx) =>
        tx.query(
          "UPDATE tokens SET expires_at = now() - interval '1 second' WHERE expires_at > now() + interval '30 seconds' AND expires_at < now() + interval '2 minutes'",
        ),
      );
      // An operator's SQL is heard through the store's trigger: at once on PGlite, and on PostgreSQL
      // once its NOTIFY reaches the gateway's LISTEN connection, a moment after the commit.
      await until(
        'the moved expiry to be heard',
        async () => ((await post('/mcp', INIT, { authorization: `Bearer ${expiring}` })).status === 401 ? true : undefined),
        10_000,
        20,
      );
    });

    it('answers 405 to GET and DELETE, 403 to a foreign Origin, 406 and 415 to wrong headers, 413 to oversized bodies', async () => {
      for (const method of ['GET', 'DELETE']) {
        const response = await fetch(`${running.url}/mcp`, {
          method,
          headers: { authorization: `Bearer ${aliceToken}`, accept: 'application/json, text/event-stream' },
        });
        assert.equal(response.status, 405, method);
        assert.equal(response.headers.get('allow'), 'POST');
      }
      assert.equal((await post('/mcp', INIT, { origin: 'https://evil.example' })).status, 403);
      assert.equal((await post('/mcp', INIT, { origin: 'https://console.acme.test' })).status, 200);
      assert.equal((await post('/mcp', INIT, { accept: 'text/html' })).status, 406);
      assert.equal((await post('/mcp', INIT, { 'content-type': 'text/plain' })).status, 415);
      assert.equal((await post('/mcp', INIT, { 'mcp-protocol-version': '1999-01-01' })).status, 400);
      const huge = JSON.stringify({ ...INIT, params: { ...INIT.params, padding: 'x'.repeat(17 * 1024 * 1024) } });
      assert.equal((await post('/mcp', huge)).status, 413);
      assert.equal((await post('/mcp', '{not json')).status, 400);
      assert.equal((await post('/mcp', { hello: 'world' })).status, 400);
      assert.equal((await post('/mcp', { jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
      // fetch() will not send a foreign Host header, so speak HTTP/1.1 directly.
      const status = await new Promise<number>((resolve, reject) => {
        const request = http.request(
          `${running.url}/mcp`,
          { method: 'POST', headers: { ...MCP_HEADERS, authorization: `Bearer ${aliceToken}`, host: 'attacker.example' } },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on('error', reject);
        request.end(JSON.stringify(INIT));
      });
      assert.equal(status, 403);
    });

    it('answers JSON-RPC batches and health probes', async () => {
      const response = await post('/atmina/mcp', [INIT, { jsonrpc: '2.0', id: 2, method: 'tools/list' }]);
      assert.equal(response.status, 200);
      const body = (await response.json()) as { id: number; result: { tools?: unknown[] } }[];
      assert.deepEqual(
        body.map((m) => m.id),
        [1, 2],
      );
      // The Atmina tools context.read allows: whoami, health, list_kbs, list_files, read_file, file_history,
      // get_file_outline, related, search, get_context, audit_log, get_audit_event, get_team_settings.
      assert.equal(body[1]?.result.tools?.length, 13);
      assert.equal((await fetch(`${running.url}/healthz`)).status, 200);
      const ready = await fetch(`${running.url}/readyz`);
      assert.equal(ready.status, 200);
      const readiness = (await ready.json()) as { status: string; backends: Record<string, { backend: string; ok: boolean }> };
      assert.equal(readiness.status, 'ready');
      assert.equal(readiness.backends.store?.backend, backend.name);
    });
  });
}
