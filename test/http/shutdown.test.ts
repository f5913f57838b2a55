import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { GatewayOptions } from '../../src/app.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

// Closing the gateway (SIGTERM of `kgw serve`, a test's close) lets the requests in flight answer
// before the store closes, refuses what arrives meanwhile, and ends even if a client never
// finishes its request. A request is held in flight by sending its body in two parts: the
// gateway has begun it (its token checked) and waits for the rest, on either store.

const ORG = `
tenant: drain
name: Drain
people:
  - email: owner@drain.test
    name: Owner
agents:
  - name: writer-bot
    owner: owner@drain.test
grants:
  - { to: writer-bot, on: all_knowledge, role: owner }
`;

interface LogLine {
  level: number;
  msg: string;
  requests?: number;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

/** A POST whose body is sent in two parts; `arrived` resolves once the gateway has begun it. */
interface HeldRequest {
  readonly arrived: Promise<unknown>;
  readonly answer: Promise<Answer>;
  finish(): void;
}

const writeCall = (title: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'write_knowledge', arguments: { title, expected_version: 0, content: 'written while the gateway closed' } },
});

function holdRequest(running: RunningGateway, token: string, body: unknown): HeldRequest {
  const text = Buffer.from(JSON.stringify(body));
  const url = new URL(running.url);
  const arrived = once(running.gateway.app.server, 'request');
  const request = http.request({
    host: url.hostname,
    port: url.port,
    path: '/mcp',
    method: 'POST',
    agent: false,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'content-length': String(text.length),
    },
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    request.once('error', reject);
    request.once('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('error', reject);
      response.once('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: raw === '' ? undefined : (JSON.parse(raw) as unknown) });
      });
    });
  });
  request.write(text.subarray(0, text.length - 1));
  return { arrived, answer, finish: () => request.end(text.subarray(text.length - 1)) };
}

/**
 * A request whose first line the gateway has read before closing begins: its connection is busy,
 * so closing leaves it open, and the rest of the request reaches the gateway while it closes.
 */
async function lateRequest(running: RunningGateway, firstLine: string): Promise<{ send(rest: string): Promise<Answer> }> {
  const url = new URL(running.url);
  const accepted = once(running.gateway.app.server, 'connection') as Promise<[net.Socket]>;
  const socket = net.connect(Number(url.port), url.hostname);
  const received: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  const ended = once(socket, 'end');
  socket.write(firstLine);
  const [serverSide] = await accepted;
  while (serverSide.bytesRead < firstLine.length) await new Promise((resolve) => setTimeout(resolve, 5));
  return {
    async send(rest) {
      socket.write(rest);
      await ended;
      socket.destroy();
      return parseAnswer(Buffer.concat(received).toString('utf8'));
    },
  };
}

/** An HTTP/1.1 answer with a Content-Length body, as the gateway writes a refusal. */
function parseAnswer(raw: string): Answer {
  const [head = '', body = ''] = raw.split('\r\n\r\n', 2);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: http.IncomingHttpHeaders = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: body === '' ? undefined : (JSON.parse(body) as unknown) };
}

/** Resolves once the gateway has stopped listening, the first thing closing does. */
async function stoppedListening(running: RunningGateway): Promise<void> {
  while (running.gateway.app.server.listening) await new Promise((resolve) => setTimeout(resolve, 5));
}

for (const backend of storeBackends()) {
  describe(`closing the gateway on ${backend.name}`, () => {
    let store: TestStore;
    let token: string;

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ORG);
      token = await issueToken(store.db, 'drain', 'writer-bot', 'context.read context.write');
    });
    after(async () => store.dispose());

    /** A gateway whose log lines (info and above) the test reads. */
    const start = async (options: Omit<GatewayOptions, 'db' | 'logStream'> = {}) => {
      const logged: LogLine[] = [];
      const logStream = { write: (line: string) => void logged.push(JSON.parse(line) as LogLine) };
      const running = await startGateway(store.db, { KGW_LOG_LEVEL: 'info' }, { ...options, logStream });
      return { running, logged };
    };

    const knowledgeTitled = async (title: string): Promise<number> => {
      const [row] = await store.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM context_resources r JOIN tenants t ON t.id = r.tenant_id WHERE t.slug = 'drain' AND r.type = 'knowledge' AND r.name = $1`,
        [title],
      );
      return row?.n ?? 0;
    };

    it('a tool call in flight when closing starts gets its answer, and its write is stored', async () => {
      const { running } = await start();
      const title = `in flight on ${backend.name}`;
      const held = holdRequest(running, token, writeCall(title));
      await held.arrived;
      const closing = running.close();
      await stoppedListening(running);
      held.finish();
      const answer = await held.answer;
      await closing;
      assert.partialDeepStrictEqual(answer, {
        status: 200,
        headers: { connection: 'close' },
        body: { jsonrpc: '2.0', id: 1, result: { structuredContent: { created: true } } },
      });
      assert.equal(await knowledgeTitled(title), 1);
    });

    it('logs no error while a request in flight finishes during closing', async () => {
      const { running, logged } = await start();
      const held = holdRequest(running, token, writeCall(`logged on ${backend.name}`));
      await held.arrived;
      const closing = running.close();
      await stoppedListening(running);
      held.finish();
      await held.answer;
      await closing;
      assert.deepStrictEqual(
        logged.filter((line) => line.level >= 40),
        [],
      );
    });

    it('ends a request whose client left while its token was checked, so closing does not wait for it', async () => {
      const { running, logged } = await start({ shutdown: { graceMs: 5_000, settleMs: 1_000 } });
      const url = new URL(running.url);
      const socket = net.connect(Number(url.port), url.hostname);
      await once(socket, 'connect');
      // The headers promise a body that never comes, and the client leaves with them: the
      // connection ends while the endpoint's onRequest hook still looks the token up (on
      // PostgreSQL a round trip; on PGlite the lookup may finish first, and the body parser then
      // sees the close itself). Unanswered, the request would hold closing for its grace period.
      const arrived = once(running.gateway.app.server, 'request');
      socket.end(
        `POST /mcp HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${token}\r\ncontent-type: application/json\r\n` +
          'accept: application/json, text/event-stream\r\ncontent-length: 100\r\n\r\n',
      );
      await once(socket, 'finish');
      socket.destroy();
      await arrived;
      await running.close();
      assert.deepStrictEqual(
        logged.filter((line) => line.level >= 40).map(({ msg }) => msg),
        [],
      );
    });

    it('refuses a new connection while it closes', async () => {
      const { running } = await start();
      const held = holdRequest(running, token, writeCall(`refused on ${backend.name}`));
      await held.arrived;
      const closing = running.close();
      await stoppedListening(running);
      await assert.rejects(fetch(`${running.url}/healthz`), (error: Error) => {
        assert.ok(error.cause instanceof Error && 'code' in error.cause, 'the failure has a cause with a code');
        assert.equal(error.cause.code, 'ECONNREFUSED');
        return true;
      });
      held.finish();
      await held.answer;
      await closing;
    });

    it('answers 503 in JSON-RPC to an MCP request that reaches it while it closes', async () => {
      const { running } = await start();
      const held = holdRequest(running, token, writeCall(`late MCP on ${backend.name}`));
      await held.arrived;
      const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } });
      const late = await lateRequest(running, 'POST /mcp HTTP/1.1\r\n');
      const closing = running.close();
      await stoppedListening(running);
      const answer = late.send(
        `Host: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      held.finish();
      await held.answer;
      await closing;
      assert.partialDeepStrictEqual(await answer, {
        status: 503,
        headers: { connection: 'close', 'content-type': 'application/json; charset=utf-8' },
        body: { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Service Unavailable: the gateway is shutting down' } },
      });
    });

    it("answers 503 in the gateway's JSON error to any other request that reaches it while it closes", async () => {
      const { running } = await start();
      const held = holdRequest(running, token, writeCall(`late other on ${backend.name}`));
      await held.arrived;
      const late = await lateRequest(running, 'GET /readyz HTTP/1.1\r\n');
      const closing = running.close();
      await stoppedListening(running);
      const answer = late.send('Host: 127.0.0.1\r\n\r\n');
      held.finish();
      await held.answer;
      await closing;
      assert.partialDeepStrictEqual(await answer, {
        status: 503,
        headers: { connection: 'close', 'content-type': 'application/json; charset=utf-8' },
        body: { error: { code: 'unavailable', message: 'the gateway is shutting down' } },
      });
    });

    it('ends when a client keeps its request open past the grace period, closing its connection', async () => {
      const { running, logged } = await start({ shutdown: { graceMs: 50, settleMs: 5_000 } });
      const title = `never finished on ${backend.name}`;
      const held = holdRequest(running, token, writeCall(title));
      await held.arrived;
      const cutOff = assert.rejects(held.answer, { code: 'ECONNRESET' });
      await running.close();
      await cutOff;
      assert.deepStrictEqual(
        logged.filter((line) => line.level >= 40).map(({ level, msg, requests }) => ({ level, msg, requests })),
        [{ level: 40, msg: 'shutdown: requests still running after the grace period; closing their connections', requests: 1 }],
      );
      assert.equal(await knowledgeTitled(title), 0);
    });

    it(
      'waits for a handler still running after its connection was closed, then ends',
      { skip: backend.name === 'pglite' && 'a lock held from a second connection needs PostgreSQL' },
      async () => {
        assert.ok(store.databaseUrl !== undefined);
        const { running, logged } = await start({ shutdown: { graceMs: 50, settleMs: 30_000 } });
        const title = `held by a lock on ${backend.name}`;
        // A second connection locks the tenant's row and keeps its transaction open: the tool
        // call's first insert (its foreign key to the tenant) waits until that transaction ends.
        const blocker = new pg.Client({ connectionString: store.databaseUrl });
        await blocker.connect();
        try {
          await blocker.query('BEGIN');
          await blocker.query(`SELECT 1 FROM tenants WHERE slug = 'drain' FOR UPDATE`);
          const held = holdRequest(running, token, writeCall(title));
          const cutOff = assert.rejects(held.answer, { code: 'ECONNRESET' });
          await held.arrived;
          held.finish();
          while ((await blocker.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).rowCount === 0)
            await new Promise((resolve) => setTimeout(resolve, 5));
          const closing = running.close();
          await cutOff;
          while (!logged.some((line) => line.msg.startsWith('shutdown: requests still running'))) await new Promise((resolve) => setTimeout(resolve, 5));
          await blocker.query('ROLLBACK');
          await closing;
          // The call ran to its end before closing did: its write is there as soon as close() is.
          assert.equal(await knowledgeTitled(title), 1);
        } finally {
          await blocker.end();
        }
      },
    );
  });
}
