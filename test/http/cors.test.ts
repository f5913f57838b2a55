import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserSkip, launchChromium } from '../support/browser.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { ACME_ORG, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * CORS on the MCP endpoints (docs/mcp.md, "Browsers"): a web app on an origin that
 * KGW_ALLOWED_ORIGINS lists calls the gateway from a page in headless Chromium, so the browser
 * itself sends the preflight, enforces the answer's headers and decides what the page may read.
 * A page on an origin not listed gets nothing.
 */

/** A server for one empty page: its origin is the web app's. */
async function pageServer(): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer(
    (_request, response) => void response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

interface Seen {
  readonly ok: boolean;
  readonly status?: number;
  readonly body?: string;
  readonly challenge?: string | null;
  readonly error?: string;
}

/** A fetch the page itself makes, as a browser-based MCP client would. */
function fetchFromPage(page: Page, url: string, headers: Record<string, string>, body: unknown): Promise<Seen> {
  return page.evaluate(
    async ({ url, headers, body }) => {
      try {
        const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
        return { ok: true, status: response.status, body: await response.text(), challenge: response.headers.get('www-authenticate') };
      } catch (error) {
        return { ok: false, error: String(error) };
      }
    },
    { url, headers, body },
  );
}

const CALL = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } };
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
  // Headers of the 2026-07-28 revision, which a browser client sends too: the preflight must allow them.
  'mcp-method': 'tools/call',
  'mcp-name': 'whoami',
};

for (const backend of storeBackends()) {
  describe(`CORS on the MCP endpoints from a browser on ${backend.name}`, { skip: browserSkip }, () => {
    let store: TestStore;
    let gateway: RunningGateway;
    let browser: Browser;
    let app: Awaited<ReturnType<typeof pageServer>>;
    let stranger: Awaited<ReturnType<typeof pageServer>>;
    let token: string;

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ACME_ORG);
      token = await issueToken(store.db, 'acme', 'release-bot', 'context.read');
      [app, stranger] = [await pageServer(), await pageServer()];
      gateway = await startGateway(store.db, { KGW_ALLOWED_ORIGINS: app.origin });
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
      await gateway?.close();
      await app?.close();
      await stranger?.close();
      await store?.dispose();
    });

    const pageAt = async (origin: string): Promise<Page> => {
      const page = await browser.newPage();
      await page.goto(`${origin}/`);
      return page;
    };

    it('lets a page on an allowed origin call a tool with its bearer token, through the preflight', async () => {
      const page = await pageAt(app.origin);
      try {
        for (const path of ['/mcp', '/atmina/mcp']) {
          const seen = await fetchFromPage(page, `${gateway.url}${path}`, { ...MCP_HEADERS, authorization: `Bearer ${token}` }, CALL);
          assert.equal(seen.ok, true, seen.error);
          assert.equal(seen.status, 200, path);
          const answer = JSON.parse(seen.body ?? '{}') as { result?: { structuredContent?: { principal?: { name?: string } } } };
          assert.equal(answer.result?.structuredContent?.principal?.name, 'release-bot', path);
        }
      } finally {
        await page.close();
      }
    });

    it('lets that page read a 401 and its WWW-Authenticate, so it can start OAuth', async () => {
      const page = await pageAt(app.origin);
      try {
        const seen = await fetchFromPage(page, `${gateway.url}/atmina/mcp`, MCP_HEADERS, CALL);
        assert.equal(seen.ok, true, seen.error);
        assert.equal(seen.status, 401);
        assert.match(seen.challenge ?? '', /^Bearer resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/atmina\/mcp"/);
      } finally {
        await page.close();
      }
    });

    it('gives a page on another origin nothing, and runs nothing for it', async () => {
      const before = await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_events WHERE tool = 'whoami'");
      const page = await pageAt(stranger.origin);
      try {
        const seen = await fetchFromPage(page, `${gateway.url}/mcp`, { ...MCP_HEADERS, authorization: `Bearer ${token}` }, CALL);
        assert.equal(seen.ok, false);
        assert.match(seen.error ?? '', /Failed to fetch/);
      } finally {
        await page.close();
      }
      const afterwards = await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_events WHERE tool = 'whoami'");
      assert.equal(afterwards[0]?.n, before[0]?.n);
    });

    it('answers the preflight itself: the allowed origin, methods, headers and cache time; none for a stranger', async () => {
      const preflight = (origin: string) =>
        fetch(`${gateway.url}/brain/mcp`, {
          method: 'OPTIONS',
          headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, mcp-protocol-version' },
        });
      const allowed = await preflight(app.origin);
      assert.equal(allowed.status, 204);
      assert.equal(allowed.headers.get('access-control-allow-origin'), app.origin);
      assert.match(allowed.headers.get('access-control-allow-methods') ?? '', /POST/);
      const headers = (allowed.headers.get('access-control-allow-headers') ?? '').toLowerCase();
      for (const name of ['authorization', 'content-type', 'accept', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'last-event-id'])
        assert.ok(headers.split(/,\s*/).includes(name), `${name} in ${headers}`);
      assert.equal(allowed.headers.get('access-control-max-age'), '600');
      assert.equal(allowed.headers.get('access-control-allow-credentials'), null, 'bearer tokens, never cookies');
      assert.match(allowed.headers.get('vary') ?? '', /origin/i);
      const refused = await preflight(stranger.origin);
      assert.equal(refused.headers.get('access-control-allow-origin'), null);
    });
  });
}
