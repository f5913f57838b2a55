import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { applyOrgFile } from '../../src/org-sections.ts';
import type { Browser } from '../oauth/support.ts';
import { cliTrail } from '../support/audit.ts';
import { ACME_ORG, GLOBEX_ORG, connectClient, issueToken, seedOrg } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';
import type { ConsoleGateway } from './support.ts';
import { csrfOf, signedInFetch, startConsole } from './support.ts';

/**
 * The Admin section's organisation and backends pages through HTTP: Alice administers Acme and
 * reads its people, agents, groups, teams, grants and routes as the org file has them, and
 * downloads the file, which applied again changes nothing; Bob, who does not administer, finds
 * none of it; Globex's people are nowhere in Acme's pages or file.
 */

// A group whose name holds a bidi override and markup, grants of every kind and a route.
const ORG = `${ACME_ORG.replace('    name: Alice\n', '    name: Alice\n    admin: true\n').replace(
  'groups:\n',
  'groups:\n  - name: "ops\\u202e<b>x"\n    members: [bob@acme.test]\n',
)}grants:
  - { to: bob@acme.test, on: "knowledge:Release checklist", role: editor }
  - { to: "group:eng", on: all_knowledge, role: viewer }
routes:
  - { deliver: "knowledge:Release checklist", to: release-bot }
`;

for (const backend of storeBackends()) {
  describe(`console admin organisation on ${backend.name}`, () => {
    let gateway: ConsoleGateway;
    let alice: Browser;
    let bob: Browser;

    before(async () => {
      gateway = await startConsole(backend, ORG, [
        { tenant: 'acme', email: 'alice@acme.test' },
        { tenant: 'acme', email: 'bob@acme.test' },
      ]);
      await seedOrg(gateway.store.db, GLOBEX_ORG);
      alice = await signedInFetch(gateway.url, 'acme', 'alice@acme.test');
      bob = await signedInFetch(gateway.url, 'acme', 'bob@acme.test');
    });
    after(async () => {
      await gateway?.close();
    });

    it('shows the organisation as the org file has it, each list escaped, no other tenant in it', async () => {
      const overview = await alice.request('/console/admin/org');
      assert.equal(overview.status, 200, overview.text);
      assert.match(overview.text, /People<\/a> \(2\)/);
      assert.match(overview.text, /Grants<\/a> \(2\)/);
      assert.match(overview.text, /Routes<\/a> \(1\)/);
      assert.match(overview.text, /href="[^"]*\/console\/admin\/org\.yaml"/);

      const people = await alice.request('/console/admin/org/people');
      assert.equal(people.status, 200);
      assert.match(people.text, /alice@acme\.test/);
      assert.match(people.text, /bob@acme\.test/);
      const groups = await alice.request('/console/admin/org/groups');
      // The override is shown as its escape, and the markup as text.
      assert.match(groups.text, /ops\\u\{202E\}&lt;b&gt;x|ops\\u202e&lt;b&gt;x/i);
      assert.doesNotMatch(groups.text, /\u202e|<b>x/);
      const grants = await alice.request('/console/admin/org/grants');
      assert.match(grants.text, /<td>knowledge:Release checklist<\/td><td>editor<\/td>/);
      assert.match(grants.text, /<td>group:eng<\/td><td>all_knowledge<\/td><td>viewer<\/td>/);
      const routes = await alice.request('/console/admin/org/routes');
      assert.match(routes.text, /<td>knowledge:Release checklist<\/td><td>release-bot<\/td>/);
      for (const part of ['agents', 'teams', 'kbs']) assert.equal((await alice.request(`/console/admin/org/${part}`)).status, 200, part);
      for (const page of [overview, people, groups, grants, routes]) assert.doesNotMatch(page.text, /globex|hank/i);
    });

    it('downloads an org file that applied again changes nothing', async () => {
      const file = await alice.request('/console/admin/org.yaml');
      assert.equal(file.status, 200);
      assert.match(file.headers.get('content-disposition') ?? '', /attachment; filename="org\.yaml"/);
      assert.match(file.headers.get('content-type') ?? '', /^application\/yaml/);
      assert.doesNotMatch(file.text, /globex|hank/i);
      const read = parse(file.text) as { tenant: string; people: unknown[]; grants: unknown[]; routes: unknown[] };
      assert.equal(read.tenant, 'acme');
      assert.equal(read.people.length, 2);
      assert.equal(read.grants.length, 2);
      assert.equal(read.routes.length, 1);
      const result = await applyOrgFile(gateway.store.db, { source: file.text, dryRun: true }, cliTrail(gateway.store.db));
      assert.deepEqual(result.changes, []);
    });

    it('refuses an unknown list and a page out of range as unknown pages', async () => {
      for (const path of [
        '/console/admin/org/passwords',
        '/console/admin/org/people?page=2',
        '/console/admin/org/people?page=0',
        '/console/admin/org/people?page=x',
      ])
        assert.ok([400, 404].includes((await alice.request(path)).status), path);
      assert.equal((await alice.request('/console/admin/org/passwords')).status, 404);
    });

    it('shows the backends as /readyz has them, and search provisioning', async () => {
      const page = await alice.request('/console/admin/backends');
      assert.equal(page.status, 200, page.text);
      const ready = (await (await fetch(`${gateway.url}/readyz`)).json()) as { backends: Record<string, { backend: string }> };
      for (const [role, { backend: name }] of Object.entries(ready.backends)) assert.match(page.text, new RegExp(`<td>${role}</td><td>${name}</td>`));
      assert.match(page.text, /Search provisioning/);
    });

    it('shows what agents reported through Activity, and switches Activity as kgw activity does', async () => {
      const agent = await connectClient(
        `${gateway.url}/alignbase/mcp`,
        await issueToken(gateway.store.db, 'acme', 'release-bot', 'context.read activity.write'),
      );
      try {
        const reported = await agent.callTool({
          name: 'report_installation_capabilities',
          arguments: { integration: 'claude-code', transport: 'stdio', capabilities: ['context_load'], client_version: '2.1.0' },
        });
        assert.equal(reported.isError, undefined, JSON.stringify(reported.content));
        const installation = (reported.structuredContent as { local_installation_id: string }).local_installation_id;
        const record = () =>
          agent.callTool({ name: 'record_activity_event', arguments: { local_installation_id: installation, event: { type: 'context_loaded' } } });
        assert.equal((await record()).isError, undefined);

        const page = await alice.request('/console/activity');
        assert.equal(page.status, 200, page.text);
        assert.match(page.text, /<td>release-bot<\/td><td>claude-code<\/td>/);
        assert.match(page.text, /<td>context_loaded<\/td>/);
        assert.match(page.text, /Activity is on/);
        assert.equal((await alice.request('/console/activity?agent=release-bot')).status, 200);
        const unknownAgent = await alice.request('/console/activity?agent=nobody');
        assert.equal(unknownAgent.status, 400);
        assert.match(unknownAgent.text, /no agent &quot;nobody&quot;|no agent "nobody"/);
        assert.equal((await alice.request(`/console/activity?agent=${'a'.repeat(201)}`)).status, 400);
        assert.equal((await alice.request('/console/activity?agent=a%00b')).status, 400);

        const origin = { origin: new URL(gateway.url).origin };
        assert.equal((await alice.request('/console/activity', { form: { csrf: csrfOf(page.text), enabled: 'maybe' }, headers: origin })).status, 400);
        const off = await alice.request('/console/activity', { form: { csrf: csrfOf(page.text), enabled: 'off' }, headers: origin });
        assert.equal(off.status, 303, off.text);
        const refused = await record();
        assert.equal(refused.isError, true);
        assert.match(JSON.stringify(refused.content), /Activity is disabled for this tenant/);
        assert.match((await alice.request('/console/activity')).text, /Activity is off/);
        const on = await alice.request('/console/activity', { form: { csrf: csrfOf(page.text), enabled: 'on' }, headers: origin });
        assert.equal(on.status, 303);
        assert.equal((await record()).isError, undefined);
      } finally {
        await agent.close();
      }
    });

    it('gives a non-administrator none of these pages, as unknown ones', async () => {
      const unknown = await bob.request('/console/nothing/here');
      const inbox = await bob.request('/console/inbox');
      assert.doesNotMatch(inbox.text, /\/console\/activity/);
      const posted = await bob.request('/console/activity', {
        form: { csrf: csrfOf(inbox.text), enabled: 'off' },
        headers: { origin: new URL(gateway.url).origin },
      });
      assert.equal(posted.status, 404);
      for (const path of ['/console/admin/org', '/console/admin/org/people', '/console/admin/org.yaml', '/console/admin/backends', '/console/activity']) {
        const page = await bob.request(path);
        assert.equal(page.status, 404, path);
        assert.equal(page.text, unknown.text, path);
      }
    });
  });
}
