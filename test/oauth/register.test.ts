import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import type { OAuthGateway } from './support.ts';
import { REDIRECT, postJson, startOAuthGateway } from './support.ts';

for (const backend of storeBackends()) {
  describe(`OAuth client registration on ${backend.name}`, () => {
    let store: TestStore;
    let gw: OAuthGateway;
    const register = (body: unknown, headers?: Record<string, string>) => postJson(`${gw.url}/oauth/register`, body, headers);
    const refused = async (body: unknown, error: string, description: RegExp) => {
      const { status, json, headers } = await register(body);
      assert.equal(status, 400, JSON.stringify(body));
      assert.equal(json.error, error, JSON.stringify(json));
      assert.match(String(json.error_description), description);
      assert.equal(headers.get('cache-control'), 'no-store');
    };

    before(async () => {
      store = await backend.open({ migrated: true });
      gw = await startOAuthGateway(store.db);
    });
    after(async () => {
      await gw.close();
      await store.dispose();
    });

    it('registers a public client with the defaults the spec names', async () => {
      const { status, json, headers } = await register({ client_name: 'Claude', redirect_uris: ['https://claude.ai/api/mcp/auth_callback'], token_endpoint_auth_method: 'none' });
      assert.equal(status, 201);
      assert.equal(headers.get('cache-control'), 'no-store');
      assert.match(String(json.client_id), /^kgwc_[A-Za-z0-9_-]{22}$/);
      assert.equal(typeof json.client_id_issued_at, 'number');
      assert.equal(json.client_secret, undefined);
      assert.deepEqual(
        { ...json, client_id: 'x', client_id_issued_at: 0 },
        {
          client_id: 'x',
          client_id_issued_at: 0,
          client_name: 'Claude',
          redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
          scope: 'context.read context.write',
        },
      );
    });

    it('normalises scopes: write implies read, legacy aliases, loopback redirect URIs', async () => {
      const cases: [string, string][] = [
        ['context.write', 'context.read context.write'],
        ['documents.read', 'context.read'],
        ['documents.write activity.write', 'context.read context.write activity.write'],
        ['brain:read', 'brain:read'],
      ];
      for (const [asked, registered] of cases) {
        const { status, json } = await register({ redirect_uris: ['http://127.0.0.1:3000/cb', 'http://[::1]/cb', 'http://localhost:8080/x?y=1'], scope: asked, grant_types: ['authorization_code'] });
        assert.equal(status, 201, JSON.stringify(json));
        assert.equal(json.scope, registered);
        assert.deepEqual(json.grant_types, ['authorization_code']);
      }
    });

    it('refuses redirect URIs that are not HTTPS or loopback HTTP, or carry a fragment', async () => {
      for (const uri of ['http://example.com/cb', 'ftp://127.0.0.1/cb', 'cursor://callback', 'https://example.com/cb#frag', 'https://example.com/cb#', 'https://user:pw@example.com/cb', 'not a url', '', 42]) {
        await refused({ redirect_uris: [uri] }, 'invalid_redirect_uri', /./);
      }
      await refused({ client_name: 'x' }, 'invalid_redirect_uri', /at least one/);
      await refused({ redirect_uris: [] }, 'invalid_redirect_uri', /at least one/);
      await refused({ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://e.example/${i}`) }, 'invalid_redirect_uri', /at most 10/);
      await refused({ redirect_uris: [`https://e.example/${'a'.repeat(2000)}`] }, 'invalid_redirect_uri', /2000/);
    });

    it('refuses confidential clients, other grants and response types, unknown scopes and bad metadata', async () => {
      const ok = { redirect_uris: [REDIRECT] };
      await refused({ ...ok, token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata', /public clients/);
      await refused({ ...ok, token_endpoint_auth_method: 'client_secret_post' }, 'invalid_client_metadata', /public clients/);
      await refused({ ...ok, response_types: ['token'] }, 'invalid_client_metadata', /response_types/);
      await refused({ ...ok, response_types: ['code', 'token'] }, 'invalid_client_metadata', /response_types/);
      await refused({ ...ok, grant_types: ['refresh_token'] }, 'invalid_client_metadata', /authorization_code/);
      await refused({ ...ok, grant_types: ['authorization_code', 'client_credentials'] }, 'invalid_client_metadata', /client_credentials/);
      await refused({ ...ok, grant_types: 'authorization_code' }, 'invalid_client_metadata', /grant_types/);
      await refused({ ...ok, scope: 'context.read admin' }, 'invalid_client_metadata', /unknown scope "admin"/);
      await refused({ ...ok, scope: ['context.read'] }, 'invalid_client_metadata', /scope/);
      await refused({ ...ok, client_name: 'x'.repeat(201) }, 'invalid_client_metadata', /client_name/);
      await refused({ ...ok, client_name: 'bad\u0007name' }, 'invalid_client_metadata', /client_name/);
      await refused({ ...ok, logo_uri: 7 }, 'invalid_client_metadata', /logo_uri/);
      await refused({ ...ok, contacts: 'a@b.c' }, 'invalid_client_metadata', /contacts/);
      await refused([ok], 'invalid_client_metadata', /JSON object/);
      await refused('{"redirect_uris": [', 'invalid_client_metadata', /not valid JSON/);
      const form = await fetch(`${gw.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'redirect_uris=x' });
      assert.equal(form.status, 400);
      assert.equal(((await form.json()) as { error: string }).error, 'invalid_client_metadata');
      const huge = await register({ ...ok, client_uri: 'x'.repeat(20_000) });
      assert.equal(huge.status, 413);
      assert.equal(huge.json.error, 'invalid_request');
    });

    it('keeps and echoes descriptive metadata, ignoring unknown fields', async () => {
      const { status, json } = await register({ redirect_uris: [REDIRECT], client_uri: 'https://app.example', logo_uri: 'https://app.example/logo.png', software_id: 'app', contacts: ['ops@app.example'], jwks_uri: 'https://app.example/jwks', extra: { a: 1 } });
      assert.equal(status, 201);
      assert.equal(json.client_uri, 'https://app.example');
      assert.equal(json.software_id, 'app');
      assert.deepEqual(json.contacts, ['ops@app.example']);
      assert.equal(json.jwks_uri, undefined);
      assert.equal(json.extra, undefined);
    });

    it('limits registrations per address', async () => {
      const limited = await startOAuthGateway(store.db);
      try {
        let last = 0;
        for (let i = 0; i < 61; i++) last = (await postJson(`${limited.url}/oauth/register`, { redirect_uris: [REDIRECT] })).status;
        assert.equal(last, 429);
        const refusedAgain = await postJson(`${limited.url}/oauth/register`, { redirect_uris: [REDIRECT] });
        assert.equal(refusedAgain.status, 429);
        assert.match(refusedAgain.headers.get('retry-after') ?? '', /^\d+$/);
      } finally {
        await limited.close();
      }
    });
  });
}
