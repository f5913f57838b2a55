import { closeSync, openSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { makePrivateDir } from './private-dir.ts';

/** Who holds an embedded data folder, as written in its lock file. */
export interface FolderOwner {
  readonly pid: number;
  readonly role: 'gateway' | 'cli';
  readonly startedAt: string;
  /** A serving gateway: where its admin endpoint listens, and the secret it accepts. */
  readonly adminUrl?: string;
  readonly adminSecret?: string;
}

export interface FolderLock {
  readonly path: string;
  /** Rewrites the lock file atomically (e.g. once the gateway listens). */
  update(owner: FolderOwner): void;
  release(): void;
}

const LOCK_NAME = 'kgw.lock';

/**
 * A killed process stays in the process table as a zombie until its parent collects it, and
 * signal 0 still reaches a zombie: where the parent (a shell, a container's first process) is
 * slow to collect, a gateway killed with -9 would keep its folder locked. Linux says so in
 * /proc/PID/stat (state Z); elsewhere the signal alone decides.
 */
export function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "PID (command) STATE …": the command may hold spaces and parentheses, so read after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

function readOwner(file: string): { text: string; owner: FolderOwner | undefined } | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return { text, owner: JSON.parse(text) as FolderOwner };
  } catch {
    return { text, owner: undefined };
  }
}

/**
 * PGlite admits one process per data folder, so every process that opens one first takes
 * this lock file (created exclusively, mode 0600: it holds the admin secret). A lock left by a
 * dead process is removed. Returns the lock, or the live owner that holds it.
 */
export function tryLockFolder(dataDir: string, owner: FolderOwner): { lock: FolderLock } | { heldBy: FolderOwner } {
  // The lock is the first thing written into the folder: make the folder private before it.
  makePrivateDir(dataDir);
  const file = path.join(dataDir, LOCK_NAME);
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      try {
        writeSync(fd, JSON.stringify(owner));
      } finally {
        closeSync(fd);
      }
      return { lock: makeLock(file, owner.pid) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const current = readOwner(file);
    if (current === undefined) continue;
    if (current.owner === undefined) {
      // Being written right now by its creator; look again shortly.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
      const again = readOwner(file);
      if (again?.text !== current.text) continue;
    } else if (current.owner.pid !== owner.pid && alive(current.owner.pid)) {
      // A lock under our own pid was left by an earlier life of this pid (e.g. pid 1 in a container).
      return { heldBy: current.owner };
    }
    // The holder is gone: remove its lock, but only if nobody replaced it meanwhile.
    if (readOwner(file)?.text === current.text) {
      try {
        unlinkSync(file);
      } catch {
        // Someone else removed it first.
      }
    }
  }
  throw new Error(`could not take the lock on ${file}`);
}

function makeLock(file: string, pid: number): FolderLock {
  return {
    path: file,
    update(owner) {
      const temporary = `${file}.${pid}.tmp`;
      // A mode applies only to a file being created: never reuse one left by an earlier life of this pid.
      rmSync(temporary, { force: true });
      writeFileSync(temporary, JSON.stringify(owner), { mode: 0o600, flag: 'wx' });
      renameSync(temporary, file);
    },
    release() {
      const current = readOwner(file);
      if (current?.owner?.pid === pid) {
        try {
          unlinkSync(file);
        } catch {
          // Already gone.
        }
      }
    },
  };
}
