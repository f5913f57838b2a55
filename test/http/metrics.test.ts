import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../support/gateway.ts';
import { ACME_ORG, connectClient, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * GET /metrics (docs/architecture.md, "Metrics"): Prometheus's text format, read by a scraper
 * on this machine, or anywhere with KGW_METRICS_TOKEN; the figures move with what the gateway
 * does (requests, tool calls and their outcomes, refused tokens, searches by engine), and the
 * outbox, the pool and the process are read at each scrape.
 */

/** The value of one sample line (`name{labels} value`), or undefined when the exposition has none. */
function sample(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const present: Record<string, string | undefined> = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/([a-z_]+)="([^"]*)"/g)].map((m) => [m[1] ?? '', m[2] ?? '']),
    );
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(match[3]);
  }
  return undefined;
}

for (const backend of storeBackends()) {
  describe(`metrics on ${backend.name}`, () => {
    let store: TestStore;
    let running: RunningGateway;
    let token: string;
    const scrape = async (headers: Record<string, string> = {}, at = running) => {
      const response = await fetch(`${at.url}/metrics`, { headers });
      return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
    };

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ACME_ORG);
      token = await issueToken(store.db, 'acme', 'release-bot', 'context.read');
      running = await startGateway(store.db, {});
    });
    after(async () => {
      await running?.close();
      await store?.dispose();
    });

    it('counts requests, tool calls by outcome, refused tokens and searches by engine', async () => {
      const before = (await scrape()).text;
      const client = await connectClient(`${running.url}/atmina/mcp`, token);
      try {
        await client.callTool({ name: 'whoami', arguments: {} });
        await client.callTool({ name: 'search', arguments: { query: 'handbook' } });
        await client.callTool({ name: 'search', arguments: { query: '' } });
      } finally {
        await client.close();
      }
      await fetch(`${running.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer kgw_wrong' },
        body: '{}',
      });
      const { status, type, text } = await scrape();
      assert.equal(status, 200);
      assert.match(type ?? '', /^text\/plain; version=0\.0\.4/);
      const delta = (name: string, labels: Record<string, string>) => (sample(text, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
      assert.equal(delta('kgw_tool_calls_total', { dialect: 'atmina', tool: 'whoami', outcome: 'ok' }), 1);
      assert.equal(delta('kgw_tool_calls_total', { dialect: 'atmina', tool: 'search', outcome: 'ok' }), 1);
      assert.equal(delta('kgw_tool_calls_total', { dialect: 'atmina', tool: 'search', outcome: 'validation' }), 1);
      assert.equal(delta('kgw_tool_call_duration_seconds_count', { dialect: 'atmina', tool: 'search' }), 2);
      assert.equal(delta('kgw_search_duration_seconds_count', { engine: 'builtin', ok: 'true' }), 1);
      assert.equal(delta('kgw_auth_failures_total', { kind: 'bearer' }), 1);
      assert.ok(delta('kgw_http_requests_total', { route: '/atmina/mcp', method: 'POST', status: '200' }) >= 4);
      assert.equal(delta('kgw_http_requests_total', { route: '/mcp', method: 'POST', status: '401' }), 1);
      // Read at the scrape: the outbox, the process, and the pool where there is one.
      assert.notEqual(sample(text, 'kgw_outbox_projections'), undefined);
      assert.ok((sample(text, 'kgw_process_resident_memory_bytes') ?? 0) > 0);
      if (backend.name === 'postgres') assert.ok((sample(text, 'kgw_store_pool_connections', { state: 'max' }) ?? 0) >= 1);
      // Labels hold names and codes only: no token, tenant or query.
      assert.doesNotMatch(text, /kgw_wrong|handbook|acme/);
    });

    it('serves this machine only without a token, and says how to scrape from elsewhere', async () => {
      const proxied = await startGateway(store.db, { KGW_TRUSTED_PROXIES: 'loopback' });
      try {
        assert.equal((await scrape({}, proxied)).status, 200);
        const remote = await scrape({ 'x-forwarded-for': '203.0.113.5' }, proxied);
        assert.equal(remote.status, 403);
        assert.match(remote.text, /set KGW_METRICS_TOKEN/);
      } finally {
        await proxied.close();
      }
    });

    it('asks for KGW_METRICS_TOKEN when it is set, and serves nothing when KGW_METRICS is off', async () => {
      const secret = 'metrics-scrape-secret-0123';
      const guarded = await startGateway(store.db, { KGW_METRICS_TOKEN: secret });
      const off = await startGateway(store.db, { KGW_METRICS: 'off' });
      try {
        const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer metrics-scrape-secret-0124' }, { authorization: secret }];
        for (const headers of attempts) {
          const refused = await scrape(headers, guarded);
          assert.equal(refused.status, 401, JSON.stringify(headers));
          assert.doesNotMatch(refused.text, /metrics-scrape-secret/);
        }
        assert.equal((await scrape({ authorization: `Bearer ${secret}` }, guarded)).status, 200);
        assert.equal((await scrape({}, off)).status, 404);
      } finally {
        await guarded.close();
        await off.close();
      }
    });
  });
}
