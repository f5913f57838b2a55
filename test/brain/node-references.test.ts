import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { acceptBrainReview } from '../../src/brain/review.ts';
import type { Db } from '../../src/store/db.ts';
import { cliTrail } from '../support/audit.ts';
import { connectClient, drainedOutbox, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { RunningGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * A person or agent is named two ways: as the org file names them (person:<email>,
 * agent:<name>) and as the read tools cite them ([person:<id>], [agent:<id>]). Each tool that
 * names a node takes both, and a proposal is checked when it is made: one built from a cited
 * id is queued and applies when approved, and one whose reference names nobody, or a node the
 * proposer does not see, is refused then (a hidden node with the words of an unknown one) and
 * registers nothing. Through the SDK's client over HTTP; the approval as kgw review makes it.
 */

const org = (slug: string) => `tenant: ${slug}
name: ${slug} Ltd
people:
  - { email: ana@${slug}.test, name: Ana, tier: manager, brain_role: manager, departments: [Finance] }
agents:
  - { name: helper, owner: ana@${slug}.test }
brain:
  nodes:
    - { id: erp, type: tool, title: ERP, access: public }
    - { id: pricing, type: strategy, title: Pricing, access: executive }
  relations:
    - { from: "person:ana@${slug}.test", verb: owns, to: erp }
    - { from: "agent:helper", verb: uses, to: erp }
`;

const textOf = (result: CallToolResult): string =>
  result.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

for (const backend of storeBackends()) {
  describe(`Company Brain node references on ${backend.name}`, () => {
    let store: TestStore;
    let db: Db;
    let running: RunningGateway;
    let ana: Client;
    const tenant = `refs-${Math.random().toString(36).slice(2, 8)}`;
    const mail = { dataDir: path.join(os.tmpdir(), `kgw-refs-${tenant}`), defaultImapUrl: undefined, env: {} };

    const call = async (name: string, args: Record<string, unknown>) => (await ana.callTool({ name, arguments: args })) as CallToolResult;
    const ok = async (name: string, args: Record<string, unknown>) => {
      const result = await call(name, args);
      assert.notEqual(result.isError, true, textOf(result));
      return textOf(result);
    };
    const propose = async (action: string, details: Record<string, unknown>) => {
      const text = await ok('propose_onboarding_action', { action, summary: `Do ${action}`, details });
      return /inbox_id=([0-9a-f-]{36})/.exec(text)?.[1] ?? '';
    };
    const inboxCount = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM brain_inbox'))[0]?.n ?? 0;

    /** The ids read_concept cites for Ana and her agent, from the answer's own lines. */
    async function citedIds(): Promise<{ person: string; agent: string }> {
      const text = await ok('read_concept', { id: 'erp' });
      const person = /^- \[(person:[0-9a-f-]{36})\] Ana \(person\) owns \[erp\]$/m.exec(text)?.[1];
      const agent = /^- \[(agent:[0-9a-f-]{36})\] helper \(agent\) uses \[erp\]$/m.exec(text)?.[1];
      assert.ok(person !== undefined && agent !== undefined, text);
      return { person, agent };
    }

    before(async () => {
      store = await backend.open({ migrated: true });
      db = store.db;
      await seedOrg(db, org(tenant));
      running = await startGateway(db, {}, { outboxWorker: { idleMs: 10, backoff: { baseMs: 20, maxMs: 500 } } });
      await drainedOutbox(db);
      ana = await connectClient(`${running.url}/brain/mcp`, await issueToken(db, tenant, `ana@${tenant}.test`, 'brain:read brain:propose'));
    });
    after(async () => {
      await ana.close();
      await running.close();
      await store.dispose();
    });

    it('queues a relation built from the ids read_concept cites, and the approval applies it', async () => {
      const { person, agent } = await citedIds();
      const manages = await propose('add_relation', { from: person, verb: 'manages', to: 'erp' });
      // Letter case of an id does not matter, as for every id the tools take.
      const dependsOn = await propose('add_relation', { from: agent.toUpperCase().replace('AGENT:', 'agent:'), verb: 'depends on', to: 'erp' });
      const applied = [];
      for (const id of [manages, dependsOn])
        applied.push(...(await acceptBrainReview(db, cliTrail(db), { tenant, id, as: `ana@${tenant}.test` }, mail)).applied);
      assert.equal(applied.length, 2);
      const relations = await db.query<{ from_id: string; verb: string }>(
        "SELECT r.from_id, r.verb FROM brain_relations r JOIN tenants t ON t.id = r.tenant_id WHERE t.slug = $1 AND r.verb IN ('manages', 'depends on') ORDER BY r.verb",
        [tenant],
      );
      assert.deepEqual(relations, [
        { from_id: agent, verb: 'depends on' },
        { from_id: person, verb: 'manages' },
      ]);
      // The org file's form names the same relation.
      const remove = await propose('remove_relation', { from: `person:ana@${tenant}.test`, verb: 'manages', to: 'erp' });
      assert.deepEqual((await acceptBrainReview(db, cliTrail(db), { tenant, id: remove, as: `ana@${tenant}.test` }, mail)).applied, [
        `remove brain relation person:ana@${tenant}.test manages erp`,
      ]);
      // The graph store gets these changes through the outbox: the tests below read it, so it
      // settles here (read between the add and the remove, it shows `manages` in one read and not in the next).
      await drainedOutbox(db);
    });

    it('reads a concept and relates an inbox item by either form of a person or agent', async () => {
      const { person, agent } = await citedIds();
      assert.equal(await ok('read_concept', { id: `person:ana@${tenant}.test` }), await ok('read_concept', { id: person }));
      assert.equal(await ok('read_concept', { id: 'agent:helper' }), await ok('read_concept', { id: agent }));
      const receipt = await ok('write_inbox', {
        kind: 'observation',
        title: 'Ana and her helper',
        body: 'Both use the ERP every day.',
        relatedNodeIds: [`person:ana@${tenant}.test`, agent, 'erp'],
      });
      const id = /inbox_id=([0-9a-f-]{36})/.exec(receipt)?.[1];
      const [row] = await db.query<{ related_node_ids: string[] }>('SELECT related_node_ids FROM brain_inbox WHERE id = $1', [id]);
      assert.deepEqual(row?.related_node_ids, [person, agent, 'erp']);
    });

    it('refuses a proposal whose reference names nobody, or a node the proposer does not see, when it is made, registering nothing', async () => {
      const before = await inboxCount();
      const nobody = randomUUID();
      const cases: [string, Record<string, unknown>, string][] = [
        ['add_relation', { from: 'erp', verb: 'uses', to: 'person:nobody@example.test' }, 'details.to: no person in the directory named "nobody@example.test"'],
        ['add_relation', { from: `person:${nobody}`, verb: 'owns', to: 'erp' }, `details.from: no person in the directory named "${nobody}"`],
        ['add_relation', { from: 'agent:ghost', verb: 'uses', to: 'erp' }, 'details.from: no agent in the directory named "ghost"'],
        // A person's id is not an agent's.
        [
          'add_relation',
          { from: (await citedIds()).person.replace('person:', 'agent:'), verb: 'uses', to: 'erp' },
          'details.from: no agent in the directory named',
        ],
        ['add_relation', { from: 'erp', verb: 'supports', to: 'department:Nowhere' }, 'details.to: no department with members named "Nowhere"'],
        ['add_relation', { from: 'erp', verb: 'uses', to: 'no-such' }, 'details.to: no node you can see has the id "no-such"'],
        ['add_relation', { from: 'erp', verb: 'uses', to: 'pricing' }, 'details.to: no node you can see has the id "pricing"'],
        ['update_node', { id: 'no-such', type: 'tool', title: 'X', access: 'public' }, 'details.id: no node you can see has the id "no-such"'],
        ['update_node', { id: 'pricing', type: 'tool', title: 'X', access: 'public' }, 'details.id: no node you can see has the id "pricing"'],
        ['remove_node', { id: 'pricing' }, 'details.id: no node you can see has the id "pricing"'],
        [
          'confirm_node',
          { id: 'no-such', verified: '2026-05-01T00:00:00Z', review_by: '2027-05-01T00:00:00Z' },
          'details.id: no node you can see has the id "no-such"',
        ],
        [
          'add_relation',
          { from: `person:ana@${tenant}.test`, verb: 'owns', to: 'erp' },
          `details: the relation person:ana@${tenant}.test owns erp exists already`,
        ],
        ['remove_relation', { from: 'erp', verb: 'uses', to: 'department:Finance' }, 'details: there is no relation erp uses department:Finance'],
      ];
      for (const [action, details, expected] of cases) {
        const result = await call('propose_onboarding_action', { action, summary: `Do ${action}`, details });
        assert.equal(result.isError, true, JSON.stringify(details));
        assert.ok(textOf(result).startsWith(`Invalid input: ${expected}`), `${textOf(result)} (expected ${expected})`);
      }
      assert.equal(await inboxCount(), before);
    });
  });
}
