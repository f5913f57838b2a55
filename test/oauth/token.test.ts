import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { revokeToken } from '../../src/kernel/tokens/tokens.ts';
import { cliTrail } from '../support/audit.ts';
import { ACME_ORG, issueToken, seedOrg } from '../support/gateway.ts';
import { until } from '../support/kgw-process.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import type { Client, OAuthGateway, Tokens } from './support.ts';
import {
  Browser,
  PASSWORD,
  REDIRECT,
  authorizeCode,
  exchange,
  mcpInit,
  pkcePair,
  postForm,
  registerClient,
  setPassword,
  startOAuthGateway,
  whoami,
} from './support.ts';

const HOUR = 3_600_000;

for (const backend of storeBackends()) {
  describe(`OAuth token endpoint on ${backend.name}`, () => {
    let store: TestStore;
    let gw: OAuthGateway;
    let client: Client;
    let browser: Browser;
    const token = (form: Record<string, string>, headers?: Record<string, string>) => postForm(`${gw.url}/oauth/token`, form, headers);
    const refreshWith = (refreshToken: string, extra: Record<string, string> = {}, by: Client = client) =>
      token({ grant_type: 'refresh_token', client_id: by.client_id, refresh_token: refreshToken, ...extra });
    const refused = async (response: Promise<{ status: number; json: Record<string, unknown>; headers: Headers }>, error: string, status = 400) => {
      const { status: actual, json, headers } = await response;
      assert.equal(actual, status, JSON.stringify(json));
      assert.equal(json.error, error, JSON.stringify(json));
      assert.equal(typeof json.error_description, 'string');
      assert.equal(headers.get('cache-control'), 'no-store');
    };
    /** A fresh code for `client` (alice approving as release-bot) and its verifier. */
    async function grant(options: { scope?: string; resource?: string; by?: Client } = {}) {
      const { verifier, challenge } = pkcePair();
      const code = await authorizeCode(browser, { client: options.by ?? client, challenge, scope: options.scope, resource: options.resource });
      return { code, verifier };
    }
    async function tokens(options: { scope?: string; resource?: string } = {}): Promise<Tokens> {
      const { code, verifier } = await grant(options);
      return exchange(gw.url, client, code, verifier, options.resource ? { resource: options.resource } : {});
    }

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ACME_ORG);
      await setPassword(store.db, 'acme', 'alice@acme.test', PASSWORD);
      gw = await startOAuthGateway(store.db);
      client = await registerClient(gw.url, { scope: 'context.read context.write' });
      browser = new Browser(gw.url);
    });
    after(async () => {
      await gw.close();
      await store.dispose();
    });

    it('exchanges a code for an access token acting as the chosen agent, bound to its resource', async () => {
      const { code, verifier } = await grant();
      const { status, json, headers } = await token({
        grant_type: 'authorization_code',
        client_id: client.client_id,
        code,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
      });
      assert.equal(status, 200, JSON.stringify(json));
      assert.equal(headers.get('cache-control'), 'no-store');
      assert.equal(headers.get('pragma'), 'no-cache');
      assert.deepEqual(Object.keys(json).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
      assert.match(String(json.access_token), /^kgw_[A-Za-z0-9_-]{43}$/);
      assert.match(String(json.refresh_token), /^kgwr_[A-Za-z0-9_-]{43}$/);
      assert.equal(json.token_type, 'Bearer');
      assert.equal(json.expires_in, 3600);
      assert.equal(json.scope, 'context.read context.write');
      const access = String(json.access_token);
      const { me } = await whoami(`${gw.url}/mcp`, access);
      assert.equal(me?.principal.kind, 'agent');
      assert.equal(me?.principal.name, 'release-bot');
      assert.deepEqual(me?.scopes, ['context.read', 'context.write']);
      const [row] = await store.db.query<{ source: string; audience: string; client_id: string; family_id: string; expires_at: Date }>(
        "SELECT source, audience, client_id, family_id, expires_at FROM tokens WHERE source = 'oauth' ORDER BY created_at DESC LIMIT 1",
      );
      assert.equal(row?.source, 'oauth');
      assert.equal(row?.audience, `${gw.url}/mcp`);
      assert.equal(row?.client_id, client.client_id);
      assert.ok(Math.abs(row.expires_at.getTime() - (Date.now() + HOUR)) < 60_000);
      const [refreshRow] = await store.db.query<{ expires_at: Date }>('SELECT expires_at FROM oauth_refresh_tokens WHERE grant_id = $1', [row.family_id]);
      assert.ok(Math.abs(refreshRow!.expires_at.getTime() - (Date.now() + 90 * 24 * HOUR)) < 60_000);
    });

    it('accepts an OAuth token only on the endpoint it was issued for; CLI tokens everywhere', async () => {
      const forMcp = await tokens();
      assert.equal((await mcpInit(`${gw.url}/mcp`, forMcp.access_token)).status, 200);
      for (const path of ['/alignbase/mcp', '/atmina/mcp', '/brain/mcp']) {
        const response = await mcpInit(`${gw.url}${path}`, forMcp.access_token);
        assert.equal(response.status, 401, path);
        assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      }
      const forAtmina = await tokens({ resource: `${gw.url}/atmina/mcp` });
      assert.equal((await whoami(`${gw.url}/atmina/mcp`, forAtmina.access_token)).me?.principal.name, 'release-bot');
      assert.equal((await mcpInit(`${gw.url}/mcp`, forAtmina.access_token)).status, 401);
      const cli = await issueToken(store.db, 'acme', 'release-bot', 'context.read brain:read');
      for (const path of ['/mcp', '/alignbase/mcp', '/atmina/mcp', '/brain/mcp']) assert.equal((await mcpInit(`${gw.url}${path}`, cli)).status, 200, path);
    });

    it('refuses a wrong PKCE verifier, and the code is then used up', async () => {
      const { code, verifier } = await grant();
      const other = pkcePair().verifier;
      await refused(
        token({ grant_type: 'authorization_code', client_id: client.client_id, code, code_verifier: other, redirect_uri: REDIRECT }),
        'invalid_grant',
      );
      await refused(
        token({ grant_type: 'authorization_code', client_id: client.client_id, code, code_verifier: verifier, redirect_uri: REDIRECT }),
        'invalid_grant',
      );
      const second = await grant();
      await refused(
        token({ grant_type: 'authorization_code', client_id: client.client_id, code: second.code, code_verifier: 'too-short', redirect_uri: REDIRECT }),
        'invalid_grant',
      );
    });

    it('revokes every token issued from a code that is presented twice', async () => {
      const { code, verifier } = await grant();
      const first = await exchange(gw.url, client, code, verifier);
      const refreshed = await refreshWith(first.refresh_token!);
      assert.equal(refreshed.status, 200);
      assert.equal((await mcpInit(`${gw.url}/mcp`, first.access_token)).status, 200);
      await refused(
        token({ grant_type: 'authorization_code', client_id: client.client_id, code, code_verifier: verifier, redirect_uri: REDIRECT }),
        'invalid_grant',
      );
      assert.equal((await mcpInit(`${gw.url}/mcp`, first.access_token)).status, 401);
      assert.equal((await mcpInit(`${gw.url}/mcp`, String(refreshed.json.access_token))).status, 401);
      await refused(refreshWith(String(refreshed.json.refresh_token)), 'invalid_grant');
    });

    it('lets exactly one of two simultaneous redemptions through, and then revokes it', async () => {
      const { code, verifier } = await grant();
      const form = { grant_type: 'authorization_code', client_id: client.client_id, code, code_verifier: verifier, redirect_uri: REDIRECT };
      const results = await Promise.all([token(form), token(form)]);
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 400]);
      const winner = results.find((r) => r.status === 200)!;
      assert.equal((await mcpInit(`${gw.url}/mcp`, String(winner.json.access_token))).status, 401);
    });

    it('refuses a redirect_uri or resource that differs from the authorization, another client and an expired code', async () => {
      const a = await grant();
      await refused(
        token({ grant_type: 'authorization_code', client_id: client.client_id, code: a.code, code_verifier: a.verifier, redirect_uri: `${REDIRECT}?x=1` }),
        'invalid_grant',
      );
      const b = await grant();
      await refused(
        token({
          grant_type: 'authorization_code',
          client_id: client.client_id,
          code: b.code,
          code_verifier: b.verifier,
          redirect_uri: REDIRECT,
          resource: `${gw.url}/atmina/mcp`,
        }),
        'invalid_target',
      );
      const c = await grant({ resource: `${gw.url}/brain/mcp` });
      await refused(
        token({
          grant_type: 'authorization_code',
          client_id: client.client_id,
          code: c.code,
          code_verifier: c.verifier,
          redirect_uri: REDIRECT,
          resource: `${gw.url}/mcp`,
        }),
        'invalid_target',
      );
      const other = await registerClient(gw.url);
      const d = await grant();
      await refused(
        token({ grant_type: 'authorization_code', client_id: other.client_id, code: d.code, code_verifier: d.verifier, redirect_uri: REDIRECT }),
        'invalid_grant',
      );
      assert.equal((await exchange(gw.url, client, d.code, d.verifier)).token_type, 'Bearer', 'another client cannot use the code up');
      const e = await grant();
      await store.db.tx((tx) => tx.query("UPDATE oauth_codes SET expires_at = now() - interval '1 second' WHERE used_at IS NULL"));
      await refused(
        token({ grant_type: 'authorization_code', client_id: client.client_id, code: e.code, code_verifier: e.verifier, redirect_uri: REDIRECT }),
        'invalid_grant',
      );
      await refused(
        token({ grant_type: 'authorization_code', client_id: client.client_id, code: 'kgwa_unknown', code_verifier: e.verifier, redirect_uri: REDIRECT }),
        'invalid_grant',
      );
    });

    it('authenticates clients by client_id only and answers malformed requests per RFC 6749', async () => {
      const { code, verifier } = await grant();
      const good = { grant_type: 'authorization_code', client_id: client.client_id, code, code_verifier: verifier, redirect_uri: REDIRECT };
      await refused(token({ ...good, client_id: 'kgwc_nobody' }), 'invalid_client', 401);
      await refused(token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT }), 'invalid_client', 401);
      await refused(token(good, { authorization: `Basic ${Buffer.from(`${client.client_id}:`).toString('base64')}` }), 'invalid_client', 401);
      await refused(token({ ...good, client_secret: 'guess' }), 'invalid_client', 401);
      await refused(token({ ...good, grant_type: 'client_credentials' }), 'unsupported_grant_type');
      await refused(token({ ...good, grant_type: 'password' }), 'unsupported_grant_type');
      const { grant_type: _omitted, ...noGrant } = good;
      await refused(token(noGrant), 'invalid_request');
      for (const missing of ['code', 'code_verifier', 'redirect_uri']) {
        await refused(token(Object.fromEntries(Object.entries(good).filter(([key]) => key !== missing))), 'invalid_request');
      }
      const repeated = await fetch(`${gw.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `${new URLSearchParams(good).toString()}&code=${code}`,
      });
      assert.equal(repeated.status, 400);
      assert.equal(((await repeated.json()) as { error: string }).error, 'invalid_request');
      const json = await fetch(`${gw.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(good) });
      assert.equal(json.status, 400);
      assert.equal(((await json.json()) as { error: string }).error, 'invalid_request');
      assert.equal((await exchange(gw.url, client, code, verifier)).token_type, 'Bearer', 'refusals before the code was read do not use it up');
    });

    it('answers 401 at the MCP endpoint for expired and revoked access tokens', async () => {
      const expiring = await tokens();
      const revoked = await tokens();
      assert.equal((await mcpInit(`${gw.url}/mcp`, expiring.access_token)).status, 200);
      const [row] = await store.db.query<{ id: string }>("SELECT id FROM tokens WHERE source = 'oauth' ORDER BY created_at DESC LIMIT 1");
      await revokeToken(store.db, row!.id, cliTrail(store.db));
      assert.equal((await mcpInit(`${gw.url}/mcp`, revoked.access_token)).status, 401);
      await store.db.tx((tx) => tx.query("UPDATE tokens SET expires_at = now() - interval '1 second' WHERE source = 'oauth' AND revoked_at IS NULL"));
      // Plain SQL is heard through the store's trigger: on PostgreSQL once its NOTIFY reaches the gateway, a moment after the commit.
      const response = await until(
        'the moved expiry to be heard',
        async () => {
          const answer = await mcpInit(`${gw.url}/mcp`, expiring.access_token);
          return answer.status === 401 ? answer : undefined;
        },
        10_000,
        20,
      );
      assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    });

    it('rotates the refresh token on every use; replaying a used one revokes the whole family', async () => {
      const first = await tokens();
      const second = await refreshWith(first.refresh_token!);
      assert.equal(second.status, 200, JSON.stringify(second.json));
      assert.notEqual(second.json.refresh_token, first.refresh_token);
      assert.notEqual(second.json.access_token, first.access_token);
      assert.equal(second.json.expires_in, 3600);
      assert.equal((await whoami(`${gw.url}/mcp`, String(second.json.access_token))).me?.principal.name, 'release-bot');
      const third = await refreshWith(String(second.json.refresh_token), { resource: `${gw.url}/mcp` });
      assert.equal(third.status, 200);
      await refused(refreshWith(first.refresh_token!), 'invalid_grant');
      for (const access of [first.access_token, second.json.access_token, third.json.access_token])
        assert.equal((await mcpInit(`${gw.url}/mcp`, String(access))).status, 401);
      await refused(refreshWith(String(third.json.refresh_token)), 'invalid_grant');
      const unrelated = await tokens();
      assert.equal((await refreshWith(unrelated.refresh_token!)).status, 200, 'other families are untouched');
    });

    it('narrows scopes on refresh but never widens them', async () => {
      const readOnly = await tokens({ scope: 'context.read' });
      assert.equal(readOnly.scope, 'context.read');
      await refused(refreshWith(readOnly.refresh_token!, { scope: 'context.read context.write' }), 'invalid_scope');
      await refused(refreshWith(readOnly.refresh_token!, { scope: 'documents.write' }), 'invalid_scope');
      await refused(refreshWith(readOnly.refresh_token!, { scope: 'context.read admin' }), 'invalid_scope');
      assert.equal((await refreshWith(readOnly.refresh_token!)).status, 200, 'a refused escalation does not use the token up');
      const full = await tokens();
      const narrowed = await refreshWith(full.refresh_token!, { scope: 'documents.read' });
      assert.equal(narrowed.json.scope, 'context.read');
      assert.deepEqual((await whoami(`${gw.url}/mcp`, String(narrowed.json.access_token))).me?.scopes, ['context.read']);
      const back = await refreshWith(String(narrowed.json.refresh_token));
      assert.equal(back.json.scope, 'context.read context.write', 'the grant keeps its scopes');
      await refused(refreshWith(String(back.json.refresh_token), { resource: `${gw.url}/atmina/mcp` }), 'invalid_target');
      await refused(refreshWith(String(back.json.refresh_token), {}, await registerClient(gw.url)), 'invalid_grant');
      await refused(refreshWith('kgwr_unknown'), 'invalid_grant');
      await refused(token({ grant_type: 'refresh_token', client_id: client.client_id }), 'invalid_request');
    });

    it('refuses expired refresh tokens, clients without the refresh grant, and agents that changed owner', async () => {
      const old = await tokens();
      await store.db.tx((tx) => tx.query("UPDATE oauth_refresh_tokens SET expires_at = now() - interval '1 second'"));
      await refused(refreshWith(old.refresh_token!), 'invalid_grant');

      const codeOnly = await registerClient(gw.url, { grant_types: ['authorization_code'] });
      const { code, verifier } = await grant({ by: codeOnly });
      const issued = await exchange(gw.url, codeOnly, code, verifier);
      assert.equal(issued.refresh_token, undefined);
      await refused(refreshWith('kgwr_whatever', {}, codeOnly), 'unauthorized_client');

      const moved = await tokens();
      await store.db.tx((tx) =>
        tx.query("UPDATE principals SET owner_id = (SELECT id FROM principals WHERE email = 'bob@acme.test') WHERE name = 'release-bot'"),
      );
      try {
        await refused(refreshWith(moved.refresh_token!), 'invalid_grant');
        assert.equal((await mcpInit(`${gw.url}/mcp`, moved.access_token)).status, 401, 'the family was revoked');
      } finally {
        await store.db.tx((tx) =>
          tx.query("UPDATE principals SET owner_id = (SELECT id FROM principals WHERE email = 'alice@acme.test') WHERE name = 'release-bot'"),
        );
      }
    });
  });
}
