import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLoginLink } from '../../src/auth/login-links.ts';
import { ORG, cliStoreBackends, kgw, lookedIn, serve, writeIn } from '../cli/support.ts';
import type { CliStore } from '../cli/support.ts';
import { cliTrail } from '../support/audit.ts';
import { ACME_ORG, seedOrg } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import type { OAuthGateway } from './support.ts';
import { Browser, authorizeCode, authorizeQuery, exchange, pkcePair, registerClient, startOAuthGateway, whoami } from './support.ts';

const LINK = /^(https?:\/\/[^/]+)\/oauth\/login\/(kgwl_[A-Za-z0-9_-]{43})$/;

for (const backend of storeBackends()) {
  describe(`OAuth login links on ${backend.name}`, () => {
    let store: TestStore;
    let gw: OAuthGateway;
    const link = async (email = 'bob@acme.test') => (await createLoginLink(store.db, gw.gateway.services.config, 'acme', email, cliTrail(store.db))).url;

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ACME_ORG);
      gw = await startOAuthGateway(store.db);
    });
    after(async () => {
      await gw.close();
      await store.dispose();
    });

    it('signs a person without a password in once, after a confirmation that does not use it up', async () => {
      const url = await link();
      const [, origin, secret] = LINK.exec(url) ?? [];
      assert.equal(origin, gw.url);
      const [stored] = await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM oauth_login_links WHERE secret_hash = $1', [secret]);
      assert.equal(stored?.n, 0, 'only the hash is stored');
      const browser = new Browser(gw.url);
      for (let i = 0; i < 2; i++) {
        const confirm = await browser.request(url);
        assert.equal(confirm.status, 200);
        assert.match(confirm.text, /<h1>Sign in as bob@acme\.test\?<\/h1>/);
        assert.equal(browser.cookie, undefined);
      }
      assert.equal((await browser.request(url, { method: 'POST', headers: { origin: 'https://evil.example' } })).status, 403);
      const used = await browser.request(url, { method: 'POST' });
      assert.equal(used.status, 200, used.text);
      assert.match(used.text, /Signed in as bob@acme\.test \(Acme Inc\.\)/);
      assert.match(browser.cookie ?? '', /^kgw_session=kgws_/);

      const other = new Browser(gw.url);
      assert.equal((await other.request(url, { method: 'POST' })).status, 404, 'single use');
      assert.equal((await other.request(url)).status, 404);
      assert.equal(other.cookie, undefined);

      // Bob owns no agent yet: the consent page offers a new one, and the connection acts as it.
      const client = await registerClient(gw.url);
      const { verifier, challenge } = pkcePair();
      const consent = await browser.request(`/oauth/authorize?${authorizeQuery({ client, challenge })}`);
      assert.match(consent.text, /<input type="radio" name="agent" value="new" checked>/);
      const code = await authorizeCode(browser, { client, challenge, newAgent: 'bob-assistant' });
      const tokens = await exchange(gw.url, client, code, verifier);
      assert.equal((await whoami(`${gw.url}/mcp`, tokens.access_token)).me?.principal.name, 'bob-assistant');
    });

    it('refuses expired, unknown and malformed links, and people who do not exist', async () => {
      const url = await link();
      await store.db.tx((tx) => tx.query("UPDATE oauth_login_links SET expires_at = now() - interval '1 second' WHERE used_at IS NULL"));
      const browser = new Browser(gw.url);
      assert.equal((await browser.request(url)).status, 404);
      const expired = await browser.request(url, { method: 'POST' });
      assert.equal(expired.status, 404);
      assert.match(expired.text, /already used, has expired/);
      assert.equal((await browser.request(`/oauth/login/kgwl_${'A'.repeat(43)}`, { method: 'POST' })).status, 404);
      assert.equal((await browser.request('/oauth/login/not-a-link')).status, 404);
      assert.equal(browser.cookie, undefined);
      await assert.rejects(link('nobody@acme.test'), /no person "nobody@acme\.test" in tenant "acme"/);
      await assert.rejects(link('release-bot'), /no person/);
      await assert.rejects(createLoginLink(store.db, gw.gateway.services.config, 'nope', 'bob@acme.test', cliTrail(store.db)), /tenant "nope" not found/);
    });

    it('lasts fifteen minutes', async () => {
      const before = Date.now();
      const created = await createLoginLink(store.db, gw.gateway.services.config, 'acme', 'Bob@Acme.test', cliTrail(store.db));
      assert.equal(created.email, 'bob@acme.test');
      assert.ok(Math.abs(Date.parse(created.expiresAt) - (before + 15 * 60_000)) < 10_000);
    });
  });
}

for (const backend of cliStoreBackends()) {
  describe(`kgw login-link on ${backend.name}`, () => {
    let store: CliStore;
    before(async () => {
      store = await backend.open();
      const applied = await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env);
      assert.equal(applied.code, 0, applied.stderr);
    });
    after(() => store.dispose());

    it('prints a link built from the public URL, and explains mistakes', async () => {
      const run = await kgw(['login-link', 'alice@acme.test', '--tenant', 'acme'], { ...store.env, KGW_PUBLIC_URL: 'https://kgw.acme.test' });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^https:\/\/kgw\.acme\.test\/oauth\/login\/kgwl_[A-Za-z0-9_-]{43}\n$/);
      const noTenant = await kgw(['login-link', 'alice@acme.test'], store.env);
      assert.equal(noTenant.code, 2);
      assert.match(noTenant.stderr, /--tenant is required/);
      const unknown = await kgw(['login-link', 'zed@acme.test', '--tenant', 'acme'], store.env);
      assert.equal(unknown.code, 1);
      assert.equal(unknown.stderr, `kgw: no person "zed@acme.test" in tenant "acme"${lookedIn(store)}\n`);
      const help = await kgw(['login-link', '--help'], store.env);
      assert.match(help.stdout, /^Usage: kgw login-link EMAIL --tenant SLUG/);
    });

    it('works while a gateway runs, and the link signs in on that gateway', async () => {
      const served = await serve(store.env);
      try {
        // An embedded folder is held by the gateway, so the link comes from it, with its public
        // URL; with PostgreSQL the CLI works on the store itself and uses its own configuration.
        const publicUrl = backend.name === 'embedded' ? 'https://not-this.example' : served.url;
        const run = await kgw(['login-link', 'alice@acme.test', '--tenant', 'acme'], { ...store.env, KGW_PUBLIC_URL: publicUrl });
        assert.equal(run.code, 0, run.stderr);
        const url = run.stdout.trim();
        assert.ok(url.startsWith(`${served.url}/oauth/login/kgwl_`), url);
        const browser = new Browser(served.url);
        assert.equal((await browser.request(url)).status, 200);
        assert.equal((await browser.request(url, { method: 'POST' })).status, 200);
        assert.match(browser.cookie ?? '', /^kgw_session=/);
      } finally {
        await served.stop();
      }
    });
  });
}
