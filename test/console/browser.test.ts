import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser as Chromium } from 'playwright-core';
import { PASSWORD, setPassword } from '../oauth/support.ts';
import { ACME_ORG, GLOBEX_ORG, connectClient, issueToken, seedOrg } from '../support/gateway.ts';
import { browserSkip, launchChromium } from '../support/browser.ts';
import { storeBackends } from '../support/stores.ts';
import type { ConsoleGateway } from './support.ts';
import { keepScreenshot, seriousViolations, signedInPage, startConsole } from './support.ts';

/**
 * The console in headless Chromium, as a person uses it: sign in through the form, filter the
 * inbox (the one script applies the filter under the page's CSP), open a draft, accept it. No
 * page breaks its Content Security Policy, axe-core finds no serious accessibility violation,
 * a phone-sized window needs no sideways scrolling, and a screenshot of each page is kept
 * (test-artifacts/console/).
 */

// Alice also administers Acme, for the Admin pages.
const ORG = `${ACME_ORG.replace('    name: Alice\n', '    name: Alice\n    admin: true\n')}grants:
  - { to: alice@acme.test, on: all_knowledge, role: owner }
  - { to: release-bot, on: all_knowledge, role: proposer }
`;

for (const backend of storeBackends()) {
  describe(`console in Chromium on ${backend.name}`, { skip: browserSkip }, () => {
    let gateway: ConsoleGateway;
    let chromium: Chromium;
    let draftId: string;

    before(async () => {
      gateway = await startConsole(backend, ORG, [{ tenant: 'acme', email: 'alice@acme.test' }]);
      const agent = await connectClient(
        `${gateway.url}/alignbase/mcp`,
        await issueToken(gateway.store.db, 'acme', 'release-bot', 'context.read context.write'),
      );
      try {
        const listed = (await agent.callTool({ name: 'list_knowledge', arguments: {} })).structuredContent as { knowledge: { knowledge_id: string }[] };
        const draft = await agent.callTool({
          name: 'create_knowledge_draft',
          arguments: { knowledge_id: listed.knowledge[0]?.knowledge_id, base_version: 1, content: '# Release checklist\n\n1. Run the tests.\n2. Ship.\n' },
        });
        draftId = (draft.structuredContent as { draft_id: string }).draft_id;
        await agent.callTool({ name: 'propose_knowledge', arguments: { title: 'On-call rota', content: '# On-call\n\nRotate weekly.\n' } });
      } finally {
        await agent.close();
      }
      // Hank administers Globex, whose language is German.
      await seedOrg(gateway.store.db, GLOBEX_ORG.replace('    name: Hank\n', '    name: Hank\n    admin: true\n'));
      await setPassword(gateway.store.db, 'globex', 'hank@globex.test', PASSWORD);
      chromium = await launchChromium();
    });
    after(async () => {
      await chromium?.close();
      await gateway?.close();
    });

    it('signs in, filters, opens and accepts a draft, within the CSP and without serious accessibility violations', async () => {
      const context = await chromium.newContext();
      const page = await context.newPage();
      const cspViolations: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
      });
      await page.goto(`${gateway.url}/console`);
      await page.waitForURL(`${gateway.url}/console/signin`);
      assert.deepEqual(await seriousViolations(page), [], 'sign-in page');
      if (backend.name === 'pglite') await keepScreenshot(page, 'signin');
      await context.close();

      const { context: signed, page: inbox } = await signedInPage(chromium, gateway.url, 'acme', 'alice@acme.test');
      inbox.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
      });
      await inbox.getByRole('heading', { name: 'Inbox' }).waitFor();
      assert.equal(await inbox.getByRole('link', { name: 'Release checklist' }).count(), 1);
      assert.equal(await inbox.getByRole('link', { name: 'On-call rota' }).count(), 1);
      assert.deepEqual(await seriousViolations(inbox), [], 'inbox');
      if (backend.name === 'pglite') await keepScreenshot(inbox, 'inbox');

      // The filter applies as soon as it changes: the console's script, allowed by the CSP.
      await inbox.getByLabel('Kind').selectOption('knowledge_proposal');
      await inbox.waitForURL(/kind=knowledge_proposal/);
      assert.equal(await inbox.getByRole('link', { name: 'Release checklist' }).count(), 0);
      assert.equal(await inbox.getByRole('link', { name: 'On-call rota' }).count(), 1);

      await inbox.goto(`${gateway.url}/console/inbox/alignbase/${draftId}`);
      await inbox.getByRole('heading', { name: 'Release checklist' }).waitFor();
      assert.deepEqual(await seriousViolations(inbox), [], 'draft');
      if (backend.name === 'pglite') await keepScreenshot(inbox, 'draft');
      await inbox.getByLabel('Publish what accepting saves').check();
      await inbox.getByRole('button', { name: 'Accept' }).click();
      await inbox.getByRole('heading', { name: 'Accepted' }).waitFor();
      assert.match((await inbox.locator('.decided').textContent()) ?? '', /Saved as version 2\./);
      assert.deepEqual(await seriousViolations(inbox), [], 'decided draft');

      // A phone: nothing wider than the window.
      await inbox.setViewportSize({ width: 390, height: 844 });
      await inbox.goto(`${gateway.url}/console/inbox`);
      const overflow = await inbox.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      assert.ok(overflow <= 0, `the inbox is ${overflow} px wider than a phone`);
      if (backend.name === 'pglite') await keepScreenshot(inbox, 'inbox-phone');
      assert.deepEqual(cspViolations, []);
      await signed.close();
    });

    it('shows the Admin pages without serious accessibility violations', { skip: backend.name !== 'pglite' }, async () => {
      const { context, page } = await signedInPage(chromium, gateway.url, 'acme', 'alice@acme.test');
      try {
        await page.getByRole('link', { name: 'Admin' }).click();
        await page.getByRole('heading', { name: 'Admin' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'admin');
        await page.getByRole('link', { name: 'Tokens' }).click();
        await page.getByRole('heading', { name: 'Tokens' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'tokens');
        await keepScreenshot(page, 'admin-tokens');
        await page.getByLabel('Person or agent').fill('release-bot');
        await page.getByRole('checkbox', { name: /context\.read/ }).check();
        await page.getByRole('button', { name: 'Create token' }).click();
        await page.getByRole('heading', { name: 'New token' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'new token');
        await page.goto(`${gateway.url}/console/admin/audit`);
        await page.getByRole('heading', { name: 'Audit log' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'audit');
        await keepScreenshot(page, 'admin-audit');
        await page.locator('table.list a').first().click();
        await page.getByRole('heading', { name: 'Audit event' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'audit event');
      } finally {
        await context.close();
      }
    });

    it('shows the organisation, backends and Activity pages without serious accessibility violations', { skip: backend.name !== 'pglite' }, async () => {
      const { context, page } = await signedInPage(chromium, gateway.url, 'acme', 'alice@acme.test');
      try {
        await page.goto(`${gateway.url}/console/admin`);
        await page.getByRole('main').getByRole('link', { name: 'Organisation', exact: true }).click();
        await page.getByRole('heading', { name: 'Organisation', exact: true }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'organisation');
        await keepScreenshot(page, 'admin-org');
        await page.getByRole('link', { name: 'People' }).click();
        await page.getByRole('heading', { name: 'People' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'people');
        await page.goto(`${gateway.url}/console/admin/org/grants`);
        assert.deepEqual(await seriousViolations(page), [], 'grants');
        await page.goto(`${gateway.url}/console/admin/backends`);
        await page.getByRole('heading', { name: 'Backends' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'backends');
        await keepScreenshot(page, 'admin-backends');
        await page.getByRole('link', { name: 'Activity' }).click();
        await page.getByRole('heading', { name: 'Activity' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'activity');
      } finally {
        await context.close();
      }
    });

    it('shows the Admin pages in German where the organisation speaks German', { skip: backend.name !== 'pglite' }, async () => {
      const { context, page } = await signedInPage(chromium, gateway.url, 'globex', 'hank@globex.test');
      try {
        await page.getByRole('link', { name: 'Verwaltung' }).click();
        await page.getByRole('heading', { name: 'Verwaltung' }).waitFor();
        assert.equal(await page.locator('html').getAttribute('lang'), 'de');
        assert.deepEqual(await seriousViolations(page), [], 'Verwaltung');
        for (const [link, heading] of [
          ['Organisation', 'Organisation'],
          ['Tokens', 'Tokens'],
          ['Audit-Protokoll', 'Audit-Protokoll'],
          ['Backends', 'Backends'],
        ] as const) {
          await page.goto(`${gateway.url}/console/admin`);
          await page.getByRole('main').getByRole('link', { name: link, exact: true }).click();
          await page.getByRole('heading', { name: heading, exact: true }).waitFor();
          assert.deepEqual(await seriousViolations(page), [], heading);
        }
        await page.goto(`${gateway.url}/console/admin/org/people`);
        await page.getByRole('heading', { name: 'Personen' }).waitFor();
        assert.match(await page.content(), /hank@globex\.test/);
        assert.doesNotMatch(await page.content(), /acme/);
        await page.getByRole('link', { name: 'Aktivität' }).click();
        await page.getByRole('heading', { name: 'Aktivität' }).waitFor();
        assert.match(await page.content(), /Aktivität ist eingeschaltet/);
        if (backend.name === 'pglite') await keepScreenshot(page, 'activity-de');
      } finally {
        await context.close();
      }
    });
  });
}
