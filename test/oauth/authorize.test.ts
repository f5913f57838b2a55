import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { applyOrgFile } from '../../src/org-sections.ts';
import { cliTrail } from '../support/audit.ts';
import { ACME_ORG, GLOBEX_ORG, seedOrg } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import type { Client, OAuthGateway } from './support.ts';
import { Browser, PASSWORD, REDIRECT, authorizeCode, authorizeQuery, formFields, pkcePair, registerClient, setPassword, startOAuthGateway } from './support.ts';

for (const backend of storeBackends()) {
  describe(`OAuth authorization endpoint on ${backend.name}`, () => {
    let store: TestStore;
    let gw: OAuthGateway;
    let client: Client;
    const { challenge } = pkcePair();
    const agentId = async (name: string) =>
      (await store.db.query<{ id: string }>("SELECT id FROM principals WHERE kind = 'agent' AND name = $1", [name]))[0]!.id;

    /** A browser signed in as alice, looking at the consent page of a fresh request. */
    async function consentAsAlice(query = authorizeQuery({ client, challenge })) {
      const browser = new Browser(gw.url);
      const signedIn = await browser.signIn(query, 'acme', 'alice@acme.test', PASSWORD);
      assert.equal(signedIn.status, 303, signedIn.text);
      const page = await browser.request(signedIn.location!);
      assert.equal(page.status, 200);
      return { browser, page, ...formFields(page.text, `${gw.url}/oauth/authorize`) };
    }

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ACME_ORG);
      await seedOrg(store.db, GLOBEX_ORG);
      await setPassword(store.db, 'acme', 'alice@acme.test', PASSWORD);
      await setPassword(store.db, 'globex', 'hank@globex.test', PASSWORD);
      gw = await startOAuthGateway(store.db);
      client = await registerClient(gw.url, { scope: 'context.read context.write' });
    });
    after(async () => {
      await gw.close();
      await store.dispose();
    });

    it('shows a page, and never redirects, while the client or redirect URI is not trusted', async () => {
      const browser = new Browser(gw.url);
      const base = Object.fromEntries(new URLSearchParams(authorizeQuery({ client, challenge })));
      const cases: Record<string, string>[] = [
        { ...base, client_id: 'kgwc_unknown' },
        { ...base, client_id: '' },
        { ...base, redirect_uri: 'http://127.0.0.1:9/other' },
        { ...base, redirect_uri: `${REDIRECT}/` },
        Object.fromEntries(Object.entries(base).filter(([key]) => key !== 'redirect_uri')),
      ];
      for (const params of cases) {
        const response = await browser.request(`/oauth/authorize?${new URLSearchParams(params).toString()}`);
        assert.equal(response.status, 400, JSON.stringify(params));
        assert.equal(response.location, null);
        assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
      }
      const twice = await browser.request(`/oauth/authorize?${authorizeQuery({ client, challenge })}&client_id=${client.client_id}`);
      assert.equal(twice.status, 400);
    });

    it('redirects errors back to the client once the redirect URI is trusted', async () => {
      const browser = new Browser(gw.url);
      const base = Object.fromEntries(new URLSearchParams(authorizeQuery({ client, challenge, state: 's&1' })));
      const cases: [Record<string, string>, string][] = [
        [{ ...base, response_type: 'token' }, 'unsupported_response_type'],
        [Object.fromEntries(Object.entries(base).filter(([key]) => key !== 'code_challenge')), 'invalid_request'],
        [{ ...base, code_challenge_method: 'plain' }, 'invalid_request'],
        [Object.fromEntries(Object.entries(base).filter(([key]) => key !== 'code_challenge_method')), 'invalid_request'],
        [{ ...base, code_challenge: 'short' }, 'invalid_request'],
        [{ ...base, scope: 'context.read activity.write' }, 'invalid_scope'],
        [{ ...base, scope: 'context.read nonsense' }, 'invalid_scope'],
        [{ ...base, resource: `${gw.url}/other/mcp` }, 'invalid_target'],
        [{ ...base, resource: `${gw.url}/mcp/` }, 'invalid_target'],
        [{ ...base, resource: 'https://elsewhere.example/mcp' }, 'invalid_target'],
      ];
      for (const [params, error] of cases) {
        const response = await browser.request(`/oauth/authorize?${new URLSearchParams(params).toString()}`);
        assert.equal(response.status, 303, JSON.stringify(params));
        const back = new URL(response.location!);
        assert.equal(`${back.origin}${back.pathname}`, REDIRECT);
        assert.equal(back.searchParams.get('error'), error, JSON.stringify(params));
        assert.equal(back.searchParams.get('state'), 's&1');
        assert.equal(back.searchParams.get('iss'), gw.url);
        assert.equal(back.searchParams.get('code'), null);
      }
    });

    it('asks to sign in, refuses a wrong password alike for every mismatch, then shows the consent page', async () => {
      const query = authorizeQuery({ client, challenge, scope: 'context.write', resource: `${gw.url}/atmina/mcp` });
      const browser = new Browser(gw.url);
      const signInPage = await browser.request(`/oauth/authorize?${query}`);
      assert.equal(signInPage.status, 200);
      assert.match(signInPage.text, /<h1>Sign in to connect Test Client<\/h1>/);
      assert.match(signInPage.text, /name="password" type="password"/);
      for (const [tenant, email, password] of [
        ['acme', 'alice@acme.test', 'wrong'],
        ['acme', 'nobody@acme.test', PASSWORD],
        ['globex', 'alice@acme.test', PASSWORD],
        ['acme', 'bob@acme.test', ''],
        ['nope', 'alice@acme.test', PASSWORD],
      ] as const) {
        const refused = await browser.signIn(query, tenant, email, password);
        assert.equal(refused.status, 401, `${tenant} ${email}`);
        assert.match(refused.text, /The organisation, email or password is not right\./);
        assert.equal(browser.cookie, undefined);
      }
      const signedIn = await browser.signIn(query, 'ACME', 'Alice@Acme.test', PASSWORD);
      assert.equal(signedIn.status, 303);
      const sorted = (q: string) => [...new URLSearchParams(q)].sort();
      assert.ok(signedIn.location?.startsWith(`${gw.url}/oauth/authorize?`));
      assert.deepEqual(sorted(signedIn.location!.split('?')[1]!), sorted(query));
      const cookie = signedIn.headers.get('set-cookie') ?? '';
      assert.match(cookie, /^kgw_session=kgws_[A-Za-z0-9_-]{43}; Path=\/; Max-Age=28800; HttpOnly; SameSite=Lax$/);
      const [stored] = await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM oauth_sessions WHERE secret_hash LIKE $1', [
        `${cookie.slice(12, 17)}%`,
      ]);
      assert.equal(stored?.n, 0, 'the session secret itself is not stored');
      const consent = await browser.request(signedIn.location!);
      assert.equal(consent.status, 200);
      assert.match(consent.text, /<h1>Connect Test Client\?<\/h1>/);
      assert.match(consent.text, new RegExp(`<code>${REDIRECT}</code>`));
      assert.match(consent.text, new RegExp(`<code>${gw.url}/atmina/mcp</code>`));
      assert.match(consent.text, /<code>context\.read<\/code>.*<code>context\.write<\/code>/s);
      assert.match(consent.text, /Alice \(alice@acme\.test\), Acme Inc\./);
      const { fields, agents } = formFields(consent.text, `${gw.url}/oauth/authorize`);
      assert.deepEqual(agents, [await agentId('release-bot'), 'new']);
      assert.equal(fields.scope, 'context.write');
      assert.match(fields.csrf ?? '', /^[A-Za-z0-9_-]{43}$/);
    });

    it('signs in with the password an org file set through password_env, until the file removes it', async () => {
      const org = (password: string) =>
        `tenant: initech\nname: Initech\npeople:\n  - email: peter@initech.test\n    name: Peter\n    password_env:${password}\n`;
      await applyOrgFile(store.db, { source: org(' PETER_PASSWORD'), env: { PETER_PASSWORD: 'tps-report-2' } }, cliTrail(store.db));
      const query = authorizeQuery({ client, challenge });
      const browser = new Browser(gw.url);
      assert.equal((await browser.signIn(query, 'initech', 'peter@initech.test', 'wrong')).status, 401);
      assert.equal((await browser.signIn(query, 'initech', 'peter@initech.test', 'tps-report-2')).status, 303);
      await applyOrgFile(store.db, { source: org('') }, cliTrail(store.db));
      assert.equal((await new Browser(gw.url).signIn(query, 'initech', 'peter@initech.test', 'tps-report-2')).status, 401);
    });

    it('escapes what the client chose: its name cannot inject markup', async () => {
      const sneaky = await registerClient(gw.url, { client_name: '<script>alert(1)</script>"><img src=x>' });
      const { page } = await consentAsAlice(authorizeQuery({ client: sneaky, challenge }));
      assert.doesNotMatch(page.text, /<script>|<img/);
      assert.match(page.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt;&quot;&gt;&lt;img src=x&gt;/);
    });

    it("refuses a decision without the session's CSRF token, from another origin or without a session", async () => {
      const { browser, fields, agents } = await consentAsAlice();
      const decide = (form: Record<string, string>, headers?: Record<string, string>) => browser.request('/oauth/authorize', { form, headers });
      const approve = { ...fields, agent: agents[0]!, decision: 'approve' };
      for (const csrf of ['', 'forged', fields.csrf!.slice(1)]) {
        const refused = await decide({ ...approve, csrf });
        assert.equal(refused.status, 403);
        assert.match(refused.text, /CSRF/);
      }
      const withoutCsrf = Object.fromEntries(Object.entries(approve).filter(([key]) => key !== 'csrf'));
      assert.equal((await decide(withoutCsrf)).status, 403);
      const other = await consentAsAlice();
      assert.equal((await decide({ ...approve, csrf: other.fields.csrf! })).status, 403, "another session's token");
      assert.equal((await decide(approve, { origin: 'https://evil.example' })).status, 403);
      const anonymous = new Browser(gw.url);
      const expired = await anonymous.request('/oauth/authorize', { form: approve });
      assert.equal(expired.status, 401);
      assert.match(expired.text, /Your sign-in has expired/);
      const [codes] = await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM oauth_codes');
      assert.equal(codes?.n, 0, 'no code was issued');
      assert.equal((await decide(approve)).status, 303, 'the real token still works');
    });

    it('denies with access_denied and the state', async () => {
      const { browser, fields } = await consentAsAlice(authorizeQuery({ client, challenge, state: 'deny-me' }));
      const denied = await browser.request('/oauth/authorize', { form: { ...fields, decision: 'deny' } });
      assert.equal(denied.status, 303);
      const back = new URL(denied.location!);
      assert.equal(back.searchParams.get('error'), 'access_denied');
      assert.equal(back.searchParams.get('state'), 'deny-me');
      assert.equal(back.searchParams.get('code'), null);
    });

    it('lets a person act only as their own agents in their own tenant, or a new one', async () => {
      const { browser, fields } = await consentAsAlice();
      const approveAs = (agent: string, extra: Record<string, string> = {}) =>
        browser.request('/oauth/authorize', { form: { ...fields, agent, decision: 'approve', ...extra } });
      for (const foreign of [await agentId('globex-bot'), '00000000-0000-4000-8000-000000000000', 'release-bot', '']) {
        const refused = await approveAs(foreign);
        assert.equal(refused.status, 400, foreign);
        assert.match(refused.text, /Choose one of your own agents\./);
      }
      const bobs = await store.db.tx(async (tx) => {
        const [bob] = await tx.query<{ id: string; tenant_id: string }>("SELECT id, tenant_id FROM principals WHERE email = 'bob@acme.test'");
        await tx.query(
          "INSERT INTO principals (tenant_id, id, kind, name, owner_id) VALUES ($1, '11111111-1111-4111-8111-111111111111', 'agent', 'bobs-bot', $2)",
          [bob!.tenant_id, bob!.id],
        );
        return '11111111-1111-4111-8111-111111111111';
      });
      assert.equal((await approveAs(bobs)).status, 400, "another person's agent in the same tenant");
      const taken = await approveAs('new', { new_agent_name: 'release-bot' });
      assert.equal(taken.status, 400);
      assert.match(taken.text, /already exists/);
      assert.match((await approveAs('new', { new_agent_name: 'bad:name' })).text, /agent name/);
      assert.match((await approveAs('new', { new_agent_name: '' })).text, /agent name/);
      const created = await approveAs('new', { new_agent_name: "Alice's laptop".replace("'", '') });
      assert.equal(created.status, 303, created.text);
      const [agent] = await store.db.query<{ owner: string }>(
        "SELECT o.email AS owner FROM principals a JOIN principals o ON o.tenant_id = a.tenant_id AND o.id = a.owner_id WHERE a.name = 'Alices laptop'",
      );
      assert.equal(agent?.owner, 'alice@acme.test');
      const again = await consentAsAlice();
      assert.equal(again.agents.length, 3, 'the new agent is offered next time');
    });

    it('limits failed passwords per account', async () => {
      const limited = await startOAuthGateway(store.db);
      try {
        const browser = new Browser(limited.url);
        const query = authorizeQuery({ client, challenge });
        for (let i = 0; i < 10; i++) assert.equal((await browser.signIn(query, 'globex', 'hank@globex.test', 'wrong')).status, 401);
        const blocked = await browser.signIn(query, 'globex', 'hank@globex.test', PASSWORD);
        assert.equal(blocked.status, 429);
        assert.match(blocked.text, /Too many sign-in attempts/);
        assert.equal((await browser.signIn(query, 'acme', 'alice@acme.test', PASSWORD)).status, 303, 'other accounts still sign in');
      } finally {
        await limited.close();
      }
    });

    it('sets a __Host- Secure cookie when the public URL is HTTPS', async () => {
      const secure = await startOAuthGateway(store.db, { KGW_PUBLIC_URL: 'https://gateway.acme.test' });
      try {
        const browser = new Browser(secure.url);
        const httpsClient = await registerClient(secure.url);
        const signedIn = await browser.request('/oauth/login', {
          form: { authorize: authorizeQuery({ client: httpsClient, challenge }), tenant: 'acme', email: 'alice@acme.test', password: PASSWORD },
          headers: { origin: 'https://gateway.acme.test' },
        });
        assert.equal(signedIn.status, 303, signedIn.text);
        assert.match(signedIn.headers.get('set-cookie') ?? '', /^__Host-kgw_session=kgws_[^;]+; Path=\/; Max-Age=28800; HttpOnly; SameSite=Lax; Secure$/);
        assert.ok(signedIn.location?.startsWith('https://gateway.acme.test/oauth/authorize?'));
      } finally {
        await secure.close();
      }
    });

    it('signs out and asks to sign in again', async () => {
      const { browser, fields } = await consentAsAlice();
      const out = await browser.request('/oauth/logout', { form: { csrf: fields.csrf!, authorize: authorizeQuery({ client, challenge }) } });
      assert.equal(out.status, 303);
      assert.equal(browser.cookie, undefined);
      const page = await browser.request(out.location!);
      assert.match(page.text, /Sign in to connect/);
      const code = await authorizeCode(browser, { client, challenge });
      assert.match(code, /^kgwa_/);
    });
  });
}
