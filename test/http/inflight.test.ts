import assert from 'node:assert/strict';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { InflightBytes, declaredBytes } from '../../src/http/inflight.ts';
import { MCP_BODY_LIMIT } from '../../src/http/mcp-request.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

// Request bytes in flight are bounded per token and in total: a token that opens many large
// bodies at once is told to wait (429) before its bodies are read, everyone together past the
// total gets 503, both with Retry-After, and the bytes are given back when a request ends.

const ORG = `
tenant: inflight
name: Inflight
people:
  - { email: owner@inflight.test, name: Owner }
agents:
  - { name: a-bot, owner: owner@inflight.test }
  - { name: b-bot, owner: owner@inflight.test }
  - { name: c-bot, owner: owner@inflight.test }
`;
const MiB = 1024 * 1024;
const WHOAMI = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } });

interface Open {
  readonly request: ClientRequest;
  readonly response: Promise<{ status: number; retryAfter: string | undefined; body: string }>;
}

/** A POST declaring `length` bytes whose body is sent only in part, so the request stays in flight. */
function openPost(url: string, token: string, length: number | 'chunked', first = '{'): Open {
  const target = new URL('/mcp', url);
  const request = httpRequest(target, {
    method: 'POST',
    agent: false,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      ...(length === 'chunked' ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(length) }),
    },
  });
  const response = new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve, reject) => {
    request.once('response', (res: IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body }));
    });
    request.once('error', reject);
  });
  request.write(first);
  return { request, response };
}

async function post(url: string, token: string, body: string): Promise<{ status: number; retryAfter: string | null; body: string }> {
  const response = await fetch(new URL('/mcp', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body,
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.text() };
}

describe('request bytes in flight (unit)', () => {
  it('reserves per caller and in total, lets a lone body through, and releases once', () => {
    const inflight = new InflightBytes({ perCaller: 10, total: 15, retryAfterSeconds: 1 });
    const a = inflight.reserve('a', 6);
    assert.ok('release' in a);
    assert.deepEqual(inflight.reserve('a', 6), { refused: 'caller' });
    const b = inflight.reserve('b', 8);
    assert.ok('release' in b);
    assert.deepEqual(inflight.reserve('c', 2), { refused: 'total' });
    a.release();
    a.release();
    assert.equal(inflight.held(), 8);
    assert.equal(inflight.held('a'), 0);
    b.release();
    // Nothing in flight: a body larger than either bound is the body limit's to refuse, not this.
    const big = inflight.reserve('a', 100);
    assert.ok('release' in big);
    big.release();
    assert.equal(inflight.held(), 0);
  });

  it('counts a missing, malformed or oversized Content-Length as the body limit', () => {
    assert.equal(declaredBytes('123', MCP_BODY_LIMIT), 123);
    assert.equal(declaredBytes(undefined, MCP_BODY_LIMIT), MCP_BODY_LIMIT);
    assert.equal(declaredBytes('12abc', MCP_BODY_LIMIT), MCP_BODY_LIMIT);
    assert.equal(declaredBytes('-5', MCP_BODY_LIMIT), MCP_BODY_LIMIT);
    assert.equal(declaredBytes(String(10 * MCP_BODY_LIMIT), MCP_BODY_LIMIT), MCP_BODY_LIMIT);
  });
});

for (const backend of storeBackends()) {
  describe(`request bytes in flight on ${backend.name}`, () => {
    let store: TestStore;
    let running: RunningGateway;
    const tokens: Record<string, string> = {};

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ORG);
      for (const agent of ['a-bot', 'b-bot', 'c-bot']) tokens[agent] = await issueToken(store.db, 'inflight', agent, 'context.read');
      running = await startGateway(store.db, {}, { inflightLimits: { perCaller: 3 * MiB, total: 5 * MiB, retryAfterSeconds: 2 } });
    });
    after(async () => {
      await running?.close();
      await store?.dispose();
    });

    /** Waits until the gateway holds exactly `bytes` in flight (a request's bytes are reserved as its headers arrive). */
    const holding = async (bytes: number): Promise<void> => {
      const deadline = Date.now() + 30_000;
      while (running.gateway.inflight.held() !== bytes) {
        assert.ok(Date.now() < deadline, `in flight: ${running.gateway.inflight.held()} bytes, waiting for ${bytes}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };

    it('refuses a token past its bytes in flight with 429 and Retry-After, others past the total with 503, before reading their bodies', async () => {
      const a = tokens['a-bot'] ?? '';
      const b = tokens['b-bot'] ?? '';
      const c = tokens['c-bot'] ?? '';
      const held = [openPost(running.url, a, 2 * MiB)];
      // The first body is being read: its bytes are held.
      await holding(2 * MiB);
      const second = openPost(running.url, a, 2 * MiB);
      assert.deepEqual(await second.response.then((r) => [r.status, r.retryAfter]), [429, '2']);
      assert.match((await second.response).body, /Too many request bytes in flight for this caller/);
      second.request.destroy();

      held.push(openPost(running.url, b, 2 * MiB));
      await holding(4 * MiB);
      const third = openPost(running.url, c, 2 * MiB);
      assert.deepEqual(await third.response.then((r) => [r.status, r.retryAfter]), [503, '2']);
      third.request.destroy();
      // A body that declares no length counts as the body limit.
      const chunked = openPost(running.url, c, 'chunked');
      assert.equal((await chunked.response).status, 503);
      chunked.request.destroy();

      // Small calls still fit, and the rest of the gateway answers.
      const small = await post(running.url, c, WHOAMI);
      assert.equal(small.status, 200, small.body);
      assert.equal((await fetch(new URL('/healthz', running.url))).status, 200);

      // A request that ends (here: its client leaves) gives its bytes back.
      for (const open of held) {
        open.request.destroy();
        await open.response.catch(() => undefined);
      }
      await holding(0);
      const again = openPost(running.url, a, 2 * MiB);
      const another = openPost(running.url, b, 2 * MiB);
      const answered: number[] = [];
      void again.response.then((r) => answered.push(r.status)).catch(() => undefined);
      void another.response.then((r) => answered.push(r.status)).catch(() => undefined);
      await holding(4 * MiB);
      // Both held at once again (4 MiB ≤ 5 MiB): neither was refused, both still being read.
      assert.deepEqual(answered, []);
      again.request.destroy();
      another.request.destroy();
      await Promise.allSettled([again.response, another.response]);
    });

    it('answers whole large bodies within the bounds, one after another', async () => {
      const a = tokens['a-bot'] ?? '';
      const padded = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { pad: 'x'.repeat(2 * MiB) } } });
      const answers = await Promise.all(Array.from({ length: 4 }, () => post(running.url, a, padded)));
      // Each is answered: 200, or 429 with Retry-After while the others are read; never a 5xx.
      for (const answer of answers) {
        assert.ok(answer.status === 200 || (answer.status === 429 && answer.retryAfter === '2'), `${answer.status} ${answer.body.slice(0, 200)}`);
      }
      assert.ok(answers.some((answer) => answer.status === 200));
      assert.equal((await post(running.url, a, WHOAMI)).status, 200);
    });
  });
}
