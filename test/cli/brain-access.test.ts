import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { BrainDecisionJson, BrainDetailJson, BrainItemJson } from '../../src/brain/index.ts';
import { connectClient } from '../support/gateway.ts';
import type { CliStore, RunResult } from './support.ts';
import { cliStoreBackends, kgw, serve, writeIn } from './support.ts';
import type { Served } from './support.ts';

/*
 * No one changes a brain node they cannot see, through the real processes: a manager proposes
 * over MCP (/brain/mcp on `kgw serve`) and managers decide with `kgw review`. A proposal naming
 * a node above the proposer's tier is refused like one naming no node, and one that would leave
 * a node they cannot see is refused too; `kgw review show` gives each node's access now and
 * after; a decider who cannot see the node as it is, or as it would be, is refused and the item
 * stays pending for one who can.
 */

const ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: rita@acme.test, name: Rita, tier: restricted, brain_role: manager }
  - { email: mo@acme.test, name: Mo, tier: manager, brain_role: manager }
  - { email: pat@acme.test, name: Pat, brain_role: manager }
brain:
  nodes:
    - { id: plan, type: strategy, title: Plan, summary: The secret plan., access: restricted }
    - { id: vault, type: data source, title: Vault, access: restricted }
    - { id: erp, type: tool, title: ERP, access: public }
`;

const textOf = (result: CallToolResult): string =>
  result.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

for (const backend of cliStoreBackends()) {
  describe(`brain decisions stay within the decider's tier, kgw review on ${backend.name}`, () => {
    let store: CliStore;
    let gateway: Served;
    const clients = new Map<string, Client>();
    const review = (...args: string[]) => kgw(['review', ...args], store.env);
    const ok = (result: RunResult, what: string): string => {
      assert.equal(result.code, 0, `${what}: ${result.stderr}`);
      return result.stdout;
    };
    const pending = async () =>
      (JSON.parse(ok(await review('list', '--tenant', 'acme', '--kind', 'brain', '--json'), 'list')) as BrainItemJson[]).map((i) => i.id);

    async function as(person: string): Promise<Client> {
      let client = clients.get(person);
      if (client === undefined) {
        const token = ok(
          await kgw(['token', 'create', '--tenant', 'acme', '--principal', `${person}@acme.test`, '--scopes', 'brain:read brain:propose'], store.env),
          'token',
        );
        client = await connectClient(`${gateway.url}/brain/mcp`, token.trim());
        clients.set(person, client);
      }
      return client;
    }
    const propose = async (person: string, action: string, details: Record<string, unknown>) =>
      (await (await as(person)).callTool({ name: 'propose_onboarding_action', arguments: { action, summary: `Please ${action}`, details } })) as CallToolResult;
    const proposed = async (person: string, action: string, details: Record<string, unknown>): Promise<string> => {
      const text = textOf(await propose(person, action, details));
      const id = /inbox_id=([0-9a-f-]{36})/.exec(text)?.[1];
      assert.ok(id, text);
      return id;
    };

    before(async () => {
      store = await backend.open();
      ok(await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env), 'apply');
      gateway = await serve(store.env, { timeoutMs: 120_000 });
    });
    after(async () => {
      for (const client of clients.values()) await client.close();
      await gateway.stop();
      await store.dispose();
    });

    it('refuses a proposal on a node above the proposer’s tier like one on no node, and one that leaves a node they cannot see', async () => {
      const before = await pending();
      const declassify = { id: 'plan', type: 'strategy', title: 'Plan', access: 'public' };
      const refusals = [
        textOf(await propose('mo', 'update_node', declassify)),
        textOf(await propose('mo', 'update_node', { ...declassify, id: 'no-such' })),
        textOf(await propose('pat', 'remove_node', { id: 'vault' })),
        textOf(await propose('pat', 'add_relation', { from: 'vault', verb: 'uses', to: 'erp' })),
        textOf(await propose('mo', 'add_node', { id: 'memo', type: 'policy', title: 'Memo', access: 'hr' })),
        textOf(await propose('mo', 'update_node', { id: 'erp', type: 'tool', title: 'ERP', access: 'executive' })),
      ];
      assert.deepEqual(refusals, [
        'Invalid input: details.id: no node you can see has the id "plan"',
        'Invalid input: details.id: no node you can see has the id "no-such"',
        'Invalid input: details.id: no node you can see has the id "vault"',
        'Invalid input: details.from: no node you can see has the id "vault"',
        'Invalid input: details.access: the node would be one you cannot see (access hr)',
        'Invalid input: details.access: the node would be one you cannot see (access executive)',
      ]);
      assert.deepEqual(await pending(), before);
    });

    it('shows each node’s access now and after the action, side by side, in text and JSON', async () => {
      const declassify = await proposed('rita', 'update_node', { id: 'plan', type: 'strategy', title: 'Plan', access: 'public' });
      const relate = await proposed('rita', 'add_relation', { from: 'vault', verb: 'uses', to: 'erp' });
      const add = await proposed('mo', 'add_node', { id: 'memo', type: 'policy', title: 'Memo', access: 'manager' });
      const remove = await proposed('mo', 'remove_node', { id: 'erp' });
      /** The Access field of the show text: its first line and the lines continuing it. */
      const shown = async (id: string) => {
        const all = ok(await review('show', id, '--tenant', 'acme'), 'show').split('\n');
        const at = all.findIndex((l) => l.startsWith('Access:'));
        const field = [(all[at] ?? '').replace(/^Access: +/, '')];
        for (let i = at + 1; all[i]?.startsWith(' ') === true; i++) field.push(all[i]!.trim());
        return field;
      };
      assert.deepEqual(await shown(declassify), ['[plan] restricted → public']);
      assert.deepEqual(await shown(relate), ['[vault] restricted (unchanged)', '[erp] public (unchanged)']);
      assert.deepEqual(await shown(add), ['[memo] none (no such node now) → manager']);
      assert.deepEqual(await shown(remove), ['[erp] public → removed']);
      const json = async (id: string) => (JSON.parse(ok(await review('show', id, '--tenant', 'acme', '--json'), 'show json')) as BrainDetailJson).access;
      assert.deepEqual(await json(declassify), [{ node: 'plan', current: { access: 'restricted' }, new: { access: 'public' } }]);
      assert.deepEqual(await json(remove), [{ node: 'erp', current: { access: 'public' }, new: null }]);
      for (const id of [relate, add, remove]) ok(await review('reject', id, '--tenant', 'acme', '--as', 'rita@acme.test'), 'reject');
    });

    it('refuses a decision on a node the decider cannot see, as it is or as it would be, and leaves it pending for one who can', async () => {
      const declassify = await proposed('rita', 'update_node', { id: 'plan', type: 'strategy', title: 'Plan', access: 'public' });
      const relate = await proposed('rita', 'add_relation', { from: 'vault', verb: 'uses', to: 'erp' });
      const hide = await proposed('rita', 'update_node', { id: 'erp', type: 'tool', title: 'ERP', access: 'executive' });
      const refused = async (id: string, as: string) => {
        const result = await review('accept', id, '--tenant', 'acme', '--as', `${as}@acme.test`);
        assert.equal(result.code, 1, result.stdout);
        return result.stderr.trim();
      };
      assert.match(
        await refused(declassify, 'pat'),
        /pat@acme\.test cannot see the node plan \(access restricted\) that this update_node changes; it stays pending for a manager or admin of the brain who does/,
      );
      assert.match(await refused(declassify, 'mo'), /mo@acme\.test cannot see the node plan \(access restricted\)/);
      assert.match(await refused(relate, 'pat'), /pat@acme\.test cannot see the node vault \(access restricted\) that this add_relation changes/);
      assert.match(
        await refused(hide, 'pat'),
        /pat@acme\.test would not see the node erp at the access this update_node gives it \(executive\); it stays pending for a manager or admin of the brain who would/,
      );
      const left = await pending();
      assert.ok(
        [declassify, relate, hide].every((id) => left.includes(id)),
        'each refused item stays pending',
      );
      // Nothing changed: the plan is still restricted, above a public-tier token.
      assert.equal(
        textOf((await (await as('pat')).callTool({ name: 'read_concept', arguments: { id: 'plan' } })) as CallToolResult),
        'Access denied: this node is above your access tier.',
      );
      // Rejecting changes nothing in the brain: any manager may do it.
      assert.equal(
        ok(await review('reject', hide, '--tenant', 'acme', '--as', 'pat@acme.test'), 'reject'),
        `rejected brain inbox item ${hide} (onboarding_action update_node) as pat@acme.test\n`,
      );
      const accepted = JSON.parse(
        ok(await review('accept', declassify, '--tenant', 'acme', '--as', 'rita@acme.test', '--json'), 'accept'),
      ) as BrainDecisionJson;
      assert.deepEqual([accepted.status, accepted.applied], ['accepted', ['update brain node plan']]);
    });
  });
}
