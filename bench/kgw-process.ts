import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCommand } from '../test/support/start-command.ts';
import type { BenchStore } from './store.ts';

/** The real CLI as the migration benches run it: a `kgw` process timed from start to exit, and `kgw serve` on a free port. */

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
const KGW = path.join(ROOT, 'src', 'cli', 'kgw.ts');

export interface Timed {
  readonly seconds: number;
  readonly stdout: string;
  readonly code: number;
}

/**
 * Runs kgw to its end. With `refusals`, exit 1 with a JSON report (something was refused, item by
 * item) is given back; any other failing exit fails the bench.
 */
export function kgw(args: readonly string[], env: NodeJS.ProcessEnv, options: { readonly refusals?: boolean } = {}): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [KGW, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      const seconds = (performance.now() - started) / 1000;
      if (code === 0 || (options.refusals === true && code === 1 && stdout.trim().startsWith('{'))) resolve({ seconds, stdout, code });
      else reject(new Error(`kgw ${args.join(' ')} exited ${code}: ${stdout.slice(0, 2000)}`));
    });
  });
}

/** A port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * `kgw serve` on a free port with `env`, started as `npm start` starts it (the environment it
 * sets, where `env` does not, its Node flags and `bin/kgw.js serve`, read from package.json),
 * with `nodeFlags` after its flags; resolves once /healthz answers (at most a minute).
 */
export async function serve(env: NodeJS.ProcessEnv, name = 'kgw serve', nodeFlags: readonly string[] = []): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const command = await startCommand(env);
  const child = spawn(process.execPath, [...command.flags, ...nodeFlags, ...command.args], {
    cwd: ROOT,
    env: { ...env, ...command.env, KGW_PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
    if (child.exitCode !== null) throw new Error(`${name} exited ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { url, child };
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGTERM');
  throw new Error(`${name} did not answer at ${url}`);
}

/** Stops a served gateway and waits for it to exit (SIGKILL after 30 s). */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

/**
 * The data folder and environment of a gateway serving a bench's store closed by the bench (the
 * start and serve benches): the PGlite folder is the gateway's data folder; on PostgreSQL the
 * gateway gets an empty one of its own (`prefix`), which the caller removes, and DATABASE_URL.
 * Neither the caller's compile cache folder nor its DATABASE_URL is passed on.
 */
export async function storeGatewayEnv(bench: BenchStore, prefix: string): Promise<{ dataDir: string; env: NodeJS.ProcessEnv }> {
  const dataDir = bench.kind === 'pglite' ? bench.location : await mkdtemp(path.join(os.tmpdir(), `${prefix}-`));
  const env: NodeJS.ProcessEnv = { ...process.env, KGW_DATA_DIR: dataDir, KGW_HOST: '127.0.0.1' };
  delete env.NODE_COMPILE_CACHE;
  delete env.DATABASE_URL;
  if (bench.databaseUrl !== undefined) env.DATABASE_URL = bench.databaseUrl;
  return { dataDir, env };
}
