import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ACME_KB_ORG, ATMINA_PATH } from '../atmina/support.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { connectClient, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import { recordingDb } from '../support/recording-db.ts';

/*
 * A resource the caller may not see is refused exactly like one that does not exist, and must
 * not take longer either: the hidden path used to look up the caller's access (one to two more
 * statements, about a millisecond) only when the row was there, which an attacker timing many
 * calls could tell apart. Timing is not asserted (it is noisy); what makes it equal is: both
 * paths run the same statements, counted here through a Db that records every statement the
 * gateway runs, for calls made with the MCP SDK's client over HTTP.
 */

const ORG = `${ACME_KB_ORG}knowledge:
  - title: Hidden rules
    content: Only for those with a grant.
    publish: true
memories:
  - name: Hidden state
    content: Only for those with a grant.
`;

const textOf = (result: CallToolResult): string => (result.content[0]?.type === 'text' ? result.content[0].text : '');

for (const backend of storeBackends()) {
  describe(`a hidden id runs the statements of an unknown one on ${backend.name}`, () => {
    let store: TestStore;
    let running: RunningGateway;
    let recorder: ReturnType<typeof recordingDb>;
    const clients: Client[] = [];
    let atmina: Client;
    let alignbase: Client;
    let kb: { kb_id: string; slug: string };
    let knowledgeId: string;
    let memoryId: string;

    const client = async (principal: string, path: string): Promise<Client> => {
      const connected = await connectClient(`${running.url}${path}`, await issueToken(store.db, 'acme', principal, 'context.read context.write'));
      clients.push(connected);
      return connected;
    };
    const call = (on: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> =>
      on.callTool({ name, arguments: args }) as Promise<CallToolResult>;
    const resourceId = async (type: string, name: string): Promise<string> => {
      const [row] = await store.db.query<{ id: string }>('SELECT id FROM context_resources WHERE type = $1 AND name = $2', [type, name]);
      assert.ok(row, `no ${type} ${name}`);
      return row.id;
    };

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ORG);
      recorder = recordingDb(store.db);
      // No projections: the outbox worker has nothing to poll for, so every statement recorded is the call's.
      running = await startGateway(recorder.db, {}, { projections: { projections: [], rebuilders: [] } });
      const support = await client('support-bot', ATMINA_PATH);
      const created = await call(support, 'create_kb', { name: 'Salaries', team: 'support', visibility: 'private' });
      assert.notEqual(created.isError, true, textOf(created));
      kb = created.structuredContent as { kb_id: string; slug: string };
      const written = await call(support, 'write_file', { kb_id: kb.kb_id, path: 'pay.md', mode: 'create', content: '# Pay\n' });
      assert.notEqual(written.isError, true, textOf(written));
      knowledgeId = await resourceId('knowledge', 'Hidden rules');
      memoryId = await resourceId('memory', 'Hidden state');
      // eng-bot (Viewer of team eng) does not see the private KB of team support; outsider-bot holds no grant on the Knowledge or the Memory.
      atmina = await client('eng-bot', ATMINA_PATH);
      alignbase = await client('outsider-bot', '/alignbase/mcp');
    });

    after(async () => {
      for (const connected of clients) await connected.close();
      await running?.close();
      await store?.dispose();
    });

    /**
     * Calls `tool` on the hidden target and on an unknown one: both refused with the same text
     * (the unknown one's id in place of the hidden one's), after the same statements.
     */
    const samePaths = async (on: Client, tool: string, args: (target: string) => Record<string, unknown>, hidden: string, unknown: string, access: RegExp) => {
      // One call first, so what the gateway caches for the token is in place for both.
      await call(on, tool, args(unknown));
      let hiddenText = '';
      let unknownText = '';
      const hiddenStatements = await recorder.record(async () => {
        hiddenText = textOf(await call(on, tool, args(hidden)));
      });
      const unknownStatements = await recorder.record(async () => {
        unknownText = textOf(await call(on, tool, args(unknown)));
      });
      assert.equal(hiddenText.replaceAll(hidden, unknown), unknownText);
      assert.ok(
        unknownStatements.some((sql) => access.test(sql)),
        `the unknown id's call looks up the caller's access too: ${JSON.stringify(unknownStatements, undefined, 1)}`,
      );
      assert.deepEqual(hiddenStatements, unknownStatements, 'the hidden and the unknown id run the same statements, in the same order');
    };

    it('read_file and list_files on a private KB of another team (by id and by slug)', async () => {
      const file = (target: string) => ({ kb_id: target, path: 'pay.md' });
      const files = (target: string) => ({ kb_id: target });
      const teamAccess = /FROM team_shares s WHERE s.tenant_id = \$1 AND s.team_id = \$3/;
      await samePaths(atmina, 'read_file', file, kb.kb_id, randomUUID(), teamAccess);
      await samePaths(atmina, 'list_files', files, kb.kb_id, randomUUID(), teamAccess);
      await samePaths(atmina, 'read_file', file, kb.slug, 'no-such-kb', teamAccess);
      await samePaths(atmina, 'list_files', files, kb.slug, 'no-such-kb', /FROM kb_shares s .* AND s.kb_id = \$3/);
    });

    it('read_knowledge on a Knowledge without a grant', async () => {
      const grants = /AND \(g.resource_id IS NULL OR g.resource_id = \$4\)/;
      await samePaths(alignbase, 'read_knowledge', (target) => ({ knowledge_id: target }), knowledgeId, randomUUID(), grants);
      await samePaths(
        alignbase,
        'read_knowledge',
        (target) => ({ knowledge_id: target, version: 'published' }),
        knowledgeId,
        randomUUID(),
        /FROM context_routes t .* AND r.id = \$3/,
      );
    });

    it('read_memory on a Memory without a grant', async () => {
      await samePaths(
        alignbase,
        'read_memory',
        (target) => ({ memory_id: target }),
        memoryId,
        randomUUID(),
        /AND \(g.resource_id IS NULL OR g.resource_id = \$4\)/,
      );
    });
  });
}
