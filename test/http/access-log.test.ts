import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningGateway } from '../support/gateway.ts';
import { ACME_ORG, connectClient, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * The gateway's log at its default level (docs/architecture.md, "Logs"): one access line per
 * request naming the route, status, duration, tenant, principal id and tools, never a token or
 * content; refused tokens and sign-ins at warn; health probes only at debug.
 */

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly [key: string]: unknown;
}

const [backend] = storeBackends();

describe('the access log', { skip: backend === undefined }, () => {
  let store: TestStore;
  let running: RunningGateway;
  let token: string;
  const logged: LogLine[] = [];
  const raw: string[] = [];

  before(async () => {
    store = await (backend as NonNullable<typeof backend>).open({ migrated: true });
    await seedOrg(store.db, ACME_ORG);
    token = await issueToken(store.db, 'acme', 'release-bot', 'context.read');
    const logStream = {
      write: (line: string) => {
        raw.push(line);
        logged.push(JSON.parse(line) as LogLine);
      },
    };
    running = await startGateway(store.db, { KGW_LOG_LEVEL: 'info' }, { logStream });
  });
  after(async () => {
    await running?.close();
    await store?.dispose();
  });

  const requests = () => logged.filter((line) => line.msg === 'request');

  it('writes one line per MCP request with who called which tool, never the token or the arguments', async () => {
    const client = await connectClient(`${running.url}/atmina/mcp`, token);
    const before = requests().length;
    try {
      await client.callTool({ name: 'search', arguments: { query: 'secret-words-in-a-query' } });
    } finally {
      await client.close();
    }
    const [line, ...more] = requests()
      .slice(before)
      .filter((entry) => Array.isArray(entry.tools) && (entry.tools as string[]).length > 0);
    assert.equal(more.length, 0);
    assert.ok(line, 'an access line for the call');
    const [principal] = await store.db.query<{ id: string }>("SELECT id FROM principals WHERE name = 'release-bot'");
    assert.deepEqual(
      { ...line, time: 0, pid: 0, hostname: '', reqId: '', ms: 0 },
      {
        level: 30,
        time: 0,
        pid: 0,
        hostname: '',
        reqId: '',
        msg: 'request',
        method: 'POST',
        route: '/atmina/mcp',
        status: 200,
        ms: 0,
        address: '127.0.0.1',
        tenant: 'acme',
        principal: principal?.id,
        tools: ['search'],
      },
    );
    assert.equal(typeof line.ms, 'number');
    const everything = raw.join('');
    assert.ok(!everything.includes(token), 'no token in any line');
    assert.ok(!everything.includes('secret-words-in-a-query'), 'no arguments in any line');
  });

  it('warns of a refused token, and logs a probe only at debug', async () => {
    const before = logged.length;
    const refused = await fetch(`${running.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer kgw_not-a-real-token' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(refused.status, 401);
    await (await fetch(`${running.url}/healthz`)).arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const lines = logged.slice(before);
    assert.deepEqual(
      lines.filter((line) => line.level === 40).map(({ msg, route }) => ({ msg, route })),
      [{ msg: 'bearer token refused', route: '/mcp' }],
    );
    assert.deepEqual(
      lines.filter((line) => line.msg === 'request').map(({ route, status }) => ({ route, status })),
      [{ route: '/mcp', status: 401 }],
    );
    assert.ok(!raw.join('').includes('kgw_not-a-real-token'));
  });
});
