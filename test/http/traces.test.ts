import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ACME_ORG, connectClient, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * OpenTelemetry traces (docs/architecture.md, "Traces"): with KGW_TRACES_URL the gateway sends
 * its spans over OTLP/HTTP to a collector — here a receiver of the JSON encoding the exporter
 * sends — and one tool call is a tree: the request's span (continuing the caller's
 * `traceparent`), the tool's below it, and the store and search calls below that.
 */

interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly attributes?: readonly { key: string; value: { stringValue?: string } }[];
}

/** An id as hex, whichever way the encoding wrote it (hex, or base64 of its bytes). */
const hex = (id: string | undefined): string => (id === undefined || id === '' ? '' : /^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex'));

const [backend] = storeBackends();

describe('traces over OTLP', { skip: backend === undefined }, () => {
  let store: TestStore;
  const spans: OtlpSpan[] = [];
  let collector: http.Server;
  let url: string;

  before(async () => {
    store = await (backend as NonNullable<typeof backend>).open({ migrated: true });
    await seedOrg(store.db, ACME_ORG);
    collector = http.createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        const sent = JSON.parse(body) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
        for (const resource of sent.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`;
  });
  after(async () => {
    await new Promise((resolve) => collector?.close(resolve));
    await store?.dispose();
  });

  it('sends a tool call as a tree below the caller’s trace: request, tool, store and search', async () => {
    const token = await issueToken(store.db, 'acme', 'release-bot', 'context.read');
    const running = await startGateway(store.db, { KGW_TRACES_URL: url });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    try {
      const client = await connectClient(`${running.url}/atmina/mcp`, token, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
      try {
        await client.callTool({ name: 'search', arguments: { query: 'handbook' } });
      } finally {
        await client.close();
      }
    } finally {
      // Closing flushes the batch to the collector.
      await running.close();
    }
    const mine = spans.filter((span) => hex(span.traceId) === traceId);
    const byId = new Map(mine.map((span) => [hex(span.spanId), span]));
    const tool = mine.find((span) => span.name === 'tool search');
    assert.ok(tool, `a span for the tool among ${mine.map((span) => span.name).join(', ')}`);
    const request = byId.get(hex(tool.parentSpanId));
    assert.equal(request?.name, 'POST /atmina/mcp');
    assert.equal(hex(request?.parentSpanId), '00f067aa0ba902b7', 'the request continues the caller’s span');
    const below = mine.filter((span) => hex(span.parentSpanId) === hex(tool.spanId)).map((span) => span.name);
    assert.ok(below.includes('search.search'), `the engine's query below the tool: ${below.join(', ')}`);
    assert.ok(
      below.some((name) => name === 'db.query' || name === 'db.tx'),
      `the store below the tool: ${below.join(', ')}`,
    );
    const attributes = Object.fromEntries((tool.attributes ?? []).map((attribute) => [attribute.key, attribute.value.stringValue]));
    assert.equal(attributes['kgw.tool'], 'search');
    assert.equal(attributes['kgw.tenant'], 'acme');
    // Never what was asked: the query is not in any span.
    assert.ok(!JSON.stringify(mine).includes('handbook'));
  });
});
