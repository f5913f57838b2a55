import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { isZombie, tryLockFolder } from '../../src/store/folder-lock.ts';

// A gateway killed with -9 whose parent has not collected it yet is a zombie: its folder is free.

/**
 * A zombie: `sleep 1` in the background of a shell that then becomes `sleep 120`, which never
 * collects it. The child outlives the shell's own code by a second: a child that ended before
 * the `exec` could be collected by the shell itself (CI once saw no zombie within a minute with
 * `sleep 0`). On a loaded machine it may take seconds to start and exit, so this waits up to a
 * minute for the zombie to appear (and the parent outlives that wait, or init would reap it).
 */
async function zombie(): Promise<{ pid: number; stop(): void }> {
  const shell = spawn('sh', ['-c', 'sleep 1 & echo $!; exec sleep 120'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const pid = await new Promise<number>((resolve) => shell.stdout.once('data', (data: Buffer) => resolve(Number(String(data).trim()))));
  for (let i = 0; i < 3000 && !isZombie(pid); i += 1) await new Promise((resolve) => setTimeout(resolve, 20));
  return { pid, stop: () => shell.kill('SIGKILL') };
}

describe('the data folder lock', { skip: process.platform !== 'linux' && 'zombies are read from /proc' }, () => {
  it('tells a zombie from a live process', async () => {
    const child = await zombie();
    try {
      assert.equal(isZombie(child.pid), true);
      assert.equal(isZombie(process.pid), false);
    } finally {
      child.stop();
    }
  });

  it('takes over a lock whose owner is a zombie', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'kgw-lock-'));
    const child = await zombie();
    try {
      await writeFile(path.join(dir, 'kgw.lock'), JSON.stringify({ pid: child.pid, role: 'gateway', startedAt: new Date().toISOString() }), { mode: 0o600 });
      const attempt = tryLockFolder(dir, { pid: process.pid, role: 'cli', startedAt: new Date().toISOString() });
      assert.ok('lock' in attempt, JSON.stringify(attempt));
      attempt.lock.release();
    } finally {
      child.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
