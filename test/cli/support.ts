import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { sdkClient } from '../support/mcp-client.ts';
import { createTestDatabase, migratedDataFolder, testDatabaseUrl } from '../support/stores.ts';

/** The project root: every kgw process runs here, as `npm run kgw` would. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const KGW = path.join(ROOT, 'src', 'cli', 'kgw.ts');

export type Env = Readonly<Record<string, string>>;

export interface RunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Milliseconds from the spawn to the first stderr output (undefined when there was none), and to the exit. */
  readonly firstStderrMs?: number | undefined;
  readonly exitMs: number;
}

/** The lines of an output, without the final newline's empty one. */
export const lines = (text: string): string[] => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));

/**
 * An environment built from scratch: nothing of the test runner's own environment leaks into
 * the child except PATH and HOME.
 */
export function cliEnv(extra: Env = {}): Env {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? os.tmpdir(), KGW_LOG_LEVEL: 'warn', KGW_PORT: NO_GATEWAY_PORT, ...extra };
}

/**
 * The port a suite's kgw commands are told the gateway listens on unless the test names one
 * (\`serve\` names its own). Nothing listens on port 1, so a gateway a developer runs on the
 * default 8787 (\`npm start\`) is never taken for the suite's: \`kgw\` refuses to create a data
 * folder while a gateway answers on its configured port.
 */
export const NO_GATEWAY_PORT = '1';

interface Collected {
  stdout(): string;
  stderr(): string;
  /** How the child ended, with what it wrote and when, measured from `started`. */
  result(code: number | null, signal: NodeJS.Signals | null): RunResult;
}

function collect(child: ChildProcess, started: number): Collected {
  let stdout = '';
  let stderr = '';
  let firstStderrAt: number | undefined;
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    firstStderrAt ??= performance.now();
    stderr += chunk;
  });
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    result: (code, signal) => ({
      code,
      signal,
      stdout,
      stderr,
      firstStderrMs: firstStderrAt === undefined ? undefined : firstStderrAt - started,
      exitMs: performance.now() - started,
    }),
  };
}

/** Runs `kgw ARGS…` to completion (killed after `timeoutMs`). */
export function kgw(args: readonly string[], env: Env, options: { timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [KGW, ...args], { cwd: ROOT, env: { ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = collect(child, started);
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve(output.result(code, signal));
    });
  });
}

/** A port nobody listens on right now (the kernel's choice for port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface Served {
  readonly pid: number;
  readonly port: number;
  /** e.g. http://127.0.0.1:41234 */
  readonly url: string;
  /** Whether the process has exited (by itself, after `stop` or after `kill9`). */
  exited(): boolean;
  output(): { stdout: string; stderr: string };
  /** SIGKILL: no shutdown code runs. Resolves once the process is gone and reaped. */
  kill9(): Promise<RunResult>;
  /** SIGTERM (a clean shutdown), SIGKILL after 15 s; resolves with how it ended. */
  stop(): Promise<RunResult>;
}

/**
 * Starts `kgw serve` (on `port`, or a free one) and waits until /healthz answers. The child is
 * this process's own, so once it dies it is reaped at once: a lock file naming it then names a
 * dead pid, as after a crash on a real host.
 */
export async function serve(env: Env, options: { port?: number; timeoutMs?: number } = {}): Promise<Served> {
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = spawn(process.execPath, [KGW, 'serve'], { cwd: ROOT, env: { ...env, KGW_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = collect(child, started);
  let done = false;
  const exit = new Promise<RunResult>((resolve) => {
    child.once('close', (code, signal) => {
      done = true;
      resolve(output.result(code, signal));
    });
  });
  const timeoutMs = options.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (done) {
      const result = await exit;
      throw new Error(`kgw serve exited (code ${result.code}, signal ${result.signal}) before answering /healthz:\n${result.stderr}${result.stdout}`);
    }
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await exit;
      throw new Error(`kgw serve did not answer /healthz within ${timeoutMs} ms:\n${output.stderr()}${output.stdout()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    pid: child.pid ?? 0,
    port,
    url,
    exited: () => done,
    output: () => ({ stdout: output.stdout(), stderr: output.stderr() }),
    async kill9() {
      if (!done) child.kill('SIGKILL');
      return exit;
    },
    async stop() {
      if (!done) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      try {
        return await exit;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** A fresh temporary folder. */
export const tempDir = (prefix = 'kgw-cli-'): Promise<string> => mkdtemp(path.join(os.tmpdir(), prefix));

/** Writes `text` as `name` into `dir` and returns its path. */
export async function writeIn(dir: string, name: string, text: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, text);
  return file;
}

/** The store a CLI test runs against, as the child processes see it. */
export interface CliStore {
  readonly name: 'embedded' | 'postgres';
  /** The environment of every kgw process of this store (KGW_DATA_DIR, maybe DATABASE_URL). */
  readonly env: Env;
  readonly dataDir: string;
  /** Set for PostgreSQL: this store's own database. */
  readonly databaseUrl: string | undefined;
  /** A scratch folder for files the test writes (org files). */
  readonly workDir: string;
  dispose(): Promise<void>;
}

export interface CliStoreBackend {
  readonly name: CliStore['name'];
  /**
   * A new store. The embedded one is a data folder already migrated (copied, as a new folder's
   * initdb takes seconds at its first command) unless `migrated` is false: then the folder does
   * not exist yet, and the first kgw command makes it.
   */
  open(options?: { migrated?: boolean }): Promise<CliStore>;
}

const embedded: CliStoreBackend = {
  name: 'embedded',
  async open(options = {}) {
    const dir = await tempDir();
    const dataDir = path.join(dir, 'data');
    if (options.migrated !== false) await cp(await migratedDataFolder(), dataDir, { recursive: true });
    return {
      name: 'embedded',
      env: cliEnv({ KGW_DATA_DIR: dataDir }),
      dataDir,
      databaseUrl: undefined,
      workDir: dir,
      dispose: () => rm(dir, { recursive: true, force: true }),
    };
  },
};

function postgres(serverUrl: string): CliStoreBackend {
  return {
    name: 'postgres',
    async open() {
      const database = await createTestDatabase(serverUrl);
      // The data folder exists: without S3 the blob probe checks that it is writable.
      const dir = await tempDir();
      return {
        name: 'postgres',
        env: cliEnv({ KGW_DATA_DIR: dir, DATABASE_URL: database.url }),
        dataDir: dir,
        databaseUrl: database.url,
        workDir: dir,
        async dispose() {
          await database.drop();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  };
}

/** The embedded store always; PostgreSQL too when KGW_TEST_DATABASE_URL is set. */
export function cliStoreBackends(): CliStoreBackend[] {
  const url = testDatabaseUrl();
  return url === undefined ? [embedded] : [embedded, postgres(url)];
}

/** The PostgreSQL backend alone, when configured. */
export function postgresBackend(): CliStoreBackend | undefined {
  const url = testDatabaseUrl();
  return url === undefined ? undefined : postgres(url);
}

/** The pid of a process that has just exited, for stale lock files. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('close', resolve));
  return child.pid ?? 0;
}

/** The MCP initialize request, as a client sends it first. */
export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'kgw-cli-test', version: '1' } },
};

/** POSTs the initialize request to an MCP endpoint with a bearer token; returns the status. */
export async function initializeStatus(url: string, token: string): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify(INITIALIZE),
  });
  await response.arrayBuffer();
  return response.status;
}

/** A token as `kgw token create` prints it: the whole stdout. */
export const TOKEN_LINE = /^kgw_[A-Za-z0-9_-]{43}\n$/;

/**
 * The org file these suites apply (tenant acme). Kept here, not shared, so that the expected
 * CLI output below does not move when other suites' fixtures change.
 */
export const ORG = `tenant: acme
name: Acme Inc.
language: en
people:
  - email: alice@acme.test
    name: Alice
  - email: bob@acme.test
    name: Bob
agents:
  - name: release-bot
    owner: alice@acme.test
groups:
  - name: eng
    members: [release-bot, alice@acme.test]
teams:
  - slug: docs
    name: Docs team
    members: { alice@acme.test: admin, release-bot: editor }
`;

/** What a `kgw` "not found" ends with on this store: where it looked. */
export function lookedIn(store: CliStore): string {
  if (store.databaseUrl === undefined) return ` (looked in the data folder ${store.dataDir})`;
  const url = new URL(store.databaseUrl);
  return ` (looked in the database ${decodeURIComponent(url.pathname.slice(1))} on ${url.host})`;
}

/** The parts of an export's manifest.json (kgw export folder) that the round-trip suites read. */
export interface ExportManifest {
  kbs: { slug: string; files: { path: string; kind: string; sha256: string }[] }[];
  alignbase: {
    type: string;
    name: string;
    latest_version: number;
    published_version: number | null;
    review_by?: string | null;
    versions: { version: number; sha256: string; authority: string | null; files: { path: string; sha256: string }[] }[];
  }[];
  brain?: { path: string; sha256: string; nodes: number; relations: number } | null;
  org?: { path: string; sha256: string; files: { path: string; sha256: string }[] } | null;
}

/**
 * What must be equal after a round trip: each KB file's path, kind and SHA-256, each resource's
 * latest content, authority, files and whether it is published; with `reviewBy` each resource's
 * review_by too, and with `brainAndOrg` the manifest's brain and org entries (for an export of
 * every kind whose org.yaml was applied on the other side).
 */
export function comparableExport(manifest: ExportManifest, options: { reviewBy?: boolean; brainAndOrg?: boolean } = {}) {
  return {
    kbs: manifest.kbs.map((kb) => ({ slug: kb.slug, files: kb.files.map((f) => [f.path, f.kind, f.sha256]) })),
    alignbase: manifest.alignbase
      .map((r) => {
        const latest = r.versions.find((v) => v.version === r.latest_version);
        return {
          key: `${r.type}:${r.name}`,
          sha256: latest?.sha256,
          authority: latest?.authority,
          files: latest?.files.map((f) => [f.path, f.sha256]),
          published: r.published_version === r.latest_version,
          ...(options.reviewBy === true ? { review_by: r.review_by } : {}),
        };
      })
      .sort((a, b) => (a.key < b.key ? -1 : 1)),
    ...(options.brainAndOrg === true ? { brain: manifest.brain, org: manifest.org } : {}),
  };
}

/**
 * The suite's org (ORG) applied with \`kgw apply\`, then \`kgw serve\` and Alice's client of an
 * endpoint (Atmina's unless named), with a token from \`kgw token create\`: for suites whose
 * content comes in, or is checked, through the real tools.
 */
export async function serveWithClient(store: CliStore, endpoint = '/atmina/mcp'): Promise<{ gateway: Served; client: Client; token: string }> {
  const applied = await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env);
  if (applied.code !== 0) throw new Error(`kgw apply failed: ${applied.stderr}`);
  const created = await kgw(['token', 'create', '--tenant', 'acme', '--principal', 'alice@acme.test', '--scopes', 'context.write'], store.env);
  if (created.code !== 0) throw new Error(`kgw token create failed: ${created.stderr}`);
  const gateway = await serve(store.env);
  const client = sdkClient('kgw-cli-test');
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}${endpoint}`), { requestInit: { headers: { authorization: `Bearer ${created.stdout.trim()}` } } }),
  );
  await client.listTools();
  return { gateway, client, token: created.stdout.trim() };
}

/** One of two gateways a migration suite talks to: its store, `kgw serve`, and Alice's client and token. */
export interface Peer {
  readonly store: CliStore;
  /** Replaced when a suite stops the gateway and serves the store again. */
  gateway: Served;
  readonly client: Client;
  readonly token: string;
}

/**
 * Two gateways with their own stores, each served with ORG applied and Alice's client of
 * `endpoint`: `other` stands in for the hosted service an import reads or an export writes,
 * `local` is this gateway. `close` stops and removes both.
 */
export async function openPeers(
  backend: CliStoreBackend,
  endpoint = '/atmina/mcp',
): Promise<{ readonly other: Peer; readonly local: Peer; close(): Promise<void> }> {
  const open = async (): Promise<Peer> => {
    const store = await backend.open();
    return { store, ...(await serveWithClient(store, endpoint)) };
  };
  const other = await open();
  const local = await open();
  return {
    other,
    local,
    async close() {
      for (const peer of [other, local]) {
        await peer.client.close();
        await peer.gateway.stop();
        await peer.store.dispose();
      }
    },
  };
}

/**
 * A hostile MCP endpoint on loopback: each request gets a fresh `server(req)` over the SDK's
 * Streamable HTTP server transport (JSON answers), unless `intercept` answered it first.
 */
export async function hostileEndpoint(
  server: (req: http.IncomingMessage) => McpServer,
  intercept: (req: http.IncomingMessage, res: http.ServerResponse) => boolean = () => false,
): Promise<{ readonly origin: string; close(): Promise<void> }> {
  const listener = http.createServer((req, res) => {
    if (intercept(req, res)) return;
    void (async () => {
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server(req).connect(transport);
      await transport.handleRequest(req, res);
    })();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(listener.address() as net.AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => listener.close(() => resolve())),
  };
}
