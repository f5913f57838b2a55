import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CleanUp } from '../../bench/clean-up.ts';

/* The benches' clean-up (bench/clean-up.ts): last first, once only, on to the end past a failure, and on a signal. */

describe("the benches' clean-up", () => {
  it('undoes every step last first, once, however often it is asked', async () => {
    const done: string[] = [];
    const undo = new CleanUp();
    for (const name of ['store', 'gateway', 'client']) undo.push(() => Promise.resolve(done.push(name)));
    await Promise.all([undo.all(), undo.all()]);
    await undo.all();
    assert.deepEqual(done, ['client', 'gateway', 'store']);
    assert.equal(undo.size, 0);
  });

  it('goes on past a step that fails, and reports it', async (t) => {
    const reported = t.mock.method(console, 'error', () => undefined);
    const done: string[] = [];
    const undo = new CleanUp();
    undo.push(() => Promise.resolve(done.push('first')));
    undo.push(() => Promise.reject(new Error('the database is gone')));
    undo.push(() => Promise.resolve(done.push('last')));
    await undo.all();
    assert.deepEqual(done, ['last', 'first']);
    assert.equal(reported.mock.callCount(), 1);
    assert.match(String(reported.mock.calls[0]?.arguments[1]), /the database is gone/);
  });

  it("undoes one run's steps back to a mark, leaving the earlier ones", async () => {
    const done: string[] = [];
    const undo = new CleanUp();
    undo.push(() => Promise.resolve(done.push('shared')));
    const mark = undo.size;
    undo.push(() => Promise.resolve(done.push('run 1 database')));
    undo.push(() => Promise.resolve(done.push('run 1 replicas')));
    await undo.undoTo(mark);
    assert.deepEqual(done, ['run 1 replicas', 'run 1 database']);
    await undo.all();
    assert.deepEqual(done, ['run 1 replicas', 'run 1 database', 'shared']);
  });

  it('undoes every step and exits with 130 when SIGTERM stops the run', { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'kgw-clean-up-test-'));
    try {
      const marker = path.join(dir, 'removed');
      const script = `
        import { writeFile } from 'node:fs/promises';
        import { CleanUp } from ${JSON.stringify(new URL('../../bench/clean-up.ts', import.meta.url).href)};
        const undo = new CleanUp().onSignals('removing the test store');
        undo.push(() => writeFile(${JSON.stringify(marker)}, 'yes'));
        console.log('ready');
        setInterval(() => undefined, 1000);`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      assert.equal(await exited, 130);
      assert.equal(await readFile(marker, 'utf8'), 'yes');
      assert.match(stderr, /SIGTERM: removing the test store/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
