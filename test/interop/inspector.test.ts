import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { SeededGateway } from '../support/gateway.ts';
import { startSeededGateway } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';
import { ENDPOINT_CALLS, INTEROP_ORG } from './support.ts';

/*
 * The MCP Inspector's CLI (2.12, on the project's Node) as its users run it, with the token in
 * --header: on every endpoint and in both protocol eras it lists the tools with --strict, which
 * lints every input and output schema for portability (exit 6 on an error) and reports any
 * warning on stderr; and it calls a tool and gets the gateway's answer.
 */

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const INSPECTOR = path.join(path.dirname(require.resolve('@modelcontextprotocol/inspector/package.json')), 'clients/launcher/build/index.js');

/** The Inspector's arguments for a tool call: each argument as --tool-arg KEY=VALUE. */
const callArgs = ({ tool, args }: (typeof ENDPOINT_CALLS)[string]): string[] => [
  '--tool-name',
  tool,
  ...Object.entries(args).flatMap(([key, value]) => ['--tool-arg', `${key}=${value}`]),
];

// One store is enough: the Inspector reads what the endpoints send, the same on every store.
const [backend] = storeBackends();

describe('the MCP Inspector CLI against every endpoint', { skip: backend === undefined }, () => {
  let gw: SeededGateway;

  const inspector = (url: string, era: 'legacy' | 'modern', ...args: string[]) =>
    run(process.execPath, [INSPECTOR, '--cli', url, '--protocol-era', era, '--header', `Authorization: Bearer ${gw.token}`, ...args], {
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1' },
    });

  before(async () => {
    gw = await startSeededGateway(backend as NonNullable<typeof backend>, INTEROP_ORG);
  });
  after(() => gw.close());

  for (const [endpoint, call] of Object.entries(ENDPOINT_CALLS)) {
    for (const era of ['legacy', 'modern'] as const) {
      it(`${endpoint}, ${era}: lists portable schemas under --strict and calls a tool`, async () => {
        const url = `${gw.running.url}${endpoint}`;
        const listed = await inspector(url, era, '--method', 'tools/list', '--strict');
        // A portability error exits 6 (execFile rejects); a warning is reported on stderr.
        assert.doesNotMatch(listed.stderr, /Schema portability|Warning: tool|Error: tool/, listed.stderr);
        const tools = (JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools;
        assert.ok(tools.length > 0);
        const called = await inspector(url, era, '--method', 'tools/call', ...callArgs(call), '--format', 'json');
        const result = JSON.parse(called.stdout) as { result?: { isError?: boolean; content: { type: string; text: string }[] } };
        assert.notEqual(result.result?.isError, true, called.stdout);
        assert.ok((result.result?.content[0]?.text ?? '').length > 0, called.stdout);
      });
    }
  }
});
