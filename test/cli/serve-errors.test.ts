import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startupProblem } from '../../src/cli/serve.ts';
import { cliEnv, freePort, kgw, lines, tempDir } from './support.ts';

/*
 * `kgw serve` failing to start says which setting fixes it (README, "The CLI"): an unreachable
 * database names DATABASE_URL, never its password (a busy port naming KGW_PORT is in
 * gateway.test.ts, with the exit's timing).
 */

describe('kgw serve start-up failures', () => {
  let dir: string;
  before(async () => {
    dir = await tempDir();
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('a database that refuses names DATABASE_URL and its host, never its password', async () => {
    const port = await freePort();
    const run = await kgw(['serve'], cliEnv({ KGW_DATA_DIR: path.join(dir, 'pg'), DATABASE_URL: `postgres://kgw:s3cret-pw@127.0.0.1:${port}/kgw` }), {
      timeoutMs: 120_000,
    });
    assert.equal(run.code, 1, run.stderr);
    assert.doesNotMatch(run.stderr, /s3cret-pw/);
    assert.equal(lines(run.stderr).at(-1), `kgw: PostgreSQL at 127.0.0.1:${port}/kgw (DATABASE_URL) refused the connection: is it running, on that port?`);
  });

  it('words the other failures it knows, and keeps any other message', () => {
    const config = { host: '127.0.0.1', port: 80, databaseUrl: 'postgres://u:pw@db.example:6543/app' };
    const system = (code: string, syscall?: string) => Object.assign(new Error(code), { code, ...(syscall === undefined ? {} : { syscall }) });
    assert.match(startupProblem(system('EACCES', 'listen'), config).message, /KGW_PORT to 1024 or above/);
    assert.match(startupProblem(system('EADDRNOTAVAIL', 'listen'), config).message, /KGW_HOST/);
    assert.match(
      startupProblem(system('ENOTFOUND', 'getaddrinfo'), config).message,
      /^PostgreSQL host in DATABASE_URL \(db\.example:6543\/app\) was not found/,
    );
    assert.match(startupProblem(new AggregateError([system('ECONNREFUSED', 'connect')]), config).message, /db\.example:6543\/app \(DATABASE_URL\) refused/);
    assert.match(startupProblem(system('28P01'), config).message, /refused the user or password in DATABASE_URL$/);
    assert.match(startupProblem(system('3D000'), config).message, /no such database/);
    for (const problem of [system('EACCES', 'listen'), system('28P01'), system('ENOTFOUND')])
      assert.doesNotMatch(startupProblem(problem, config).message, /pw/);
    const other = new Error('something else');
    assert.equal(startupProblem(other, config), other);
    assert.equal(startupProblem(system('ECONNREFUSED'), { ...config, databaseUrl: undefined }).message, 'ECONNREFUSED');
  });
});
