import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { writeInbox } from '../../src/brain/inbox.ts';
import { DEFAULT_ACCESS } from '../../src/kernel/access/principal-access.ts';
import type { BrainReviewDetail } from '../../src/brain/review.ts';
import { showBrainReview } from '../../src/brain/review.ts';
import { PASSWORD, setPassword } from '../oauth/support.ts';
import type { Browser } from '../oauth/support.ts';
import { cliTrail } from '../support/audit.ts';
import { connectClient, drainedOutbox, issueToken, seedOrg } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';
import type { ConsoleGateway } from './support.ts';
import { csrfOf, signedInFetch, startConsole } from './support.ts';

/*
 * The Company Brain's inbox in the console, through its real HTTP interface: a manager or admin
 * of the brain lists, reads and decides observations, onboarding actions and email drafts as
 * `kgw review` does; anyone else sees none of them; a manager sees no action about a node above
 * their tier; a decision is taken once; hostile input is refused or shown escaped.
 */

/** The variable Meg's mailbox password is read from: not the gateway's own (no KGW_ prefix), so the gateway's environment may give it. */
const MEG_PASSWORD_ENV = `ACME_MEG_IMAP_PASSWORD_${process.pid}`;

const ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: ada@acme.test, name: Ada, tier: restricted, brain_role: admin }
  - { email: max@acme.test, name: Max, tier: manager, brain_role: manager }
  - { email: nia@acme.test, name: Nia, tier: restricted }
  - email: meg@acme.test
    name: Meg
    tier: manager
    brain_role: manager
    mailbox: { password_env: ${MEG_PASSWORD_ENV}, url: "imap://127.0.0.1:9" }
brain:
  nodes:
    - { id: erp, type: tool, title: ERP, summary: Our invoicing system, access: public }
    - { id: falcon, type: strategy, title: Project Falcon, summary: Acquire Globex in the third quarter, access: restricted }
`;

const GLOBEX = `tenant: globex
name: Globex
people:
  - { email: gus@globex.test, name: Gus, brain_role: admin }
`;

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const BIDI = '\u202E';

const textOf = (result: CallToolResult): string =>
  result.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

/** The id in a tool's receipt (inbox_id= or approval_id=). */
async function receipt(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = textOf(result);
  const id = /(?:inbox_id|approval_id)=([0-9a-f-]{36})/.exec(text)?.[1];
  assert.ok(id, `${name}: ${text}`);
  return id;
}

for (const backend of storeBackends()) {
  describe(`the console's Company Brain inbox on ${backend.name}`, () => {
    let gw: ConsoleGateway;
    let ada: Client;
    let max: Browser;
    let admin: Browser;
    let nia: Browser;
    let meg: Browser;
    const ids: Record<string, string> = {};
    let globexItem = '';

    const itemPath = (id: string) => `/console/inbox/brain/${id}`;
    const show = (id: string, tenant = 'acme'): Promise<BrainReviewDetail> => showBrainReview(gw.store.db, { tenant, id });
    /** Posts a decision as the item page's forms do, with the session's CSRF value (from the inbox: an unknown item has no page); `extra` adds fields. */
    async function decide(browser: Browser, id: string, decision: 'accept' | 'reject', extra: Record<string, string> = {}) {
      const csrf = csrfOf((await browser.request('/console/inbox')).text);
      return browser.request(itemPath(id), { form: { csrf, decision, ...extra }, headers: { origin: new URL(gw.url).origin } });
    }
    const unknownPage = async (browser: Browser) => {
      const page = await browser.request(itemPath(UNKNOWN));
      assert.equal(page.status, 404);
      return page.text;
    };

    before(async () => {
      gw = await startConsole(backend, ORG, [
        { tenant: 'acme', email: 'ada@acme.test' },
        { tenant: 'acme', email: 'max@acme.test' },
        { tenant: 'acme', email: 'nia@acme.test' },
        { tenant: 'acme', email: 'meg@acme.test' },
      ]);
      const db = gw.store.db;
      ada = await connectClient(`${gw.url}/brain/mcp`, await issueToken(db, 'acme', 'ada@acme.test', 'brain:read brain:propose outreach:propose'));
      for (const kind of ['observation', 'correction', 'proposal', 'work_output'] as const) {
        ids[kind] = await receipt(ada, 'write_inbox', {
          kind,
          title: `A ${kind.replace('_', ' ')} about the ERP`,
          body: `The ERP needs attention (${kind}).\nSecond line.`,
          relatedNodeIds: kind === 'observation' ? ['erp', 'falcon'] : ['erp'],
        });
      }
      const propose = (summary: string, action: string, details: Record<string, unknown>) =>
        receipt(ada, 'propose_onboarding_action', { action, summary, details });
      ids.updateErp = await propose('Rename the ERP', 'update_node', {
        id: 'erp',
        type: 'tool',
        title: 'ERP (Odoo)',
        summary: 'Odoo since May',
        access: 'public',
        tags: ['finance'],
      });
      ids.updateFalcon = await propose('Sharpen the strategy', 'update_node', {
        id: 'falcon',
        type: 'strategy',
        title: 'Project Falcon',
        summary: 'Acquire Globex in the third quarter for 40 million',
        access: 'restricted',
      });
      ids.addWiki = await propose('Add the wiki', 'add_node', { id: 'wiki', type: 'tool', title: `Wiki${BIDI}gnp.exe <b>bold</b>`, access: 'public' });
      ids.addFax = await propose('Add the fax', 'add_node', { id: 'fax', type: 'tool', title: 'Fax', access: 'public' });
      ids.mailMax = await receipt(ada, 'propose_draft_email', {
        to: ['lee@customer.test'],
        subject: 'Invoice INV-7',
        bodyText: 'Dear Lee,\n\nINV-7 is attached.',
      });
      ids.mailMeg = await receipt(ada, 'propose_draft_email', {
        to: ['kim@customer.test'],
        subject: 'Invoice INV-8',
        bodyText: 'Dear Kim,\n\nINV-8 is attached.',
      });
      // A title no tool takes (write_inbox refuses control and bidi characters), as an older
      // or imported row may hold one: stored through the core, which does not check it.
      const [tenantRow] = await db.query<{ id: string }>("SELECT id FROM tenants WHERE slug = 'acme'");
      const [adaRow] = await db.query<{ id: string }>("SELECT id FROM principals WHERE email = 'ada@acme.test'");
      const tenantId = tenantRow!.id;
      ids.hostileTitle = (
        await writeInbox(
          gw.gateway.services,
          { tenantId, tenantSlug: 'acme', language: 'en', access: DEFAULT_ACCESS, visible: DEFAULT_ACCESS },
          adaRow!.id,
          {
            kind: 'observation',
            title: `Invoice${BIDI}txt.exe <script>alert(1)</script>\u0007`,
            body: 'A body with a bell \u0007 and an override \u202E.',
            relatedNodeIds: [],
          },
          cliTrail(db).about({ tenantId }),
        )
      ).id;
      await seedOrg(db, GLOBEX);
      await setPassword(db, 'globex', 'gus@globex.test', PASSWORD);
      const gus = await connectClient(`${gw.url}/brain/mcp`, await issueToken(db, 'globex', 'gus@globex.test', 'brain:read brain:propose'));
      try {
        globexItem = await receipt(gus, 'write_inbox', { kind: 'observation', title: 'Globex only', body: 'Only for Globex eyes.' });
      } finally {
        await gus.close();
      }
      max = await signedInFetch(gw.url, 'acme', 'max@acme.test');
      admin = await signedInFetch(gw.url, 'acme', 'ada@acme.test');
      nia = await signedInFetch(gw.url, 'acme', 'nia@acme.test');
      meg = await signedInFetch(gw.url, 'acme', 'meg@acme.test');
    });
    after(async () => {
      await ada.close();
      await gw.close();
    });

    it('lists every kind for a manager, with labels, and shows each kind with what it changes', async () => {
      const list = await max.request('/console/inbox');
      assert.equal(list.status, 200);
      for (const key of ['observation', 'correction', 'proposal', 'work_output', 'updateErp', 'addWiki', 'mailMax'] as const)
        assert.ok(list.text.includes(itemPath(ids[key]!)), `${key} listed`);
      for (const label of ['Brain observation', 'Brain correction', 'Brain proposal', 'Brain work output', 'Onboarding action', 'Email draft'])
        assert.ok(list.text.includes(label), label);

      const observation = await max.request(itemPath(ids.observation!));
      assert.equal(observation.status, 200);
      assert.match(observation.text, /The ERP needs attention \(observation\)\.\nSecond line\./);
      // The related node Max sees is named; the one above his tier not even by its id.
      assert.match(observation.text, /<li><code>erp<\/code><\/li>/);
      assert.ok(!observation.text.includes('falcon'), 'no hidden related node');

      const action = await max.request(itemPath(ids.updateErp!));
      assert.equal(action.status, 200);
      assert.match(action.text, /Action: update_node \(medium risk\)/);
      assert.match(action.text, /<tr class="changed"><th scope="row">Title<\/th><td>ERP<\/td><td>ERP \(Odoo\)<\/td><\/tr>/);
      assert.match(action.text, /<tr class="changed"><th scope="row">Summary<\/th><td>Our invoicing system<\/td><td>Odoo since May<\/td><\/tr>/);
      assert.match(action.text, /<tr><th scope="row">Access tier<\/th><td>public<\/td><td>public<\/td><\/tr>/);
      assert.match(action.text, /<tr class="changed"><th scope="row">Tags<\/th><td>—<\/td><td>finance<\/td><\/tr>/);

      const email = await max.request(itemPath(ids.mailMax!));
      assert.equal(email.status, 200);
      assert.match(email.text, /<dt>From<\/dt><dd>Max &lt;max@acme\.test&gt;<\/dd>/);
      assert.match(email.text, /<dt>To<\/dt><dd>lee@customer\.test<\/dd>/);
      assert.match(email.text, /<dt>Subject<\/dt><dd>Invoice INV-7<\/dd>/);
      assert.match(email.text, /Dear Lee,\n\nINV-7 is attached\./);
      assert.match(email.text, /an \.eml draft file/);
      assert.ok(!email.text.includes('type="password"'), 'no password field for a person without a mailbox');
    });

    it('accepts an onboarding action, which the brain then holds, and says what it changed', async () => {
      const accepted = await decide(max, ids.updateErp!, 'accept');
      assert.equal(accepted.status, 303, accepted.text);
      assert.equal(accepted.location, `${gw.url}${itemPath(ids.updateErp!)}`);
      const page = await max.request(itemPath(ids.updateErp!));
      assert.match(page.text, /Accepted by max@acme\.test on /);
      assert.match(page.text, /<li><code>update brain node erp<\/code><\/li>/);
      assert.ok(!page.text.includes('name="decision"'), 'no forms once decided');
      assert.equal((await show(ids.updateErp!)).status, 'accepted');
      // Audited on the console's surface, as the person who decided.
      const [event] = await gw.store.db.query<{ surface: string; email: string }>(
        "SELECT e.surface, p.email FROM audit_events e JOIN principals p ON p.tenant_id = e.tenant_id AND p.id = e.principal_id WHERE e.action = 'review.accept' AND e.resources::text LIKE $1",
        [`%${ids.updateErp!}%`],
      );
      assert.deepEqual(event, { surface: 'console', email: 'max@acme.test' });
      // Through the brain's read path: the graph store, once the outbox has carried the change.
      await drainedOutbox(gw.store.db);
      const concept = textOf((await ada.callTool({ name: 'read_concept', arguments: { id: 'erp' } })) as CallToolResult);
      assert.match(concept, /ERP \(Odoo\)/);
      assert.match(concept, /Odoo since May/);
      const list = await max.request('/console/inbox');
      assert.ok(!list.text.includes(itemPath(ids.updateErp!)), 'decided items leave the list');
    });

    it('rejects with a note, which the page and `kgw review` show', async () => {
      const rejected = await decide(max, ids.addFax!, 'reject', { note: 'Nobody uses a fax.' });
      assert.equal(rejected.status, 303, rejected.text);
      const page = await max.request(itemPath(ids.addFax!));
      assert.match(page.text, /Rejected by max@acme\.test on /);
      assert.match(page.text, /Note: Nobody uses a fax\./);
      const detail = await show(ids.addFax!);
      assert.deepEqual([detail.status, detail.decisionNote, detail.decidedBy], ['rejected', 'Nobody uses a fax.', 'max@acme.test']);
      assert.equal((await gw.store.db.query("SELECT 1 FROM brain_nodes WHERE id = 'fax'")).length, 0);
    });

    it('accepts an email draft of a person without a mailbox as an .eml file, and says where it went', async () => {
      const accepted = await decide(max, ids.mailMax!, 'accept');
      assert.equal(accepted.status, 303, accepted.text);
      const page = await max.request(itemPath(ids.mailMax!));
      const where = /The draft was saved as a file \(not sent\): <code>([^<]+)<\/code>/.exec(page.text)?.[1];
      assert.ok(where, page.text);
      assert.equal(where, (await show(ids.mailMax!)).deliveredTo);
      assert.match(where, /outbox-drafts\/max@acme\.test\/[0-9a-f-]{36}\.eml$/);
      const eml = await readFile(where, 'utf8');
      assert.match(eml, /^From: Max <max@acme\.test>$/m);
      assert.match(eml, /^To: lee@customer\.test$/m);
      assert.match(eml, /^Subject: Invoice INV-7$/m);
      assert.match(eml, /^X-Unsent: 1$/m);
      // As it will appear, it is shown as it went: from the one who decided.
      assert.match(page.text, /<dt>From<\/dt><dd>max@acme\.test<\/dd>/);
    });

    it('asks a person with a mailbox for its password, unless the gateway has it, and uses it for that decision only', async () => {
      const page = await meg.request(itemPath(ids.mailMeg!));
      assert.equal(page.status, 200);
      assert.match(
        page.text,
        /<label>Password of your mailbox meg@acme\.test \(127\.0\.0\.1:9\) <input type="password" name="mailbox_password" autocomplete="off" required><\/label>/,
      );
      assert.match(page.text, /puts it in your mailbox meg@acme\.test \(127\.0\.0\.1:9\) as a draft/);
      const empty = await decide(meg, ids.mailMeg!, 'accept');
      assert.equal(empty.status, 400);
      assert.match(empty.text, /Enter the password of your mailbox meg@acme\.test/);
      // The typed password reaches the mailbox: nothing listens there, so the decision fails and the item stays pending.
      const typed = await decide(meg, ids.mailMeg!, 'accept', { mailbox_password: 'hunter2-typed' });
      assert.equal(typed.status, 503, 'the mailbox is a service that did not answer');
      assert.match(typed.text, /could not sign in to the mailbox of meg@acme\.test at 127\.0\.0\.1:9/);
      assert.ok(!typed.text.includes('hunter2-typed'), 'the password is not shown again');
      const audit = await gw.store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_events WHERE details::text LIKE '%hunter2%'");
      assert.equal(audit[0]?.n, 0);
      assert.equal((await show(ids.mailMeg!)).status, 'pending');
      process.env[MEG_PASSWORD_ENV] = 'from-the-gateway';
      try {
        const again = await meg.request(itemPath(ids.mailMeg!));
        assert.ok(!again.text.includes('type="password"'), 'no field when the gateway has the variable');
        const fromGateway = await decide(meg, ids.mailMeg!, 'accept');
        assert.equal(fromGateway.status, 503);
        assert.match(fromGateway.text, /could not sign in to the mailbox of meg@acme\.test/);
      } finally {
        delete process.env[MEG_PASSWORD_ENV];
      }
      assert.equal((await show(ids.mailMeg!)).status, 'pending');
    });

    it('shows a person who is not a manager of the brain none of its items, and each as an unknown id', async () => {
      const list = await nia.request('/console/inbox');
      assert.equal(list.status, 200);
      assert.ok(!list.text.includes('/console/inbox/brain/'), 'no brain item listed');
      const unknown = await unknownPage(nia);
      for (const id of [ids.observation!, ids.updateFalcon!, ids.mailMeg!, ids.addFax!]) {
        const page = await nia.request(itemPath(id));
        assert.equal(page.status, 404);
        assert.equal(page.text, unknown);
      }
      const refused = await decide(nia, ids.observation!, 'accept');
      assert.equal(refused.status, 404);
      assert.equal((await show(ids.observation!)).status, 'pending');
    });

    it('keeps an action about a node above a manager’s tier from them entirely, and shows it to one who sees the node', async () => {
      const list = await max.request('/console/inbox');
      assert.ok(!list.text.includes(ids.updateFalcon!), 'not listed');
      const page = await max.request(itemPath(ids.updateFalcon!));
      assert.equal(page.status, 404);
      assert.equal(page.text, await unknownPage(max));
      for (const secret of ['Falcon', 'falcon', 'Globex', '40 million']) assert.ok(!page.text.includes(secret), secret);
      const posted = await decide(max, ids.updateFalcon!, 'reject', { note: 'no' });
      assert.equal(posted.status, 404);
      assert.equal((await show(ids.updateFalcon!)).status, 'pending');
      const seen = await admin.request(itemPath(ids.updateFalcon!));
      assert.equal(seen.status, 200);
      assert.match(seen.text, /<td>Acquire Globex in the third quarter<\/td><td>Acquire Globex in the third quarter for 40 million<\/td>/);
      assert.match(seen.text, /<td>restricted<\/td><td>restricted<\/td>/);
    });

    it('shows the first decision when a second comes after it, and changes nothing', async () => {
      const stalePage = await max.request(itemPath(ids.correction!));
      const csrf = csrfOf(stalePage.text);
      assert.equal((await decide(admin, ids.correction!, 'accept')).status, 303);
      const second = await max.request(itemPath(ids.correction!), {
        form: { csrf, decision: 'reject', note: 'too late' },
        headers: { origin: new URL(gw.url).origin },
      });
      assert.equal(second.status, 409);
      assert.match(second.text, /already accepted/);
      assert.match(second.text, /Accepted by ada@acme\.test on /);
      const detail = await show(ids.correction!);
      assert.deepEqual([detail.status, detail.decidedBy, detail.decisionNote], ['accepted', 'ada@acme.test', null]);
    });

    it('refuses a note with NUL or a lone surrogate, changing nothing', async () => {
      const nul = await decide(max, ids.proposal!, 'reject', { note: 'before\u0000after' });
      assert.equal(nul.status, 400);
      assert.match(nul.text, /must not contain NUL/);
      // A lone surrogate cannot be percent-encoded by URLSearchParams: sent as the bytes a client would send (ED A0 80).
      const page = await max.request(itemPath(ids.proposal!));
      const body = Buffer.concat([Buffer.from(`csrf=${encodeURIComponent(csrfOf(page.text))}&decision=reject&note=a`), Buffer.from([0xed, 0xa0, 0x80])]);
      const response = await fetch(`${gw.url}${itemPath(ids.proposal!)}`, {
        method: 'POST',
        headers: { cookie: max.cookie ?? '', origin: new URL(gw.url).origin, 'content-type': 'application/x-www-form-urlencoded' },
        body,
        redirect: 'manual',
      });
      assert.equal(response.status, 400);
      assert.match(await response.text(), /not valid UTF-8/);
      const detail = await show(ids.proposal!);
      assert.deepEqual([detail.status, detail.decisionNote], ['pending', null]);
    });

    it('shows control and bidirectional characters of a title escaped, and markup as text', async () => {
      const list = await max.request('/console/inbox');
      assert.ok(list.text.includes('Invoice\\u202etxt.exe &lt;script&gt;alert(1)&lt;/script&gt;\\x07'), 'escaped in the list');
      const item = await max.request(itemPath(ids.hostileTitle!));
      assert.ok(item.text.includes('<h1>Invoice\\u202etxt.exe &lt;script&gt;alert(1)&lt;/script&gt;\\x07</h1>'), 'escaped as the heading');
      assert.ok(item.text.includes('A body with a bell \\x07 and an override \\u202e.'));
      const wiki = await max.request(itemPath(ids.addWiki!));
      assert.match(wiki.text, /<td>—<\/td><td>Wiki\\u202egnp\.exe &lt;b&gt;bold&lt;\/b&gt;<\/td>/);
      for (const page of [list.text, item.text, wiki.text]) {
        assert.ok(!page.includes(BIDI), 'no raw override');
        assert.ok(!page.includes('\u0007'), 'no raw control character');
        assert.ok(!page.includes('<script>alert'), 'no markup from the agent');
      }
    });

    it("gives another tenant's item id the page of an unknown id", async () => {
      const page = await max.request(itemPath(globexItem));
      assert.equal(page.status, 404);
      assert.equal(page.text, await unknownPage(max));
      const posted = await decide(max, globexItem, 'accept');
      assert.equal(posted.status, 404);
      assert.equal((await show(globexItem, 'globex')).status, 'pending');
    });

    it('refuses a decision without the CSRF value, changing nothing', async () => {
      const missing = await max.request(itemPath(ids.work_output!), { form: { decision: 'accept' }, headers: { origin: new URL(gw.url).origin } });
      assert.equal(missing.status, 403);
      const wrong = await max.request(itemPath(ids.work_output!), {
        form: { csrf: 'forged', decision: 'accept' },
        headers: { origin: new URL(gw.url).origin },
      });
      assert.equal(wrong.status, 403);
      assert.equal((await show(ids.work_output!)).status, 'pending');
    });
  });
}
