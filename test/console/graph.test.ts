import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { GraphJson } from '../../src/brain/console/graph.ts';
import { brainGraph, GRAPH_DRAW_MAX_NODES } from '../../src/brain/console/graph.ts';
import type { ConsolePerson } from '../../src/console/contract.ts';
import { AuditTrail } from '../../src/kernel/audit/trail.ts';
import type { Browser } from '../oauth/support.ts';
import { PASSWORD, setPassword } from '../oauth/support.ts';
import { drainedOutbox, seedOrg } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';
import type { ConsoleGateway } from './support.ts';
import { signedInFetch, startConsole } from './support.ts';

/*
 * The console's Organisation graph over real HTTP: a person of a low tier gets the graph's page,
 * its JSON and a node's page without one id, title or relation of a node above their tier (only
 * its count); the filters narrow the list and the drawing's data; a node they may not see and
 * another tenant's node are the same Not found as an unknown id; German pages for a German
 * organisation; and the section is offered only to a principal of the tenant holding brain:read.
 */

const ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: ada@acme.test, name: Ada, tier: restricted, brain_role: admin }
  - { email: pia@acme.test, name: Pia, tier: public }
brain:
  nodes:
    - { id: erp, type: tool, title: ERP, summary: Our invoicing system, access: public }
    - { id: crm, type: tool, title: CRM, access: public, mark: inferred }
    - { id: wiki, type: tool, title: Wiki, access: public, freshness: { verified: 2024-01-01, review_by: "2024-06-01T00:00:00Z" } }
    - { id: sales, type: department, title: Sales team, access: public }
    - { id: falcon, type: strategy, title: Project Falcon, summary: Acquire Globex in the third quarter, access: restricted }
    - { id: invoice-approval, type: SOP / process, title: Invoice approval, access: department, department: Finance }
  relations:
    - { from: crm, verb: uses, to: erp }
    - { from: crm, verb: needs clarification with, to: wiki }
    - { from: falcon, verb: depends on, to: erp }
    - { from: invoice-approval, verb: uses, to: erp, mark: unresolved }
`;

const GLOBEX = `tenant: globex
name: Globex
language: de
people:
  - { email: gus@globex.test, name: Gus, tier: public }
brain:
  nodes:
    - { id: globex-plan, type: strategy, title: Globex plan, access: public }
`;

/** What a page or answer of Pia's must never hold: the ids and titles of the nodes above her tier. */
const SECRETS = ['falcon', 'Project Falcon', 'Acquire Globex', 'invoice-approval', 'Invoice approval'];

function assertNoSecrets(text: string, where: string): void {
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `${where} holds "${secret}"`);
}

for (const backend of storeBackends()) {
  describe(`the console's Organisation graph on ${backend.name}`, () => {
    let gw: ConsoleGateway;
    let ada: Browser;
    let pia: Browser;
    let gus: Browser;

    const json = async (browser: Browser, query = ''): Promise<{ raw: string; data: GraphJson }> => {
      const answer = await browser.request(`/console/graph/data${query}`);
      assert.equal(answer.status, 200, answer.text);
      return { raw: answer.text, data: JSON.parse(answer.text) as GraphJson };
    };

    before(async () => {
      gw = await startConsole(backend, ORG, [
        { tenant: 'acme', email: 'ada@acme.test' },
        { tenant: 'acme', email: 'pia@acme.test' },
      ]);
      await seedOrg(gw.store.db, GLOBEX);
      await setPassword(gw.store.db, 'globex', 'gus@globex.test', PASSWORD);
      await drainedOutbox(gw.store.db);
      ada = await signedInFetch(gw.url, 'acme', 'ada@acme.test');
      pia = await signedInFetch(gw.url, 'acme', 'pia@acme.test');
      gus = await signedInFetch(gw.url, 'globex', 'gus@globex.test');
    });
    after(async () => gw?.close());

    it('offers the section in the navigation, in the organisation’s language', async () => {
      const inbox = await pia.request('/console/inbox');
      assert.match(inbox.text, /<a href="[^"]*\/console\/graph">Organisation graph<\/a>/);
      const german = await gus.request('/console/graph');
      assert.equal(german.status, 200);
      assert.match(german.text, /<h1>Organisationsgraph<\/h1>/);
      assert.match(german.text, /Knotentyp/);
    });

    it('gives a low tier the graph without a hidden node, only their count', async () => {
      const page = await pia.request('/console/graph');
      assert.equal(page.status, 200, page.text);
      assertNoSecrets(page.text, 'the graph page');
      assert.match(page.text, /ERP/);
      assert.match(page.text, /<script src="[^"]*\/console\/static\/graph\/cytoscape\.min\.js" defer><\/script>/);
      assert.match(page.text, /<script src="[^"]*\/console\/static\/graph\/graph\.js" defer><\/script>/);
      const { raw, data } = await json(pia);
      assertNoSecrets(raw, 'the graph JSON');
      const all = await json(ada);
      assert.equal(all.data.hidden, 0);
      assert.ok(data.hidden >= 2, `hidden ${data.hidden}`);
      assert.equal(data.matching + data.hidden, all.data.matching, 'what Pia sees and what is counted add up to the whole graph');
      assert.match(page.text, new RegExp(`data-hidden="${data.hidden}"`));
      assert.ok(all.raw.includes('Project Falcon'), 'a restricted person sees the restricted node');
      // No relation of Pia's data leads to a node she was not given.
      const ids = new Set(data.nodes.map((n) => n.id));
      for (const r of data.relations) assert.ok(ids.has(r.from) && ids.has(r.to), `${r.from} ${r.verb} ${r.to}`);
      assert.equal(data.maxNodes, GRAPH_DRAW_MAX_NODES);
    });

    it('shows marks and gaps', async () => {
      const { data } = await json(pia);
      const crm = data.nodes.find((n) => n.id === 'crm');
      assert.equal(crm?.mark, 'inferred');
      assert.deepEqual(crm?.gaps, ['clarification']);
      assert.deepEqual(data.nodes.find((n) => n.id === 'wiki')?.gaps, ['clarification', 'stale_evidence']);
      assert.deepEqual(data.nodes.find((n) => n.id === 'sales')?.gaps, ['sparse_theme']);
      assert.equal(data.relations.find((r) => r.from === 'crm' && r.to === 'wiki')?.gap, true);
      assert.equal(data.relations.find((r) => r.from === 'crm' && r.to === 'erp')?.gap, false);
      const page = await pia.request('/console/graph');
      assert.match(page.text, /⚠ inferred/);
      assert.match(page.text, /gap:stale_evidence/);
      assert.match(page.text, /gap:clarification/);
      const adas = await json(ada);
      assert.equal(adas.data.relations.find((r) => r.from === 'invoice-approval')?.mark, 'unresolved');
    });

    it('filters by node type and access tier, in the page and in the JSON', async () => {
      const tools = await json(pia, '?type=tool');
      assert.deepEqual(tools.data.nodes.map((n) => n.id).sort(), ['crm', 'erp', 'wiki']);
      const page = await pia.request('/console/graph?type=tool');
      assert.match(page.text, /<option value="tool" selected>tool<\/option>/);
      assert.match(page.text, /data-source="[^"]*\/console\/graph\/data\?type=tool"/);
      assert.ok(!page.text.slice(page.text.indexOf('id="graph-nodes"')).includes('Sales team'), 'the list holds only tools');
      // Pia's tier choices are only those she clears; another is no filter.
      assert.ok(!page.text.includes('<option value="restricted"'));
      const above = await json(pia, '?tier=restricted');
      assert.equal(above.data.matching, (await json(pia)).data.matching);
      assertNoSecrets(above.raw, 'the JSON filtered by a tier above hers');
      const restricted = await json(ada, '?tier=restricted');
      assert.deepEqual(
        restricted.data.nodes.map((n) => n.id),
        ['falcon'],
      );
      const none = await json(pia, '?type=strategy');
      assert.equal(none.data.matching, (await json(pia)).data.matching, 'a type she sees none of is no choice');
      assert.ok(!page.text.includes('<option value="strategy"'), 'nor is it offered');
    });

    it('shows a node’s fields and relations, with relations to hidden nodes only counted', async () => {
      const page = await pia.request('/console/graph/node/erp');
      assert.equal(page.status, 200, page.text);
      assertNoSecrets(page.text, 'the ERP page');
      assert.match(page.text, /<h1>ERP<\/h1>/);
      assert.match(page.text, /Our invoicing system/);
      assert.match(page.text, /<a href="[^"]*\/console\/graph\/node\/crm">CRM<\/a>/);
      assert.match(page.text, /data-hidden-relations="2"/);
      const crm = await pia.request('/console/graph/node/crm');
      assert.match(crm.text, /⚠ inferred/);
      assert.match(crm.text, /gap:clarification/);
      // A node of the directory, whose id holds a colon, and a person as the org file names them.
      const person = (await json(pia)).data.nodes.find((n) => n.type === 'person' && n.title === 'Pia');
      assert.ok(person);
      assert.match((await pia.request(new URL(person.url).pathname)).text, /<h1>Pia<\/h1>/);
      assert.match((await pia.request('/console/graph/node/person%3Apia%40acme.test')).text, /<h1>Pia<\/h1>/);
      const german = await gus.request('/console/graph/node/globex-plan');
      assert.match(german.text, /Felder/);
      assert.match(german.text, /Zurück zum Graphen/);
      const adas = await ada.request('/console/graph/node/erp');
      assert.match(adas.text, /Project Falcon/);
      assert.ok(!adas.text.includes('data-hidden-relations'));
    });

    it('answers a hidden node, another tenant’s and an unknown id with the same Not found', async () => {
      const unknown = await pia.request('/console/graph/node/no-such-node');
      assert.equal(unknown.status, 404);
      for (const id of ['falcon', 'invoice-approval', 'globex-plan']) {
        const page = await pia.request(`/console/graph/node/${id}`);
        assert.equal(page.status, 404, id);
        assert.equal(page.text, unknown.text, id);
      }
      assert.equal((await ada.request('/console/graph/node/globex-plan')).status, 404);
      assert.equal((await ada.request('/console/graph/node/falcon')).status, 200);
      assert.equal((await gus.request('/console/graph/node/erp')).status, 404);
      assert.equal((await gus.request('/console/graph/node/globex-plan')).status, 200);
    });

    it('is offered only to a principal of the tenant who holds brain:read', async () => {
      const services = gw.gateway.services;
      const [row] = await gw.store.db.query<{ id: string; tenant_id: string }>(
        "SELECT p.id, p.tenant_id FROM principals p JOIN tenants t ON t.id = p.tenant_id WHERE t.slug = 'acme' AND p.email = 'pia@acme.test'",
      );
      assert.ok(row);
      const tenant = { id: row.tenant_id, slug: 'acme', name: 'Acme Inc.', language: 'en' };
      const personOf = (principalId: string, scopes: readonly string[]): ConsolePerson => ({
        services,
        tenant,
        person: { id: principalId, name: 'Pia', email: 'pia@acme.test' },
        caller: {
          tenant,
          principal: { id: principalId, kind: 'person', name: 'Pia', email: 'pia@acme.test', ownerId: undefined },
          scopes: new Set(scopes) as ConsolePerson['caller']['scopes'],
          tokenId: 'console',
        },
        lang: 'en',
        audit: AuditTrail.forSurface(services.audit, 'console').about({ tenantId: tenant.id, principalId }),
      });
      assert.equal(await brainGraph.visibleTo(personOf(row.id, ['brain:read'])), true);
      assert.equal(await brainGraph.visibleTo(personOf(row.id, [])), false, 'without brain:read');
      assert.equal(await brainGraph.visibleTo(personOf('00000000-0000-4000-8000-000000000000', ['brain:read'])), false, 'not of the tenant');
    });
  });
}
