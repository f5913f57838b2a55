import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { canonicalResource } from '../../src/auth/resources.ts';
import type { Config } from '../../src/config.ts';
import { ACME_ORG, seedOrg } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import type { OAuthGateway } from './support.ts';
import { INIT, startOAuthGateway } from './support.ts';

const ALL_SCOPES = ['context.read', 'context.write', 'activity.write', 'brain:read', 'brain:propose', 'outreach:propose'];

for (const backend of storeBackends()) {
  describe(`OAuth metadata on ${backend.name}`, () => {
    let store: TestStore;
    let gw: OAuthGateway;
    const get = async (path: string) => {
      const response = await fetch(`${gw.url}${path}`);
      return {
        status: response.status,
        headers: response.headers,
        json: response.status === 200 ? ((await response.json()) as Record<string, unknown>) : undefined,
      };
    };

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ACME_ORG);
      gw = await startOAuthGateway(store.db);
    });
    after(async () => {
      await gw.close();
      await store.dispose();
    });

    it('describes every MCP endpoint as a protected resource (RFC 9728)', async () => {
      const expected: Record<string, string[]> = {
        '/mcp': ALL_SCOPES,
        '/alignbase/mcp': ['context.read', 'context.write', 'activity.write'],
        '/atmina/mcp': ['context.read', 'context.write'],
        '/brain/mcp': ['brain:read', 'brain:propose', 'outreach:propose'],
      };
      for (const [path, scopes] of Object.entries(expected)) {
        const { status, json, headers } = await get(`/.well-known/oauth-protected-resource${path}`);
        assert.equal(status, 200, path);
        assert.equal(json?.resource, `${gw.url}${path}`);
        assert.deepEqual(json?.authorization_servers, [gw.url]);
        assert.deepEqual(json?.scopes_supported, scopes);
        assert.deepEqual(json?.bearer_methods_supported, ['header']);
        assert.equal(headers.get('access-control-allow-origin'), '*');
      }
      const root = await get('/.well-known/oauth-protected-resource');
      assert.equal(root.json?.resource, `${gw.url}/mcp`);
      assert.equal((await get('/.well-known/oauth-protected-resource/nope/mcp')).status, 404);
    });

    it('answers the resource in the loopback name the client used, the authorization server in its own', async () => {
      const port = new URL(gw.url).port;
      /** A GET with the Host header a client naming the gateway so would send (fetch cannot set it). */
      const getAs = (host: string, path: string) =>
        new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
          const request = http.get(`${gw.url}${path}`, { headers: { host } }, (response) => {
            let body = '';
            response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
          });
          request.on('error', reject);
        });
      const cases: [string, string][] = [
        [`localhost:${port}`, `http://localhost:${port}`],
        [`[::1]:${port}`, `http://[::1]:${port}`],
        [`LOCALHOST:${port}`, `http://localhost:${port}`],
        // Another port is another service; a name that is not loopback gets the public URL.
        [`localhost:${Number(port) + 1}`, gw.url],
        ['kgw.example.com', gw.url],
      ];
      for (const [host, origin] of cases) {
        const { status, body } = await getAs(host, '/.well-known/oauth-protected-resource/atmina/mcp');
        assert.equal(status, 200, host);
        const json = JSON.parse(body) as Record<string, unknown>;
        assert.equal(json.resource, `${origin}/atmina/mcp`, host);
        assert.deepEqual(json.authorization_servers, [gw.url], host);
        const challenge = await getAs(host, '/.well-known/oauth-authorization-server');
        assert.equal((JSON.parse(challenge.body) as { issuer: string }).issuer, gw.url, host);
      }
    });

    it('takes a loopback alias of a loopback public URL for the same resource, nothing else', () => {
      const at = (publicUrl: string) => ({ publicUrl }) as Config;
      const local = at('http://127.0.0.1:8787');
      assert.equal(canonicalResource(local, 'http://localhost:8787/mcp'), 'http://127.0.0.1:8787/mcp');
      assert.equal(canonicalResource(local, 'http://[::1]:8787/atmina/mcp'), 'http://127.0.0.1:8787/atmina/mcp');
      assert.equal(canonicalResource(local, 'http://LOCALHOST:8787/mcp'), 'http://127.0.0.1:8787/mcp');
      assert.equal(canonicalResource(local, 'http://127.0.0.1:8787/mcp'), 'http://127.0.0.1:8787/mcp');
      for (const other of [
        'http://localhost:8788/mcp',
        'https://localhost:8787/mcp',
        'http://localhost:8787/mcp?x=1',
        'http://evil.test:8787/mcp',
        'not a url',
      ])
        assert.equal(canonicalResource(local, other), other);
      const below = at('http://localhost:8787/kgw');
      assert.equal(canonicalResource(below, 'http://127.0.0.1:8787/kgw/mcp'), 'http://localhost:8787/kgw/mcp');
      assert.equal(canonicalResource(below, 'http://127.0.0.1:8787/other/mcp'), 'http://127.0.0.1:8787/other/mcp');
      // A public URL that is not loopback has no aliases.
      const named = at('https://kgw.example.com');
      assert.equal(canonicalResource(named, 'https://localhost/mcp'), 'https://localhost/mcp');
    });

    it('publishes authorization server metadata (RFC 8414) at the root and the path-inserted places', async () => {
      for (const path of ['', '/mcp', '/alignbase/mcp', '/atmina/mcp', '/brain/mcp']) {
        const { status, json } = await get(`/.well-known/oauth-authorization-server${path}`);
        assert.equal(status, 200, path);
        assert.deepEqual(json, {
          issuer: gw.url,
          authorization_endpoint: `${gw.url}/oauth/authorize`,
          token_endpoint: `${gw.url}/oauth/token`,
          registration_endpoint: `${gw.url}/oauth/register`,
          jwks_uri: `${gw.url}/oauth/jwks`,
          scopes_supported: ALL_SCOPES,
          response_types_supported: ['code'],
          response_modes_supported: ['query'],
          grant_types_supported: ['authorization_code', 'refresh_token'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['none'],
          authorization_response_iss_parameter_supported: true,
        });
      }
      assert.deepEqual((await get('/oauth/jwks')).json, { keys: [] });
      const preflight = await fetch(`${gw.url}/oauth/token`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    });

    it("challenges with resource_metadata and the endpoint's default scopes on 401", async () => {
      const expected: Record<string, string> = {
        '/mcp': 'context.read context.write brain:read',
        '/alignbase/mcp': 'context.read context.write',
        '/atmina/mcp': 'context.read context.write',
        '/brain/mcp': 'brain:read',
      };
      for (const [path, scope] of Object.entries(expected)) {
        const response = await fetch(`${gw.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify(INIT),
        });
        assert.equal(response.status, 401);
        assert.equal(
          response.headers.get('www-authenticate'),
          `Bearer resource_metadata="${gw.url}/.well-known/oauth-protected-resource${path}", scope="${scope}"`,
        );
        const invalid = await fetch(`${gw.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', authorization: 'Bearer kgw_nope' },
          body: JSON.stringify(INIT),
        });
        assert.match(
          invalid.headers.get('www-authenticate') ?? '',
          new RegExp(`^Bearer resource_metadata="[^"]+${path.replace(/\//g, '\\/')}", scope="${scope}", error="invalid_token", error_description="[^"]+"$`),
        );
      }
    });

    it('serves pages and the stylesheet with frame and script protection', async () => {
      const page = await fetch(`${gw.url}/oauth/authorize?client_id=unknown`);
      assert.equal(page.status, 400);
      assert.equal(page.headers.get('content-security-policy'), "frame-ancestors 'none'; default-src 'self'");
      assert.equal(page.headers.get('x-frame-options'), 'DENY');
      assert.equal(page.headers.get('cache-control'), 'no-store');
      const html = await page.text();
      assert.doesNotMatch(html, /<script|\sstyle=|\son[a-z]+=/i);
      assert.match(html, new RegExp(`<link rel="stylesheet" href="${gw.url}/oauth/static/oauth.css">`));
      const css = await fetch(`${gw.url}/oauth/static/oauth.css`);
      assert.equal(css.status, 200);
      assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
    });
  });
}
