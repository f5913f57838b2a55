import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AuditEvent } from '../../src/kernel/audit/audit-log.ts';
import { AuditLog, auditGroup } from '../../src/kernel/audit/audit-log.ts';
import type { Browser } from '../oauth/support.ts';
import { PASSWORD, setPassword } from '../oauth/support.ts';
import { ACME_ORG, GLOBEX_ORG, connectClient, issueToken, seedOrg } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';
import type { ConsoleGateway } from './support.ts';
import { csrfOf, signedInFetch, startConsole } from './support.ts';

/**
 * The console's Admin section through HTTP: Alice administers Acme (`admin: true` in the org
 * file) and issues, uses and revokes a token, and reads the audit log; Bob, who does not, finds
 * no trace of the section; Globex's token is out of Alice's reach.
 */

const ORG = ACME_ORG.replace('    name: Alice\n', '    name: Alice\n    admin: true\n');
const SECRET = /kgw_[A-Za-z0-9_-]{43}/;

/** An MCP initialize request with a bearer token, as a client sends it: its status tells whether the token is accepted. */
async function mcpStatus(base: string, token: string): Promise<number> {
  const response = await fetch(`${base}/alignbase/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'admin-test', version: '1' } },
    }),
  });
  await response.body?.cancel();
  return response.status;
}

for (const backend of storeBackends()) {
  describe(`console admin on ${backend.name}`, () => {
    let gateway: ConsoleGateway;
    let alice: Browser;
    let bob: Browser;
    const origin = () => ({ origin: new URL(gateway.url).origin });
    const tokenCount = async () => (await gateway.store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM tokens'))[0]?.n;
    const createForm = async (fields: Record<string, string>) => {
      const page = await alice.request('/console/admin/tokens');
      assert.equal(page.status, 200, page.text);
      return alice.request('/console/admin/tokens', { form: { csrf: csrfOf(page.text), ...fields }, headers: origin() });
    };
    const revoke = async (id: string) => {
      const page = await alice.request('/console/admin/tokens');
      return alice.request(`/console/admin/tokens/${id}/revoke`, { form: { csrf: csrfOf(page.text) }, headers: origin() });
    };

    before(async () => {
      gateway = await startConsole(backend, ORG, [
        { tenant: 'acme', email: 'alice@acme.test' },
        { tenant: 'acme', email: 'bob@acme.test' },
      ]);
      await seedOrg(gateway.store.db, GLOBEX_ORG);
      await setPassword(gateway.store.db, 'globex', 'hank@globex.test', PASSWORD);
      alice = await signedInFetch(gateway.url, 'acme', 'alice@acme.test');
      bob = await signedInFetch(gateway.url, 'acme', 'bob@acme.test');
    });
    after(async () => {
      await gateway?.close();
    });

    it('shows an administrator the Admin entry and its pages', async () => {
      const inbox = await alice.request('/console/inbox');
      assert.match(inbox.text, new RegExp(`<a href="${gateway.url}/console/admin">Admin</a>`));
      const overview = await alice.request('/console/admin');
      assert.equal(overview.status, 200);
      assert.match(overview.text, /href="[^"]+\/console\/admin\/tokens"/);
      assert.match(overview.text, /href="[^"]+\/console\/admin\/audit"/);
      assert.match(overview.text, /aria-current="page">Admin</);
      for (const path of ['/console/admin/tokens', '/console/admin/audit']) assert.equal((await alice.request(path)).status, 200, path);
      // Every scope of the catalogue is offered, with its description.
      assert.match((await alice.request('/console/admin/tokens')).text, /name="scope:context\.read"/);
    });

    it('gives a non-administrator no Admin entry and the same Not found page as for an unknown address', async () => {
      const inbox = await bob.request('/console/inbox');
      assert.doesNotMatch(inbox.text, /\/console\/admin/);
      const unknown = await bob.request('/console/nothing/here');
      assert.equal(unknown.status, 404);
      assert.equal((await bob.request('/console/inbox/nothing/here')).text, unknown.text);
      for (const path of [
        '/console/admin',
        '/console/admin/tokens',
        '/console/admin/audit',
        '/console/admin/audit/00000000-0000-0000-0000-000000000000',
        '/console/admin/nothing',
      ]) {
        const page = await bob.request(path);
        assert.equal(page.status, 404, path);
        assert.equal(page.text, unknown.text, path);
      }
      // A post of his is refused the same way, and creates nothing.
      const before = await tokenCount();
      const posted = await bob.request('/console/admin/tokens', {
        form: { csrf: csrfOf(inbox.text), principal: 'bob@acme.test', 'scope:context.read': 'on' },
        headers: origin(),
      });
      assert.equal(posted.status, 404);
      assert.equal(posted.text, unknown.text);
      assert.equal(await tokenCount(), before);
    });

    it('creates a token shown once, which works against /mcp until it is revoked', async () => {
      const created = await createForm({ principal: 'release-bot', 'scope:context.read': 'on', lifetime: '2h', label: 'ci <b>' });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.location, null);
      const secret = SECRET.exec(created.text)?.[0];
      assert.ok(secret, 'the token is on the answer page');
      assert.match(created.text, /shown only this once/);
      assert.match(created.text, /ci &lt;b&gt;|release-bot/);

      const list = await alice.request('/console/admin/tokens');
      assert.doesNotMatch(list.text, SECRET, 'never shown again');
      assert.match(list.text, /ci &lt;b&gt;/);

      const agent = await connectClient(`${gateway.url}/alignbase/mcp`, secret);
      try {
        const result = await agent.callTool({ name: 'list_knowledge', arguments: {} });
        assert.notEqual(result.isError, true, JSON.stringify(result.content));
      } finally {
        await agent.close();
      }
      const [row] = await gateway.store.db.query<{ id: string; scopes: string[]; hours: number; source: string }>(
        "SELECT id, scopes, source, round(extract(epoch FROM expires_at - created_at) / 3600)::int AS hours FROM tokens WHERE label = 'ci <b>'",
      );
      assert.ok(row);
      assert.deepEqual([row.scopes, row.hours, row.source], [['context.read'], 2, 'console']);

      const revoked = await revoke(row.id);
      assert.equal(revoked.status, 303, revoked.text);
      assert.equal(revoked.location, `${gateway.url}/console/admin/tokens`);
      assert.equal(await mcpStatus(gateway.url, secret), 401);
      assert.match((await alice.request('/console/admin/tokens')).text, /Revoked<\/span>/);
    });

    it('finds no token of another tenant, and revokes nothing', async () => {
      const hanks = await issueToken(gateway.store.db, 'globex', 'globex-bot', 'context.read');
      const [row] = await gateway.store.db.query<{ id: string }>("SELECT t.id FROM tokens t JOIN tenants n ON n.id = t.tenant_id WHERE n.slug = 'globex'");
      assert.ok(row);
      const refused = await revoke(row.id);
      assert.equal(refused.status, 404);
      assert.match(refused.text, /Not found/);
      const [after] = await gateway.store.db.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM tokens WHERE id = $1', [row.id]);
      assert.equal(after?.revoked_at, null);
      assert.equal(await mcpStatus(gateway.url, hanks), 200);
      assert.doesNotMatch((await alice.request('/console/admin/tokens')).text, /globex-bot/);
      assert.equal((await revoke('not-an-id')).status, 404);
    });

    it('refuses hostile and wrong forms with a clear reason, creating nothing', async () => {
      const before = await tokenCount();
      const cases: [Record<string, string>, number, RegExp][] = [
        [{ principal: 'release\u0000bot', 'scope:context.read': 'on' }, 400, /NUL/],
        [{ principal: 'release-bot', 'scope:nope': 'on' }, 400, /unknown scope &quot;nope&quot;/],
        [{ principal: 'release-bot' }, 400, /at least one scope/],
        [{ principal: 'hank@globex.test', 'scope:context.read': 'on' }, 400, /no person or agent &quot;hank@globex.test&quot; in this organisation/],
        [{ principal: 'globex-bot', 'scope:context.read': 'on' }, 400, /no person or agent/],
        [{ principal: 'release-bot', 'scope:context.read': 'on', lifetime: '400d' }, 400, /out of bounds/],
        [{ principal: 'release-bot', 'scope:context.read': 'on', lifetime: 'never' }, 400, /out of bounds/],
        [{ principal: 'release-bot', 'scope:context.read': 'on', lifetime: '10m' }, 400, /out of bounds/],
        [{ principal: 'release-bot', 'scope:context.read': 'on', lifetime: 'soon' }, 400, /invalid duration/],
        [{ principal: 'release-bot', 'scope:context.read': 'on', label: 'x\u202ey' }, 400, /bidirectional/],
        [{ principal: '', 'scope:context.read': 'on' }, 400, /name the person/],
      ];
      for (const [fields, status, reason] of cases) {
        const answer = await createForm(fields);
        assert.equal(answer.status, status, JSON.stringify(fields));
        assert.match(answer.text, reason, JSON.stringify(fields));
        assert.doesNotMatch(answer.text, SECRET);
      }
      assert.equal(await tokenCount(), before);
    });

    it('refuses a post without the CSRF value or from another origin with 403', async () => {
      const before = await tokenCount();
      const fields = { principal: 'release-bot', 'scope:context.read': 'on' };
      assert.equal((await alice.request('/console/admin/tokens', { form: fields, headers: origin() })).status, 403);
      assert.equal((await alice.request('/console/admin/tokens', { form: { ...fields, csrf: 'wrong' }, headers: origin() })).status, 403);
      const page = await alice.request('/console/admin/tokens');
      const foreign = await alice.request('/console/admin/tokens', { form: { ...fields, csrf: csrfOf(page.text) }, headers: { origin: 'https://evil.test' } });
      assert.equal(foreign.status, 403);
      assert.equal(await tokenCount(), before);
    });

    it('narrows the audit log by filters and shows an event escaped, bidi characters visible', async () => {
      const [tenant] = await gateway.store.db.query<{ id: string }>("SELECT id FROM tenants WHERE slug = 'acme'");
      assert.ok(tenant);
      /** A tool call's event of this tenant, as the gateway stores one. */
      const toolCall = (tool: string, resources: AuditEvent['resources'], details?: AuditEvent['details']) =>
        gateway.store.db.tx((tx) =>
          new AuditLog(gateway.store.db).appendIn(tx, { tenantId: tenant.id, surface: 'mcp', tool, action: 'tool_call', result: 'ok', resources, details }),
        );
      await toolCall('<i>search</i>', [{ type: 'knowledge', id: 'res-\u202e-1' }], { query: '<script>alert(1)</script> abc\u202edef' });
      const all = await alice.request('/console/admin/audit');
      assert.equal(all.status, 200);
      assert.match(all.text, /<td>token\.create<\/td>/);
      assert.match(all.text, /&lt;i&gt;search&lt;\/i&gt;/);

      const created = await alice.request('/console/admin/audit?action=token.create');
      assert.match(created.text, /<td>token\.create<\/td>/);
      assert.doesNotMatch(created.text, /<td>token\.revoke<\/td>|&lt;i&gt;search/);
      const byAlice = await alice.request('/console/admin/audit?actor=ALICE%40acme.test');
      assert.match(byAlice.text, /<td>token\.revoke<\/td>/);
      assert.doesNotMatch(byAlice.text, /&lt;i&gt;search/);
      assert.match((await alice.request('/console/admin/audit?actor=bob%40acme.test')).text, /No event matches/);
      assert.match((await alice.request('/console/admin/audit?from=2099-01-01')).text, /No event matches/);
      assert.match((await alice.request('/console/admin/audit?to=2000-01-01T00%3A00')).text, /No event matches/);
      const byResource = await alice.request(`/console/admin/audit?resource=${encodeURIComponent('res-\u202e-1')}`);
      assert.match(byResource.text, /&lt;i&gt;search/);
      assert.doesNotMatch(byResource.text, /<td>token\.create<\/td>/);
      // A list names what it showed in a group of its type (AuditResourceGroup); the filter finds an id among them.
      await toolCall(
        'grouped_list',
        auditGroup('skill', [
          { id: 'first-of-group', version: 1 },
          { id: 'grouped-\u202e-2', version: 3 },
        ]),
      );
      for (const id of ['first-of-group', 'grouped-\u202e-2']) {
        const inGroup = await alice.request(`/console/admin/audit?resource=${encodeURIComponent(id)}`);
        assert.match(inGroup.text, /<td>grouped_list · tool_call<\/td>\n<td>ok<\/td>\n<td>skill ×2<\/td>/, id);
        assert.doesNotMatch(inGroup.text, /&lt;i&gt;search/, id);
      }
      assert.doesNotMatch((await alice.request('/console/admin/audit?resource=grouped')).text, /grouped_list/, 'a whole id, not a part');
      assert.doesNotMatch((await alice.request(`/console/admin/audit?resource=${encodeURIComponent('res-\u202e-1')}`)).text, /grouped_list/);
      assert.equal((await alice.request('/console/admin/audit?from=yesterday')).status, 400);
      assert.equal((await alice.request('/console/admin/audit?page=0')).status, 400);
      for (const hostile of ['actor=%00', 'resource=a%00b', 'action=%00', `resource=${'x'.repeat(201)}`])
        assert.equal((await alice.request(`/console/admin/audit?${hostile}`)).status, 400, hostile);

      const [event] = await gateway.store.db.query<{ id: string }>("SELECT id FROM audit_events WHERE tool = '<i>search</i>'");
      assert.ok(event);
      const detail = await alice.request(`/console/admin/audit/${event.id}`);
      assert.equal(detail.status, 200);
      assert.match(detail.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt; abc\\u202edef/);
      assert.doesNotMatch(detail.text, /<script>alert|\u202e/);
      assert.match(detail.text, /res-\\u202e-1/);
      // The list shows it escaped too; only the filter field holds it as typed, to search again.
      const table = byResource.text.slice(byResource.text.indexOf('<table'));
      assert.match(table, /res-\\u202e-1/);
      assert.doesNotMatch(table, /\u202e/);

      // Another tenant's event is not found.
      const [globex] = await gateway.store.db.query<{ id: string }>(
        "SELECT e.id FROM audit_events e JOIN tenants n ON n.id = e.tenant_id WHERE n.slug = 'globex' LIMIT 1",
      );
      if (globex !== undefined) assert.equal((await alice.request(`/console/admin/audit/${globex.id}`)).status, 404);
      assert.equal((await alice.request('/console/admin/audit/not-an-id')).status, 404);
    });
  });
}
