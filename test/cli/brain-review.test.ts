import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { BrainDecisionJson, BrainDetailJson, BrainItemJson } from '../../src/brain/index.ts';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { connectClient } from '../support/gateway.ts';
import { imapServer, readDrafts } from '../support/imap.ts';
import type { CliStore, RunResult } from './support.ts';
import { TOKEN_LINE, cliStoreBackends, kgw, lines, serve, writeIn } from './support.ts';

/*
 * The brain inbox in `kgw review`, through the real processes: an agent's manager proposes an
 * onboarding action over MCP (/brain/mcp on `kgw serve`), and a manager of the brain lists,
 * shows and accepts it with the CLI, which applies it to the brain. Email drafts likewise: an
 * .eml file for a manager without a mailbox, and, with Dovecot running, a draft in the IMAP
 * mailbox of one with a mailbox, its password sent by the CLI through the running gateway.
 */

const imap = imapServer();

const ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice, brain_role: admin }
  - { email: bob@acme.test, name: Bob }
  - email: dana@acme.test
    name: Dana
    brain_role: manager
    mailbox: { user: "dana.${process.pid}@acme.test", password_env: KGW_TEST_IMAP_PASSWORD, url: "${imap.url || 'imap://127.0.0.1:9'}" }
brain:
  nodes:
    - { id: erp, type: tool, title: ERP, access: public }
`;

for (const backend of cliStoreBackends()) {
  describe(`kgw review of the brain inbox on ${backend.name}`, () => {
    let store: CliStore;
    const ids: string[] = [];
    const emails: string[] = [];
    let correction = '';
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
        const agent = await connectClient(
          `${gateway.url}/brain/mcp`,
          ok(
            await kgw(['token', 'create', '--tenant', 'acme', '--principal', 'bob@acme.test', '--scopes', 'brain:propose outreach:propose'], store.env),
            'token',
          ).trim(),
        );
        try {
          for (const subject of ['Invoice INV-7', 'Invoice INV-8']) {
            const result = (await agent.callTool({
              name: 'propose_draft_email',
              arguments: { to: ['lee@customer.test'], subject, bodyText: `Dear Lee,\n\n${subject} is attached.` },
            })) as CallToolResult;
            const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
            const id = /approval_id=([0-9a-f-]{36})/.exec(text)?.[1];
            assert.ok(id, text);
            emails.push(id);
          }
          const result = (await agent.callTool({
            name: 'write_inbox',
            arguments: { kind: 'correction', title: 'The ERP is Odoo', body: 'We replaced the ERP with Odoo last month.', relatedNodeIds: ['erp'] },
          })) as CallToolResult;
          const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
          correction = /inbox_id=([0-9a-f-]{36})/.exec(text)?.[1] ?? '';
          assert.ok(correction, text);
        } finally {
          await agent.close();
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
          [correction, 'brain', 'correction', null, null, 'bob@acme.test'],
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
      const left = JSON.parse(ok(await review('list', '--tenant', 'acme', '--kind', 'brain', '--json'), 'left')) as BrainItemJson[];
      assert.deepEqual(
        left.map((i) => i.id),
        [correction],
      );
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

    it('applies a brain file with an accepted correction (--apply FILE)', async () => {
      const fix = await writeIn(store.workDir, 'fix.yaml', 'nodes:\n  - { id: erp, type: tool, title: Odoo, access: public }\n');
      assert.equal(
        ok(await review('accept', correction, '--tenant', 'acme', '--as', 'alice@acme.test', '--apply', fix), 'accept'),
        `accepted brain inbox item ${correction} (correction) as alice@acme.test\n  update brain node erp (tool; access public)\n`,
      );
      assert.equal(ok(await review('list', '--tenant', 'acme', '--kind', 'brain'), 'empty'), 'no open brain inbox items in acme\n');
      const refused = await review('accept', emails[0] ?? '', '--tenant', 'acme', '--as', 'alice@acme.test', '--apply', fix);
      assert.deepEqual([refused.code, refused.stderr.includes('not with email draft')], [1, true]);
    });

    it('lists email drafts as kind email and accepts one into an .eml file that show points to', async () => {
      const listed = JSON.parse(ok(await review('list', '--tenant', 'acme', '--kind', 'email', '--json'), 'list')) as BrainItemJson[];
      assert.deepEqual(
        listed.map((i) => [i.id, i.kind, i.type, i.title, i.author_email]),
        [
          [emails[0], 'email', 'email_draft', 'Invoice INV-7', 'bob@acme.test'],
          [emails[1], 'email', 'email_draft', 'Invoice INV-8', 'bob@acme.test'],
        ],
      );
      const shown = ok(await review('show', emails[0] ?? '', '--tenant', 'acme'), 'show');
      assert.match(shown, /^Email draft: +\S+ \(pending\)$/m);
      assert.match(shown, /^To: +lee@customer\.test$/m);
      assert.match(shown, /^Subject: +Invoice INV-7$/m);
      const file = path.join(store.dataDir, 'outbox-drafts', 'alice@acme.test', `${emails[0]}.eml`);
      assert.equal(
        ok(await review('accept', emails[0] ?? '', '--tenant', 'acme', '--as', 'alice@acme.test'), 'accept'),
        `accepted email draft ${emails[0]} (email_draft) as alice@acme.test\n  draft put in ${file} (not sent)\n`,
      );
      assert.match(
        ok(await review('show', emails[0] ?? '', '--tenant', 'acme'), 'show'),
        new RegExp(`^Draft: +${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'),
      );
      const draft = await simpleParser(await readFile(file));
      assert.deepEqual(
        [draft.subject, draft.from?.value, draft.headers.get('x-unsent')],
        ['Invoice INV-7', [{ name: 'Alice', address: 'alice@acme.test' }], '1'],
      );
    });

    it('puts a draft in the approver’s IMAP mailbox through the running gateway, the password from the CLI’s environment', { skip: imap.skip }, async () => {
      const gateway = await serve(store.env, { timeoutMs: 120_000 });
      try {
        const accepted = JSON.parse(
          ok(
            await kgw(['review', 'accept', emails[1] ?? '', '--tenant', 'acme', '--as', 'dana@acme.test', '--json'], {
              ...store.env,
              KGW_TEST_IMAP_PASSWORD: imap.password,
            }),
            'accept',
          ),
        ) as BrainDecisionJson;
        assert.match(accepted.delivered_to ?? '', /^imap:\/\/127\.0\.0\.1:\d+\/Drafts;UID=\d+$/);
      } finally {
        await gateway.stop();
      }
      // Both store backends' suites share Dana's mailbox on the one server: this suite's draft is the one with its id.
      const drafts = (await readDrafts(`dana.${process.pid}@acme.test`, 'Drafts')).filter((d) => d.messageId === `<${emails[1]}@knowledge-gateway.invalid>`);
      assert.deepEqual(
        drafts.map((d) => [...d.flags].sort()),
        [['\\Draft', '\\Seen']],
      );
    });
  });
}
