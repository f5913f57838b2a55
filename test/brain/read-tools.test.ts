import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { importBrain } from '../../src/brain/import.ts';
import type { Db } from '../../src/store/db.ts';
import { cliTrail } from '../support/audit.ts';
import { connectClient, drainedOutbox, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { RunningGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import type { SearchEngine } from '../search/engines.ts';
import { searchEngines } from '../search/engines.ts';

/*
 * Company Brain's reading tools through the SDK's client over HTTP, on each store and graph
 * store: what a token sees at its tier, and that it learns only the count of what is hidden. A
 * canary string sits in every field of every hidden node; no answer to a token below it may
 * hold it.
 */

const CANARY = 'zebracanary';

const org = (slug: string, language = 'en') => `tenant: ${slug}
name: ${slug} Ltd
language: ${language}
people:
  - { email: ana@${slug}.test, name: Ana, tier: department, departments: [Finance] }
  - { email: ben@${slug}.test, name: Ben, tier: manager, brain_role: manager }
  - { email: cy@${slug}.test, name: Cy }
  - { email: eve@${slug}.test, name: Eve, tier: executive, departments: [Leadership] }
brain:
  nodes:
    - id: invoice-approval
      type: SOP / process
      title: Invoice approval
      summary: Invoices above the threshold need a second signature in the ERP.
      access: department
      department: Finance
      metadata: { Owner: Ana, Approval threshold: "5,000 EUR" }
      tags: [finance]
      freshness: { verified: 2025-01-01, review_by: 2025-06-01 }
    - { id: erp, type: tool, title: ERP system, summary: The ledger and invoices live here., access: public }
    - { id: crm, type: tool, title: CRM, summary: Customer records., access: public, mark: inferred }
    - id: pricing
      type: strategy
      title: ${CANARY} pricing
      summary: Secret ${CANARY} plan for invoices.
      access: executive
      tags: [${CANARY}]
      metadata: { Owner: ${CANARY} }
    - { id: payroll, type: data source, title: Payroll ${CANARY}, summary: Salaries ${CANARY} invoices., access: hr }
  relations:
    - { from: invoice-approval, verb: uses, to: erp }
    - { from: "person:ana@${slug}.test", verb: owns, to: invoice-approval }
    - { from: pricing, verb: uses, to: erp }
    - { from: payroll, verb: supports, to: erp }
    - { from: crm, verb: needs clarification with, to: "person:ben@${slug}.test", mark: unresolved }
    - { from: crm, verb: depends on, to: erp }
    - { from: erp, verb: supports, to: "department:Finance" }
`;

const textOf = (result: CallToolResult): string =>
  result.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

interface Harness {
  readonly name: string;
  open(): SearchEngine;
}

/** The graph tables and the built-in engine; Neo4j (graph) and Meilisearch (query_index) each beside them where configured. */
function harnesses(): Harness[] {
  const list: Harness[] = searchEngines().map((engine) => ({ name: `graph tables, ${engine.name}`, open: () => engine.open() }));
  const url = process.env.KGW_TEST_NEO4J_URL;
  if (url !== undefined && url !== '') {
    const env = { NEO4J_URL: url, NEO4J_USER: process.env.KGW_TEST_NEO4J_USER ?? 'neo4j', NEO4J_PASSWORD: process.env.KGW_TEST_NEO4J_PASSWORD ?? 'neo4j' };
    list.push({ name: 'neo4j, builtin', open: () => ({ name: 'builtin', env, dispose: () => Promise.resolve() }) });
  }
  return list;
}

for (const backend of storeBackends()) {
  for (const harness of harnesses()) {
    describe(`Company Brain reading tools on ${backend.name}, ${harness.name}`, () => {
      let store: TestStore;
      let db: Db;
      let running: RunningGateway;
      let engine: SearchEngine;
      const clients: Client[] = [];
      // Tenant slugs unique per run: a Neo4j server is shared by every suite.
      const run = Math.random().toString(36).slice(2, 8);
      const tenant = `brain-${run}`;
      const german = `hirn-${run}`;
      const empty = `empty-${run}`;

      /** Waits until the outbox is drained: the graph store and the engine show every write. */
      async function settled(): Promise<void> {
        await drainedOutbox(db);
      }

      async function as(person: string, scopes = 'brain:read', slug = tenant): Promise<Client> {
        const token = await issueToken(db, slug, `${person}@${slug}.test`, scopes);
        const client = await connectClient(`${running.url}/brain/mcp`, token);
        clients.push(client);
        return client;
      }

      const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
        (await client.callTool({ name, arguments: args })) as CallToolResult;
      const ok = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
        const result = await call(client, name, args);
        assert.notEqual(result.isError, true, textOf(result));
        return textOf(result);
      };

      before(async () => {
        store = await backend.open({ migrated: true });
        db = store.db;
        await seedOrg(db, org(tenant));
        await seedOrg(db, org(german, 'de'));
        await seedOrg(db, `tenant: ${empty}\nname: Empty\npeople:\n  - { email: cy@${empty}.test, name: Cy }\n`);
        engine = harness.open();
        running = await startGateway(db, { ...engine.env }, { outboxWorker: { idleMs: 10, backoff: { baseMs: 20, maxMs: 500 } } });
        await settled();
      });
      after(async () => {
        for (const client of clients) await client.close();
        await running.close();
        await engine.dispose();
        await store.dispose();
      });

      it('lists the reading tools on /brain/mcp for a brain:read token, and no proposal tool', async () => {
        const { tools } = await (await as('cy')).listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), [
          'get_onboarding_action_catalog',
          'get_onboarding_status',
          'get_skill_pack',
          'list_gaps',
          'query_index',
          'read_concept',
        ]);
        assert.equal(tools.find((t) => t.name === 'get_skill_pack')?.annotations?.readOnlyHint, false);
        assert.equal(tools.find((t) => t.name === 'read_concept')?.annotations?.readOnlyHint, true);
      });

      it('reads a concept with its contract tokens, visible relations and the count of hidden ones', async () => {
        const text = await ok(await as('ana'), 'read_concept', { id: 'erp' });
        const lines = text.split('\n');
        assert.equal(lines[0], '[erp] ERP system');
        assert.ok(lines.includes('Type: tool') && lines.includes('Access: public'));
        assert.ok(lines.includes('- Evidence status: unverified'));
        assert.ok(lines.includes('- [invoice-approval] Invoice approval (SOP / process) uses [erp]'));
        assert.ok(lines.includes('- [crm] CRM (tool) depends on [erp]'));
        assert.ok(lines.includes('[hidden:2] 2 more relations lead to nodes above your access tier.'), text);
        assert.ok(!text.includes(CANARY) && !text.includes('pricing') && !text.includes('payroll'));
      });

      it('shows marks, metadata in contract order and freshness instants', async () => {
        const text = await ok(await as('ana'), 'read_concept', { id: 'invoice-approval' });
        assert.match(text, /\n- Owner: Ana\n- Approval threshold: 5,000 EUR\n/);
        assert.match(text, /\n- Evidence status: stale\n- Verified: 2025-01-01T00:00:00\.000Z\n- Review by: 2025-06-01T00:00:00\.000Z\n/);
        const crm = await ok(await as('ben'), 'read_concept', { id: 'crm' });
        assert.ok(crm.split('\n').includes('⚠ inferred hypothesis; needs confirmation'), crm);
        assert.match(crm, /- \[crm\] needs clarification with \[person:[0-9a-f-]{36}\] Ben \(person\) ⚠ unresolved mapping; not a fact/);
      });

      it('refuses an unknown id and a node above the tier with two different verbatim texts, and a department node outside the viewer’s departments as above it', async () => {
        const cy = await as('cy');
        const unknown = await call(cy, 'read_concept', { id: 'no-such-node' });
        const above = await call(cy, 'read_concept', { id: 'pricing' });
        const otherDepartment = await call(await as('cy'), 'read_concept', { id: 'invoice-approval' });
        assert.deepEqual(
          { unknown: [unknown.isError, textOf(unknown)], above: [above.isError, textOf(above)], otherDepartment: textOf(otherDepartment) },
          {
            unknown: [true, 'Unknown node: no node has this id.'],
            above: [true, 'Access denied: this node is above your access tier.'],
            otherDepartment: 'Access denied: this node is above your access tier.',
          },
        );
        assert.equal(textOf(await call(await as('eve'), 'read_concept', { id: 'pricing' })).split('\n')[0], `[pricing] ${CANARY} pricing`);
      });

      it('finds visible nodes ranked, hides the rest and counts them exactly', async () => {
        const cyText = await ok(await as('cy'), 'query_index', { query: 'invoices' });
        assert.ok(
          cyText.split('\n').some((l) => l.startsWith('1. [erp] ERP system · tool · access public')),
          cyText,
        );
        // invoice-approval (Finance), pricing (executive) and payroll (hr) match but are hidden from a public viewer.
        assert.ok(cyText.split('\n').includes('[hidden:3] 3 more matches are hidden behind a higher access tier.'), cyText);
        assert.ok(!cyText.includes(CANARY) && !cyText.includes('invoice-approval'));
        const anaText = await ok(await as('ana'), 'query_index', { query: 'invoices', types: ['SOP / process'] });
        assert.ok(
          anaText.split('\n').some((l) => l.startsWith('1. [invoice-approval] Invoice approval · SOP / process · access department')),
          anaText,
        );
        assert.ok(!anaText.includes('[erp]'));
        assert.ok(anaText.includes('[hidden:0]') === false);
        const none = await ok(await as('cy'), 'query_index', { query: 'xylophones' });
        assert.equal(none, 'No visible node matches the query.');
      });

      it('refuses query_index input outside its bounds in the dialect’s words, and a token without brain:read as Forbidden', async () => {
        const cy = await as('cy');
        for (const args of [
          { query: 'x' },
          { query: 'erp', limit: 0 },
          { query: 'erp', limit: 21 },
          { query: 'erp', types: ['robot'] },
          { query: 'erp', extra: 1 },
        ]) {
          const result = await call(cy, 'query_index', args);
          assert.equal(result.isError, true, JSON.stringify(args));
          assert.match(textOf(result), /^Invalid input: /, JSON.stringify(args));
        }
        const noScope = await as('cy', 'brain:propose');
        await assert.rejects(noScope.callTool({ name: 'get_skill_pack', arguments: {} }), /Forbidden/);
        const [revisions] = await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM brain_skill_pack_revisions r JOIN tenants t ON t.id = r.tenant_id WHERE t.slug = $1',
          [tenant],
        );
        assert.equal(revisions?.n ?? 0, 0);
      });

      it('lists the gaps of the visible graph, one marker per line, in a fixed order', async () => {
        const text = await ok(await as('ben'), 'list_gaps');
        const lines = text.split('\n');
        assert.deepEqual(
          lines.map((l) => l.replace(/person:[0-9a-f-]{36}/g, 'person:…')),
          [
            '[gap:clarification] [crm] CRM needs to be clarified: needs clarification with [person:…] Ben',
            `[gap:thin_link] [department:Finance] Finance is part of [org] ${tenant} Ltd: is the only relation holding two parts of the graph together.`,
            '[gap:stale_evidence] [invoice-approval] Invoice approval has evidence past its review date: 2025-06-01T00:00:00.000Z',
          ],
        );
        const cyText = await ok(await as('cy'), 'list_gaps');
        assert.ok(!cyText.includes('invoice-approval') && !cyText.includes(CANARY), cyText);
      });

      it('gives no token below the hidden nodes’ tiers their canary, id or tag in any answer of any tool, the skill pack included', async () => {
        for (const person of ['cy', 'ana', 'ben']) {
          const client = await as(person);
          const answers = [
            await ok(client, 'get_skill_pack'),
            await ok(client, 'list_gaps'),
            await ok(client, 'query_index', { query: CANARY }),
            await ok(client, 'query_index', { query: 'invoices', limit: 20 }),
            await ok(client, 'query_index', { query: 'plan salaries', types: ['strategy', 'data source'] }),
            await ok(client, 'read_concept', { id: 'erp' }),
            await ok(client, 'get_onboarding_status'),
            textOf(await call(client, 'read_concept', { id: 'pricing' })),
            textOf(await call(client, 'read_concept', { id: 'payroll' })),
          ];
          for (const answer of answers) {
            assert.ok(!answer.includes(CANARY) && !answer.includes('[pricing]') && !answer.includes('[payroll]'), `${person}: ${answer}`);
          }
          // What matched the canary is only counted: the executive strategy and the hr data source.
          assert.ok(answers[2]?.includes('[hidden:2] 2 more matches are hidden behind a higher access tier.'), `${person}: ${answers[2]}`);
        }
      });

      it('compiles a skill pack with a registry line, the same revision while nothing changes and a new one after a change', async () => {
        const ana = await as('ana');
        const first = await ok(ana, 'get_skill_pack');
        const registry = /^registry: revision=(\d+) content_hash=(sha256:[0-9a-f]{64}) generated_at=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)$/.exec(
          first.split('\n')[0] ?? '',
        );
        assert.ok(registry, first);
        assert.ok(first.includes('[invoice-approval] Invoice approval (access department): owned by [person:'), first);
        assert.ok(first.includes('[hidden:2] 2 nodes are above your access tier and not shown.'), first);
        assert.ok(!first.includes(CANARY));
        const again = await ok(ana, 'get_skill_pack');
        assert.equal(again, first);
        const concurrent = await Promise.all(Array.from({ length: 5 }, async () => (await ok(await as('ben'), 'get_skill_pack')).split('\n')[0]));
        assert.equal(new Set(concurrent).size, 1);
        await importBrain(db, { tenant, source: 'nodes:\n  - { id: wiki, type: tool, title: Wiki, access: public }\n' }, cliTrail(db));
        await settled();
        const changed = await ok(ana, 'get_skill_pack');
        const revision = /^registry: revision=(\d+)/.exec(changed)?.[1];
        assert.ok(Number(revision) > Number(registry[1]), changed.split('\n')[0]);
        assert.ok(changed.includes('[wiki] Wiki'));
      });

      it('answers the verbatim empty state where the brain has no content of its own', async () => {
        const cy = await as('cy', 'brain:read', empty);
        assert.equal(
          await ok(cy, 'get_skill_pack'),
          'The brain does not have enough content yet to build the knowledge graph. Try again once the organization has added more.',
        );
        assert.equal(
          await ok(cy, 'list_gaps'),
          'The brain does not have enough content yet to build the knowledge graph. Try again once the organization has added more.',
        );
      });

      it('renders display text in the organisation’s language while every contract token stays the same', async () => {
        const tokens = (text: string) =>
          [
            ...text.matchAll(
              /\[[^\]\s]+\]|\[gap:[a-z_]+\]|\[hidden:\d+\]|⚠ [a-z ;]+|\d{4}-\d\d-\d\dT[\d:.]+Z|access [a-z]+|Evidence status: [a-z]+|(?:Owner|Approval threshold): [^\n]+/g,
            ),
          ]
            .map((m) => m[0].replace(/person:[0-9a-f-]{36}/g, 'person:…'))
            .join('\n');
        for (const [tool, args] of [
          ['read_concept', { id: 'invoice-approval' }],
          ['list_gaps', {}],
          ['query_index', { query: 'ERP' }],
        ] as const) {
          const english = await ok(await as('ben'), tool, args);
          const deutsch = await ok(await as('ben', 'brain:read', german), tool, args);
          assert.equal(tokens(deutsch), tokens(english), tool);
          if (tool === 'read_concept') assert.ok(deutsch.includes('## Beziehungen') && english.includes('## Relations'));
        }
      });
    });
  }
}
