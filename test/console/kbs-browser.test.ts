import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser as Chromium, Page } from 'playwright-core';
import { connectClient, drainedOutbox, issueToken } from '../support/gateway.ts';
import { browserSkip, launchChromium } from '../support/browser.ts';
import { s3GatewayEnv } from '../support/harness.ts';
import { storeBackends } from '../support/stores.ts';
import type { ConsoleGateway } from './support.ts';
import { keepScreenshot, seriousViolations, signedInPage, startConsole } from './support.ts';
import { KBS_ORG, call, kbIdOf, seedHandbook } from './kbs-support.ts';

/**
 * The Knowledge Bases section in headless Chromium, as a person uses it: from the list to a
 * folder and a file, its history and a restore, search, and uploads by choosing files and by
 * dropping them on the drop zone (the section's script hashes them, PUTs them to the presigned
 * URLs and confirms them); the tools then see the files. No page breaks its CSP, axe-core finds
 * no serious violation, and a screenshot is kept (test-artifacts/console/console-kbs.png).
 */

for (const backend of storeBackends()) {
  describe(`console Knowledge Bases in Chromium on ${backend.name}`, { skip: browserSkip }, () => {
    let gateway: ConsoleGateway;
    let chromium: Chromium;
    let agent: Client;
    let kbId: string;

    before(async () => {
      gateway = await startConsole(backend, KBS_ORG, [{ tenant: 'acme', email: 'alice@acme.test' }]);
      agent = await connectClient(`${gateway.url}/atmina/mcp`, await issueToken(gateway.store.db, 'acme', 'alice@acme.test', 'context.read context.write'));
      kbId = await kbIdOf(agent, 'handbook');
      await seedHandbook(agent, kbId);
      await drainedOutbox(gateway.store.db);
      chromium = await launchChromium();
    });
    after(async () => {
      await agent?.close();
      await chromium?.close();
      await gateway?.close();
    });

    const watchCsp = (page: Page, into: string[]) =>
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) into.push(message.text());
      });

    it('browses, reads, restores and searches within the CSP and without serious accessibility violations', async () => {
      const csp: string[] = [];
      const { context, page } = await signedInPage(chromium, gateway.url, 'acme', 'alice@acme.test');
      watchCsp(page, csp);
      try {
        await page.getByRole('link', { name: 'Knowledge Bases', exact: true }).click();
        await page.getByRole('heading', { name: 'Knowledge Bases' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'list');
        await page.getByRole('link', { name: 'Engineering handbook', exact: true }).click();
        await page.getByRole('heading', { name: 'Engineering handbook' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'folder');
        // The section's stylesheet arrived with its script: the drop zone is drawn.
        await page.locator('.dropzone.active').waitFor();
        assert.equal(await page.locator('[data-no-script]').isHidden(), true);
        if (backend.name === 'pglite') await keepScreenshot(page, 'console-kbs');

        await page.getByRole('link', { name: 'index.md', exact: true }).click();
        await page.getByRole('heading', { name: 'index.md' }).waitFor();
        await page.locator('.markdown img').waitFor();
        // The image is shown: its rendition loaded from the section's route, under the CSP.
        await page.waitForFunction("document.querySelector('.markdown img').complete && document.querySelector('.markdown img').naturalWidth > 0");
        assert.equal(await page.locator('.markdown script').count(), 0);
        assert.deepEqual(await seriousViolations(page), [], 'file');
        if (backend.name === 'pglite') await keepScreenshot(page, 'console-kbs-file');
        await page.getByRole('link', { name: 'leave policy', exact: true }).click();
        await page.getByRole('heading', { name: 'leave.md' }).waitFor();

        await page.getByRole('link', { name: 'History', exact: true }).click();
        await page.getByRole('heading', { name: 'History of policies/leave.md' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'history');
        if (backend.name === 'pglite') await keepScreenshot(page, 'console-kbs-history');
        await page.getByRole('link', { name: 'Changes of version 2', exact: true }).click();
        await page.getByRole('heading', { name: 'Changes of version 2' }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'diff');
        await page.getByRole('link', { name: 'History', exact: true }).click();
        await page.getByRole('button', { name: 'Restore version 1' }).click();
        await page.getByRole('heading', { name: 'History of policies/leave.md' }).waitFor();
        const restored = (await call(agent, 'read_file', { kb_id: kbId, path: 'policies/leave.md' })) as { content: string; version: number };
        assert.equal(restored.version, 3);
        assert.match(restored.content, /30 days/);

        await page.goto(`${gateway.url}/console/kbs/${kbId}`);
        await page.getByLabel('Search this Knowledge Base').fill('vacation');
        await page.getByRole('button', { name: 'Search' }).click();
        await page.getByRole('heading', { name: 'Search results' }).waitFor();
        assert.ok((await page.locator('mark').count()) > 0);
        assert.deepEqual(await seriousViolations(page), [], 'search');

        // A phone: nothing wider than the window.
        await page.setViewportSize({ width: 390, height: 844 });
        for (const address of [`/console/kbs/${kbId}`, `/console/kbs/${kbId}/file?path=index.md`, `/console/kbs/${kbId}/history?path=policies%2Fleave.md`]) {
          await page.goto(`${gateway.url}${address}`);
          const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
          assert.ok(overflow <= 0, `${address} is ${overflow} px wider than a phone`);
        }
        assert.deepEqual(csp, []);
      } finally {
        await context.close();
      }
    });

    it('uploads chosen and dropped files through the presigned batch; the tools see them', async () => {
      const csp: string[] = [];
      const { context, page } = await signedInPage(chromium, gateway.url, 'acme', 'alice@acme.test');
      watchCsp(page, csp);
      // Where the bytes went: the gateway's own upload URLs on disk, S3's presigned ones (another origin) where the suite has S3.
      const puts: string[] = [];
      page.on('request', (request) => {
        if (request.method() === 'PUT') puts.push(new URL(request.url()).origin);
      });
      try {
        await page.goto(`${gateway.url}/console/kbs/${kbId}?path=policies%2F`);
        await page.getByRole('heading', { name: 'Engineering handbook: policies/' }).waitFor();
        // Chosen with the file input (what a keyboard user does).
        await page
          .getByLabel('Files to upload')
          .setInputFiles({ name: 'chosen.md', mimeType: 'text/markdown', buffer: Buffer.from('# Chosen\n\nPicked by hand.\n') });
        await page.getByRole('link', { name: 'chosen.md', exact: true }).waitFor();
        // Dropped on the drop zone, two files at once, in the page's own DataTransfer (sent as text: the test has no DOM types).
        const dropped = await page.evaluateHandle(`(() => {
          const transfer = new DataTransfer();
          transfer.items.add(new File(['# Dropped\\n\\nDragged in.\\n'], 'dropped.md', { type: 'text/markdown' }));
          transfer.items.add(new File(['a,b\\n1,2\\n'], 'table.csv', { type: 'text/csv' }));
          return transfer;
        })()`);
        await page.dispatchEvent('[data-dropzone]', 'dragenter', { dataTransfer: dropped });
        await page.dispatchEvent('[data-dropzone]', 'drop', { dataTransfer: dropped });
        await page.getByRole('link', { name: 'dropped.md', exact: true }).waitFor();
        await page.getByRole('link', { name: 'table.csv', exact: true }).waitFor();
        assert.deepEqual(await seriousViolations(page), [], 'folder after uploads');

        const chosen = (await call(agent, 'read_file', { kb_id: kbId, path: 'policies/chosen.md' })) as { content: string };
        assert.equal(chosen.content, '# Chosen\n\nPicked by hand.\n');
        const drop = (await call(agent, 'read_file', { kb_id: kbId, path: 'policies/dropped.md' })) as { content: string };
        assert.equal(drop.content, '# Dropped\n\nDragged in.\n');
        const csv = (await call(agent, 'read_file', { kb_id: kbId, path: 'policies/table.csv' })) as { content: string };
        assert.equal(csv.content, 'a,b\n1,2\n');
        assert.deepEqual(csp, []);
        const s3 = s3GatewayEnv(backend)['S3_ENDPOINT'];
        assert.deepEqual([...new Set(puts)], [s3 === undefined ? new URL(gateway.url).origin : new URL(s3).origin]);
        assert.equal(puts.length, 3);
      } finally {
        await context.close();
      }
    });
  });
}
