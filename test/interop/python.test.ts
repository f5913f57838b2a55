import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { Db } from '../../src/store/db.ts';
import { connectClient, drainedOutbox, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { RunningGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import type { PythonAnswer } from './python-support.ts';
import { pythonInterpreter } from './python-support.ts';

/*
 * The official Python MCP SDK (2.3, from PyPI; test/services/python-mcp.sh) in its default mode
 * on every endpoint, with a static token: it discovers the server at 2026-07-28 (no fallback to
 * the handshake, no warning logged), lists the same tools the TypeScript SDK's legacy client
 * lists, and calls one, its structured output checked by the Python client against the tool's
 * output schema.
 */

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('./python_client.py', import.meta.url));

const ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice, brain_role: admin }
teams:
  - slug: docs
    name: Docs team
    members: { alice@acme.test: admin }
brain:
  nodes:
    - { id: erp, type: tool, title: ERP, access: public }
`;

const CALLS: Readonly<Record<string, readonly [string, Record<string, unknown>]>> = {
  '/mcp': ['whoami', {}],
  '/alignbase/mcp': ['get_current_context', {}],
  '/atmina/mcp': ['whoami', {}],
  '/brain/mcp': ['read_concept', { id: 'erp' }],
};

const interpreter = pythonInterpreter();
const [backend] = storeBackends();

describe('the official Python MCP SDK in its default mode', { skip: interpreter === undefined ? 'KGW_TEST_PYTHON is not set' : false }, () => {
  let store: TestStore;
  let db: Db;
  let running: RunningGateway;
  let token: string;

  before(async () => {
    store = await (backend as NonNullable<typeof backend>).open({ migrated: true });
    db = store.db;
    await seedOrg(db, ORG);
    token = await issueToken(db, 'acme', 'alice@acme.test', 'context.read context.write activity.write brain:read brain:propose outreach:propose');
    running = await startGateway(db, {}, { outboxWorker: { idleMs: 10, backoff: { baseMs: 20, maxMs: 500 } } });
    await drainedOutbox(db);
  });
  after(async () => {
    await running.close();
    await store.dispose();
  });

  for (const [endpoint, [tool, args]] of Object.entries(CALLS)) {
    it(`${endpoint}: discovers at 2026-07-28, lists and calls ${tool} as the TypeScript client does`, async () => {
      const url = `${running.url}${endpoint}`;
      const { stdout } = await run(interpreter as string, [SCRIPT, url, token, tool, JSON.stringify(args)], { timeout: 60_000 });
      const answer = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as PythonAnswer;
      const legacy = await connectClient(url, token);
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
