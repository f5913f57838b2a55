import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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

/** `kgw serve` on a free port with `env`; resolves once /healthz answers (at most a minute). */
export async function serve(env: NodeJS.ProcessEnv, name = 'kgw serve'): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [KGW, 'serve'], { cwd: ROOT, env: { ...env, KGW_PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] });
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
