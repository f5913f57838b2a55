import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MCP_BATCH_MAX } from '../../src/http/mcp-request.ts';
import { CONFLICT_ADVICE } from '../../src/mcp/errors.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

// What one POST may ask of the gateway, and what it always gets back: batches are bounded, run a
// few calls at a time, end with a response within the deadline whatever the batch holds, and
// refuse malformed params and unstorable text as the caller's mistake, never as internal errors.

const ORG = `
tenant: limits
name: Limits
people:
  - email: owner@limits.test
    name: Owner
agents:
  - name: writer-bot
    owner: owner@limits.test
grants:
  - { to: writer-bot, on: all_knowledge, role: owner }
`;
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

interface RpcResponse {
  id?: string | number | null;
  result?: { content?: { type: string; text: string }[]; isError?: boolean; structuredContent?: Record<string, unknown> };
  error?: { code: number; message: string };
}

const call = (id: number | string, name: string, args: unknown = {}) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
const textOf = (response: RpcResponse | undefined): string => response?.result?.content?.[0]?.text ?? '';

for (const backend of storeBackends()) {
  describe(`MCP request limits on ${backend.name}`, () => {
    let store: TestStore;
    let running: RunningGateway;
    let slow: RunningGateway;
    let token: string;

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ORG);
      token = await issueToken(store.db, 'limits', 'writer-bot', 'context.read context.write');
      running = await startGateway(store.db);
      // A gateway with a short deadline and one call at a time, to see the deadline and the order.
      slow = await startGateway(store.db, {}, { mcpLimits: { concurrency: 1, timeoutMs: 300 } });
    });
    after(async () => {
      await slow.close();
      await running.close();
      await store.dispose();
    });

    const post = async (body: unknown, gateway: RunningGateway = running, path = '/mcp'): Promise<{ status: number; body: unknown }> => {
      const response = await fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { ...HEADERS, authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      return { status: response.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
    };
    const knowledgeCount = async (): Promise<number> => {
      const [row] = await store.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM context_resources r JOIN tenants t ON t.id = r.tenant_id WHERE t.slug = 'limits' AND r.type = 'knowledge'`,
      );
      return row?.n ?? 0;
    };

    /** How many Knowledge of the tenant are titled `title`, once there is one (after 10 s at most, when none is). */
    const landed = async (title: string): Promise<number> => {
      const count = async (): Promise<number> => {
        const [row] = await store.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM context_resources r JOIN tenants t ON t.id = r.tenant_id WHERE t.slug = 'limits' AND r.type = 'knowledge' AND r.name = $1`,
          [title],
        );
        return row?.n ?? 0;
      };
      for (let round = 0; round < 500; round++) {
        const n = await count();
        if (n > 0) return n;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return count();
    };

    it(`answers a batch of ${MCP_BATCH_MAX} calls, one response per call in request order`, async () => {
      const batch = Array.from({ length: MCP_BATCH_MAX }, (_, i) => call(i + 1, 'whoami'));
      const { status, body } = await post(batch);
      assert.equal(status, 200);
      const responses = body as RpcResponse[];
      assert.deepEqual(
        responses.map((r) => r.id),
        batch.map((c) => c.id),
      );
      assert.ok(responses.every((r) => r.result?.isError === undefined && r.result?.structuredContent !== undefined));
    });

    it(`refuses a batch of ${MCP_BATCH_MAX + 1} messages with a JSON-RPC error and runs none of it`, async () => {
      const batch = Array.from({ length: MCP_BATCH_MAX + 1 }, (_, i) =>
        call(i + 1, 'write_knowledge', { title: `batch ${i}`, expected_version: 0, content: 'x' }),
      );
      const before = await knowledgeCount();
      const { status, body } = await post(batch);
      assert.equal(status, 400);
      assert.deepEqual(body, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: `Invalid Request: a batch holds at most ${MCP_BATCH_MAX} messages (this one has ${MCP_BATCH_MAX + 1})` },
      });
      assert.equal(await knowledgeCount(), before);
    });

    it('refuses a batch in which two requests share an id', async () => {
      const { status, body } = await post([call(7, 'whoami'), call(7, 'whoami')]);
      assert.equal(status, 400);
      assert.equal((body as RpcResponse).error?.code, -32600);
      assert.equal((body as RpcResponse).error?.message, 'Invalid Request: two requests in the batch have the same id');
    });

    it('keeps answering /healthz while a full batch of writes runs', async () => {
      const batch = Array.from({ length: MCP_BATCH_MAX }, (_, i) =>
        call(i + 1, 'write_knowledge', { title: `health ${i} ${Date.now()}`, expected_version: 0, content: 'x'.repeat(10_000) }),
      );
      const pending = post(batch);
      const health = await fetch(`${running.url}/healthz`, { signal: AbortSignal.timeout(30_000) });
      assert.equal(health.status, 200);
      const { status, body } = await pending;
      assert.equal(status, 200);
      assert.equal((body as RpcResponse[]).filter((r) => r.result?.structuredContent?.['created'] === true).length, MCP_BATCH_MAX);
    });

    it('answers a request whose cancellation arrives in the same batch, with what really happened', async () => {
      const title = `cancelled ${Date.now()}`;
      const { status, body } = await post([
        call(1, 'write_knowledge', { title, expected_version: 0, content: 'written all the same' }),
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'changed my mind' } },
      ]);
      assert.equal(status, 200);
      const [response] = body as RpcResponse[];
      assert.equal(response?.id, 1);
      assert.equal(response?.result?.structuredContent?.['title'], title);
      assert.equal(response?.result?.structuredContent?.['created'], true);
    });

    it('answers a lone cancellation with 202 and nothing else', async () => {
      const { status, body } = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } });
      assert.equal(status, 202);
      assert.equal(body, undefined);
    });

    // PostgreSQL only: an open PGlite transaction holds the whole embedded store, the token check
    // included, so the call would never start. test/http/transport.test.ts covers the deadline alone.
    it(
      'answers a call still running at the deadline with a timeout error, and a call not started with another',
      { skip: backend.name !== 'postgres' },
      async () => {
        // Lock the Knowledge table against writes in an open transaction: the create waits past the
        // 300 ms deadline (reads, the token check included, go on). The holder then rolls back.
        const title = `held ${Date.now()}`;
        let release: () => void = () => undefined;
        const held = new Promise<void>((resolve) => (release = resolve));
        let locked: () => void = () => undefined;
        const isLocked = new Promise<void>((resolve) => (locked = resolve));
        const rollback = new Error('roll back');
        const holder = store.db
          .tx(async (tx) => {
            await tx.exec('LOCK TABLE context_resources IN EXCLUSIVE MODE');
            locked();
            await held;
            throw rollback;
          })
          .catch((error: unknown) => assert.equal(error, rollback));
        await isLocked;
        try {
          const { status, body } = await post([call(1, 'write_knowledge', { title, expected_version: 0, content: 'late' }), call(2, 'whoami')], slow);
          assert.equal(status, 200);
          const [first, second] = body as RpcResponse[];
          assert.deepEqual(first, {
            jsonrpc: '2.0',
            id: 1,
            error: { code: -32001, message: 'Request timed out after 300 ms; a write it made may still be applied: read before retrying' },
          });
          assert.deepEqual(second, { jsonrpc: '2.0', id: 2, error: { code: -32001, message: 'Request not started: the batch ran out of time after 300 ms' } });
        } finally {
          release();
          await holder;
        }
        // The create went on after its answer and commits once the lock is gone, as the answer
        // warns: it lands, exactly once, and this test waits for it, so no later test of this
        // store (the NUL ones count the tenant's Knowledge) runs while it is still writing.
        assert.equal(await landed(title), 1, `the late write of "${title}" landed`);
      },
    );

    for (const [what, message, expected] of [
      ['tools/call without params', { jsonrpc: '2.0', id: 1, method: 'tools/call' }, /^Invalid params for tools\/call: /],
      ['a numeric tool name', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 42 } }, /^Invalid params for tools\/call: name: /],
      [
        'array arguments',
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: [] } },
        /^Invalid params for tools\/call: arguments: /,
      ],
      [
        'null arguments',
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: null } },
        /^Invalid params for tools\/call: arguments: /,
      ],
      ['initialize without params', { jsonrpc: '2.0', id: 1, method: 'initialize' }, /^Invalid params for initialize: /],
    ] as const) {
      it(`answers ${what} with -32602 invalid params`, async () => {
        const { status, body } = await post(message);
        assert.equal(status, 200);
        const response = body as RpcResponse;
        assert.equal(response.error?.code, -32602);
        assert.match(response.error?.message ?? '', expected);
      });
    }

    it('answers a tools/call asking for a task with -32601, as for a tool that forbids tasks', async () => {
      const { body } = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {}, task: { ttl: 60_000 } } });
      assert.equal((body as RpcResponse).error?.code, -32601);
    });

    it('answers a bad request in a batch with -32602 and the others as usual, in order', async () => {
      const { body } = await post([
        call(1, 'whoami'),
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: null } },
        call(3, 'whoami'),
      ]);
      const responses = body as RpcResponse[];
      assert.deepEqual(
        responses.map((r) => ({ id: r.id, error: r.error?.code ?? 'ok' })),
        [
          { id: 1, error: 'ok' },
          { id: 2, error: -32602 },
          { id: 3, error: 'ok' },
        ],
      );
    });

    const hostile: [string, Record<string, unknown>, string][] = [
      ['NUL in a title', { title: 'a\u0000b', expected_version: 0, content: 'x' }, 'title: must not contain NUL (U+0000)'],
      ['NUL in content', { title: 'ok', expected_version: 0, content: 'x\u0000' }, 'content: must not contain NUL (U+0000)'],
      ['a lone high surrogate', { title: 'ok', expected_version: 0, content: 'x\ud800y' }, 'content: must be well-formed Unicode (it has a lone surrogate)'],
      ['a lone low surrogate', { title: '\udc00', expected_version: 0, content: 'x' }, 'title: must be well-formed Unicode (it has a lone surrogate)'],
    ];
    for (const [what, args, problem] of hostile) {
      // Every tool of every dialect goes through the same check (src/mcp/server.ts); the fuzz suite
      // (test/fuzz/) sends such text to each listed tool and checks the dialect's words.
      it(`refuses ${what} in the dialect's words and saves nothing`, async () => {
        const before = await knowledgeCount();
        const alignbase = await post(call(1, 'write_knowledge', args), running, '/alignbase/mcp');
        assert.equal(textOf(alignbase.body as RpcResponse), `invalid arguments: ${problem}`);
        assert.equal((alignbase.body as RpcResponse).result?.isError, true);
        assert.equal(await knowledgeCount(), before);
      });
    }

    it('refuses a body nested deeper than 40 levels or holding more than 200,000 values before parsing it', async () => {
      for (const [body, problem] of [
        [
          `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{"a":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}}}`,
          'is nested more than 40 levels deep',
        ],
        [JSON.stringify(call(1, 'whoami', { a: new Array<number>(2_000_000).fill(0) })), 'holds more than 200000 values'],
        [JSON.stringify(call(1, 'whoami', Object.fromEntries(Array.from({ length: 300_000 }, (_, i) => [`k${i}`, i])))), 'holds more than 200000 values'],
      ] as const) {
        const response = await fetch(`${running.url}/mcp`, {
          method: 'POST',
          headers: { ...HEADERS, authorization: `Bearer ${token}` },
          body,
          signal: AbortSignal.timeout(30_000),
        });
        assert.equal(response.status, 400);
        assert.deepEqual(await response.json(), { jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: the body ${problem}` } });
      }
    });

    it("answers deeply nested arguments where none belong with the schema's words", async () => {
      const nested = `${'['.repeat(33)}"x"${']'.repeat(33)}`;
      const { body } = await post(call(1, 'propose_knowledge', { title: 'deep', content: 'x', attachments: JSON.parse(nested) as unknown }));
      assert.match(textOf(body as RpcResponse), /^invalid arguments: attachments\.0: /);
    });

    it('refuses params of more than 100,000 values before any schema parses them', async () => {
      const { status, body } = await post(
        call(1, 'write_knowledge', { title: 'many', expected_version: 0, content: 'x', extra: new Array<number>(150_000).fill(0) }),
      );
      assert.equal(status, 200);
      assert.deepEqual((body as RpcResponse).error, { code: -32602, message: 'Invalid params for tools/call: must not hold more than 100000 values' });
    });

    it('answers a version conflict with the spec text first and the advice to back off after it', async () => {
      const { body } = await post(call(1, 'write_knowledge', { title: `conflict ${Date.now()}`, expected_version: 0, content: 'v1' }));
      const id = (body as RpcResponse).result?.structuredContent?.['knowledge_id'];
      const stale = await post(call(2, 'write_knowledge', { knowledge_id: id, expected_version: 5, content: 'v2' }), running, '/alignbase/mcp');
      const result = (stale.body as RpcResponse).result;
      assert.equal(result?.isError, true);
      assert.deepEqual(result?.content, [
        { type: 'text', text: 'version conflict: read the Knowledge again before writing' },
        { type: 'text', text: CONFLICT_ADVICE },
      ]);
    });

    it('saves text that is merely unusual: controls, bidi marks and astral characters', async () => {
      const title = `odd \u202e\u0085\u001b[2J 😀 ${Date.now()}`;
      const { body } = await post(call(1, 'write_knowledge', { title, expected_version: 0, content: 'tab\there 😀' }));
      assert.equal((body as RpcResponse).result?.structuredContent?.['title'], title);
    });
  });
}
