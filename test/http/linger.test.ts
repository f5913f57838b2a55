import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { LINGER_LIMITS } from '../../src/http/linger.ts';
import { MCP_BODY_LIMIT } from '../../src/http/mcp-request.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { ACME_ORG, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * A connection the gateway closes lingers (src/http/linger.ts, RFC 9112 §9.6): a client still
 * sending a request the gateway refused unread reads the whole answer and then the end of the
 * connection, never a reset. A reset made oversized bodies and headers look like network
 * failures (ECONNRESET) to clients still writing them, most often on a loaded machine.
 */

const [backend] = storeBackends();

interface Exchange {
  readonly answer: string;
  /** The error the socket met (a reset shows as ECONNRESET or EPIPE), if any. */
  readonly error: NodeJS.ErrnoException | undefined;
  /** Whether the gateway's FIN arrived. */
  readonly ended: boolean;
}

/**
 * Sends `head`, then keeps sending `filler` until the gateway's answer has ended and `afterEndMs`
 * more have passed (or 10 s at most), reading all along; then closes its own side.
 */
async function sendPastTheAnswer(port: number, head: string, filler: Buffer, afterEndMs = 300): Promise<Exchange> {
  // Half-open: the client goes on sending after the gateway's FIN, as one still writing its body does.
  const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let answer = '';
  let error: NodeJS.ErrnoException | undefined;
  let endedAt: number | undefined;
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
  socket.on('end', () => (endedAt = performance.now()));
  socket.on('error', (e: NodeJS.ErrnoException) => (error = e));
  socket.write(head);
  const deadline = performance.now() + 10_000;
  while (error === undefined && !socket.destroyed && performance.now() < deadline && (endedAt === undefined || performance.now() < endedAt + afterEndMs)) {
    const more = socket.write(filler);
    // Waits for the kernel to take the chunk (or a short while, so that an answer is noticed).
    await new Promise<void>((resolve) => {
      if (more) setImmediate(resolve);
      else {
        const timer = setTimeout(resolve, 20);
        socket.once('drain', () => {
          clearTimeout(timer);
          resolve();
        });
      }
    });
  }
  if (!socket.destroyed) socket.end();
  await closed;
  return { answer, error, ended: endedAt !== undefined };
}

describe('lingering close', { skip: backend === undefined }, () => {
  let store: TestStore;
  let running: RunningGateway;
  let port: number;
  let token: string;

  before(async () => {
    store = await (backend as NonNullable<typeof backend>).open({ migrated: true });
    await seedOrg(store.db, ACME_ORG);
    token = await issueToken(store.db, 'acme', 'release-bot', 'context.read');
    running = await startGateway(store.db);
    port = Number(new URL(running.url).port);
  });

  after(async () => {
    await running.close();
    await store.dispose();
  });

  it('answers a body over the MCP limit with 413, read whole while the client still sends, then a FIN, not a reset', async () => {
    const head =
      `POST /atmina/mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
      `Accept: application/json, text/event-stream\r\nContent-Length: ${MCP_BODY_LIMIT * 4}\r\n\r\n`;
    const exchange = await sendPastTheAnswer(port, head, Buffer.alloc(256 * 1024, 0x20));
    assert.equal(exchange.error, undefined, `the connection failed: ${exchange.error?.code}; read: ${exchange.answer.slice(0, 200)}`);
    assert.match(exchange.answer, /^HTTP\/1\.1 413 /);
    assert.match(exchange.answer, /connection: close/i);
    assert.match(exchange.answer, new RegExp(`Request body exceeds ${MCP_BODY_LIMIT} bytes`));
    assert.ok(exchange.ended);
  });

  it('answers a console form over its limit with 413 the same way', async () => {
    const head = `POST /console/signin HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n`;
    const exchange = await sendPastTheAnswer(port, head, Buffer.alloc(256 * 1024, 0x61));
    assert.equal(exchange.error, undefined, `the connection failed: ${exchange.error?.code}; read: ${exchange.answer.slice(0, 200)}`);
    assert.match(exchange.answer, /^HTTP\/1\.1 413 /);
    assert.ok(exchange.ended);
  });

  it('answers headers over Node’s 16 KiB with 431 while the client still sends them, then a FIN, not a reset', async () => {
    const exchange = await sendPastTheAnswer(port, `GET /console/kbs?page=`, Buffer.alloc(64 * 1024, 0x61));
    assert.equal(exchange.error, undefined, `the connection failed: ${exchange.error?.code}; read: ${exchange.answer.slice(0, 200)}`);
    assert.match(exchange.answer, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    assert.match(
      exchange.answer,
      /\r\n\r\n\{"error":"Request Header Fields Too Large","message":"Exceeded maximum allowed HTTP header size","statusCode":431\}$/,
    );
    // Answered once, however much more arrived after the parser failed.
    assert.equal(exchange.answer.match(/HTTP\/1\.1/g)?.length, 1);
    assert.ok(exchange.ended);
  });

  it('closes a client that goes on sending after the answer within the bound', async () => {
    const head = `POST /console/signin HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${1024 * 1024 * 1024}\r\n\r\n`;
    const exchange = await sendPastTheAnswer(port, head, Buffer.alloc(64 * 1024, 0x61), LINGER_LIMITS.lingerMs * 3);
    assert.match(exchange.answer, /^HTTP\/1\.1 413 /);
    // The gateway stopped reading after its bound: the writes that followed were refused.
    assert.ok(exchange.error !== undefined && ['ECONNRESET', 'EPIPE'].includes(exchange.error.code ?? ''), String(exchange.error?.code));
  });

  it('keeps answering on a connection kept alive, and over fetch refuses a large body with 413', async () => {
    const response = await fetch(`${running.url}/atmina/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(MCP_BODY_LIMIT * 2) } }),
    });
    assert.equal(response.status, 413);
    assert.match(await response.text(), /Request body exceeds/);
    for (let i = 0; i < 3; i += 1) assert.equal((await fetch(`${running.url}/healthz`)).status, 200);
  });
});
