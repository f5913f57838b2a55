import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseRegistration } from '../../src/auth/clients.ts';
import { OAuthError } from '../../src/auth/oauth-error.ts';
import { scopeCatalogue } from '../../src/products.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import type { OAuthGateway } from './support.ts';
import { REDIRECT, postJson, startOAuthGateway } from './support.ts';

for (const backend of storeBackends()) {
  describe(`OAuth client registration on ${backend.name}`, () => {
    let store: TestStore;
    let gw: OAuthGateway;
    const register = (body: unknown, headers?: Record<string, string>, at: OAuthGateway = gw) => postJson(`${at.url}/oauth/register`, body, headers);
    const refused = async (body: unknown, error: string, description: RegExp, at: OAuthGateway = gw) => {
      const { status, json, headers } = await register(body, undefined, at);
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
    /** Runs `test` against a gateway of its own, so its many refusals stay below the registration limit. */
    const ownGateway = async (test: (at: OAuthGateway) => Promise<void>) => {
      const own = await startOAuthGateway(store.db);
      try {
        await test(own);
      } finally {
        await own.close();
      }
    };

    it('registers a public client with the defaults the spec names', async () => {
      const { status, json, headers } = await register({
        client_name: 'Claude',
        redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
        token_endpoint_auth_method: 'none',
      });
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

    it('registers a client asking for a secret as public, and says so in the answer', async () => {
      for (const method of ['client_secret_post', 'client_secret_basic']) {
        const { status, json } = await register({ client_name: 'SDK example', redirect_uris: [REDIRECT], token_endpoint_auth_method: method });
        assert.equal(status, 201, method);
        assert.equal(json.token_endpoint_auth_method, 'none', method);
        assert.equal(json.client_secret, undefined, method);
        assert.equal(json.client_secret_expires_at, undefined, method);
      }
    });

    it('normalises scopes: write implies read, legacy aliases, loopback redirect URIs', async () => {
      const cases: [string, string][] = [
        ['context.write', 'context.read context.write'],
        ['documents.read', 'context.read'],
        ['documents.write activity.write', 'context.read context.write activity.write'],
        ['brain:read', 'brain:read'],
      ];
      for (const [asked, registered] of cases) {
        const { status, json } = await register({
          redirect_uris: ['http://127.0.0.1:3000/cb', 'http://[::1]/cb', 'http://localhost:8080/x?y=1'],
          scope: asked,
          grant_types: ['authorization_code'],
        });
        assert.equal(status, 201, JSON.stringify(json));
        assert.equal(json.scope, registered);
        assert.deepEqual(json.grant_types, ['authorization_code']);
      }
    });

    it('refuses redirect URIs that are not HTTPS or loopback HTTP, or carry a fragment', async () => {
      for (const uri of [
        'http://example.com/cb',
        'ftp://127.0.0.1/cb',
        'cursor://callback',
        'https://example.com/cb#frag',
        'https://example.com/cb#',
        'https://user:pw@example.com/cb',
        'not a url',
        '',
        42,
      ]) {
        await refused({ redirect_uris: [uri] }, 'invalid_redirect_uri', /./);
      }
      await refused({ client_name: 'x' }, 'invalid_redirect_uri', /at least one/);
      await refused({ redirect_uris: [] }, 'invalid_redirect_uri', /at least one/);
      await refused({ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://e.example/${i}`) }, 'invalid_redirect_uri', /at most 10/);
      await refused({ redirect_uris: [`https://e.example/${'a'.repeat(2000)}`] }, 'invalid_redirect_uri', /2000/);
    });

    it('refuses confidential clients, other grants and response types, unknown scopes and bad metadata', async () => {
      const ok = { redirect_uris: [REDIRECT] };
      await refused({ ...ok, token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata', /registered as public/);
      await refused({ ...ok, token_endpoint_auth_method: 7 }, 'invalid_client_metadata', /must be one of none, client_secret_post, client_secret_basic/);
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
      const form = await fetch(`${gw.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'redirect_uris=x',
      });
      assert.equal(form.status, 400);
      assert.equal(((await form.json()) as { error: string }).error, 'invalid_client_metadata');
      const huge = await register({ ...ok, client_uri: 'x'.repeat(20_000) });
      assert.equal(huge.status, 413);
      assert.equal(huge.json.error, 'invalid_request');
    });

    it('refuses NUL, unpaired surrogates and control characters in every string field, and bidi controls in the name', () => {
      const ok = { redirect_uris: [REDIRECT] };
      // Each field with the place a hostile value goes in, and the refusal it gets (RFC 7591 §3.2.2).
      const fields: [string, (bad: string) => Record<string, unknown>, string][] = [
        ['redirect_uris', (bad) => ({ redirect_uris: [`https://app.example/c${bad}b`] }), 'invalid_redirect_uri'],
        ['redirect_uris (second)', (bad) => ({ redirect_uris: [REDIRECT, `http://127.0.0.1:9/${bad}`] }), 'invalid_redirect_uri'],
        ['client_name', (bad) => ({ ...ok, client_name: `App${bad}` }), 'invalid_client_metadata'],
        ...['client_uri', 'logo_uri', 'tos_uri', 'policy_uri', 'software_id', 'software_version'].map(
          (key): [string, (bad: string) => Record<string, unknown>, string] => [
            key,
            (bad) => ({ ...ok, [key]: `https://app.example/${bad}` }),
            'invalid_client_metadata',
          ],
        ),
        ['contacts', (bad) => ({ ...ok, contacts: ['ops@app.example', `a${bad}@app.example`] }), 'invalid_client_metadata'],
        ['scope', (bad) => ({ ...ok, scope: `context.read${bad}` }), 'invalid_client_metadata'],
        ['grant_types', (bad) => ({ ...ok, grant_types: ['authorization_code', `refresh_token${bad}`] }), 'invalid_client_metadata'],
        ['response_types', (bad) => ({ ...ok, response_types: [`code${bad}`] }), 'invalid_client_metadata'],
        ['token_endpoint_auth_method', (bad) => ({ ...ok, token_endpoint_auth_method: `none${bad}` }), 'invalid_client_metadata'],
      ];
      for (const bad of ['\u0000', '\uD800', '\uDFFF', '\u0007', '\u001b', '\t', '\r\n', '\u007f', '\u0085', '\u009f']) {
        for (const [field, body, error] of fields) {
          assert.throws(
            () => parseRegistration(body(bad), scopeCatalogue),
            (thrown: unknown) => thrown instanceof OAuthError && thrown.code === error && thrown.status === 400,
            `${field} with ${JSON.stringify(bad)}`,
          );
        }
      }
      // Well-formed pairs and other scripts are text like any other.
      assert.equal(
        parseRegistration({ ...ok, client_name: 'App \u{1F600} \u00e9\u4e2d \u05e2\u05d1\u05e8\u05d9\u05ea' }, scopeCatalogue).clientName,
        'App \u{1F600} \u00e9\u4e2d \u05e2\u05d1\u05e8\u05d9\u05ea',
      );
      // The consent page shows the name: nothing may reorder how it reads.
      for (const bidi of ['\u202E', '\u202D', '\u2066', '\u2069', '\u200F', '\u061C']) {
        assert.throws(
          () => parseRegistration({ ...ok, client_name: `Claude${bidi}moc.evil` }, scopeCatalogue),
          /client_name must not contain bidirectional formatting characters/,
        );
      }
    });

    it('answers 400, not 500, for the values the store cannot hold, and stores nothing', async () => {
      const clients = async () => (await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM oauth_clients'))[0]!.n;
      const before = await clients();
      const ok = { redirect_uris: [REDIRECT] };
      await ownGateway(async (at) => {
        await refused({ ...ok, client_uri: 'https://app.example/\u0000' }, 'invalid_client_metadata', /client_uri.*control characters/, at);
        await refused({ ...ok, contacts: ['ops\u0000@app.example'] }, 'invalid_client_metadata', /contacts.*control characters/, at);
        await refused({ redirect_uris: ['https://app.example/cb\u0000'] }, 'invalid_redirect_uri', /control characters/, at);
        await refused({ ...ok, software_id: '\uD800' }, 'invalid_client_metadata', /software_id.*unpaired surrogates/, at);
        await refused({ ...ok, client_name: 'App\u0085' }, 'invalid_client_metadata', /client_name/, at);
        await refused(`{"redirect_uris": ["${REDIRECT}"], "software_version": "\\udc00"}`, 'invalid_client_metadata', /software_version/, at);
      });
      assert.equal(await clients(), before, 'no refused registration is stored');
    });

    it('refuses redirect URIs that are not in the normal form the redirect uses', async () => {
      const rewritten = [
        'https://app.example/cb\r\nX-Injected: 1',
        'https:evil.example',
        'https:/evil.example/cb',
        'https://app.example/cb\\@evil.example',
        'https://app.example\\cb',
        'https://APP.example/cb',
        'https://app.example:443/cb',
        'https://app.example',
        'https://app.example/a/../cb',
        'https://app.example/c b',
        'https://xn--nxasmq6b.example/\u00e9',
        'https://\u00e9.example/cb',
        'HTTP://127.0.0.1:9/callback',
        'http://127.0.0.1:80/cb',
        ' https://app.example/cb',
      ];
      // A URI in normal form is stored exactly as sent: the consent page shows what the browser gets.
      const normal = [
        'https://app.example/cb',
        'https://app.example/',
        'https://app.example/cb?x=1&y=%20',
        'http://127.0.0.1:9/callback',
        'http://[::1]:8080/cb',
        'https://xn--bcher-kva.example/cb',
      ];
      await ownGateway(async (at) => {
        for (const uri of rewritten) await refused({ redirect_uris: [REDIRECT, uri] }, 'invalid_redirect_uri', /./, at);
        await refused({ redirect_uris: ['https:evil.example'] }, 'invalid_redirect_uri', /not in normal form; register it as "https:\/\/evil\.example\/"/, at);
        const { status, json } = await register({ redirect_uris: normal }, undefined, at);
        assert.equal(status, 201, JSON.stringify(json));
        assert.deepEqual(json.redirect_uris, normal);
      });
      for (const uri of normal) assert.equal(new URL(uri).href, uri);
    });

    it('bounds the size of every field', async () => {
      const ok = { redirect_uris: [REDIRECT] };
      await ownGateway(async (at) => {
        await refused({ ...ok, contacts: Array.from({ length: 11 }, (_, i) => `ops${i}@app.example`) }, 'invalid_client_metadata', /contacts.*at most 10/, at);
        await refused({ ...ok, contacts: [`${'a'.repeat(243)}@app.example`] }, 'invalid_client_metadata', /contacts.*254/, at);
        await refused({ ...ok, contacts: [7] }, 'invalid_client_metadata', /contacts/, at);
        await refused({ ...ok, software_id: 'a'.repeat(2001) }, 'invalid_client_metadata', /software_id.*2000/, at);
        await refused({ ...ok, scope: `context.read ${' '.repeat(1000)}` }, 'invalid_client_metadata', /scope.*1000/, at);
        await refused({ ...ok, grant_types: Array.from({ length: 11 }, () => 'authorization_code') }, 'invalid_client_metadata', /grant_types/, at);
        const largest = await register(
          { ...ok, client_name: 'n'.repeat(200), contacts: Array.from({ length: 10 }, (_, i) => `${'a'.repeat(240)}${i}@app.example`) },
          undefined,
          at,
        );
        assert.equal(largest.status, 201, JSON.stringify(largest.json));
      });
    });

    it('keeps and echoes descriptive metadata, ignoring unknown fields', async () => {
      const { status, json } = await register({
        redirect_uris: [REDIRECT],
        client_uri: 'https://app.example',
        logo_uri: 'https://app.example/logo.png',
        software_id: 'app',
        contacts: ['ops@app.example'],
        jwks_uri: 'https://app.example/jwks',
        extra: { a: 1 },
      });
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
