import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CliStore, Served } from '../cli/support.ts';
import { cliStoreBackends, freePort, initializeStatus, kgw, serve, writeIn } from '../cli/support.ts';
import { Browser } from '../oauth/support.ts';
import { csrfOf } from './support.ts';

/**
 * The console as a deployment runs it: `kgw serve` in its own process, the organisation applied
 * with `kgw apply` (a password from the environment, as the org file's `password_env` reads it),
 * and a person who signs in over HTTP, opens every section, and issues a token on the Admin
 * pages that works against /mcp until revoked there. On the embedded store and on PostgreSQL.
 */

const PASSWORD = 'correct horse battery staple';
const ORG = `tenant: acme
name: Acme Inc.
language: en
people:
  - email: alice@acme.test
    name: Alice
    password_env: ALICE_PASSWORD
    admin: true
    brain_role: admin
agents:
  - name: release-bot
    owner: alice@acme.test
teams:
  - slug: docs
    name: Docs team
    members: { alice@acme.test: admin, release-bot: editor }
kbs:
  - slug: handbook
    name: Handbook
    team: docs
    visibility: team
`;

for (const backend of cliStoreBackends()) {
  describe(`the console under kgw serve on the ${backend.name} store`, () => {
    let store: CliStore;
    let gateway: Served;
    let alice: Browser;

    before(async () => {
      store = await backend.open();
      const port = await freePort();
      const env = { ...store.env, KGW_PUBLIC_URL: `http://127.0.0.1:${port}` };
      gateway = await serve(env, { port });
      const applied = await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], { ...env, ALICE_PASSWORD: PASSWORD });
      assert.equal(applied.code, 0, applied.stderr);
      alice = new Browser(gateway.url);
      const signedIn = await alice.request('/console/signin', {
        form: { tenant: 'acme', email: 'alice@acme.test', password: PASSWORD },
        headers: { origin: gateway.url },
      });
      assert.equal(signedIn.status, 303, signedIn.text);
    });
    after(async () => {
      await gateway?.stop();
      await store?.dispose();
    });

    it('opens every section the person may see', async () => {
      const inbox = await alice.request('/console/inbox');
      assert.equal(inbox.status, 200, inbox.text);
      for (const section of ['kbs', 'graph', 'activity', 'admin'])
        assert.match(inbox.text, new RegExp(`href="${gateway.url}/console/${section}"`), `${section} is in the navigation`);
      for (const path of [
        '/console/kbs',
        '/console/graph',
        '/console/activity',
        '/console/admin',
        '/console/admin/org',
        '/console/admin/backends',
        '/console/admin/audit',
      ]) {
        const page = await alice.request(path);
        assert.equal(page.status, 200, `${path}: ${page.text.slice(0, 300)}`);
      }
      assert.match((await alice.request('/console/kbs')).text, /Handbook/);
    });

    it('issues a token that works against /mcp at once, and revokes it', async () => {
      const tokens = await alice.request('/console/admin/tokens');
      const created = await alice.request('/console/admin/tokens', {
        form: { csrf: csrfOf(tokens.text), principal: 'release-bot', 'scope:context.read': 'on', lifetime: '1h', label: 'served' },
        headers: { origin: gateway.url },
      });
      assert.equal(created.status, 201, created.text);
      const token = /kgw_[A-Za-z0-9_-]{43}/.exec(created.text)?.[0];
      assert.ok(token);
      assert.equal(await initializeStatus(`${gateway.url}/atmina/mcp`, token), 200);
      const id = /\/console\/admin\/tokens\/([0-9a-f-]{36})\/revoke/.exec((await alice.request('/console/admin/tokens')).text)?.[1];
      assert.ok(id);
      const listed = await alice.request('/console/admin/tokens');
      const revoked = await alice.request(`/console/admin/tokens/${id}/revoke`, { form: { csrf: csrfOf(listed.text) }, headers: { origin: gateway.url } });
      assert.equal(revoked.status, 303, revoked.text);
      assert.equal(await initializeStatus(`${gateway.url}/atmina/mcp`, token), 401);
    });
  });
}
