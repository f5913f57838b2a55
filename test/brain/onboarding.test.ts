import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { NODE_TYPES } from '../../src/brain/model.ts';
import type { Db } from '../../src/store/db.ts';
import { connectClient, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { RunningGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * Onboarding through the SDK's client over HTTP: the seven steps as counts and states (no name
 * or text of the organisation), the action catalog with its exact schemas, and proposals that a
 * manager or admin queues and nothing applies.
 */

const org = (slug: string) => `tenant: ${slug}
name: ${slug} Ltd
people:
  - { email: ana@${slug}.test, name: Ana Secretname, departments: [Finance], brain_role: manager }
  - { email: cy@${slug}.test, name: Cy }
agents:
  - { name: helper, owner: ana@${slug}.test }
brain:
  nodes:
    - { id: invoice-approval, type: SOP / process, title: Invoice Secrettitle, access: public, freshness: { verified: 2025-01-01, review_by: 2025-06-01 } }
    - { id: erp, type: tool, title: ERP, access: public, freshness: { verified: 2026-01-01, review_by: 2099-01-01 } }
    - { id: pricing, type: strategy, title: Pricing, access: executive, mark: inferred }
  relations:
    - { from: "person:ana@${slug}.test", verb: owns, to: invoice-approval }
`;

const textOf = (result: CallToolResult): string =>
  result.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

for (const backend of storeBackends()) {
  describe(`Company Brain onboarding on ${backend.name}`, () => {
    let store: TestStore;
    let db: Db;
    let running: RunningGateway;
    const clients: Client[] = [];
    const tenant = `onb-${Math.random().toString(36).slice(2, 8)}`;

    async function as(person: string, scopes: string): Promise<Client> {
      const client = await connectClient(`${running.url}/brain/mcp`, await issueToken(db, tenant, `${person}@${tenant}.test`, scopes));
      clients.push(client);
      return client;
    }
    const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
      (await client.callTool({ name, arguments: args })) as CallToolResult;
    const pending = async () => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM brain_inbox WHERE kind = 'onboarding_action'"))[0]?.n ?? 0;
    const addNode = { id: 'wiki', type: 'tool', title: 'Wiki', access: 'public' };

    before(async () => {
      store = await backend.open({ migrated: true });
      db = store.db;
      await seedOrg(db, org(tenant));
      running = await startGateway(db, {}, { projections: { projections: [], rebuilders: [] } });
    });
    after(async () => {
      for (const client of clients) await client.close();
      await running.close();
      await store.dispose();
    });

    it('reports the seven steps, the evidence and the next area as counts only', async () => {
      const text = textOf(await call(await as('cy', 'brain:read'), 'get_onboarding_status'));
      assert.deepEqual(text.split('\n'), [
        'onboarding: next=departments done=4/7',
        '[step:organization] done count=2',
        '[step:departments] in_progress count=1',
        '[step:processes] done count=1',
        '[step:systems] in_progress count=1',
        '[step:agents] done count=1',
        '[step:policies] not_started count=0',
        '[step:strategy] done count=1',
        'evidence: nodes=3 current=1 stale=1 unverified=1 marked=1',
        'The next area to complete is departments; get_onboarding_action_catalog lists what can be proposed for it.',
      ]);
      assert.ok(!text.includes('Secret'));
    });

    it('lists every action with its exact JSON Schema and risk level', async () => {
      const result = await call(await as('cy', 'brain:read'), 'get_onboarding_action_catalog');
      const catalog = JSON.parse(textOf(result)) as {
        actions: { action: string; risk: string; schema: { type: string; properties: Record<string, { enum?: string[] }>; required: string[] } }[];
      };
      assert.deepEqual(
        catalog.actions.map((a) => `${a.action}:${a.risk}`),
        ['add_node:medium', 'update_node:medium', 'remove_node:high', 'add_relation:low', 'remove_relation:medium', 'confirm_node:low'],
      );
      const add = catalog.actions[0]?.schema;
      assert.equal(add?.type, 'object');
      assert.deepEqual(add?.properties.type?.enum, [...NODE_TYPES]);
      assert.deepEqual(add?.required, ['id', 'type', 'title', 'access']);
      assert.deepEqual(result.structuredContent, catalog);
    });

    it('queues a manager’s valid proposal with a receipt and applies nothing', async () => {
      const result = await call(await as('ana', 'brain:propose'), 'propose_onboarding_action', {
        action: 'add_node',
        summary: 'Add the wiki',
        details: addNode,
      });
      assert.notEqual(result.isError, true, textOf(result));
      const [, id] = /^receipt: inbox_id=([0-9a-f-]{36}) kind=onboarding_action status=pending action=add_node risk=medium\n/.exec(textOf(result)) ?? [];
      const [row] = await db.query<{ action: string; details: unknown; title: string; status: string }>(
        'SELECT action, details, title, status FROM brain_inbox WHERE id = $1',
        [id],
      );
      assert.deepEqual(row, { action: 'add_node', details: addNode, title: 'Add the wiki', status: 'pending' });
      assert.equal((await db.query<{ n: number }>("SELECT count(*)::int AS n FROM brain_nodes WHERE id = 'wiki'"))[0]?.n, 0);
    });

    it('refuses a viewer’s proposal as Forbidden and a token without brain:propose, registering nothing', async () => {
      const before = await pending();
      const viewer = await call(await as('cy', 'brain:propose'), 'propose_onboarding_action', {
        action: 'add_node',
        summary: 'Add the wiki',
        details: addNode,
      });
      assert.deepEqual([viewer.isError, textOf(viewer)], [true, 'Forbidden']);
      await assert.rejects(
        (await as('ana', 'brain:read')).callTool({ name: 'propose_onboarding_action', arguments: { action: 'add_node', summary: 'Add', details: addNode } }),
        /Forbidden/,
      );
      assert.equal(await pending(), before);
    });

    it('refuses details that do not match the action’s schema, and bad summaries, registering nothing', async () => {
      const ana = await as('ana', 'brain:propose');
      const before = await pending();
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ action: 'add_node', summary: 'Add', details: { ...addNode, title: undefined } }, /^Invalid input: details\.title: /],
        [
          { action: 'add_node', summary: 'Add', details: { ...addNode, access: 'department' } },
          /^Invalid input: details\.department: "department" is given exactly when access is department$/,
        ],
        [{ action: 'add_node', summary: 'Add', details: { ...addNode, type: 'robot' } }, /^Invalid input: details\.type: /],
        [{ action: 'add_node', summary: 'Add', details: { ...addNode, colour: 'red' } }, /^Invalid input: details: /],
        [
          { action: 'confirm_node', summary: 'Confirm', details: { id: 'erp', verified: '1 May 2026', review_by: '2027-01-01T00:00:00Z' } },
          /^Invalid input: details\.verified: /,
        ],
        [{ action: 'launch_rocket', summary: 'Go', details: {} }, /^Invalid input: action: /],
        [{ action: 'add_node', summary: 'ab', details: addNode }, /^Invalid input: summary: /],
        [{ action: 'add_node', summary: 'x'.repeat(161), details: addNode }, /^Invalid input: summary: /],
        [{ action: 'add_node', summary: 'Add', details: 'not an object' }, /^Invalid input: details: /],
      ];
      for (const [args, expected] of cases) {
        const result = await call(ana, 'propose_onboarding_action', args);
        assert.equal(result.isError, true, JSON.stringify(args));
        assert.match(textOf(result), expected, JSON.stringify(args));
      }
      assert.equal(await pending(), before);
    });

    it('keeps every one of 10 concurrent proposals', async () => {
      const ana = await as('ana', 'brain:propose');
      const before = await pending();
      await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          call(ana, 'propose_onboarding_action', { action: 'add_node', summary: `Add tool ${i}`, details: { ...addNode, id: `tool-${i}` } }),
        ),
      );
      assert.equal(await pending(), before + 10);
    });
  });
}
