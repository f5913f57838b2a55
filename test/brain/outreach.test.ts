import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { simpleParser } from 'mailparser';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { acceptBrainReview, rejectBrainReview, showBrainReview } from '../../src/brain/review.ts';
import type { Db } from '../../src/store/db.ts';
import { cliTrail } from '../support/audit.ts';
import { addresses } from '../support/imap.ts';
import { rejectsWithKgwError } from '../support/fixtures.ts';
import { connectClient, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { RunningGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * propose_draft_email through the SDK's client over HTTP: a proposal for a manager, its id
 * derived from the content so that replays (also ten at once) find it, every bound refused in
 * the dialect's words with nothing registered, and nothing sent. On approval the draft is an
 * .eml file in the approver's folder of the data folder (the embedded default); the IMAP path is
 * tested against Dovecot in imap.test.ts.
 */

const org = (slug: string, language = 'en') => `tenant: ${slug}
name: ${slug} Ltd
language: ${language}
people:
  - { email: ana@${slug}.test, name: Ana Álvarez, brain_role: manager }
  - { email: cy@${slug}.test, name: Cy }
`;

const textOf = (result: CallToolResult): string =>
  result.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

const RECEIPT =
  /^receipt: approval_id=([0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}) kind=email_draft status=(pending|accepted|rejected)\n(.+)$/s;

for (const backend of storeBackends()) {
  describe(`Company Brain propose_draft_email on ${backend.name}`, () => {
    let store: TestStore;
    let db: Db;
    let running: RunningGateway;
    let dataDir: string;
    const clients: Client[] = [];
    const tenant = `mail-${Math.random().toString(36).slice(2, 8)}`;
    const german = `${tenant}-de`;

    async function as(scopes: string, slug = tenant): Promise<Client> {
      const client = await connectClient(`${running.url}/brain/mcp`, await issueToken(db, slug, `cy@${slug}.test`, scopes));
      clients.push(client);
      return client;
    }
    const items = async () => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM brain_inbox WHERE kind = 'email_draft'"))[0]?.n ?? 0;
    const propose = async (client: Client, args: Record<string, unknown>) =>
      (await client.callTool({ name: 'propose_draft_email', arguments: args })) as CallToolResult;
    const receipt = (result: CallToolResult) => {
      assert.notEqual(result.isError, true, textOf(result));
      const [, id = '', status = '', display = ''] = RECEIPT.exec(textOf(result)) ?? [];
      assert.ok(id, textOf(result));
      return { id, status, display };
    };
    const valid = { to: ['lee@customer.test'], subject: 'Your invoice INV-7', bodyText: 'Dear Lee,\n\nattached is the corrected invoice.\n\nAna' };
    /** The audit events that registered the item `id`. */
    const proposals = async (id: string) =>
      (
        await db.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_events WHERE action = 'outreach.propose' AND resources @> $1::jsonb", [
          JSON.stringify([{ type: 'brain_inbox', id }]),
        ])
      )[0]?.n;
    const mail = () => ({ dataDir, defaultImapUrl: undefined, env: {} });

    before(async () => {
      store = await backend.open({ migrated: true });
      db = store.db;
      await seedOrg(db, org(tenant));
      await seedOrg(db, org(german, 'de'));
      running = await startGateway(db);
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'kgw-drafts-'));
    });
    after(async () => {
      for (const client of clients) await client.close();
      await running.close();
      await store.dispose();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('registers a proposal with a receipt and an audit event, and sends or stores no draft', async () => {
      const { id, status, display } = receipt(await propose(await as('outreach:propose'), valid));
      assert.equal(status, 'pending');
      assert.match(display, /^Proposed for a manager's approval\. Nothing is sent/);
      const [row] = await db.query<{ kind: string; title: string; body: string; recipients: string[]; status: string; delivered_to: string | null }>(
        'SELECT kind, title, body, recipients, status, delivered_to FROM brain_inbox WHERE id = $1',
        [id],
      );
      assert.deepEqual(row, {
        kind: 'email_draft',
        title: valid.subject,
        body: valid.bodyText,
        recipients: valid.to,
        status: 'pending',
        delivered_to: null,
      });
      assert.equal(await proposals(id), 1);
      assert.deepEqual(await readdir(dataDir), []);
    });

    it('resolves a replay to the proposal that exists, the recipients as a set', async () => {
      const client = await as('outreach:propose');
      const args = { ...valid, to: ['a@customer.test', 'B@Customer.test'], subject: 'Replayed' };
      const first = receipt(await propose(client, args));
      const before = await items();
      const again = receipt(await propose(client, args));
      const reordered = receipt(await propose(client, { ...args, to: ['b@customer.test', 'A@CUSTOMER.TEST'] }));
      assert.deepEqual({ again: again.id, reordered: reordered.id, status: again.status }, { again: first.id, reordered: first.id, status: 'pending' });
      assert.match(again.display, /^This email was proposed already and waits for a manager/);
      assert.equal(await items(), before);
      const other = receipt(await propose(client, { ...args, bodyText: `${args.bodyText} ` }));
      assert.notEqual(other.id, first.id);
    });

    it('keeps one proposal under 10 concurrent replays', async () => {
      const client = await as('outreach:propose');
      const before = await items();
      const args = { ...valid, subject: 'Ten at once' };
      const results = await Promise.all(Array.from({ length: 10 }, () => propose(client, args)));
      const ids = new Set(results.map((r) => receipt(r).id));
      assert.equal(ids.size, 1);
      assert.equal(await items(), before + 1);
      assert.equal(await proposals([...ids][0] ?? ''), 1);
    });

    it('takes the bounds themselves: 10 addresses, 300-character subject, 20,000-character body, letters of any script', async () => {
      const to = Array.from({ length: 9 }, (_, i) => `r${i}@customer.test`).concat('jürgen@bücher.de');
      const { status } = receipt(await propose(await as('outreach:propose'), { to, subject: 's'.repeat(300), bodyText: 'b'.repeat(20_000) }));
      assert.equal(status, 'pending');
    });

    it('refuses input outside the bounds in the dialect’s words, registering nothing', async () => {
      const client = await as('outreach:propose');
      const before = await items();
      for (const args of [
        { ...valid, to: [] },
        { ...valid, to: Array.from({ length: 11 }, (_, i) => `r${i}@customer.test`) },
        { ...valid, to: ['lee'] },
        { ...valid, to: ['lee@customer'] },
        { ...valid, to: ['Lee <lee@customer.test>'] },
        { ...valid, to: ['lee@customer.test, boss@customer.test'] },
        { ...valid, to: ['lee@customer.test\r\nBcc: spy@elsewhere.test'] },
        { ...valid, to: ['lee..x@customer.test'] },
        { ...valid, to: [`${'l'.repeat(65)}@customer.test`] },
        { ...valid, to: [`lee@${'d'.repeat(250)}.test`] },
        { ...valid, to: ['lee@customer.test', 'LEE@customer.test'] },
        { ...valid, to: 'lee@customer.test' },
        { ...valid, subject: '' },
        { ...valid, subject: 's'.repeat(301) },
        { ...valid, subject: 'Invoice\r\nBcc: spy@elsewhere.test' },
        { ...valid, subject: 'Invoice \u202Egpj.exe' },
        { ...valid, bodyText: '' },
        { ...valid, bodyText: 'b'.repeat(20_001) },
        { ...valid, cc: ['boss@customer.test'] },
        { to: valid.to, subject: valid.subject },
      ]) {
        const result = await propose(client, args);
        const what = JSON.stringify(args).slice(0, 100);
        assert.equal(result.isError, true, what);
        assert.match(textOf(result), /^Invalid input: /, what);
      }
      assert.equal(await items(), before);
    });

    it('refuses text PostgreSQL cannot store (NUL, a lone surrogate) in the same words, registering nothing', async () => {
      const client = await as('outreach:propose');
      const before = await items();
      for (const args of [
        { ...valid, bodyText: 'Dear Lee,\u0000' },
        { ...valid, subject: 'Invoice \uD800' },
      ]) {
        const result = await propose(client, args);
        assert.equal(result.isError, true);
        assert.match(textOf(result), /^Invalid input: /);
      }
      assert.equal(await items(), before);
    });

    it('needs outreach:propose: a token without it does not list the tool, is refused as Forbidden and registers nothing', async () => {
      const client = await as('brain:read brain:propose');
      const before = await items();
      assert.ok(!(await client.listTools()).tools.some((t) => t.name === 'propose_draft_email'));
      await assert.rejects(client.callTool({ name: 'propose_draft_email', arguments: valid }), /Forbidden/);
      assert.equal(await items(), before);
    });

    it('answers in the organisation’s language with the same receipt', async () => {
      const args = { ...valid, subject: 'Ihre Rechnung' };
      const [en, de] = [receipt(await propose(await as('outreach:propose'), args)), receipt(await propose(await as('outreach:propose', german), args))];
      assert.match(de.display, /^Einer Führungskraft zur Freigabe vorgelegt\. Nichts wird gesendet/);
      assert.deepEqual([en.status, de.status], ['pending', 'pending']);
      // The same content in another tenant is another proposal.
      assert.notEqual(en.id, de.id);
    });

    it('puts the approved draft in the approver’s folder as an .eml file, never sent, and a replay then says so', async () => {
      const client = await as('outreach:propose');
      const args = { ...valid, to: ['lee@customer.test', 'kim@customer.test'], subject: 'Rechnung für März – korrigiert' };
      const { id } = receipt(await propose(client, args));
      const decision = await acceptBrainReview(db, cliTrail(db), { tenant, id, as: `ana@${tenant}.test` }, mail());
      const file = path.join(dataDir, 'outbox-drafts', `ana@${tenant}.test`, `${id}.eml`);
      assert.deepEqual({ status: decision.status, deliveredTo: decision.deliveredTo }, { status: 'accepted', deliveredTo: file });
      assert.equal((await showBrainReview(db, { tenant, id })).deliveredTo, file);
      const raw = await readFile(file);
      // A mail client opens the file as a draft to edit and send, not as a received message.
      assert.match(raw.toString('latin1'), /^X-Unsent: 1\r$/m);
      const draft = await simpleParser(raw);
      assert.deepEqual(
        {
          from: draft.from?.value,
          to: addresses(draft.to),
          subject: draft.subject,
          messageId: draft.messageId,
          approvalId: draft.headers.get('x-kgw-approval-id'),
          // The parser ends the text with a line break of its own.
          text: draft.text?.replace(/\n$/, ''),
        },
        {
          from: [{ name: 'Ana Álvarez', address: `ana@${tenant}.test` }],
          to: args.to,
          subject: args.subject,
          messageId: `<${id}@knowledge-gateway.invalid>`,
          approvalId: id,
          text: args.bodyText,
        },
      );
      const replay = receipt(await propose(client, args));
      assert.deepEqual([replay.id, replay.status], [id, 'accepted']);
      await rejectsWithKgwError(acceptBrainReview(db, cliTrail(db), { tenant, id, as: `ana@${tenant}.test` }, mail()), 'conflict', /already accepted/);
    });

    it('needs a manager of the brain to decide, and a rejected proposal puts nothing anywhere', async () => {
      const { id } = receipt(await propose(await as('outreach:propose'), { ...valid, subject: 'Not this one' }));
      await rejectsWithKgwError(acceptBrainReview(db, cliTrail(db), { tenant, id, as: `cy@${tenant}.test` }, mail()), 'permission_denied', /not a manager/);
      const rejected = await rejectBrainReview(db, cliTrail(db), { tenant, id, as: `ana@${tenant}.test`, note: 'wrong customer' });
      assert.deepEqual([rejected.status, rejected.deliveredTo], ['rejected', null]);
      const folder = path.join(dataDir, 'outbox-drafts', `ana@${tenant}.test`);
      assert.ok(!(await readdir(folder)).includes(`${id}.eml`));
    });

    it('leaves the proposal pending when the approver’s mailbox cannot take the draft', async () => {
      await seedOrg(
        db,
        `${org(tenant)}  - { email: mo@${tenant}.test, name: Mo, brain_role: admin, mailbox: { password_env: KGW_TEST_NO_SUCH_PASSWORD, url: "imap://127.0.0.1:9" } }\n`,
      );
      const { id } = receipt(await propose(await as('outreach:propose'), { ...valid, subject: 'Mailbox down' }));
      await rejectsWithKgwError(
        acceptBrainReview(db, cliTrail(db), { tenant, id, as: `mo@${tenant}.test` }, mail()),
        'validation',
        /read from KGW_TEST_NO_SUCH_PASSWORD, which is not set/,
      );
      await rejectsWithKgwError(
        acceptBrainReview(db, cliTrail(db), { tenant, id, as: `mo@${tenant}.test` }, { ...mail(), env: { KGW_TEST_NO_SUCH_PASSWORD: 'pw' } }),
        'unavailable',
        /could not sign in to the mailbox of mo@/,
      );
      const item = await showBrainReview(db, { tenant, id });
      assert.deepEqual([item.status, item.deliveredTo], ['pending', null]);
    });
  });
}
