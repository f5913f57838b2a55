import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { BrainDecisionJson, BrainDetailJson, BrainItemJson } from '../../src/admin/review-json.ts';
import { connectClient } from '../support/gateway.ts';
import type { CliStore, RunResult } from './support.ts';
import { TOKEN_LINE, cliStoreBackends, kgw, lines, serve, writeIn } from './support.ts';

/*
 * The brain inbox in `kgw review`, through the real processes: an agent's manager proposes an
 * onboarding action over MCP (/brain/mcp on `kgw serve`), and a manager of the brain lists,
 * shows and accepts it with the CLI, which applies it to the brain.
 */

const ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice, brain_role: admin }
  - { email: bob@acme.test, name: Bob }
brain:
  nodes:
    - { id: erp, type: tool, title: ERP, access: public }
`;

for (const backend of cliStoreBackends()) {
  describe(`kgw review of the brain inbox on ${backend.name}`, () => {
    let store: CliStore;
    const ids: string[] = [];
    const review = (...args: string[]) => kgw(['review', ...args], store.env);
    const ok = (result: RunResult, what: string): string => {
      assert.equal(result.code, 0, `${what}: ${result.stderr}`);
      return result.stdout;
    };

    before(async () => {
      store = await backend.open();
      ok(await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env), 'apply');
      const gateway = await serve(store.env, { timeoutMs: 120_000 });
      try {
        const token = ok(
          await kgw(['token', 'create', '--tenant', 'acme', '--principal', 'alice@acme.test', '--scopes', 'brain:read brain:propose'], store.env),
          'token',
        );
        assert.match(token, TOKEN_LINE);
        const client = await connectClient(`${gateway.url}/brain/mcp`, token.trim());
        try {
          for (const [action, details] of [
            ['add_node', { id: 'wiki', type: 'tool', title: 'Wiki', access: 'public' }],
            ['remove_node', { id: 'erp' }],
          ] as const) {
            const result = (await client.callTool({
              name: 'propose_onboarding_action',
              arguments: { action, summary: `Please ${action}`, details },
            })) as CallToolResult;
            const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
            const id = /inbox_id=([0-9a-f-]{36})/.exec(text)?.[1];
            assert.ok(id, text);
            ids.push(id);
          }
        } finally {
          await client.close();
        }
      } finally {
        await gateway.stop();
      }
    });
    after(() => store.dispose());

    it('lists the brain inbox beside drafts and proposals, and shows an item with its details', async () => {
      const listed = JSON.parse(ok(await review('list', '--tenant', 'acme', '--kind', 'brain', '--json'), 'list')) as BrainItemJson[];
      assert.deepEqual(
        listed.map((i) => [i.id, i.kind, i.type, i.action, i.risk, i.author_email]),
        [
          [ids[0], 'brain', 'onboarding_action', 'add_node', 'medium', 'alice@acme.test'],
          [ids[1], 'brain', 'onboarding_action', 'remove_node', 'high', 'alice@acme.test'],
        ],
      );
      const table = lines(ok(await review('list', '--tenant', 'acme'), 'list table'));
      assert.match(table[0] ?? '', /^ID\s+KIND\s+TYPE\s+TITLE\s+AUTHOR\s+CREATED$/);
      assert.ok(table.some((l) => l.includes('remove_node (high risk)')));
      const shown = JSON.parse(ok(await review('show', ids[0] ?? '', '--tenant', 'acme', '--json'), 'show')) as BrainDetailJson;
      assert.deepEqual(JSON.parse(shown.details ?? 'null'), { id: 'wiki', type: 'tool', title: 'Wiki', access: 'public' });
      assert.match(ok(await review('show', ids[1] ?? '', '--tenant', 'acme'), 'show text'), /Action: +remove_node \(high risk\)/);
    });

    it('accepts as a manager of the brain, applying the action; refuses a person who is not one', async () => {
      const refused = await review('accept', ids[0] ?? '', '--tenant', 'acme', '--as', 'bob@acme.test');
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /bob@acme\.test is not a manager or admin of the brain/);
      const accepted = JSON.parse(
        ok(await review('accept', ids[0] ?? '', '--tenant', 'acme', '--as', 'alice@acme.test', '--json'), 'accept'),
      ) as BrainDecisionJson;
      assert.deepEqual([accepted.status, accepted.applied, accepted.decided_by], ['accepted', ['create brain node wiki'], 'alice@acme.test']);
      const rejected = ok(await review('reject', ids[1] ?? '', '--tenant', 'acme', '--as', 'alice@acme.test', '--note', 'keep it'), 'reject');
      assert.equal(rejected, `rejected brain inbox item ${ids[1]} (onboarding_action remove_node) as alice@acme.test\n`);
      assert.equal(ok(await review('list', '--tenant', 'acme', '--kind', 'brain'), 'empty'), 'no open brain inbox items in acme\n');
      // The accepted node is in the brain: an import naming it finds it there.
      const imported = ok(
        await kgw(
          ['brain', 'import', await writeIn(store.workDir, 'b.yaml', 'relations:\n  - { from: wiki, verb: supports, to: erp }\n'), '--tenant', 'acme'],
          store.env,
        ),
        'import',
      );
      assert.match(imported, /add brain relation wiki supports erp/);
    });
  });
}
