import { openStore } from '../app.ts';
import type { OpCallArgs, OpName, OpResult, OpRunner } from '../admin/ops.ts';
import { runOp } from '../admin/ops.ts';
import type { Config } from '../config.ts';
import { existsSync } from 'node:fs';
import { KgwError, isKgwError } from '../kernel/errors.ts';
import { openServices } from '../open-services.ts';
import type { ErrorCode } from '../kernel/errors.ts';
import { tryLockFolder } from '../store/folder-lock.ts';
import type { FolderOwner } from '../store/folder-lock.ts';
import { migrate } from '../store/migrate.ts';
import { makePrivateDir } from '../store/private-dir.ts';
import { iso } from '../kernel/instants.ts';
import { printNotice } from './terminal.ts';

export type { OpRunner } from '../admin/ops.ts';

const WAIT_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function remoteRunner(owner: FolderOwner & { adminUrl: string; adminSecret: string }): OpRunner {
  return async <N extends OpName>(op: N, ...[args]: OpCallArgs<N>) => {
    let response: Response;
    try {
      response = await fetch(`${owner.adminUrl}/admin/rpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.adminSecret}` },
        body: JSON.stringify({ op, args: args ?? {} }),
        signal: AbortSignal.timeout(120_000),
      });
    } catch (error) {
      throw new Error(`the gateway (pid ${owner.pid}) holding the data folder did not answer at ${owner.adminUrl}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    // The result is the JSON of what the operation returned, and the same type: every result is
    // JSON (JsonSafe in src/admin/ops.ts), so that what `run` returns is what arrives here.
    const body = (await response.json()) as { result: OpResult<N>; error?: { code: ErrorCode; message: string; details?: Record<string, unknown> } };
    if (body.error) throw new KgwError(body.error.code, body.error.message, { details: body.error.details });
    return body.result;
  };
}

/**
 * Whether a gateway answers on the configured address: then a data folder that does not exist
 * yet is not the one it serves, and making it would only give a second, empty store whose
 * tokens that gateway does not know.
 */
async function gatewayAnswers(config: Config): Promise<boolean> {
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  try {
    const response = await fetch(`http://${host.includes(':') ? `[${host}]` : host}:${config.port}/healthz`, { signal: AbortSignal.timeout(1000) });
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Gives `work` a runner for operations. With DATABASE_URL the store is opened directly (any
 * number of processes may share PostgreSQL). An embedded data folder admits one process: when
 * a gateway holds it, operations go through that gateway's admin endpoint; otherwise this
 * process takes the folder's lock, opens it and migrates it first. A data folder is not made
 * while a gateway answers on the configured port: that gateway serves another one.
 */
export async function withOps<T>(config: Config, work: (run: OpRunner, where: string) => Promise<T>, options: { migrate?: boolean } = {}): Promise<T> {
  try {
    return await opsOn(config, work, options);
  } catch (error) {
    // "No tenant acme" says little without where it was looked for: a second data folder made
    // by mistake, or another database, is the usual reason.
    if (isKgwError(error, 'not_found')) throw new KgwError('not_found', `${error.message} (looked in ${storeName(config)})`, { details: error.details });
    throw error;
  }
}

/** The store a command uses, in words: the data folder, or the database and its host (never its password). */
export function storeName(config: Config): string {
  if (config.databaseUrl === undefined) return `the data folder ${config.dataDir}`;
  const url = new URL(config.databaseUrl);
  return `the database ${decodeURIComponent(url.pathname.replace(/^\//, '')) || 'postgres'} on ${url.host}`;
}

async function opsOn<T>(config: Config, work: (run: OpRunner, where: string) => Promise<T>, options: { migrate?: boolean }): Promise<T> {
  const autoMigrate = options.migrate ?? true;
  if (config.databaseUrl === undefined) {
    if (!existsSync(config.dataDir) && (await gatewayAnswers(config))) {
      throw new Error(
        `there is no data folder at ${config.dataDir}, but a gateway answers on port ${config.port}: it keeps its data elsewhere, and a new empty folder here would not be what it serves. Run kgw with that gateway's KGW_DATA_DIR (or DATABASE_URL); nothing was created`,
      );
    }
    // A new data folder the user did not name is said aloud: its place was chosen for them.
    if (!existsSync(config.dataDir) && process.env.KGW_DATA_DIR === undefined)
      printNotice(
        `kgw: making a new data folder at ${config.dataDir} (KGW_DATA_DIR unset and no .kgw found above ${process.cwd()}; set KGW_DATA_DIR to use another)`,
      );
    makePrivateDir(config.dataDir);
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const attempt = tryLockFolder(config.dataDir, { pid: process.pid, role: 'cli', startedAt: iso(new Date()) });
      if ('lock' in attempt) {
        try {
          return await runLocally(config, work, 'embedded store', autoMigrate);
        } finally {
          attempt.lock.release();
        }
      }
      const owner = attempt.heldBy;
      if (owner.role === 'gateway' && owner.adminUrl !== undefined && owner.adminSecret !== undefined) {
        return work(remoteRunner({ ...owner, adminUrl: owner.adminUrl, adminSecret: owner.adminSecret }), `gateway pid ${owner.pid}`);
      }
      if (Date.now() > deadline) throw new Error(`data folder ${config.dataDir} is busy (held by ${owner.role} pid ${owner.pid})`);
      await sleep(100);
    }
  }
  return runLocally(config, work, 'PostgreSQL', autoMigrate);
}

async function runLocally<T>(config: Config, work: (run: OpRunner, where: string) => Promise<T>, where: string, autoMigrate: boolean): Promise<T> {
  const db = await openStore(config);
  try {
    if (autoMigrate) await migrate(db);
    const opened = await openServices(config, db);
    try {
      return await work((op, ...[args]) => runOp(opened.services, op, args ?? {}), where);
    } finally {
      await opened.close();
    }
  } finally {
    await db.close();
  }
}
