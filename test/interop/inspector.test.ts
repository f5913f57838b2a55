import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { Db } from '../../src/store/db.ts';
import { drainedOutbox, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { RunningGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * The MCP Inspector's CLI (2.12, on the project's Node) as its users run it, with the token in
 * --header: on every endpoint and in both protocol eras it lists the tools with --strict, which
 * lints every input and output schema for portability (exit 6 on an error) and reports any
 * warning on stderr; and it calls a tool and gets the gateway's answer.
 */

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const INSPECTOR = path.join(path.dirname(require.resolve('@modelcontextprotocol/inspector/package.json')), 'clients/launcher/build/index.js');

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

const CALLS: Readonly<Record<string, readonly string[]>> = {
  '/mcp': ['--tool-name', 'whoami'],
  '/alignbase/mcp': ['--tool-name', 'get_current_context'],
  '/atmina/mcp': ['--tool-name', 'whoami'],
  '/brain/mcp': ['--tool-name', 'read_concept', '--tool-arg', 'id=erp'],
};

// One store is enough: the Inspector reads what the endpoints send, the same on every store.
const [backend] = storeBackends();

describe('the MCP Inspector CLI against every endpoint', { skip: backend === undefined }, () => {
  let store: TestStore;
  let db: Db;
  let running: RunningGateway;
  let token: string;

  const inspector = (url: string, era: 'legacy' | 'modern', ...args: string[]) =>
    run(process.execPath, [INSPECTOR, '--cli', url, '--protocol-era', era, '--header', `Authorization: Bearer ${token}`, ...args], {
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1' },
    });

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

  for (const [endpoint, call] of Object.entries(CALLS)) {
    for (const era of ['legacy', 'modern'] as const) {
      it(`${endpoint}, ${era}: lists portable schemas under --strict and calls a tool`, async () => {
        const url = `${running.url}${endpoint}`;
        const listed = await inspector(url, era, '--method', 'tools/list', '--strict');
        // A portability error exits 6 (execFile rejects); a warning is reported on stderr.
        assert.doesNotMatch(listed.stderr, /Schema portability|Warning: tool|Error: tool/, listed.stderr);
        const tools = (JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools;
        assert.ok(tools.length > 0);
        const called = await inspector(url, era, '--method', 'tools/call', ...call, '--format', 'json');
        const result = JSON.parse(called.stdout) as { result?: { isError?: boolean; content: { type: string; text: string }[] } };
        assert.notEqual(result.result?.isError, true, called.stdout);
        assert.ok((result.result?.content[0]?.text ?? '').length > 0, called.stdout);
      });
    }
  }
});
