import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser as Chromium, Page } from 'playwright-core';
import type { GraphJson } from '../../src/brain/console/graph.ts';
import { GRAPH_DRAW_MAX_NODES } from '../../src/brain/console/graph.ts';
import { PASSWORD, setPassword } from '../oauth/support.ts';
import { browserSkip, launchChromium } from '../support/browser.ts';
import { storeBackends } from '../support/stores.ts';
import { BIG_TENANT, BIG_VIEWER, seedBigBrain } from './graph-seed.ts';
import type { ConsoleGateway } from './support.ts';
import { keepScreenshot, seriousViolations, signedInFetch, signedInPage, startConsole } from './support.ts';

/**
 * The Organisation graph in headless Chromium: Cytoscape, served by the gateway, draws under the
 * console's CSP (no violation reported); a click on a node and the keyboard on the list both
 * reach the node's page; axe-core finds no serious violation; a phone needs no sideways
 * scrolling. A 5,000-node, 20,000-relation brain is drawn too, and the time its JSON takes and
 * the time to the first frame of its drawing are recorded (test-artifacts/console/graph-timing.json),
 * never asserted: the machine decides them.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIG_NODES = 5000;
const BIG_RELATIONS = 20_000;

// Pia administers Acme too, so the navigation holds every entry a phone must fit.
const ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: pia@acme.test, name: Pia, tier: public, admin: true }
brain:
  nodes:
    - { id: erp, type: tool, title: ERP, summary: Our invoicing system, access: public }
    - { id: crm, type: tool, title: CRM, access: public, mark: inferred }
    - { id: wiki, type: tool, title: Wiki, access: public }
    - { id: sales, type: department, title: Sales team, access: public }
    - { id: falcon, type: strategy, title: Project Falcon, access: restricted }
  relations:
    - { from: crm, verb: uses, to: erp }
    - { from: crm, verb: needs clarification with, to: wiki }
    - { from: wiki, verb: supports, to: sales }
    - { from: falcon, verb: depends on, to: erp }
`;

/** Waits for graph.js to have drawn, and gives what it set on the drawing. */
async function drawn(
  page: Page,
): Promise<{ nodes: number; relations: number; fetchMs: number; layoutMs: number; drawMs: number; canvases: number; ids: string[] }> {
  await page.locator('#graph-drawing[data-state="drawn"]').waitFor({ timeout: 60_000 });
  // As a string: the page's DOM is not this project's (no DOM types); graph.js leaves the Cytoscape instance on the drawing.
  return page.evaluate(`(() => {
    const holder = document.getElementById('graph-drawing');
    return {
      nodes: Number(holder.dataset.nodes),
      relations: Number(holder.dataset.relations),
      fetchMs: Number(holder.dataset.fetchMs),
      layoutMs: Number(holder.dataset.layoutMs),
      drawMs: Number(holder.dataset.drawMs),
      canvases: holder.querySelectorAll('canvas').length,
      ids: holder.cy.nodes().map((n) => n.id()),
    };
  })()`);
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

for (const backend of storeBackends()) {
  describe(`the Organisation graph in Chromium on ${backend.name}`, { skip: browserSkip }, () => {
    let gw: ConsoleGateway;
    let chromium: Chromium;

    before(async () => {
      gw = await startConsole(backend, ORG, [{ tenant: 'acme', email: 'pia@acme.test' }]);
      await seedBigBrain(gw.store.db, BIG_NODES, BIG_RELATIONS);
      await setPassword(gw.store.db, BIG_TENANT, BIG_VIEWER, PASSWORD);
      chromium = await launchChromium();
    });
    after(async () => {
      await chromium?.close();
      await gw?.close();
    });

    it('draws within the CSP, reaches a node by a click and by the keyboard, without serious accessibility violations', async () => {
      const { context, page } = await signedInPage(chromium, gw.url, 'acme', 'pia@acme.test');
      const cspViolations: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
      });
      try {
        await page.getByRole('link', { name: 'Organisation graph' }).click();
        await page.getByRole('heading', { name: 'Organisation graph', level: 1 }).waitFor();
        const drawing = await drawn(page);
        const data = (await page.evaluate(async () => (await fetch('/console/graph/data')).json())) as GraphJson;
        assert.ok(drawing.canvases > 0, 'Cytoscape drew on a canvas');
        assert.equal(drawing.nodes, data.nodes.length);
        assert.equal(drawing.relations, data.relations.length);
        assert.deepEqual([...drawing.ids].sort(), data.nodes.map((n) => n.id).sort());
        for (const id of ['crm', 'erp', 'sales', 'wiki']) assert.ok(drawing.ids.includes(id), id);
        assert.ok(!(await page.content()).includes('falcon'), 'the page as drawn names no hidden node');
        assert.deepEqual(await seriousViolations(page), [], 'graph page');
        if (backend.name === 'pglite') await keepScreenshot(page, 'graph');

        // A click on the drawn node opens its page.
        const box = await page.locator('#graph-drawing').boundingBox();
        assert.ok(box);
        const at = await page.evaluate<{ x: number; y: number }>(`document.getElementById('graph-drawing').cy.getElementById('erp').renderedPosition()`);
        await page.mouse.click(box.x + at.x, box.y + at.y);
        await page.waitForURL(`${gw.url}/console/graph/node/erp`);
        await page.getByRole('heading', { name: 'ERP', level: 1 }).waitFor();
        assert.match((await page.locator('main').textContent()) ?? '', /further relations? leads? to/);
        assert.deepEqual(await seriousViolations(page), [], 'node page');

        // The keyboard reaches a node through the list.
        await page.getByRole('link', { name: /Back to the graph/ }).click();
        await drawn(page);
        await page.locator('#graph-nodes ~ .scroll').getByRole('link', { name: 'CRM', exact: true }).focus();
        await page.keyboard.press('Enter');
        await page.waitForURL(`${gw.url}/console/graph/node/crm`);
        await page.getByRole('heading', { name: 'CRM', level: 1 }).waitFor();

        // The filter applies as it changes (the console's script), and the drawing follows it.
        await page.goto(`${gw.url}/console/graph`);
        await page.getByLabel('Node type').selectOption('department');
        await page.waitForURL(/type=department/);
        assert.deepEqual((await drawn(page)).ids, ['sales']);

        // A phone: nothing wider than the window.
        await page.setViewportSize({ width: 390, height: 844 });
        await page.goto(`${gw.url}/console/graph`);
        await drawn(page);
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
        assert.ok(overflow <= 0, `the graph page is ${overflow} px wider than a phone`);
        assert.deepEqual(cspViolations, []);
      } finally {
        await context.close();
      }
    });

    it('draws a 5,000-node, 20,000-relation brain within its bound and records how long it takes', async () => {
      const fetcher = await signedInFetch(gw.url, BIG_TENANT, BIG_VIEWER);
      const jsonMs: number[] = [];
      let data: GraphJson | undefined;
      for (let run = 0; run < 3; run++) {
        const started = performance.now();
        const answer = await fetcher.request('/console/graph/data');
        jsonMs.push(performance.now() - started);
        assert.equal(answer.status, 200);
        data = JSON.parse(answer.text) as GraphJson;
      }
      assert.ok(data);
      assert.equal(data.hidden, BIG_NODES / 10, 'every tenth node is restricted, above the manager');
      // The rest, and the directory's own nodes (the organisation, Max).
      assert.equal(data.matching, BIG_NODES - BIG_NODES / 10 + 2);
      assert.equal(data.nodes.length, GRAPH_DRAW_MAX_NODES);
      const pageMs: number[] = [];
      for (let run = 0; run < 3; run++) {
        const started = performance.now();
        const answer = await fetcher.request('/console/graph');
        pageMs.push(performance.now() - started);
        assert.equal(answer.status, 200);
        assert.match(answer.text, /The drawing shows the first/);
      }

      const { context, page } = await signedInPage(chromium, gw.url, BIG_TENANT, BIG_VIEWER);
      try {
        const firstDraw: number[] = [];
        const scriptDraw: number[] = [];
        const scriptData: number[] = [];
        const scriptLayout: number[] = [];
        let drawing: Awaited<ReturnType<typeof drawn>> | undefined;
        for (let run = 0; run < 3; run++) {
          const started = Date.now();
          await page.goto(`${gw.url}/console/graph`);
          drawing = await drawn(page);
          firstDraw.push(Date.now() - started);
          scriptDraw.push(drawing.drawMs);
          scriptData.push(drawing.fetchMs);
          scriptLayout.push(drawing.layoutMs);
        }
        assert.ok(drawing);
        assert.equal(drawing.nodes, GRAPH_DRAW_MAX_NODES);
        assert.equal(drawing.relations, data.relations.length);
        const started = Date.now();
        await page.goto(`${gw.url}/console/graph?type=tool`);
        const filtered = await drawn(page);
        const filteredMs = Date.now() - started;
        const figures = {
          backend: backend.name,
          machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', node: process.version },
          nodes: BIG_NODES,
          relations: BIG_RELATIONS,
          visibleNodes: data.matching,
          hiddenNodes: data.hidden,
          drawnNodes: drawing.nodes,
          drawnRelations: drawing.relations,
          jsonBytes: JSON.stringify(data).length,
          jsonMedianMs: Math.round(median(jsonMs)),
          pageMedianMs: Math.round(median(pageMs)),
          navigationToFirstDrawMedianMs: median(firstDraw),
          scriptToDataMedianMs: median(scriptData),
          scriptToLaidOutMedianMs: median(scriptLayout),
          scriptToFirstDrawMedianMs: median(scriptDraw),
          filteredByType: { drawnNodes: filtered.nodes, navigationToFirstDrawMs: filteredMs, scriptToFirstDrawMs: filtered.drawMs },
        };
        const folder = path.join(ROOT, 'test-artifacts', 'console');
        await mkdir(folder, { recursive: true });
        await writeFile(path.join(folder, `graph-timing-${backend.name}.json`), `${JSON.stringify(figures, null, 2)}\n`);
      } finally {
        await context.close();
      }
    });
  });
}
