import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ACME_ORG, seedOrg } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import type { Client, OAuthGateway } from './support.ts';
import { PASSWORD, authorizeQuery, pkcePair, registerClient, setPassword, startOAuthGateway } from './support.ts';

// Regressions found by test/fuzz/http.fuzz.test.ts: each answered 500 before.
for (const backend of storeBackends()) {
  describe(`OAuth endpoints under hostile input on ${backend.name}`, () => {
    let store: TestStore;
    let gw: OAuthGateway;
    let client: Client;

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ACME_ORG);
      await setPassword(store.db, 'acme', 'alice@acme.test', PASSWORD);
      gw = await startOAuthGateway(store.db);
      client = await registerClient(gw.url);
    });
    after(async () => {
      await gw.close();
      await store.dispose();
    });

    const post = (path: string, contentType: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': contentType, ...headers }, body, redirect: 'manual' });

    it('answers a Content-Type that is no media type with 415, in the endpoint’s own format', async () => {
      for (const type of ['not a media type', '/', ';', 'text/', '\u00a7\u00b9']) {
        for (const path of ['/oauth/token', '/oauth/register']) {
          const response = await post(path, type, 'grant_type=x');
          assert.equal(response.status, 415, `${path} with ${JSON.stringify(type)}`);
          assert.deepEqual(await response.json(), { error: 'invalid_request', error_description: 'the Content-Type header is not a media type' });
          assert.equal(response.headers.get('cache-control'), 'no-store');
        }
        const page = await post('/oauth/login', type, 'tenant=acme');
        assert.equal(page.status, 415);
        assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
        assert.match(await page.text(), /the Content-Type header is not a media type/);
      }
    });

    it('treats a client_id with a NUL as unknown instead of asking the store', async () => {
      const token = await post(
        '/oauth/token',
        'application/x-www-form-urlencoded',
        new URLSearchParams({
          grant_type: 'authorization_code',
          client_id: `${client.client_id}\u0000`,
          code: 'x',
          code_verifier: 'x',
          redirect_uri: 'x',
        }).toString(),
      );
      assert.equal(token.status, 401);
      assert.deepEqual(await token.json(), { error: 'invalid_client', error_description: 'unknown client_id' });
      const { challenge } = pkcePair();
      const query = authorizeQuery({ client: { ...client, client_id: `\u0000${client.client_id}` }, challenge });
      const page = await fetch(`${gw.url}/oauth/authorize?${query}`, { redirect: 'manual' });
      assert.equal(page.status, 400);
      assert.match(await page.text(), /unknown client_id/);
    });

    it('refuses a sign-in whose organisation or email holds a NUL like any wrong password', async () => {
      const { challenge } = pkcePair();
      const authorize = authorizeQuery({ client, challenge });
      for (const [tenant, email] of [
        ['acme\u0000', 'alice@acme.test'],
        ['acme', 'alice@acme.test\u0000'],
        ['\u0000', '\u0000'],
      ]) {
        const response = await post(
          '/oauth/login',
          'application/x-www-form-urlencoded',
          new URLSearchParams({ authorize, tenant: tenant!, email: email!, password: PASSWORD }).toString(),
        );
        assert.equal(response.status, 401, JSON.stringify([tenant, email]));
        assert.match(await response.text(), /The organisation, email or password is not right/);
      }
      // The right credentials still sign in.
      const ok = await post(
        '/oauth/login',
        'application/x-www-form-urlencoded',
        new URLSearchParams({ authorize, tenant: 'acme', email: 'alice@acme.test', password: PASSWORD }).toString(),
      );
      assert.equal(ok.status, 303);
    });
  });
}
