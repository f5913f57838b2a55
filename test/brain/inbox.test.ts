import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Db } from '../../src/store/db.ts';
import { connectClient, drainedOutbox, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { RunningGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import { gatewayGraphs } from '../support/graph-backends.ts';

/*
 * write_inbox through the SDK's client over HTTP, on the graph tables and Neo4j (the related
 * nodes are looked up in the graph store): a receipt, an item a manager decides on later,
 * and nothing written to the graph; related nodes only among those the caller sees, a hidden one
 * refused exactly like one that does not exist.
 */

const org = (slug: string) => `tenant: ${slug}
name: ${slug} Ltd
people:
  - { email: cy@${slug}.test, name: Cy }
brain:
  nodes:
    - { id: erp, type: tool, title: ERP, access: public }
    - { id: pricing, type: strategy, title: Pricing, access: executive }
`;

const textOf = (result: CallToolResult): string =>
  result.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

const RECEIPT = /^receipt: inbox_id=([0-9a-f-]{36}) kind=(observation|correction|proposal|work_output) status=pending\n/;

for (const backend of storeBackends()) {
  for (const graph of gatewayGraphs()) {
    describe(`Company Brain write_inbox on ${backend.name}, ${graph.name}`, () => {
      let store: TestStore;
      let db: Db;
      let running: RunningGateway;
      const clients: Client[] = [];
      const tenant = `inbox-${Math.random().toString(36).slice(2, 8)}`;

      async function as(scopes: string): Promise<Client> {
        const client = await connectClient(`${running.url}/brain/mcp`, await issueToken(db, tenant, `cy@${tenant}.test`, scopes));
        clients.push(client);
        return client;
      }
      const items = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM brain_inbox'))[0]?.n ?? 0;
      const write = async (client: Client, args: Record<string, unknown>) =>
        (await client.callTool({ name: 'write_inbox', arguments: args })) as CallToolResult;
      const valid = { kind: 'observation', title: 'ERP invoices', body: 'Invoices above 5,000 EUR wait two days in the ERP.' };

      before(async () => {
        store = await backend.open({ migrated: true });
        db = store.db;
        await seedOrg(db, org(tenant));
        running = await startGateway(db, graph.env, { outboxWorker: { idleMs: 10, backoff: { baseMs: 20, maxMs: 500 } } });
        await drainedOutbox(db);
      });
      after(async () => {
        for (const client of clients) await client.close();
        await running.close();
        await store.dispose();
      });

      it('registers an item with a receipt, audits it, and writes nothing to the graph', async () => {
        const outboxBefore = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox'))[0]?.n;
        const result = await write(await as('brain:propose'), { ...valid, kind: 'correction', relatedNodeIds: ['erp', 'erp'] });
        assert.notEqual(result.isError, true, textOf(result));
        const [, id, kind] = RECEIPT.exec(textOf(result)) ?? [];
        assert.equal(kind, 'correction');
        const [row] = await db.query<{ kind: string; title: string; related_node_ids: string[]; status: string }>(
          'SELECT kind, title, related_node_ids, status FROM brain_inbox WHERE id = $1',
          [id],
        );
        assert.deepEqual(row, { kind: 'correction', title: 'ERP invoices', related_node_ids: ['erp'], status: 'pending' });
        const events = await db.query<{ action: string }>("SELECT action FROM audit_events WHERE action = 'brain.inbox.write'");
        assert.equal(events.length, 1);
        assert.equal((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox'))[0]?.n, outboxBefore);
        assert.equal((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM brain_nodes'))[0]?.n, 2);
      });

      it('refuses a hidden related node exactly as one that does not exist, registering nothing', async () => {
        const client = await as('brain:propose');
        const before = await items();
        const hidden = await write(client, { ...valid, relatedNodeIds: ['erp', 'pricing'] });
        const unknown = await write(client, { ...valid, relatedNodeIds: ['erp', 'no-such'] });
        assert.deepEqual(
          { hidden: [hidden.isError, textOf(hidden)], unknown: [unknown.isError, textOf(unknown)] },
          {
            hidden: [true, 'Invalid input: relatedNodeIds[1]: no node you can see has the id "pricing"'],
            unknown: [true, 'Invalid input: relatedNodeIds[1]: no node you can see has the id "no-such"'],
          },
        );
        assert.equal(await items(), before);
      });

      it('refuses input outside the bounds in the dialect’s words, registering nothing', async () => {
        const client = await as('brain:propose');
        const before = await items();
        for (const args of [
          { ...valid, title: 'ab' },
          { ...valid, title: 'x'.repeat(121) },
          { ...valid, title: '😀a' },
          { ...valid, title: 'ERP\u202Eexe' },
          { ...valid, body: 'too short' },
          { ...valid, body: 'x'.repeat(4001) },
          { ...valid, kind: 'rumour' },
          { ...valid, relatedNodeIds: Array.from({ length: 11 }, () => 'erp') },
          { ...valid, extra: true },
          { title: valid.title, body: valid.body },
        ]) {
          const result = await write(client, args);
          assert.equal(result.isError, true, JSON.stringify(args).slice(0, 80));
          assert.match(textOf(result), /^Invalid input: /, JSON.stringify(args).slice(0, 80));
        }
        assert.equal(await items(), before);
      });

      it('needs brain:propose: a reading token is refused as Forbidden and registers nothing', async () => {
        const reader = await as('brain:read');
        const before = await items();
        assert.ok(!(await reader.listTools()).tools.some((t) => t.name === 'write_inbox'));
        await assert.rejects(reader.callTool({ name: 'write_inbox', arguments: valid }), /Forbidden/);
        assert.equal(await items(), before);
      });

      it('keeps every one of 20 concurrent writes', async () => {
        const client = await as('brain:propose');
        const before = await items();
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) => write(client, { ...valid, title: `Observation ${i}` })));
        const ids = results.map((r) => RECEIPT.exec(textOf(r))?.[1]);
        assert.equal(new Set(ids).size, 20);
        assert.equal(await items(), before + 20);
      });
    });
  }
}
