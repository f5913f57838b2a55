import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { rateLimitedCall } from '../support/harness.ts';
import { pythonInterpreter } from '../interop/support.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { connectClient, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * A call refused over a rate carries its wait at the transport, as Atmina's spec tells agents
 * to respect it: HTTP 429 with Retry-After, and a JSON-RPC error whose message is the spec's
 * result text (`rate_limited: … retry in N s`) and whose data names rate_limited and the
 * seconds, in both protocol eras; a batch with other answers keeps 200 and says the wait in
 * Retry-After. And what the SDK clients then give the agent: the TypeScript SDK's legacy and v2
 * clients throw an HTTP error holding that JSON-RPC error, the Python SDK raises MCPError with
 * its code, message and data.
 */

const ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice }
agents:
  - { name: raw-bot, owner: alice@acme.test }
  - { name: modern-bot, owner: alice@acme.test }
  - { name: batch-bot, owner: alice@acme.test }
  - { name: sdk-bot, owner: alice@acme.test }
  - { name: v2-bot, owner: alice@acme.test }
  - { name: py-bot, owner: alice@acme.test }
teams:
  - slug: docs
    name: Docs team
    members: { alice@acme.test: admin, raw-bot: editor, modern-bot: editor, batch-bot: editor, sdk-bot: editor, v2-bot: editor, py-bot: editor }
kbs:
  - { slug: handbook, name: Handbook, team: docs }
`;

/** Writes a principal may make a minute here: the third is refused. */
const RATE = 2;
const TEXT = /^rate_limited: too many writes in a short time; retry in (\d+) s$/;
const V = '2026-07-28';

const run = promisify(execFile);
const PYTHON_SCRIPT = fileURLToPath(new URL('../interop/python_rate_limited.py', import.meta.url));

interface RpcError {
  code: number;
  message: string;
  data?: { reason?: string; retryAfterSeconds?: number };
}
interface RpcAnswer {
  jsonrpc: string;
  id: number | string | null;
  result?: { isError?: boolean; content?: { text: string }[] };
  error?: RpcError;
}

/** The refusal's wait, checked against its text and data: the same seconds everywhere, within the one-minute window. */
function waitOf(error: RpcError | undefined): number {
  const match = TEXT.exec(error?.message ?? '');
  assert.ok(match !== null, JSON.stringify(error));
  const seconds = Number(match[1]);
  assert.deepEqual(error, { code: -32000, message: error?.message, data: { reason: 'rate_limited', retryAfterSeconds: seconds } });
  assert.ok(seconds >= 1 && seconds <= 60, String(seconds));
  return seconds;
}

for (const backend of storeBackends()) {
  describe(`rate-limited calls at the transport on ${backend.name}`, () => {
    let store: TestStore;
    let running: RunningGateway;
    let kbId: string;
    const tokens = new Map<string, string>();
    const closers: { close(): Promise<void> }[] = [];

    /** A new file's write; each path is used once, by one principal. */
    const write = (path: string) => ({ name: 'write_file', arguments: { kb_id: kbId, path: `${path}.md`, mode: 'create', content: 'x' } });
    const call = (id: number, params: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params });
    async function post(principal: string, body: unknown, headers: Record<string, string> = {}) {
      const response = await fetch(`${running.url}/atmina/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokens.get(principal) ?? ''}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(body),
      });
      return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as RpcAnswer | RpcAnswer[] };
    }
    /** Spends a principal's rate with writes that succeed. */
    async function spend(principal: string): Promise<void> {
      for (let n = 0; n < RATE; n += 1) {
        const answer = await post(principal, call(n, write(`${principal}-${n}`)));
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
      }
    }
    const files = async () => {
      const client = await connectClient(`${running.url}/atmina/mcp`, tokens.get('alice@acme.test') ?? '');
      closers.push(client);
      return ((await client.callTool({ name: 'list_files', arguments: { kb_id: kbId } })).structuredContent as { files: { path: string }[] }).files.length;
    };

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ORG);
      for (const principal of ['alice@acme.test', 'raw-bot', 'modern-bot', 'batch-bot', 'sdk-bot', 'v2-bot', 'py-bot'])
        tokens.set(principal, await issueToken(store.db, 'acme', principal, 'context.read context.write'));
      running = await startGateway(store.db, { KGW_KB_WRITES_PER_MINUTE: String(RATE) });
      const alice = await connectClient(`${running.url}/atmina/mcp`, tokens.get('alice@acme.test') ?? '');
      closers.push(alice);
      const { kbs } = (await alice.callTool({ name: 'list_kbs', arguments: {} })).structuredContent as { kbs: { kb_id: string; slug: string }[] };
      kbId = kbs.find((kb) => kb.slug === 'handbook')?.kb_id ?? assert.fail('no handbook KB');
    });
    after(async () => {
      for (const closer of closers) await closer.close();
      await running?.close();
      await store?.dispose();
    });

    it('answers a call over the rate with 429, Retry-After and the JSON-RPC error naming rate_limited and the seconds; nothing written', async () => {
      await spend('raw-bot');
      const before = await files();
      const refused = await post('raw-bot', call(7, write('raw-over')));
      assert.equal(refused.status, 429);
      const answer = refused.body as RpcAnswer;
      assert.deepEqual({ jsonrpc: answer.jsonrpc, id: answer.id, result: answer.result }, { jsonrpc: '2.0', id: 7, result: undefined });
      assert.equal(refused.retryAfter, String(waitOf(answer.error)));
      assert.equal(await files(), before);
    });

    it(`does the same in the ${V} era`, async () => {
      await spend('modern-bot');
      const meta = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {} };
      const { name, arguments: args } = write('modern-over');
      const refused = await post('modern-bot', call(8, { name, arguments: args, _meta: meta }), {
        'mcp-protocol-version': V,
        'mcp-method': 'tools/call',
        'mcp-name': name,
      });
      assert.equal(refused.status, 429);
      assert.equal(refused.retryAfter, String(waitOf((refused.body as RpcAnswer).error)));
    });

    it('keeps 200 for a batch with other answers, the refused call an error among them and its wait in Retry-After', async () => {
      await spend('batch-bot');
      const answer = await post('batch-bot', [call(1, write('batch-over')), call(2, { name: 'list_kbs', arguments: {} })]);
      assert.equal(answer.status, 200);
      const [refused, listed] = answer.body as RpcAnswer[];
      assert.equal(answer.retryAfter, String(waitOf(refused?.error)));
      assert.ok(listed?.result !== undefined && listed.result.isError !== true, JSON.stringify(listed));
    });

    it('the TypeScript SDK’s legacy client throws an HTTP 429 error holding the JSON-RPC error: the text and the wait', async () => {
      const client = await connectClient(`${running.url}/atmina/mcp`, tokens.get('sdk-bot') ?? '');
      closers.push(client);
      for (let n = 0; n < RATE; n += 1) {
        const done = await client.callTool(write(`sdk-${n}`));
        assert.notEqual(done.isError, true, JSON.stringify(done.content));
      }
      const { text, retryAfterSeconds } = await rateLimitedCall(client.callTool(write('sdk-over')));
      assert.equal(text, `rate_limited: too many writes in a short time; retry in ${retryAfterSeconds} s`);
    });

    it(`the TypeScript SDK’s v2 client in the ${V} era throws the same`, async () => {
      const client = new ModernClient({ name: 'kgw-test-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: V } } });
      await client.connect(
        new ModernTransport(new URL(`${running.url}/atmina/mcp`), { requestInit: { headers: { authorization: `Bearer ${tokens.get('v2-bot') ?? ''}` } } }),
      );
      closers.push(client);
      for (let n = 0; n < RATE; n += 1) assert.notEqual((await client.callTool(write(`v2-${n}`))).isError, true);
      const thrown = await client.callTool(write('v2-over')).then(
        () => assert.fail('not refused'),
        (error: unknown) => error as Error & { data?: { status?: number } },
      );
      assert.equal(thrown.data?.status, 429, String(thrown));
      assert.ok(thrown.message.startsWith('Error POSTing to endpoint: {'), thrown.message);
      const body = JSON.parse(thrown.message.slice(thrown.message.indexOf('{'))) as RpcAnswer;
      waitOf(body.error);
    });

    const python = pythonInterpreter();
    it(
      'the Python SDK raises MCPError with the JSON-RPC code, the text and the data',
      { skip: python === undefined && 'KGW_TEST_PYTHON is not set' },
      async () => {
        const { stdout } = await run(
          python as string,
          [
            PYTHON_SCRIPT,
            `${running.url}/atmina/mcp`,
            tokens.get('py-bot') ?? '',
            'write_file',
            JSON.stringify({ kb_id: kbId, mode: 'create', content: 'x' }),
            String(RATE + 1),
          ],
          { timeout: 60_000 },
        );
        const answer = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
          call: number;
          exception: string;
          code: number;
          message: string;
          data: unknown;
          warnings: string[];
        };
        assert.deepEqual(
          { call: answer.call, exception: answer.exception, warnings: answer.warnings },
          { call: RATE + 1, exception: 'MCPError', warnings: [] },
        );
        waitOf({ code: answer.code, message: answer.message, data: answer.data as RpcError['data'] });
      },
    );
  });
}
