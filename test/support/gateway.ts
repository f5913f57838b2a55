import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Gateway, GatewayOptions } from '../../src/app.ts';
import { createGateway } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { applyOrgFile } from '../../src/org-sections.ts';
import { createToken } from '../../src/kernel/tokens/tokens.ts';
import { scopeCatalogue } from '../../src/products.ts';
import type { Db } from '../../src/store/db.ts';
import { cliTrail } from './audit.ts';
import type { StoreBackend, TestStore } from './stores.ts';
import { sdkClient } from './mcp-client.ts';

export interface RunningGateway {
  readonly gateway: Gateway;
  /** Base URL, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  close(): Promise<void>;
}

/** Starts a gateway on a free loopback port over an already migrated store. */
export async function startGateway(db: Db, env: Record<string, string> = {}, options: Omit<GatewayOptions, 'db'> = {}): Promise<RunningGateway> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'kgw-gw-'));
  const config = loadConfig({ KGW_PORT: '0', KGW_LOG_LEVEL: 'silent', KGW_DATA_DIR: dataDir, ...env });
  const gateway = await createGateway(config, { ...options, db });
  const address = await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    gateway,
    url: address,
    async close() {
      await gateway.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Waits until the gateway's outbox worker has applied every row (a minute at most), so the graph
 * store and the search engine show every write; fails naming what is still waiting.
 */
export async function drainedOutbox(db: Db): Promise<void> {
  for (let round = 0; round < 3000; round++) {
    const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox');
    if (row?.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const rows = await db.query<{ projection: string; last_error: string | null }>('SELECT projection, last_error FROM outbox LIMIT 5');
  assert.fail(`the outbox did not drain: ${JSON.stringify(rows)}`);
}

/** Applies an org file; fails the test on any error. */
export async function seedOrg(db: Db, yaml: string): Promise<void> {
  await applyOrgFile(db, { source: yaml }, cliTrail(db));
}

export async function issueToken(db: Db, tenant: string, principal: string, scopes: string, ttlMs?: number): Promise<string> {
  return (await createToken(db, { tenant, principal, scopes: scopeCatalogue.normalize(scopes), ttlMs }, cliTrail(db))).token;
}

export interface SeededGateway {
  readonly store: TestStore;
  readonly running: RunningGateway;
  /** Alice's token, with every scope. */
  readonly token: string;
  close(): Promise<void>;
}

/**
 * A gateway over a fresh migrated store seeded with `org` (of tenant acme, with
 * alice@acme.test), a token of Alice's with every scope, and the outbox drained, so the graph
 * and the search engine hold the org's content: what the suites of outside clients talk to.
 */
export async function startSeededGateway(backend: StoreBackend, org: string): Promise<SeededGateway> {
  const store = await backend.open({ migrated: true });
  await seedOrg(store.db, org);
  const token = await issueToken(store.db, 'acme', 'alice@acme.test', scopeCatalogue.all.join(' '));
  const running = await startGateway(store.db, {}, { outboxWorker: { idleMs: 10, backoff: { baseMs: 20, maxMs: 500 } } });
  await drainedOutbox(store.db);
  return {
    store,
    running,
    token,
    async close() {
      await running.close();
      await store.dispose();
    },
  };
}

/** The SDK's own client, connected over Streamable HTTP with a bearer token. */
export async function connectClient(url: string, token: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = sdkClient('kgw-test');
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } } });
  await client.connect(transport);
  return client;
}

/** The tenant most suites start from (test/fixtures/acme.yaml); the bench seeds it too. */
export const ACME_ORG = readFileSync(new URL('../fixtures/acme.yaml', import.meta.url), 'utf8');

export const GLOBEX_ORG = `
tenant: globex
name: Globex
language: de
people:
  - email: hank@globex.test
    name: Hank
agents:
  - name: globex-bot
    owner: hank@globex.test
`;
