import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import type { TestContext } from 'node:test';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { storeBackends } from '../support/stores.ts';
import { CALL_TIMEOUT_MS, ENDPOINT_PATHS, FuzzWorld, INTERNAL_TEXT, JSONRPC_INTERNAL_ERROR, cut, fuzzRuns, fuzzSeed, preview } from './harness.ts';
import { HOSTILE_FRAGMENTS, NUMBERISH, hostileNumber, hostileString, wrongType } from './hostile.ts';

/*
 * Raw JSON-RPC over fetch, on every MCP endpoint: what the SDK's client would never send.
 * tools/call with missing, null, array or string params, names of every type, arguments of
 * every type, initialize without params, unknown methods, notifications, client responses,
 * odd ids, wrong jsonrpc versions, batches, and bodies that are not JSON-RPC at all. Every
 * answer must be an HTTP status below 500, JSON when it has a body, JSON-RPC errors other than
 * -32603 without an internal-error text, and within the time bound; /healthz stays 200.
 */

const RUNS = fuzzRuns(200);
const SEED = fuzzSeed();

interface RawAnswer {
  readonly status: number;
  readonly text: string;
  readonly ms: number;
}

async function post(world: FuzzWorld, path: string, body: string | Uint8Array): Promise<RawAnswer | 'timeout'> {
  const started = performance.now();
  try {
    const response = await fetch(`${world.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body,
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    const text = await response.text();
    return { status: response.status, text, ms: Math.round(performance.now() - started) };
  } catch (error) {
    if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'timeout';
    throw error;
  }
}

function isMessage(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What is wrong with a raw answer, as short lines; empty when it is acceptable. */
function rawProblems(answer: RawAnswer | 'timeout'): string[] {
  if (answer === 'timeout') return [`no answer within ${CALL_TIMEOUT_MS} ms`];
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`HTTP ${answer.status}`);
  if (INTERNAL_TEXT.test(answer.text)) problems.push('an internal-error text');
  if (answer.text === '') {
    if (answer.status !== 202) problems.push(`HTTP ${answer.status} with an empty body`);
    return problems;
  }
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    problems.push(`HTTP ${answer.status} with a body that is not JSON`);
    return problems;
  }
  const messages = Array.isArray(body) ? body : [body];
  if (Array.isArray(body) && body.length === 0) problems.push('an empty batch answer');
  for (const message of messages) {
    if (!isMessage(message) || message.jsonrpc !== '2.0') {
      problems.push('an answer that is not a JSON-RPC 2.0 message');
      continue;
    }
    const hasResult = 'result' in message;
    const error = message.error;
    if (hasResult === (error !== undefined)) problems.push('an answer with neither or both of result and error');
    if (isMessage(error)) {
      if (error.code === JSONRPC_INTERNAL_ERROR) problems.push(`JSON-RPC error ${JSONRPC_INTERNAL_ERROR}`);
      if (!Number.isInteger(error.code)) problems.push('a JSON-RPC error without an integer code');
      if (typeof error.message !== 'string') problems.push('a JSON-RPC error without a message');
    }
    if (hasResult && answer.status !== 200) problems.push(`a result with HTTP ${answer.status}`);
  }
  return problems;
}

function describeAnswer(answer: RawAnswer | 'timeout'): string {
  return answer === 'timeout' ? `no answer within ${CALL_TIMEOUT_MS} ms` : `HTTP ${answer.status} after ${answer.ms} ms: ${cut(answer.text)}`;
}

async function assertRaw(world: FuzzWorld, path: string, body: string, what: string): Promise<RawAnswer | 'timeout'> {
  const answer = await post(world, path, body);
  const problems = rawProblems(answer);
  if (problems.length > 0) assert.fail(`${what} on ${path}: ${problems.join('; ')}\n  body: ${cut(body)}\n  answer: ${describeAnswer(answer)}`);
  return answer;
}

const rpc = (message: Record<string, unknown>): string => JSON.stringify({ jsonrpc: '2.0', ...message });

/** Bodies no well-behaved client sends, each with what it is. */
function fixedCases(tools: readonly string[]): [string, string][] {
  const tool = tools[0] ?? 'whoami';
  const cases: [string, string][] = [
    ['tools/call without params', rpc({ id: 1, method: 'tools/call' })],
    ['tools/call with null params', rpc({ id: 1, method: 'tools/call', params: null })],
    ['tools/call with array params', rpc({ id: 1, method: 'tools/call', params: [tool, {}] })],
    ['tools/call with string params', rpc({ id: 1, method: 'tools/call', params: tool })],
    ['tools/call with empty params', rpc({ id: 1, method: 'tools/call', params: {} })],
    ['tools/call with a numeric name', rpc({ id: 1, method: 'tools/call', params: { name: 42, arguments: {} } })],
    ['tools/call with a null name', rpc({ id: 1, method: 'tools/call', params: { name: null, arguments: {} } })],
    ['tools/call with an object name', rpc({ id: 1, method: 'tools/call', params: { name: { name: tool }, arguments: {} } })],
    ['tools/call with an array name', rpc({ id: 1, method: 'tools/call', params: { name: [tool], arguments: {} } })],
    ['tools/call with an empty name', rpc({ id: 1, method: 'tools/call', params: { name: '', arguments: {} } })],
    ['tools/call with an unknown name', rpc({ id: 1, method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } })],
    ['tools/call with a name of 100,000 characters', rpc({ id: 1, method: 'tools/call', params: { name: 'x'.repeat(100_000), arguments: {} } })],
    ['tools/call with a NUL in the name', rpc({ id: 1, method: 'tools/call', params: { name: `${tool}\u0000`, arguments: {} } })],
    ['tools/call with a lone surrogate name', rpc({ id: 1, method: 'tools/call', params: { name: '\uD800', arguments: {} } })],
    ['tools/call of "__proto__"', rpc({ id: 1, method: 'tools/call', params: { name: '__proto__', arguments: {} } })],
    ['tools/call of "constructor"', rpc({ id: 1, method: 'tools/call', params: { name: 'constructor', arguments: {} } })],
    ['tools/call asking for a task', rpc({ id: 1, method: 'tools/call', params: { name: tool, arguments: {}, task: { ttl: 60_000 } } })],
    ['tools/call asking for a task with an empty object', rpc({ id: 1, method: 'tools/call', params: { name: tool, arguments: {}, task: {} } })],
    ['ping asking for a task', rpc({ id: 1, method: 'ping', params: { task: {} } })],
    ['tools/list asking for a task', rpc({ id: 1, method: 'tools/list', params: { task: { ttl: 1 } } })],
    [
      'initialize asking for a task',
      rpc({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' }, task: {} } }),
    ],
    [
      'tools/call with a related-task _meta',
      rpc({ id: 1, method: 'tools/call', params: { name: tool, arguments: {}, _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'x' } } } }),
    ],
    ['tools/call with a progress token', rpc({ id: 1, method: 'tools/call', params: { name: tool, arguments: {}, _meta: { progressToken: 'p1' } } })],
    ['tools/call with a string _meta', rpc({ id: 1, method: 'tools/call', params: { name: tool, arguments: {}, _meta: 'x' } })],
    ['initialize without params', rpc({ id: 1, method: 'initialize' })],
    ['initialize with null params', rpc({ id: 1, method: 'initialize', params: null })],
    ['initialize with empty params', rpc({ id: 1, method: 'initialize', params: {} })],
    [
      'initialize with an unknown protocol version',
      rpc({ id: 1, method: 'initialize', params: { protocolVersion: '1999-01-01', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    ],
    [
      'initialize with capabilities of the wrong type',
      rpc({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: [], clientInfo: 'x' } }),
    ],
    [
      'initialize asking for tasks',
      rpc({
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: { tasks: { requests: { tools: { call: {} } } } }, clientInfo: { name: 'x', version: '1' } },
      }),
    ],
    ['tools/list with a cursor', rpc({ id: 1, method: 'tools/list', params: { cursor: 'nope' } })],
    ['tools/list with array params', rpc({ id: 1, method: 'tools/list', params: [] })],
    ['ping with params', rpc({ id: 1, method: 'ping', params: { a: 1 } })],
    ['tasks/get', rpc({ id: 1, method: 'tasks/get', params: { taskId: 'x' } })],
    ['tasks/list', rpc({ id: 1, method: 'tasks/list' })],
    ['tasks/result', rpc({ id: 1, method: 'tasks/result', params: { taskId: 'x' } })],
    ['tasks/cancel', rpc({ id: 1, method: 'tasks/cancel', params: { taskId: 'x' } })],
    ['resources/list', rpc({ id: 1, method: 'resources/list' })],
    ['resources/read', rpc({ id: 1, method: 'resources/read', params: { uri: 'file:///etc/passwd' } })],
    ['prompts/get', rpc({ id: 1, method: 'prompts/get', params: { name: 'x' } })],
    [
      'completion/complete',
      rpc({ id: 1, method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'x' }, argument: { name: 'a', value: 'b' } } }),
    ],
    ['logging/setLevel', rpc({ id: 1, method: 'logging/setLevel', params: { level: 'debug' } })],
    ['sampling/createMessage from the client', rpc({ id: 1, method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } })],
    ['an unknown method', rpc({ id: 1, method: 'no/such/method' })],
    ['an empty method', rpc({ id: 1, method: '' })],
    ['method "__proto__"', rpc({ id: 1, method: '__proto__' })],
    ['method "constructor"', rpc({ id: 1, method: 'constructor' })],
    ['method "hasOwnProperty"', rpc({ id: 1, method: 'hasOwnProperty' })],
    ['a numeric method', rpc({ id: 1, method: 7 })],
    ['notifications/initialized', rpc({ method: 'notifications/initialized' })],
    ['notifications/cancelled of nothing', rpc({ method: 'notifications/cancelled', params: { requestId: 99 } })],
    ['notifications/progress of an unknown token', rpc({ method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } })],
    ['an unknown notification', rpc({ method: 'notifications/whatever', params: [1] })],
    ['a client response to nothing', rpc({ id: 5, result: {} })],
    ['a client error response to nothing', rpc({ id: 5, error: { code: -32000, message: 'x' } })],
    ['id null', rpc({ id: null, method: 'ping' })],
    ['a fractional id', rpc({ id: 1.5, method: 'ping' })],
    ['a huge id', rpc({ id: 1e300, method: 'ping' })],
    ['a negative id', rpc({ id: -1, method: 'ping' })],
    ['an empty string id', rpc({ id: '', method: 'ping' })],
    ['an object id', rpc({ id: { a: 1 }, method: 'ping' })],
    ['a boolean id', rpc({ id: true, method: 'ping' })],
    ['jsonrpc 1.0', JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'ping' })],
    ['no jsonrpc', JSON.stringify({ id: 1, method: 'ping' })],
    ['jsonrpc as a number', JSON.stringify({ jsonrpc: 2, id: 1, method: 'ping' })],
    ['duplicate keys', '{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call","params":{"name":"x"}}'],
    [
      'a "__proto__" key in params',
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${JSON.stringify(tool)},"arguments":{},"__proto__":{"polluted":true}}}`,
    ],
    [
      'a "__proto__" key in arguments',
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${JSON.stringify(tool)},"arguments":{"__proto__":{"polluted":true}}}}`,
    ],
    ['an empty batch', '[]'],
    ['a batch of a number', '[1]'],
    ['a batch of an empty batch', '[[]]'],
    ['a batch of one request and one response with the same id', `[${rpc({ id: 1, method: 'ping' })},${rpc({ id: 1, result: {} })}]`],
    ['a batch with two requests of one id', `[${rpc({ id: 1, method: 'ping' })},${rpc({ id: 1, method: 'tools/list' })}]`],
    ['a batch with ids 1 and "1"', `[${rpc({ id: 1, method: 'ping' })},${rpc({ id: '1', method: 'tools/list' })}]`],
    [
      'a batch with a request and its cancellation',
      `[${rpc({ id: 1, method: 'tools/call', params: { name: tool, arguments: {} } })},${rpc({ method: 'notifications/cancelled', params: { requestId: 1 } })}]`,
    ],
    [
      'a batch of 100 tools/call',
      `[${Array.from({ length: 100 }, (_, i) => rpc({ id: i, method: 'tools/call', params: { name: tool, arguments: {} } })).join(',')}]`,
    ],
    ['a batch of 101 pings', `[${Array.from({ length: 101 }, (_, i) => rpc({ id: i, method: 'ping' })).join(',')}]`],
    ['a batch of 100,000 pings', `[${Array.from({ length: 100_000 }, (_, i) => rpc({ id: i, method: 'ping' })).join(',')}]`],
    ['a batch of 100 notifications', `[${Array.from({ length: 100 }, () => rpc({ method: 'notifications/initialized' })).join(',')}]`],
    ['null', 'null'],
    ['a number', '1'],
    ['a huge number', '1e999999'],
    ['a string', '"tools/call"'],
    ['true', 'true'],
    ['an empty object', '{}'],
    ['an empty body', ''],
    ['whitespace', ' \n\t '],
    ['a byte-order mark', `\uFEFF${rpc({ id: 1, method: 'ping' })}`],
    ['a NUL', '\u0000'],
    ['a truncated body', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":'],
    ['a million nested arrays', `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`],
    ['a million nested objects', `${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}`],
    [
      'deep arguments',
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${JSON.stringify(tool)},"arguments":{"a":${'['.repeat(35)}${']'.repeat(35)}}}}`,
    ],
    [
      'a million values in arguments',
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${JSON.stringify(tool)},"arguments":{"a":[${'0,'.repeat(999_999)}0]}}}`,
    ],
    [
      'half a million keys in arguments',
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${JSON.stringify(tool)},"arguments":{${Array.from({ length: 500_000 }, (_, i) => `"k${i}":0`).join(',')}}}}`,
    ],
    ['a 15 MB string argument', rpc({ id: 1, method: 'tools/call', params: { name: tool, arguments: { a: 'x'.repeat(15_000_000) } } })],
  ];
  // Every listed tool with arguments of every wrong type.
  for (const name of tools) {
    for (const [what, args] of [
      ['null', null],
      ['an array', []],
      ['an array of an object', [{}]],
      ['a string', 'x'],
      ['a number', 1],
      ['true', true],
    ] as const) {
      cases.push([`${name} with ${what} as arguments`, rpc({ id: 1, method: 'tools/call', params: { name, arguments: args } })]);
    }
  }
  return cases;
}

const METHODS = [
  'tools/call',
  'tools/list',
  'initialize',
  'ping',
  'notifications/initialized',
  'notifications/cancelled',
  'tasks/get',
  'resources/list',
  'logging/setLevel',
  'completion/complete',
];

/** A JSON-RPC-ish message: mostly well-formed envelopes with arbitrary parts, sometimes not a message at all. */
function messageArbitrary(tools: readonly string[]): fc.Arbitrary<unknown> {
  const name = fc.oneof(
    { arbitrary: tools.length > 0 ? fc.constantFrom(...tools) : fc.constant('whoami'), weight: 4 },
    { arbitrary: hostileString({ idish: true }), weight: 1 },
    { arbitrary: wrongType, weight: 1 },
  );
  const args = fc.oneof(
    {
      arbitrary: fc.dictionary(fc.string({ maxLength: 20 }), fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostileString(), hostileNumber), { maxKeys: 4 }),
      weight: 3,
    },
    { arbitrary: wrongType, weight: 1 },
  );
  const meta = fc.oneof(
    fc.record({ progressToken: fc.oneof(fc.string(), fc.integer()) }),
    fc.constant({ 'io.modelcontextprotocol/related-task': { taskId: 'x' } }),
    wrongType,
  );
  const callParams = fc.record(
    { name, arguments: args, _meta: meta, task: fc.oneof(fc.record({ ttl: fc.oneof(fc.nat(), hostileNumber) }, { requiredKeys: [] }), wrongType) },
    { requiredKeys: ['name'] },
  );
  const params = fc.oneof(
    { arbitrary: callParams, weight: 4 },
    {
      arbitrary: fc.record(
        {
          protocolVersion: fc.oneof(fc.constantFrom('2025-06-18', '2025-03-26', '2024-11-05'), hostileString()),
          capabilities: fc.oneof(fc.constant({}), wrongType),
          clientInfo: fc.oneof(fc.constant({ name: 'x', version: '1' }), wrongType),
        },
        { requiredKeys: [] },
      ),
      weight: 1,
    },
    { arbitrary: fc.record({ requestId: fc.oneof(fc.nat(), fc.string()), reason: fc.string() }, { requiredKeys: [] }), weight: 1 },
    { arbitrary: wrongType, weight: 2 },
  );
  const id = fc.oneof(
    { arbitrary: fc.nat(), weight: 4 },
    { arbitrary: fc.string({ maxLength: 10 }), weight: 2 },
    { arbitrary: fc.oneof(hostileNumber, fc.constantFrom<unknown>(null, true, {}, [])), weight: 1 },
  );
  const method = fc.oneof(
    { arbitrary: fc.constantFrom(...METHODS), weight: 6 },
    { arbitrary: fc.constantFrom(...NUMBERISH, ...HOSTILE_FRAGMENTS), weight: 1 },
    { arbitrary: fc.string(), weight: 1 },
  );
  const envelope = fc.record(
    { jsonrpc: fc.oneof({ arbitrary: fc.constant<unknown>('2.0'), weight: 12 }, { arbitrary: wrongType, weight: 1 }), id, method, params },
    { requiredKeys: ['jsonrpc', 'method'] },
  );
  const response = fc.record({ jsonrpc: fc.constant('2.0'), id, result: fc.jsonValue({ maxDepth: 2 }) });
  return fc.oneof({ arbitrary: envelope, weight: 10 }, { arbitrary: response, weight: 1 }, { arbitrary: wrongType, weight: 1 });
}

/** One POST body: one message, a batch of a few, or text that is not JSON. */
function bodyArbitrary(tools: readonly string[]): fc.Arbitrary<string> {
  const message = messageArbitrary(tools);
  return fc.oneof(
    { arbitrary: message.map((m) => JSON.stringify(m) ?? 'null'), weight: 8 },
    { arbitrary: fc.array(message, { minLength: 1, maxLength: 8 }).map((batch) => JSON.stringify(batch)), weight: 3 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 60 }), weight: 1 },
  );
}

for (const backend of storeBackends()) {
  describe(`fuzz: raw JSON-RPC on every MCP endpoint (${backend.name})`, () => {
    let world: FuzzWorld;
    before(async () => {
      world = await FuzzWorld.open(backend);
    });
    after(async () => {
      await world?.close();
    });

    async function listedTools(path: string): Promise<string[]> {
      const answer = await post(world, path, rpc({ id: 1, method: 'tools/list' }));
      assert.ok(answer !== 'timeout' && answer.status === 200, `tools/list on ${path}: ${describeAnswer(answer)}`);
      return ((JSON.parse(answer.text) as { result: { tools: { name: string }[] } }).result.tools ?? []).map((t) => t.name);
    }

    for (const path of ENDPOINT_PATHS) {
      it(`${path}: malformed and unusual JSON-RPC gets JSON-RPC answers, never -32603 or 5xx`, async (t: TestContext) => {
        const tools = await listedTools(path);
        const cases = fixedCases(tools);
        const failures: string[] = [];
        for (const [what, body] of cases) {
          try {
            await assertRaw(world, path, body, what);
          } catch (error) {
            failures.push((error as Error).message);
          }
        }
        t.diagnostic(`${path}: ${cases.length} fixed bodies, ${failures.length} failed`);
        assert.equal(await world.healthz(), 200, '/healthz after the fixed bodies');
        assert.deepEqual(failures, [], `${failures.length} of ${cases.length} bodies got an unacceptable answer:\n${failures.join('\n')}`);
      });

      it(`${path}: arbitrary JSON-RPC envelopes and batches get JSON-RPC answers, never -32603 or 5xx`, async (t: TestContext) => {
        const tools = await listedTools(path);
        let posts = 0;
        const started = performance.now();
        let failure: Error | undefined;
        try {
          await fc.assert(
            fc.asyncProperty(bodyArbitrary(tools), async (body) => {
              posts += 1;
              await assertRaw(world, path, body, `POST ${preview(body.length > 2000 ? `${body.slice(0, 2000)}…` : body)}`);
            }),
            { seed: SEED, numRuns: RUNS, plugins: [fc.interruptAfterTimeLimit(120_000)] },
          );
        } catch (error) {
          failure = error instanceof Error ? error : new Error(String(error));
        }
        t.diagnostic(`${path}: seed ${SEED}, ${posts} POSTs (${RUNS} runs asked) in ${Math.round(performance.now() - started)} ms`);
        assert.equal(await world.healthz(), 200, '/healthz after the arbitrary bodies');
        if (failure !== undefined) throw failure;
      });

      it(`${path}: a body that is not UTF-8 is a parse error naming its first invalid byte, and UTF-8 never is`, async () => {
        // Arbitrary bytes inside a call's string argument, after text that may start with U+FEFF.
        const text = fc.oneof(
          fc.string({ unit: 'grapheme', maxLength: 12 }),
          fc.string({ maxLength: 12 }).map((s) => `\uFEFF${s}`),
        );
        await fc.assert(
          fc.asyncProperty(text, fc.uint8Array({ minLength: 1, maxLength: 6 }), text, async (before, bytes, after) => {
            const head = Buffer.from(
              `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{"x":${JSON.stringify(before).slice(0, -1)}`,
            );
            const body = Buffer.concat([head, bytes, Buffer.from(`${JSON.stringify(after).slice(1)}}}}`)]);
            const answer = await post(world, path, body);
            assert.ok(answer !== 'timeout', 'timed out');
            const parsed = JSON.parse(answer.text) as { error?: { code: number; message: string; data?: { offset?: number } } };
            const offset = parsed.error?.data?.offset;
            if (isUtf8(body)) {
              assert.ok(!/not valid UTF-8/.test(parsed.error?.message ?? ''), `UTF-8 refused: ${answer.text}`);
              return;
            }
            assert.equal(answer.status, 400, answer.text);
            assert.equal(parsed.error?.code, -32700, answer.text);
            assert.ok(typeof offset === 'number' && offset >= head.length && offset < head.length + bytes.length, `offset ${String(offset)}: ${answer.text}`);
            assert.ok(isUtf8(body.subarray(0, offset)), 'the bytes before the offset are UTF-8');
            assert.match(
              parsed.error?.message ?? '',
              new RegExp(`^Parse error: the body is not valid UTF-8: the byte at offset ${offset} \\(0x[0-9a-f]{2}\\)`),
            );
          }),
          { seed: SEED, numRuns: RUNS },
        );
      });
    }
  });
}
