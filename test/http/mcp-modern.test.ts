import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { SeededGateway } from '../support/gateway.ts';
import { ATMINA_GUIDANCE } from '../../src/atmina/dialect/guidance.ts';
import { connectClient, issueToken, startSeededGateway } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * MCP 2026-07-28 beside the legacy revisions on every endpoint: the TypeScript SDK's v2 client
 * in that revision's mode gets the same tools, the same authorisation and the same results as
 * the legacy client; and the revision's wire rules — server/discover, the per-request _meta
 * envelope, the Mcp-Method / Mcp-Name headers, resultType, cache hints, its error codes and
 * HTTP statuses — hold on raw HTTP.
 */

const ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice, brain_role: manager }
brain:
  nodes:
    - { id: erp, type: tool, title: ERP, access: public }
`;

const ENDPOINTS = {
  '/mcp': 'knowledge-gateway',
  '/alignbase/mcp': 'alignbase',
  '/atmina/mcp': 'atmina',
  '/brain/mcp': 'company-brain',
} as const;

/** A JSON-RPC answer as the tests read it. */
interface RpcBody {
  id?: string | number | null;
  result?: {
    resultType?: string;
    ttlMs?: number;
    cacheScope?: string;
    _meta: Record<string, { name: string; version: string }>;
    [key: string]: unknown;
  };
  error?: { code: number; message: string; data?: { mismatch?: unknown; [key: string]: unknown } };
}

const V = '2026-07-28';
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {} };

/** A tool each endpoint has that answers the same for the same token in both eras. */
const PROBE: Readonly<Record<keyof typeof ENDPOINTS, { name: string; arguments: Record<string, unknown> }>> = {
  '/mcp': { name: 'read_concept', arguments: { id: 'erp' } },
  '/alignbase/mcp': { name: 'list_knowledge', arguments: {} },
  '/atmina/mcp': { name: 'list_kbs', arguments: {} },
  '/brain/mcp': { name: 'read_concept', arguments: { id: 'erp' } },
};

for (const backend of storeBackends()) {
  describe(`MCP ${V} beside the legacy revisions on ${backend.name}`, () => {
    let gw: SeededGateway;
    const closers: { close(): Promise<void> }[] = [];

    async function modern(path: string, mode: 'auto' | { pin: string } = { pin: V }): Promise<ModernClient> {
      const client = new ModernClient({ name: 'kgw-test-v2', version: '1.0.0' }, { versionNegotiation: { mode } });
      await client.connect(new ModernTransport(new URL(`${gw.running.url}${path}`), { requestInit: { headers: { authorization: `Bearer ${gw.token}` } } }));
      closers.push(client);
      return client;
    }
    async function legacy(path: string): Promise<Client> {
      const client = await connectClient(`${gw.running.url}${path}`, gw.token);
      closers.push(client);
      return client;
    }
    /** A raw POST: headers as given (the bearer token added), the body as JSON. */
    async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
      const response = await fetch(`${gw.running.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as RpcBody) };
    }
    const request = (method: string, params: Record<string, unknown> = {}, id: number | string = 1) => ({
      jsonrpc: '2.0',
      id,
      method,
      params: { ...params, _meta: { ...ENVELOPE, ...((params._meta as object | undefined) ?? {}) } },
    });
    const headersFor = (method: string, name?: string) => ({
      'mcp-protocol-version': V,
      'mcp-method': method,
      ...(name === undefined ? {} : { 'mcp-name': name }),
    });

    before(async () => {
      gw = await startSeededGateway(backend, ORG);
    });
    after(async () => {
      for (const closer of closers) await closer.close();
      await gw.close();
    });

    for (const [path, name] of Object.entries(ENDPOINTS) as [keyof typeof ENDPOINTS, string][]) {
      it(`${path}: the v2 client in ${V} mode gets the same identity, tools and results as the legacy client`, async () => {
        const [now, old] = [await modern(path), await legacy(path)];
        assert.equal(now.getNegotiatedProtocolVersion(), V);
        assert.equal(now.getServerVersion()?.name, name);
        assert.deepEqual((await now.listTools()).tools, (await old.listTools()).tools);
        const probe = PROBE[path];
        const [a, b] = [await now.callTool(probe), await old.callTool(probe)];
        assert.notEqual(a.isError, true, JSON.stringify(a.content));
        assert.deepEqual({ content: a.content, structured: a.structuredContent }, { content: b.content, structured: b.structuredContent });
      });
    }

    it('the v2 client in auto mode discovers and picks the revision', async () => {
      const client = await modern('/mcp', 'auto');
      assert.equal(client.getNegotiatedProtocolVersion(), V);
    });

    it('server/discover names the versions, the capabilities, the instructions, the identity and cache hints', async () => {
      const { status, body } = await post('/atmina/mcp', request('server/discover'), headersFor('server/discover'));
      assert.equal(status, 200);
      assert.deepEqual(body?.result, {
        supportedVersions: [V],
        capabilities: { tools: { listChanged: false }, resources: { listChanged: false, subscribe: false } },
        instructions: ATMINA_GUIDANCE,
        resultType: 'complete',
        ttlMs: 300_000,
        cacheScope: 'public',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'atmina', version: body?.result?._meta['io.modelcontextprotocol/serverInfo']?.version } },
      });
    });

    it('stamps resultType on every result and private cache hints on lists, none on a call', async () => {
      const list = await post('/brain/mcp', request('tools/list'), headersFor('tools/list'));
      assert.deepEqual([list.body?.result?.resultType, list.body?.result?.ttlMs, list.body?.result?.cacheScope], ['complete', 60_000, 'private']);
      const call = await post(
        '/brain/mcp',
        request('tools/call', { name: 'read_concept', arguments: { id: 'erp' } }),
        headersFor('tools/call', 'read_concept'),
      );
      assert.equal(call.status, 200);
      assert.deepEqual([call.body?.result?.resultType, 'ttlMs' in (call.body?.result ?? {})], ['complete', false]);
      assert.equal(call.body?.result?._meta['io.modelcontextprotocol/serverInfo']?.name, 'company-brain');
    });

    it('refuses headers that disagree with the body with -32020 and HTTP 400, and takes a base64 Mcp-Name', async () => {
      const call = request('tools/call', { name: 'read_concept', arguments: { id: 'erp' } });
      const cases: [Record<string, string>, string][] = [
        [{ 'mcp-protocol-version': V }, 'Mcp-Method'],
        [headersFor('tools/list'), 'Mcp-Method'],
        [headersFor('tools/call'), 'Mcp-Name'],
        [headersFor('tools/call', 'list_gaps'), 'Mcp-Name'],
        [headersFor('tools/call', '=?base64?!!!?='), 'Mcp-Name'],
        [{ ...headersFor('tools/call', 'read_concept'), 'mcp-protocol-version': '2025-11-25' }, 'MCP-Protocol-Version'],
      ];
      for (const [headers, what] of cases) {
        const { status, body } = await post('/brain/mcp', call, headers);
        assert.deepEqual([status, body?.error?.code, body?.id], [400, -32020, 1], JSON.stringify(headers));
        assert.match(body?.error?.message ?? '', new RegExp(`^Bad Request: the request headers and body disagree: ${what}`), JSON.stringify(headers));
        assert.ok(body?.error?.data?.mismatch, JSON.stringify(body));
      }
      const encoded = await post('/brain/mcp', call, headersFor('tools/call', `=?base64?${Buffer.from('read_concept').toString('base64')}?=`));
      assert.deepEqual([encoded.status, encoded.body?.result?.resultType], [200, 'complete']);
    });

    it('refuses an unsupported version with -32022 and the supported ones, and a broken envelope with -32602', async () => {
      const unsupported = await post(
        '/mcp',
        { ...request('tools/list'), params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } } },
        { ...headersFor('tools/list'), 'mcp-protocol-version': V },
      );
      assert.deepEqual(
        [unsupported.status, unsupported.body?.error],
        [400, { code: -32022, message: 'Unsupported protocol version: 2099-01-01', data: { supported: [V], requested: '2099-01-01' } }],
      );
      const noCapabilities = await post(
        '/mcp',
        { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': V } } },
        headersFor('tools/list'),
      );
      assert.deepEqual(
        [noCapabilities.status, noCapabilities.body?.error?.code, noCapabilities.body?.error?.data],
        [400, -32602, { envelope: { key: 'io.modelcontextprotocol/clientCapabilities', problem: 'missing' } }],
      );
      const noEnvelope = await post('/mcp', { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }, headersFor('tools/list'));
      assert.deepEqual([noEnvelope.status, noEnvelope.body?.error?.code, noEnvelope.body?.error?.data], [400, -32602, { envelope: { missing: ['_meta'] } }]);
      const batch = await post('/mcp', [request('tools/list', {}, 1), request('tools/list', {}, 2)], headersFor('tools/list'));
      assert.deepEqual([batch.status, batch.body?.error?.code], [400, -32600]);
    });

    it('refuses each malformed envelope member with -32602, naming the member and the problem', async () => {
      const cases: readonly [Record<string, unknown>, unknown][] = [
        [
          { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': 20260728 },
          { key: 'io.modelcontextprotocol/protocolVersion', problem: 'must be a string' },
        ],
        [
          { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': null },
          { key: 'io.modelcontextprotocol/protocolVersion', problem: 'must be a string' },
        ],
        [
          { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': ['sampling'] },
          { key: 'io.modelcontextprotocol/clientCapabilities', problem: 'must be an object' },
        ],
        [
          { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': 'all' },
          { key: 'io.modelcontextprotocol/clientCapabilities', problem: 'must be an object' },
        ],
        [
          { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': { sampling: {}, 'x\u202Ebogus': {} } },
          { key: 'io.modelcontextprotocol/clientCapabilities', problem: 'unknown member x\u202Ebogus' },
        ],
        [
          { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': 'kgw-test' },
          { key: 'io.modelcontextprotocol/clientInfo', problem: 'must be an object' },
        ],
      ];
      for (const [meta, envelope] of cases) {
        const { status, body } = await post('/mcp', { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: meta } }, headersFor('tools/list'));
        assert.deepEqual(
          { status, code: body?.error?.code, id: body?.id, data: body?.error?.data },
          { status: 400, code: -32602, id: 7, data: { envelope } },
          JSON.stringify(meta),
        );
        assert.match(body?.error?.message ?? '', /^Invalid params: _meta\.io\.modelcontextprotocol\//);
      }
      // A long unknown member is named by its first 50 characters only.
      const long = 'y'.repeat(10_000);
      const { body } = await post(
        '/mcp',
        { jsonrpc: '2.0', id: 8, method: 'tools/list', params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': { [long]: {} } } } },
        headersFor('tools/list'),
      );
      assert.deepEqual(body?.error?.data, { envelope: { key: 'io.modelcontextprotocol/clientCapabilities', problem: `unknown member ${'y'.repeat(50)}` } });
    });

    it('answers methods the revision does not have here with -32601 and HTTP 404, and a notification with 202', async () => {
      for (const method of ['initialize', 'ping', 'prompts/list', 'logging/setLevel']) {
        const { status, body } = await post('/brain/mcp', request(method), headersFor(method));
        assert.deepEqual([status, body?.error?.code], [404, -32601], method);
      }
      // /brain/mcp has no resources; /atmina/mcp has.
      assert.equal((await post('/brain/mcp', request('resources/list'), headersFor('resources/list'))).status, 404);
      assert.equal((await post('/atmina/mcp', request('resources/list'), headersFor('resources/list'))).status, 200);
      const note = await post(
        '/mcp',
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9, _meta: ENVELOPE } },
        { 'mcp-protocol-version': V },
      );
      assert.deepEqual([note.status, note.body], [202, undefined]);
    });

    it('answers a resource that is not there with -32602 and its URI', async () => {
      const uri = 'kb://no-such-kb';
      const { status, body } = await post('/atmina/mcp', request('resources/read', { uri }), headersFor('resources/read', uri));
      assert.deepEqual([status, body?.error?.code, body?.error?.data], [200, -32602, { uri }]);
    });

    it('refuses a tool outside the token’s scopes as the legacy era does: 403 with the dialect’s words', async () => {
      const reader = await issueToken(gw.store.db, 'acme', 'alice@acme.test', 'brain:read');
      const response = await fetch(`${gw.running.url}/brain/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${reader}`,
          'content-type': 'application/json',
          accept: 'application/json',
          ...headersFor('tools/call', 'write_inbox'),
        },
        body: JSON.stringify(request('tools/call', { name: 'write_inbox', arguments: {} })),
      });
      assert.equal(response.status, 403);
      assert.match(response.headers.get('www-authenticate') ?? '', /insufficient_scope/);
      assert.equal(((await response.json()) as { error: { message: string } }).error.message, 'Forbidden');
    });
  });
}
