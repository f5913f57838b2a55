import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

/*
 * Private MinIO, Neo4j and Meilisearch servers for fault tests: each test starts its own instance on a free
 * loopback port with its own data folder, kills it, restarts it, and never touches the shared
 * servers that test/services/minio.sh and neo4j.sh start for the other suites. The binaries come
 * from those scripts: KGW_TEST_MINIO_BIN and KGW_TEST_NEO4J_CLASSPATH (Meilisearch's: MEILI_BIN
 * or shared/bin, as test/services/meilisearch.sh finds it).
 */

const READY_TIMEOUT_MS = 90_000;
const LOG_LINES = 200;

export interface ServiceOptions {
  /** The data folder; kept on close(). Default: a fresh temporary folder, removed on close(). */
  readonly dataDir?: string;
  /** The loopback port; default a free one. restart() always reuses it. */
  readonly port?: number;
  /** How long start and restart wait for the server to answer; default 90 s. */
  readonly readyTimeoutMs?: number;
}

export interface StopOptions {
  /**
   * SIGKILL (default): the server goes down mid-run, with no chance to flush or clean up.
   * SIGTERM: a graceful shutdown, escalated to SIGKILL after `timeoutMs`.
   */
  readonly signal?: 'SIGKILL' | 'SIGTERM';
  /** How long to wait for the process to exit; default 30 s. */
  readonly timeoutMs?: number;
}

export interface PrivateService {
  readonly port: number;
  readonly dataDir: string;
  /** The pid of the running process, undefined while stopped. */
  readonly pid: number | undefined;
  /** The last lines the server wrote (stdout and stderr), for failure messages. */
  logs(lines?: number): string;
  /** Kills the server (SIGKILL unless told otherwise) and waits until the process is gone. */
  stop(options?: StopOptions): Promise<void>;
  /** Starts the server again on the same port and data folder (stopping it first if it runs) and waits until it answers. */
  restart(): Promise<void>;
  /** Stops the server and removes the data folder if this helper made it. Idempotent. */
  close(): Promise<void>;
}

export interface PrivateMinio extends PrivateService {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string;
  /** The same as endpoint. */
  readonly url: string;
  readonly region: string;
  /** Created on the first start. */
  readonly bucket: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** The gateway's S3_* variables (src/config.ts) pointing at this server. */
  gatewayEnv(): Record<string, string>;
}

export interface PrivateNeo4j extends PrivateService {
  /** bolt://127.0.0.1:<port> */
  readonly url: string;
  /** Auth is disabled in the launcher; these are sent and ignored. */
  readonly user: string;
  readonly password: string;
  /** The gateway's NEO4J_* variables (src/config.ts) pointing at this server. */
  gatewayEnv(): Record<string, string>;
}

// ---------------------------------------------------------------------------------------------
// Availability: like test/support/stores.ts, CI must provide the services, a developer may not.

const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value.trim() === '' ? undefined : value);

/** Whether test/services/minio.sh's binary is known (KGW_TEST_MINIO_BIN). */
export function minioAvailable(): boolean {
  return nonEmpty(process.env.KGW_TEST_MINIO_BIN) !== undefined;
}

/** Whether test/services/neo4j.sh's launcher is known (KGW_TEST_NEO4J_CLASSPATH). */
export function neo4jAvailable(): boolean {
  return nonEmpty(process.env.KGW_TEST_NEO4J_CLASSPATH) !== undefined;
}

/**
 * For `describe(name, { skip: minioSkip() }, ...)`: a reason to skip when MinIO is not set up on
 * a developer's machine; never a skip under CI=true, where startMinio then fails the suite.
 */
export function minioSkip(): string | false {
  if (minioAvailable() || process.env.CI === 'true') return false;
  return 'KGW_TEST_MINIO_BIN is not set (eval "$(bash test/services/minio.sh)")';
}

/** For `describe(name, { skip: neo4jSkip() }, ...)`: as minioSkip, for Neo4j. */
export function neo4jSkip(): string | false {
  if (neo4jAvailable() || process.env.CI === 'true') return false;
  return 'KGW_TEST_NEO4J_CLASSPATH is not set (eval "$(bash test/services/neo4j.sh)")';
}

function required(variable: string, script: string): string {
  const value = nonEmpty(process.env[variable]);
  if (value === undefined) {
    const where = process.env.CI === 'true' ? ' in CI: the fault suites run private instances' : '';
    throw new Error(`${variable} must be set${where} (eval "$(bash ${script})")`);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Child processes: every live one is killed when this process exits, so nothing leaks.

const live = new Set<ChildProcess>();
const ownedDirs = new Set<string>();
let exitHooks = false;

function killLeftovers(): void {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
  for (const dir of ownedDirs) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
    } catch {
      // best effort: a dying server may still be writing
    }
  }
  ownedDirs.clear();
}

function installExitHooks(): void {
  if (exitHooks) return;
  exitHooks = true;
  process.on('exit', killLeftovers);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killLeftovers();
      // Without another listener (the test runner has its own), die of the signal as before.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

/** Whether nothing listens on this loopback port (bindable now). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A free loopback port: bound to port 0, read, released. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

interface Spec {
  readonly name: string;
  /** The loopback port the server listens on; checked free before each start. */
  readonly port: number;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Whether the server answers; polled until it does. */
  ready(): Promise<boolean>;
  /** Sees every output line (before it is kept for logs()). */
  onLine?(line: string): void;
  /** Resets per-run state (before each start). */
  onStart?(): void;
}

interface Run {
  readonly child: ChildProcess;
  /** Settles when the process is gone (or could not be started). */
  readonly exited: Promise<string>;
  done: string | undefined;
}

/** One server process that can be stopped and started again with the same arguments. */
class ManagedProcess {
  readonly #spec: Spec;
  readonly #readyTimeoutMs: number;
  readonly #lines: string[] = [];
  #run: Run | undefined;

  constructor(spec: Spec, readyTimeoutMs: number) {
    this.#spec = spec;
    this.#readyTimeoutMs = readyTimeoutMs;
  }

  get pid(): number | undefined {
    return this.#run !== undefined && this.#run.done === undefined ? this.#run.child.pid : undefined;
  }

  logs(lines = 40): string {
    return this.#lines.slice(-lines).join('\n');
  }

  #keep(line: string): void {
    this.#spec.onLine?.(line);
    this.#lines.push(line);
    if (this.#lines.length > LOG_LINES) this.#lines.splice(0, this.#lines.length - LOG_LINES);
  }

  /** Spawns the process and waits until it answers; kills it again when it does not. */
  async start(): Promise<void> {
    if (this.pid !== undefined) throw new Error(`${this.#spec.name} is already running (pid ${this.pid})`);
    installExitHooks();
    // Otherwise the readiness check could be answered by whatever holds the port.
    if (!(await portFree(this.#spec.port))) throw new Error(`${this.#spec.name}: port ${this.#spec.port} is already in use`);
    this.#spec.onStart?.();
    const started = Date.now();
    this.#keep(`--- ${new Date().toISOString()} ${this.#spec.command} ${this.#spec.args.join(' ')}`);
    const child = spawn(this.#spec.command, [...this.#spec.args], { env: this.#spec.env, stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(child);
    const run: Run = {
      child,
      done: undefined,
      exited: new Promise<string>((resolve) => {
        const finish = (how: string) => {
          live.delete(child);
          run.done ??= how;
          resolve(run.done);
        };
        // 'close' rather than 'exit': by then the last output lines are in the log too.
        child.once('close', (code, signal) => finish(signal === null ? `exited with code ${code}` : `was killed by ${signal}`));
        child.once('error', (error) => finish(`could not be started: ${error.message}`));
      }),
    };
    this.#run = run;
    for (const stream of [child.stdout, child.stderr]) {
      if (stream === null) continue;
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => this.#keep(line));
      // A test that forgets close() must not keep its process alive: the exit hook kills the server.
      (stream as Socket).unref();
    }
    child.unref();

    const deadline = started + this.#readyTimeoutMs;
    for (;;) {
      if (run.done !== undefined) {
        throw new Error(`${this.#spec.name} ${run.done} before it was ready; last log lines:\n${this.logs()}`);
      }
      if (await this.#spec.ready()) return;
      if (Date.now() > deadline) {
        await this.stop();
        throw new Error(`${this.#spec.name} did not become ready within ${Math.round(this.#readyTimeoutMs / 1000)} s; last log lines:\n${this.logs()}`);
      }
      await sleep(100);
    }
  }

  async stop(options: StopOptions = {}): Promise<void> {
    const run = this.#run;
    if (run === undefined || run.done !== undefined) return;
    const signal = options.signal ?? 'SIGKILL';
    const timeoutMs = options.timeoutMs ?? 30_000;
    run.child.kill(signal);
    if (await exitWithin(run, timeoutMs)) return;
    if (signal === 'SIGTERM') {
      run.child.kill('SIGKILL');
      if (await exitWithin(run, 10_000)) return;
    }
    throw new Error(`${this.#spec.name} (pid ${run.child.pid}) did not exit within ${timeoutMs} ms of ${signal}`);
  }
}

/** Whether the process is gone within `ms`; the timer also keeps this process alive meanwhile (the child is unref'd). */
async function exitWithin(run: Run, ms: number): Promise<boolean> {
  const timer = new AbortController();
  try {
    return await Promise.race([run.exited.then(() => true), sleep(ms, false, { signal: timer.signal })]);
  } finally {
    timer.abort();
  }
}

/** The data folder: the caller's, or a fresh temporary one this helper removes on close(). */
async function dataFolder(options: ServiceOptions, prefix: string): Promise<{ dir: string; owned: boolean }> {
  if (options.dataDir !== undefined) return { dir: path.resolve(options.dataDir), owned: false };
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  ownedDirs.add(dir);
  return { dir, owned: true };
}

/** The common part of a private server; `extra` is spread, so it must hold no getters. */
function service<T extends object>(managed: ManagedProcess, port: number, folder: { dir: string; owned: boolean }, extra: T): PrivateService & T {
  let closed = false;
  return {
    ...extra,
    port,
    dataDir: folder.dir,
    get pid() {
      return managed.pid;
    },
    logs: (lines?: number) => managed.logs(lines),
    stop: (options?: StopOptions) => managed.stop(options),
    async restart() {
      if (closed) throw new Error('restart() after close()');
      await managed.stop();
      await managed.start();
    },
    async close() {
      if (closed) return;
      closed = true;
      await managed.stop();
      if (folder.owned) {
        await rm(folder.dir, { recursive: true, force: true, maxRetries: 3 });
        ownedDirs.delete(folder.dir);
      }
    },
  };
}

/** Starts, and on failure removes what was made for the start. */
async function launch(managed: ManagedProcess, folder: { dir: string; owned: boolean }): Promise<void> {
  try {
    await managed.start();
  } catch (error) {
    await managed.stop().catch(() => undefined);
    if (folder.owned) {
      await rm(folder.dir, { recursive: true, force: true });
      ownedDirs.delete(folder.dir);
    }
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// MinIO

/**
 * A private MinIO (test/services/minio.sh's binary) with its own root credentials and one
 * bucket, ready when GET /minio/health/ready answers 200.
 */
export async function startMinio(options: ServiceOptions & { bucket?: string } = {}): Promise<PrivateMinio> {
  const bin = required('KGW_TEST_MINIO_BIN', 'test/services/minio.sh');
  const port = options.port ?? (await freePort());
  const endpoint = `http://127.0.0.1:${port}`;
  const accessKeyId = 'kgwfault';
  const secretAccessKey = randomBytes(12).toString('hex');
  const bucket = options.bucket ?? 'kgw-fault';
  const region = 'us-east-1';
  const folder = await dataFolder(options, 'kgw-minio-private-');
  // Nothing of a developer's own MinIO settings: only these.
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MINIO_')));
  Object.assign(env, { MINIO_ROOT_USER: accessKeyId, MINIO_ROOT_PASSWORD: secretAccessKey, MINIO_BROWSER: 'off', MINIO_UPDATE: 'off' });
  const managed = new ManagedProcess(
    {
      name: `MinIO on ${endpoint}`,
      port,
      command: bin,
      args: ['server', '--address', `127.0.0.1:${port}`, folder.dir],
      env,
      async ready() {
        try {
          const response = await fetch(`${endpoint}/minio/health/ready`, { signal: AbortSignal.timeout(2000) });
          await response.arrayBuffer();
          return response.ok;
        } catch {
          return false;
        }
      },
    },
    options.readyTimeoutMs ?? READY_TIMEOUT_MS,
  );
  await launch(managed, folder);
  const minio: PrivateMinio = service(managed, port, folder, {
    endpoint,
    url: endpoint,
    region,
    bucket,
    accessKeyId,
    secretAccessKey,
    gatewayEnv: () => ({ S3_ENDPOINT: endpoint, S3_BUCKET: bucket, S3_REGION: region, S3_ACCESS_KEY_ID: accessKeyId, S3_SECRET_ACCESS_KEY: secretAccessKey }),
  });
  try {
    await ensureBucket(minio);
  } catch (error) {
    await minio.close();
    throw error;
  }
  return minio;
}

async function ensureBucket(minio: PrivateMinio): Promise<void> {
  const { S3Client, CreateBucketCommand, HeadBucketCommand } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    region: minio.region,
    endpoint: minio.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: minio.accessKeyId, secretAccessKey: minio.secretAccessKey },
  });
  try {
    try {
      await client.send(new HeadBucketCommand({ Bucket: minio.bucket }), { abortSignal: AbortSignal.timeout(10_000) });
    } catch {
      try {
        await client.send(new CreateBucketCommand({ Bucket: minio.bucket }), { abortSignal: AbortSignal.timeout(10_000) });
      } catch (error) {
        if ((error as { name?: unknown }).name !== 'BucketAlreadyOwnedByYou') throw error;
      }
    }
  } finally {
    client.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// Neo4j

/**
 * A private embedded Neo4j (test/services/neo4j.sh's launcher), Bolt only, auth disabled,
 * ready when the launcher prints its READY line.
 *
 * Mind the launcher's shutdown hook: on SIGTERM it shuts the database down and then deletes
 * the data folder, so a restart after stop({ signal: 'SIGTERM' }) starts an empty database.
 * Only after SIGKILL (the default) does the restarted server recover the same data.
 */
export async function startNeo4j(options: ServiceOptions = {}): Promise<PrivateNeo4j> {
  const classpath = required('KGW_TEST_NEO4J_CLASSPATH', 'test/services/neo4j.sh');
  const port = options.port ?? (await freePort());
  const url = `bolt://127.0.0.1:${port}`;
  const folder = await dataFolder(options, 'kgw-neo4j-private-');
  let ready = false;
  const managed = new ManagedProcess(
    {
      name: `Neo4j on ${url}`,
      port,
      command: 'java',
      args: ['-Xms256m', '-Xmx1g', '-cp', classpath, 'kgw.Neo4jLauncher', String(port), folder.dir],
      env: process.env,
      ready: () => Promise.resolve(ready),
      onLine(line) {
        if (line.startsWith('READY ')) ready = true;
      },
      onStart() {
        ready = false;
      },
    },
    options.readyTimeoutMs ?? READY_TIMEOUT_MS,
  );
  await launch(managed, folder);
  const user = 'neo4j';
  const password = 'kgw-private';
  return service(managed, port, folder, {
    url,
    user,
    password,
    gatewayEnv: () => ({ NEO4J_URL: url, NEO4J_USER: user, NEO4J_PASSWORD: password }),
  });
}

// ---------------------------------------------------------------------------------------------
// Meilisearch

export interface PrivateMeilisearch extends PrivateService {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly key: string;
  /** The gateway's MEILI_* variables (src/config.ts) pointing at this server. */
  gatewayEnv(): Record<string, string>;
}

/** The Meilisearch binary test/services/meilisearch.sh runs: MEILI_BIN, or the one in shared/bin beside the repository. */
export function meilisearchBinary(): string {
  return process.env.MEILI_BIN ?? path.resolve(import.meta.dirname, '../../../shared/bin/meilisearch');
}

/** For `describe(name, { skip: meilisearchSkip() }, ...)`: as minioSkip, for the Meilisearch binary. */
export function meilisearchSkip(): string | false {
  if (existsSync(meilisearchBinary()) || process.env.CI === 'true') return false;
  return `no Meilisearch binary at ${meilisearchBinary()} (set MEILI_BIN)`;
}

/**
 * A private Meilisearch with its own master key and data folder, ready when GET /health
 * answers. It recovers its data after stop() and restart(), SIGKILL or SIGTERM.
 */
export async function startMeilisearch(options: ServiceOptions = {}): Promise<PrivateMeilisearch> {
  const bin = meilisearchBinary();
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const key = randomBytes(16).toString('hex');
  const folder = await dataFolder(options, 'kgw-meili-private-');
  const dir = folder.dir;
  const managed = new ManagedProcess(
    {
      name: `Meilisearch on ${url}`,
      port,
      command: bin,
      args: [
        '--http-addr',
        `127.0.0.1:${port}`,
        '--master-key',
        key,
        '--no-analytics',
        '--env',
        'development',
        '--db-path',
        `${dir}/db`,
        '--dump-dir',
        `${dir}/dumps`,
        '--snapshot-dir',
        `${dir}/snapshots`,
      ],
      env: process.env,
      async ready() {
        try {
          const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
          await response.arrayBuffer();
          return response.ok;
        } catch {
          return false;
        }
      },
    },
    options.readyTimeoutMs ?? READY_TIMEOUT_MS,
  );
  await launch(managed, folder);
  return service(managed, port, folder, { url, key, gatewayEnv: () => ({ MEILI_URL: url, MEILI_API_KEY: key }) });
}
