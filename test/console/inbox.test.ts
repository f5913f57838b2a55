import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Browser, PASSWORD, setPassword } from '../oauth/support.ts';
import { ACME_ORG, GLOBEX_ORG, connectClient, issueToken, seedOrg } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';
import type { ConsoleGateway } from './support.ts';
import { csrfOf, signedInFetch, startConsole } from './support.ts';

/**
 * The console's sign-in and inbox, through HTTP as a browser sends it, with Alignbase's drafts
 * and proposals: an agent submits them through its MCP tools; Alice (Owner of every Knowledge,
 * so Publisher) decides them in the console and the result is read back through MCP; Bob (a
 * Viewer) and Hank (another tenant) see nothing to decide, and an item's address tells them no
 * more than an unknown one.
 */

const ORG = `${ACME_ORG}grants:
  - { to: alice@acme.test, on: all_knowledge, role: owner }
  - { to: release-bot, on: all_knowledge, role: proposer }
  - { to: bob@acme.test, on: all_knowledge, role: viewer }
`;

type Structured = Record<string, unknown>;

for (const backend of storeBackends()) {
  describe(`console inbox (Alignbase) on ${backend.name}`, () => {
    let gateway: ConsoleGateway;
    let agent: Client;
    let alice: Browser;
    let knowledgeId: string;
    let draftId: string;
    let proposalId: string;
    const origin = () => ({ origin: new URL(gateway.url).origin });
    const call = async (name: string, args: Structured): Promise<Structured> => {
      const result = await agent.callTool({ name, arguments: args });
      assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
      return result.structuredContent as Structured;
    };
    const decide = async (browser: Browser, id: string, form: Record<string, string>) => {
      const page = await browser.request(`/console/inbox/alignbase/${id}`);
      return browser.request(`/console/inbox/alignbase/${id}`, { form: { csrf: csrfOf(page.text), ...form }, headers: origin() });
    };

    before(async () => {
      gateway = await startConsole(backend, ORG, [
        { tenant: 'acme', email: 'alice@acme.test' },
        { tenant: 'acme', email: 'bob@acme.test' },
      ]);
      // Globex, a second tenant (German), with Hank who may sign in.
      await seedOrg(gateway.store.db, GLOBEX_ORG);
      await setPassword(gateway.store.db, 'globex', 'hank@globex.test', PASSWORD);
      const token = await issueToken(gateway.store.db, 'acme', 'release-bot', 'context.read context.write');
      agent = await connectClient(`${gateway.url}/alignbase/mcp`, token);
      const listed = (await call('list_knowledge', {}))['knowledge'] as Structured[];
      knowledgeId = listed[0]?.['knowledge_id'] as string;
      draftId = (
        await call('create_knowledge_draft', {
          knowledge_id: knowledgeId,
          base_version: 1,
          content: '# Release checklist\n\n1. Run the tests.\n2. Update the changelog.\n3. Tag the release.\n4. Announce it.\n',
          rationale: 'We forgot to announce the last release.',
        })
      )['draft_id'] as string;
      proposalId = (await call('propose_knowledge', { title: '<script>alert(1)</script> On-call', content: '# On-call\n\nRotate weekly.\n' }))[
        'proposal_id'
      ] as string;
      alice = await signedInFetch(gateway.url, 'acme', 'alice@acme.test');
    });
    after(async () => {
      await agent?.close();
      await gateway?.close();
    });

    it('sends a browser without a session to sign in, and refuses a wrong password', async () => {
      const anonymous = new Browser(gateway.url);
      const inbox = await anonymous.request('/console/inbox');
      assert.equal(inbox.status, 303);
      assert.equal(inbox.location, `${gateway.url}/console/signin`);
      const wrong = await anonymous.request('/console/signin', { form: { tenant: 'acme', email: 'alice@acme.test', password: 'nope' }, headers: origin() });
      assert.equal(wrong.status, 401);
      assert.match(wrong.text, /The organisation, email or password is not right/);
      assert.equal(anonymous.cookie, undefined);
      const foreign = await anonymous.request('/console/signin', {
        form: { tenant: 'acme', email: 'alice@acme.test', password: PASSWORD },
        headers: { origin: 'https://evil.example' },
      });
      assert.equal(foreign.status, 403, 'a sign-in posted from another site is refused');
      const page = await anonymous.request('/console/signin');
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
      assert.doesNotMatch(page.headers.get('content-security-policy') ?? '', /unsafe-inline/);
      assert.equal(page.headers.get('x-frame-options'), 'DENY');
      assert.equal(page.headers.get('cache-control'), 'no-store');
    });

    it('lists what Alice may decide, escaped, and filters by kind and age', async () => {
      const inbox = await alice.request('/console/inbox');
      assert.equal(inbox.status, 200, inbox.text);
      assert.match(inbox.text, new RegExp(`/console/inbox/alignbase/${draftId}`));
      assert.match(inbox.text, new RegExp(`/console/inbox/alignbase/${proposalId}`));
      assert.match(inbox.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt; On-call/);
      assert.doesNotMatch(inbox.text, /<script>alert/);
      const proposals = await alice.request('/console/inbox?kind=knowledge_proposal');
      assert.doesNotMatch(proposals.text, new RegExp(draftId));
      assert.match(proposals.text, new RegExp(proposalId));
      const old = await alice.request('/console/inbox?age=7');
      assert.doesNotMatch(old.text, new RegExp(`${draftId}|${proposalId}`));
      // What is not one of the choices is no filter.
      const odd = await alice.request('/console/inbox?kind=%00&age=-1&page=zz');
      assert.equal(odd.status, 200);
      assert.match(odd.text, new RegExp(draftId));
    });

    it('shows a draft as a diff, with the agent’s reason and a publish choice', async () => {
      const page = await alice.request(`/console/inbox/alignbase/${draftId}`);
      assert.equal(page.status, 200);
      assert.match(page.text, /<ins class="add">\+4\. Announce it\.<\/ins>/);
      assert.match(page.text, /We forgot to announce the last release\./);
      assert.match(page.text, /name="publish"/);
      assert.match(page.text, /release-bot \(Alice\)/);
    });

    it('shows Bob, a Viewer, and Hank, of another tenant, nothing to decide and no more for an item than for an unknown one', async () => {
      const bob = await signedInFetch(gateway.url, 'acme', 'bob@acme.test');
      const hank = await signedInFetch(gateway.url, 'globex', 'hank@globex.test');
      for (const browser of [bob, hank]) {
        const inbox = await browser.request('/console/inbox');
        assert.equal(inbox.status, 200);
        assert.doesNotMatch(inbox.text, new RegExp(`${draftId}|${proposalId}`));
        const unknown = await browser.request('/console/inbox/alignbase/00000000-0000-4000-8000-000000000000');
        const known = await browser.request(`/console/inbox/alignbase/${draftId}`);
        assert.equal(known.status, 404);
        assert.equal(unknown.status, 404);
        assert.equal(known.text, unknown.text, 'the same page as an unknown id');
        const decided = await browser.request(`/console/inbox/alignbase/${draftId}`, {
          form: { csrf: csrfOf(inbox.text), decision: 'accept' },
          headers: origin(),
        });
        assert.equal(decided.status, 404);
      }
      assert.match((await hank.request('/console/inbox')).text, /lang="de"/, 'Globex’s language is German');
      assert.match((await hank.request('/console/inbox')).text, /Eingang/);
    });

    it('refuses a decision without the session’s CSRF value, from another site, or with text the store cannot hold, changing nothing', async () => {
      const noCsrf = await alice.request(`/console/inbox/alignbase/${draftId}`, { form: { decision: 'accept' }, headers: origin() });
      assert.equal(noCsrf.status, 403);
      const page = await alice.request(`/console/inbox/alignbase/${draftId}`);
      const csrf = csrfOf(page.text);
      const foreign = await alice.request(`/console/inbox/alignbase/${draftId}`, {
        form: { csrf, decision: 'accept' },
        headers: { origin: 'https://evil.example' },
      });
      assert.equal(foreign.status, 403);
      const nul = await alice.request(`/console/inbox/alignbase/${proposalId}`, { form: { csrf, decision: 'reject', note: 'a\u0000b' }, headers: origin() });
      assert.equal(nul.status, 400);
      assert.match(nul.text, /must not contain NUL/);
      const long = await alice.request(`/console/inbox/alignbase/${proposalId}`, {
        form: { csrf, decision: 'reject', note: 'n'.repeat(2001) },
        headers: origin(),
      });
      assert.equal(long.status, 400);
      const encodedSurrogate = await fetch(`${gateway.url}/console/inbox/alignbase/${proposalId}`, {
        method: 'POST',
        headers: { cookie: alice.cookie ?? '', 'content-type': 'application/x-www-form-urlencoded', ...origin() },
        body: `csrf=${encodeURIComponent(csrf)}&decision=reject&note=%ED%A0%80`,
      });
      assert.equal(encodedSurrogate.status, 400, 'an encoded lone surrogate is refused, not turned into U+FFFD');
      const twice = await fetch(`${gateway.url}/console/inbox/alignbase/${draftId}`, {
        method: 'POST',
        headers: { cookie: alice.cookie ?? '', 'content-type': 'application/x-www-form-urlencoded', ...origin() },
        body: `csrf=${encodeURIComponent(csrf)}&decision=accept&decision=reject`,
      });
      assert.equal(twice.status, 400);
      const badBytes = await fetch(`${gateway.url}/console/inbox/alignbase/${draftId}`, {
        method: 'POST',
        headers: { cookie: alice.cookie ?? '', 'content-type': 'application/x-www-form-urlencoded', ...origin() },
        body: Buffer.concat([Buffer.from(`csrf=${encodeURIComponent(csrf)}&decision=reject&note=`), Buffer.from([0xff, 0xfe])]),
      });
      assert.equal(badBytes.status, 400);
      const huge = await fetch(`${gateway.url}/console/inbox/alignbase/${draftId}`, {
        method: 'POST',
        headers: { cookie: alice.cookie ?? '', 'content-type': 'application/x-www-form-urlencoded', ...origin() },
        body: `csrf=${encodeURIComponent(csrf)}&decision=reject&note=${'x'.repeat(70_000)}`,
      });
      assert.equal(huge.status, 413);
      const still = await alice.request('/console/inbox');
      assert.match(still.text, new RegExp(draftId), 'still open');
      assert.match(still.text, new RegExp(proposalId), 'still open');
    });

    it('accepts a draft and publishes it, as MCP then reads; a second decision shows the first', async () => {
      const accepted = await decide(alice, draftId, { decision: 'accept', publish: 'on' });
      assert.equal(accepted.status, 303, accepted.text);
      const page = await alice.request(accepted.location ?? '');
      assert.match(page.text, /Accepted by alice@acme\.test/);
      assert.match(page.text, /Saved as version 2\./);
      const read = await call('read_knowledge', { knowledge_id: knowledgeId, version: 'latest' });
      assert.equal(read['version'], 2);
      assert.equal(read['published_version'], 2);
      assert.match(read['content'] as string, /Announce it/);
      const again = await alice.request(`/console/inbox/alignbase/${draftId}`, {
        form: { csrf: csrfOf((await alice.request('/console/inbox')).text), decision: 'reject' },
        headers: origin(),
      });
      assert.equal(again.status, 409, 'a decision on a decided item shows the decision made, and no form');
      assert.match(again.text, /was already accepted/);
      assert.match(again.text, /Accepted by alice@acme\.test/);
      assert.doesNotMatch(again.text, /name="decision"/);
      assert.equal((await call('read_knowledge', { knowledge_id: knowledgeId, version: 'latest' }))['version'], 2);
    });

    it('rejects a proposal with a note, and flags a stale draft, accepted only when asked to replace the latest', async () => {
      const rejected = await decide(alice, proposalId, { decision: 'reject', note: '  Not ours to own.  ' });
      assert.equal(rejected.status, 303);
      const page = await alice.request(rejected.location ?? '');
      assert.match(page.text, /Rejected by alice@acme\.test/);
      assert.match(page.text, /Not ours to own\./);
      const stale = (await call('create_knowledge_draft', { knowledge_id: knowledgeId, base_version: 1, content: '# Old base\n' }))['draft_id'] as string;
      const inbox = await alice.request('/console/inbox');
      assert.match(inbox.text, /class="badge warn"/);
      const refused = await decide(alice, stale, { decision: 'accept' });
      assert.equal(refused.status, 409);
      assert.match(refused.text, /is stale/);
      const forced = await decide(alice, stale, { decision: 'accept', force: 'on' });
      assert.equal(forced.status, 303);
      assert.equal((await call('read_knowledge', { knowledge_id: knowledgeId, version: 'latest' }))['content'], '# Old base\n');
    });

    it('decides once when two decisions arrive at once', async () => {
      const draft = (await call('create_knowledge_draft', { knowledge_id: knowledgeId, base_version: 3, content: '# Raced\n' }))['draft_id'] as string;
      const second = await signedInFetch(gateway.url, 'acme', 'alice@acme.test');
      const forms = await Promise.all([alice, second].map(async (b) => csrfOf((await b.request(`/console/inbox/alignbase/${draft}`)).text)));
      const results = await Promise.all(
        [alice, second].map((b, i) =>
          b.request(`/console/inbox/alignbase/${draft}`, { form: { csrf: forms[i]!, decision: i === 0 ? 'accept' : 'reject' }, headers: origin() }),
        ),
      );
      assert.deepEqual(results.map((r) => r.status).sort(), [303, 409]);
      const latest = await call('read_knowledge', { knowledge_id: knowledgeId, version: 'latest' });
      assert.ok(latest['version'] === 3 || latest['version'] === 4);
    });

    it('signs out', async () => {
      const browser = await signedInFetch(gateway.url, 'acme', 'alice@acme.test');
      const csrf = csrfOf((await browser.request('/console/inbox')).text);
      const out = await browser.request('/console/signout', { form: { csrf }, headers: origin() });
      assert.equal(out.status, 303);
      assert.equal(browser.cookie, undefined);
      assert.equal((await browser.request('/console/inbox')).status, 303);
    });
  });
}
