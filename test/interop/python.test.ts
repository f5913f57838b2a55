import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { SeededGateway } from '../support/gateway.ts';
import { connectClient, startSeededGateway } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';
import type { PythonAnswer } from './support.ts';
import { ENDPOINT_CALLS, INTEROP_ORG, pythonInterpreter } from './support.ts';

/*
 * The official Python MCP SDK (2.3, from PyPI; test/services/python-mcp.sh) in its default mode
 * on every endpoint, with a static token: it discovers the server at 2026-07-28 (no fallback to
 * the handshake, no warning logged), lists the same tools the TypeScript SDK's legacy client
 * lists, and calls one, its structured output checked by the Python client against the tool's
 * output schema.
 */

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('./python_client.py', import.meta.url));

const interpreter = pythonInterpreter();
const [backend] = storeBackends();

describe('the official Python MCP SDK in its default mode', { skip: interpreter === undefined ? 'KGW_TEST_PYTHON is not set' : false }, () => {
  let gw: SeededGateway;

  before(async () => {
    gw = await startSeededGateway(backend as NonNullable<typeof backend>, INTEROP_ORG);
  });
  after(() => gw.close());

  for (const [endpoint, { tool, args }] of Object.entries(ENDPOINT_CALLS)) {
    it(`${endpoint}: discovers at 2026-07-28, lists and calls ${tool} as the TypeScript client does`, async () => {
      const url = `${gw.running.url}${endpoint}`;
      const { stdout } = await run(interpreter as string, [SCRIPT, url, gw.token, tool, JSON.stringify(args)], { timeout: 60_000 });
      const answer = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as PythonAnswer;
      const legacy = await connectClient(url, gw.token);
      try {
        const expected = await legacy.callTool({ name: tool, arguments: args });
        assert.deepEqual(
          { version: answer.protocol_version, tools: answer.tools, isError: answer.is_error, warnings: answer.warnings },
          { version: '2026-07-28', tools: (await legacy.listTools()).tools.map((t) => t.name), isError: false, warnings: [] },
        );
        const text = (expected.content as { type: string; text: string }[])[0]?.text;
        assert.deepEqual({ text: answer.text, structured: answer.structured }, { text, structured: expected.structuredContent ?? null });
      } finally {
        await legacy.close();
      }
    });
  }
});
