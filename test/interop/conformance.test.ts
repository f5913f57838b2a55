import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { Db } from '../../src/store/db.ts';
import { issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import type { RunningGateway } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * The MCP conformance tool's `server` suite (@modelcontextprotocol/conformance 0.1.16) against
 * /mcp. It cannot send a token, so it talks to a test-only proxy that adds one (and nothing
 * else). The suite's scenarios mostly call tools and prompts of its own reference server
 * (test_simple_text, …), which a gateway does not have; the README lists each scenario with
 * its result and why. This test holds the gateway to the ones that apply.
 */

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const CONFORMANCE = path.join(path.dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist/index.js');

/** The scenarios that test what any MCP server must do, as the gateway does it: each must pass. */
export const APPLIES = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection'] as const;

const [backend] = storeBackends();

describe('the MCP conformance suite through a token-adding proxy', { skip: backend === undefined }, () => {
  let store: TestStore;
  let db: Db;
  let running: RunningGateway;
  let proxy: http.Server;
  let out: string;

  before(async () => {
    store = await (backend as NonNullable<typeof backend>).open({ migrated: true });
    db = store.db;
    await seedOrg(db, 'tenant: acme\nname: Acme Inc.\npeople:\n  - { email: alice@acme.test, name: Alice }\n');
    const token = await issueToken(db, 'acme', 'alice@acme.test', 'context.read brain:read');
    // Adds the bearer token and passes everything else as it came, the Host and Origin headers
    // included; the gateway allows the proxy's origin as it would its own public URL's.
    proxy = http.createServer((request, response) => {
      const target = new URL(running.url);
      const upstream = http.request(
        {
          host: target.hostname,
          port: target.port,
          method: request.method,
          path: request.url,
          headers: { ...request.headers, authorization: `Bearer ${token}` },
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      upstream.on('error', () => response.destroy());
      request.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    running = await startGateway(db, { KGW_ALLOWED_ORIGINS: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` });
    out = await mkdtemp(path.join(os.tmpdir(), 'kgw-conformance-'));
  });
  after(async () => {
    await new Promise((resolve) => proxy.close(resolve));
    await running.close();
    await store.dispose();
    await rm(out, { recursive: true, force: true });
  });

  it('passes every scenario that applies to a gateway', async (t) => {
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
    // The suite exits non-zero when any scenario fails: most do not apply (see the README).
    await run(process.execPath, [CONFORMANCE, 'server', '--url', url, '--suite', 'all', '-o', out], { timeout: 300_000 }).catch(() => undefined);
    const results = new Map<string, string[]>();
    const details = new Map<string, unknown>();
    for (const folder of await readdir(out)) {
      const checks = JSON.parse(await readFile(path.join(out, folder, 'checks.json'), 'utf8')) as { id: string; status: string }[];
      const scenario = folder.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
      results.set(
        scenario,
        checks.map((c) => c.status),
      );
      details.set(scenario, checks);
    }
    for (const scenario of APPLIES) {
      const statuses = results.get(scenario);
      assert.ok(statuses !== undefined && statuses.length > 0, `${scenario} ran`);
      assert.ok(
        statuses.every((s) => s === 'SUCCESS'),
        `${scenario}: ${JSON.stringify(details.get(scenario))}`,
      );
    }
    // For the README: every scenario and its checks' statuses.
    t.diagnostic(JSON.stringify(Object.fromEntries([...results].sort())));
  });
});
