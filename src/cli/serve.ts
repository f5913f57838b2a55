import { randomBytes } from 'node:crypto';
import { createGateway } from '../app.ts';
import { loadConfig } from '../config.ts';
import { applyMemoryMode } from '../memory-mode.ts';
import type { FolderLock } from '../store/folder-lock.ts';
import { tryLockFolder } from '../store/folder-lock.ts';
import { makePrivateDir } from '../store/private-dir.ts';
import { print } from './terminal.ts';
import { parseCommand } from './usage.ts';
import { iso } from '../kernel/instants.ts';

export const serveHelp = `Usage: kgw serve

Runs the gateway: MCP on POST /mcp, /alignbase/mcp, /atmina/mcp and /brain/mcp, with
/healthz and /readyz. Configured by environment variables (see the README); with none set it
runs on embedded defaults in KGW_DATA_DIR (default ./.kgw). Stops cleanly on SIGINT/SIGTERM.`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A system error's code, also when Node wraps one per address tried in an AggregateError. */
function errorCode(error: unknown): string | undefined {
  const found = error as { code?: unknown; errors?: unknown[] } | undefined;
  if (typeof found?.code === 'string') return found.code;
  return Array.isArray(found?.errors) ? errorCode(found.errors[0]) : undefined;
}

/** Where DATABASE_URL points, without its password. */
function databaseTarget(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port === '' ? '5432' : parsed.port}${parsed.pathname}`;
}

/**
 * Start-up failures worded with the setting that fixes them: a busy port names KGW_PORT, an
 * unreachable database DATABASE_URL (never its password). Others keep their own message.
 */
export function startupProblem(error: unknown, config: { readonly host: string; readonly port: number; readonly databaseUrl: string | undefined }): Error {
  const code = errorCode(error);
  const syscall = (error as { syscall?: unknown } | undefined)?.syscall;
  if (syscall === 'listen' && code === 'EADDRINUSE')
    return new Error(`port ${config.port} on ${config.host} is already in use (another gateway?): stop what listens there, or set KGW_PORT to a free port`);
  if (syscall === 'listen' && code === 'EACCES')
    return new Error(`not allowed to listen on port ${config.port} (ports below 1024 need privileges): set KGW_PORT to 1024 or above`);
  if (syscall === 'listen' && code === 'EADDRNOTAVAIL')
    return new Error(`this machine has no address ${config.host}: set KGW_HOST to one of its addresses, or 0.0.0.0`);
  if (config.databaseUrl !== undefined) {
    const target = databaseTarget(config.databaseUrl);
    if (code === 'ECONNREFUSED') return new Error(`PostgreSQL at ${target} (DATABASE_URL) refused the connection: is it running, on that port?`);
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new Error(`PostgreSQL host in DATABASE_URL (${target}) was not found: check the host name`);
    if (code === 'ETIMEDOUT') return new Error(`PostgreSQL at ${target} (DATABASE_URL) did not answer in time: check the host, port and firewall`);
    if (code === '28P01' || code === '28000') return new Error(`PostgreSQL at ${target} refused the user or password in DATABASE_URL`);
    if (code === '3D000') return new Error(`PostgreSQL at ${target} has no such database: create it, or fix the database name in DATABASE_URL`);
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** The embedded store admits one process: take the data folder, waiting briefly for a CLI command. */
async function lockDataFolder(dataDir: string, startedAt: string): Promise<FolderLock> {
  makePrivateDir(dataDir);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const attempt = tryLockFolder(dataDir, { pid: process.pid, role: 'gateway', startedAt });
    if ('lock' in attempt) return attempt.lock;
    const owner = attempt.heldBy;
    if (owner.role === 'gateway')
      throw new Error(`data folder ${dataDir} is already served by a gateway (pid ${owner.pid}${owner.adminUrl ? ` at ${owner.adminUrl}` : ''})`);
    if (Date.now() > deadline) throw new Error(`data folder ${dataDir} is busy (kgw command pid ${owner.pid})`);
    await sleep(100);
  }
}

export async function serveCommand(argv: readonly string[]): Promise<void> {
  const { help } = parseCommand(argv, {}, { min: 0, max: 0 });
  if (help) return void print(serveHelp);
  const config = loadConfig();
  const embedded = config.databaseUrl === undefined;
  // Before the folder is locked and the store opens: with KGW_MEMORY=lean the process may restart itself here, with Node's flags.
  const memory = applyMemoryMode(config.memory, embedded);
  const startedAt = iso(new Date());
  const lock = embedded ? await lockDataFolder(config.dataDir, startedAt) : undefined;
  try {
    const adminSecret = embedded ? randomBytes(32).toString('base64url') : undefined;
    const gateway = await createGateway(config, adminSecret === undefined ? {} : { adminSecret });
    let address: string;
    try {
      address = await gateway.app.listen({ host: config.host, port: config.port });
    } catch (error) {
      await gateway.close();
      throw error;
    }
    const port = new URL(address).port;
    const adminHost = ['0.0.0.0', '::', '127.0.0.1', 'localhost', '::1'].includes(config.host) ? '127.0.0.1' : config.host;
    lock?.update({
      pid: process.pid,
      role: 'gateway',
      startedAt,
      adminUrl: `http://${adminHost.includes(':') ? `[${adminHost}]` : adminHost}:${port}`,
      adminSecret,
    });
    gateway.app.log.info(
      {
        mcp: `${config.publicUrl}/mcp`,
        store: gateway.services.db.kind,
        dataDir: config.dataDir,
        memory: config.memory,
        v8Flags: memory.flags,
        v8FlagsSet: memory.where,
      },
      `Knowledge Gateway ${gateway.services.build.version} serving MCP at ${config.publicUrl}/mcp`,
    );
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      gateway.app.log.info({ signal }, 'shutting down');
      gateway
        .close()
        .catch((error: unknown) => gateway.app.log.error({ err: error }, 'shutdown failed'))
        .finally(() => {
          lock?.release();
          process.exit(0);
        });
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  } catch (error) {
    lock?.release();
    throw startupProblem(error, config);
  }
}
