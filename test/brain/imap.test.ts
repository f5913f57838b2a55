import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { simpleParser } from 'mailparser';
import { acceptBrainReview, showBrainReview } from '../../src/brain/review.ts';
import type { Db } from '../../src/store/db.ts';
import { cliTrail } from '../support/audit.ts';
import { rejectsWithKgwError } from '../support/fixtures.ts';
import { connectClient, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { addresses, imapServer, readDrafts } from '../support/imap.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * An approved email draft in the approver's own mailbox, on a real IMAP server (Dovecot, started
 * by test/services/dovecot.sh): put there with APPEND and the \Draft flag, read back over IMAP
 * with its headers and body; a mailbox that refuses the login leaves the proposal pending and
 * the mailbox untouched.
 */

const imap = imapServer();

for (const backend of storeBackends()) {
  describe(`Email drafts in an IMAP mailbox on ${backend.name}`, { skip: imap.skip }, () => {
    let store: TestStore;
    let db: Db;
    let running: RunningGateway;
    const tenant = `imap-${Math.random().toString(36).slice(2, 8)}`;
    const ana = `ana@${tenant}.test`;
    const bo = `bo@${tenant}.test`;

    const propose = async (args: Record<string, unknown>): Promise<string> => {
      const client = await connectClient(`${running.url}/brain/mcp`, await issueToken(db, tenant, `cy@${tenant}.test`, 'outreach:propose'));
      try {
        const result = (await client.callTool({ name: 'propose_draft_email', arguments: args })) as CallToolResult;
        const text = result.content[0]?.type === 'text' ? result.content[0].text : '';
        const id = /approval_id=([0-9a-f-]{36})/.exec(text)?.[1];
        assert.ok(id, text);
        return id;
      } finally {
        await client.close();
      }
    };

    before(async () => {
      store = await backend.open({ migrated: true });
      db = store.db;
      // Ana's mailbox names its server; Bo's takes KGW_MAIL_IMAP_URL's and a login of its own.
      await seedOrg(
        db,
        `tenant: ${tenant}
name: ${tenant} Ltd
people:
  - email: ${ana}
    name: Ana Álvarez
    brain_role: manager
    mailbox: { password_env: KGW_TEST_IMAP_PASSWORD, url: "${imap.url}" }
  - email: ${bo}
    name: Bo
    brain_role: admin
    mailbox: { user: "bo.${tenant}@mail.test", password_env: KGW_TEST_IMAP_PASSWORD, folder: Entwürfe }
  - { email: cy@${tenant}.test, name: Cy }
`,
      );
      running = await startGateway(db);
    });
    after(async () => {
      await running.close();
      await store.dispose();
    });

    it('appends the approved draft to the approver’s Drafts with the \\Draft flag, read back over IMAP', async () => {
      const args = {
        to: ['lee@customer.test', 'kim@customer.test'],
        subject: 'Rechnung für März – korrigiert',
        bodyText: 'Dear Lee,\n\nthe corrected invoice.\n\nAna',
      };
      const id = await propose(args);
      const decision = await acceptBrainReview(
        db,
        cliTrail(db),
        { tenant, id, as: ana },
        { dataDir: '/nonexistent', defaultImapUrl: undefined, env: imap.env },
      );
      assert.match(decision.deliveredTo ?? '', new RegExp(`^${imap.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/Drafts;UID=\\d+$`));
      assert.equal((await showBrainReview(db, { tenant, id })).deliveredTo, decision.deliveredTo);
      const drafts = await readDrafts(ana, 'Drafts');
      const found = drafts.filter((d) => d.messageId === `<${id}@knowledge-gateway.invalid>`);
      assert.equal(found.length, 1);
      const [draft] = found;
      const parsed = await simpleParser(draft?.source ?? Buffer.alloc(0));
      assert.deepEqual(
        {
          flags: [...(draft?.flags ?? [])].sort(),
          uid: draft?.uid,
          from: parsed.from?.value,
          to: addresses(parsed.to),
          subject: parsed.subject,
          approvalId: parsed.headers.get('x-kgw-approval-id'),
          // The \Draft flag marks it: X-Unsent is only for an .eml file.
          unsent: parsed.headers.get('x-unsent'),
          text: parsed.text?.replace(/\n$/, ''),
        },
        {
          flags: ['\\Draft', '\\Seen'],
          uid: Number(/;UID=(\d+)$/.exec(decision.deliveredTo ?? '')?.[1]),
          from: [{ name: 'Ana Álvarez', address: ana }],
          to: args.to,
          subject: args.subject,
          approvalId: id,
          unsent: undefined,
          text: args.bodyText,
        },
      );
    });

    it('takes KGW_MAIL_IMAP_URL, the mailbox’s own login and folder (created when missing)', async () => {
      const id = await propose({ to: ['lee@customer.test'], subject: 'Folder of its own', bodyText: 'Hello Lee' });
      const decision = await acceptBrainReview(db, cliTrail(db), { tenant, id, as: bo }, { dataDir: '/nonexistent', defaultImapUrl: imap.url, env: imap.env });
      assert.match(decision.deliveredTo ?? '', /\/Entw%C3%BCrfe;UID=\d+$/);
      const drafts = await readDrafts(`bo.${tenant}@mail.test`, 'Entwürfe');
      assert.deepEqual(
        drafts.map((d) => [d.messageId, d.flags.has('\\Draft')]),
        [[`<${id}@knowledge-gateway.invalid>`, true]],
      );
    });

    it('leaves the proposal pending and the mailbox untouched when the server refuses the login', async () => {
      const id = await propose({ to: ['lee@customer.test'], subject: 'Wrong password', bodyText: 'Hello Lee' });
      const before = (await readDrafts(ana, 'Drafts')).length;
      await rejectsWithKgwError(
        acceptBrainReview(
          db,
          cliTrail(db),
          { tenant, id, as: ana },
          { dataDir: '/nonexistent', defaultImapUrl: undefined, env: { KGW_TEST_IMAP_PASSWORD: 'wrong' } },
        ),
        'unavailable',
        new RegExp(`^could not sign in to the mailbox of ${ana} at 127\\.0\\.0\\.1:\\d+: the server refused the user name or password$`),
      );
      assert.equal((await showBrainReview(db, { tenant, id })).status, 'pending');
      assert.equal((await readDrafts(ana, 'Drafts')).length, before);
    });
  });
}
