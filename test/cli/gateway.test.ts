import assert from 'node:assert/strict';
import { loadMigrations } from '../../src/store/migrate.ts';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rm, unlink, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import type { TokenInfo } from '../../src/kernel/tokens/tokens.ts';
import type { FolderOwner } from '../../src/store/folder-lock.ts';
import { tryLockFolder } from '../../src/store/folder-lock.ts';
import type { CliStore, Served } from './support.ts';
import {
  INITIALIZE,
  ORG,
  TOKEN_LINE,
  cliStoreBackends,
  deadPid,
  freePort,
  initializeStatus,
  kgw,
  lines,
  lookedIn,
  postgresBackend,
  serve,
  writeIn,
} from './support.ts';

const embedded = cliStoreBackends().find((b) => b.name === 'embedded');
assert.ok(embedded);

const lockOf = (store: CliStore) => path.join(store.dataDir, 'kgw.lock');

function readLock(store: CliStore): FolderOwner {
  return JSON.parse(readFileSync(lockOf(store), 'utf8')) as FolderOwner;
}

/** The gateway rewrites its lock with its admin URL just after it starts listening. */
async function servingLock(store: CliStore): Promise<FolderOwner> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const owner = readLock(store);
    if (owner.adminUrl !== undefined || Date.now() > deadline) return owner;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Creates a labelled token for release-bot and returns it with its id. */
async function issue(store: CliStore, label: string): Promise<{ token: string; id: string }> {
  const created = await kgw(['token', 'create', '--tenant', 'acme', '--principal', 'release-bot', '--scopes', 'context.read', '--label', label], store.env);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stdout, TOKEN_LINE);
  const listed = await kgw(['token', 'list', '--json'], store.env);
  assert.equal(listed.code, 0, listed.stderr);
  const info = (JSON.parse(listed.stdout) as TokenInfo[]).find((t) => t.label === label);
  assert.ok(info, `token ${label} is listed`);
  return { token: created.stdout.trim(), id: info.id };
}

describe('kgw commands while kgw serve holds an embedded data folder', () => {
  let store: CliStore;
  let gateway: Served;

  before(async () => {
    store = await embedded.open();
    gateway = await serve(store.env);
  });
  after(async () => {
    await gateway.stop();
    await store.dispose();
  });

  it('the gateway holds the folder lock, with its admin endpoint, readable by its owner only', async () => {
    const owner = await servingLock(store);
    assert.equal(owner.pid, gateway.pid);
    assert.equal(owner.role, 'gateway');
    assert.equal(owner.adminUrl, gateway.url);
    assert.match(owner.adminSecret ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(statSync(lockOf(store)).mode & 0o777, 0o600);
  });

  it('makes no second data folder while the gateway answers on the configured port, and says why', async () => {
    const elsewhere = path.join(store.workDir, 'not-the-gateways-folder');
    const run = await kgw(['token', 'create', '--tenant', 'acme', '--principal', 'release-bot', '--scopes', 'context.read'], {
      ...store.env,
      KGW_DATA_DIR: elsewhere,
      KGW_PORT: new URL(gateway.url).port,
    });
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      new RegExp(`^kgw: there is no data folder at ${elsewhere.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, but a gateway answers on port \\d+`),
    );
    assert.ok(!existsSync(elsewhere), 'nothing was created');
  });

  it('doctor and migrate go through the gateway', async () => {
    const doctor = await kgw(['doctor'], store.env);
    assert.equal(doctor.code, 0, doctor.stderr);
    const output = lines(doctor.stdout);
    assert.equal(output[1], `checked via    gateway pid ${gateway.pid} (the gateway's own configuration)`);
    // The gateway's URL and port, not the defaults this command would have.
    assert.equal(output[0], `configuration  ok (data folder ${store.dataDir}, public URL ${gateway.url}, listening on ${new URL(gateway.url).host})`);
    const blank = output.indexOf('', 4);
    assert.deepEqual(
      output.slice(4, blank).map((r) => r.split(/ {2,}/).slice(0, 3)),
      [
        ['store', 'pglite', 'ok'],
        ['blob', 'disk', 'ok'],
        ['search', 'builtin', 'ok'],
        ['graph', 'builtin', 'ok'],
      ],
    );
    // The second table: the graph projection, with nothing waiting.
    assert.match(output[blank + 1] ?? '', /^PROJECTION +BACKLOG/);
    assert.deepEqual(output[blank + 2]?.split(/ {2,}/).slice(0, 2), ['graph', '0']);
    const migrate = await kgw(['migrate'], store.env);
    assert.equal(migrate.code, 0, migrate.stderr);
    assert.equal(migrate.stdout, `database is up to date (migration ${(await loadMigrations()).length})\n`);
  });

  it('apply and token create go through the gateway; the token works at once and stops when revoked', async () => {
    const applied = await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env);
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(lines(applied.stdout).at(-1), 'applied 10 changes to tenant acme');
    const dry = await kgw(['apply', '--dry-run', path.join(store.workDir, 'org.yaml')], store.env);
    assert.equal(dry.stdout, 'tenant acme is up to date\n');

    const { token, id } = await issue(store, 'served');
    const response = await fetch(`${gateway.url}/atmina/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
      body: JSON.stringify(INITIALIZE),
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { id: number; result: { serverInfo: { name: string } } };
    assert.equal(body.id, 1);
    assert.equal(body.result.serverInfo.name, 'atmina');

    const revoked = await kgw(['token', 'revoke', id], store.env);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(await initializeStatus(`${gateway.url}/atmina/mcp`, token), 401);
    assert.equal(await initializeStatus(`${gateway.url}/mcp`, token), 401);
  });

  it('errors from the gateway come back as one line and exit 1', async () => {
    const run = await kgw(['token', 'create', '--tenant', 'acme', '--principal', 'nobody', '--scopes', 'context.read'], store.env);
    assert.equal(run.code, 1);
    assert.deepEqual(lines(run.stderr), [`kgw: no person or agent "nobody" in tenant "acme"${lookedIn(store)}`]);
    const bad = await kgw(['apply', await writeIn(store.workDir, 'org.yaml', 'tenant: acme\nname: Acme Inc.\nlangauge: en\n')], store.env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^kgw: org\.yaml:3: unknown key "langauge"/);
  });

  it('a second kgw serve on the same folder exits 1', async () => {
    const second = await kgw(['serve'], { ...store.env, KGW_PORT: String(await freePort()) });
    assert.equal(second.code, 1);
    assert.deepEqual(lines(second.stderr), [`kgw: data folder ${store.dataDir} is already served by a gateway (pid ${gateway.pid} at ${gateway.url})`]);
    assert.equal(readLock(store).pid, gateway.pid, 'the lock is untouched');
  });

  it('keeps serving throughout', async () => {
    assert.equal(gateway.exited(), false);
    assert.equal((await fetch(`${gateway.url}/healthz`)).status, 200);
    assert.equal((await fetch(`${gateway.url}/readyz`)).status, 200);
  });

  it('SIGTERM stops it cleanly and frees the folder; what the CLI did through it was stored', async () => {
    const stopped = await gateway.stop();
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.equal(stopped.signal, null);
    assert.equal(existsSync(lockOf(store)), false, 'the lock file is gone');
    const listed = await kgw(['token', 'list', '--all', '--json'], store.env);
    assert.equal(listed.code, 0, listed.stderr);
    const tokens = JSON.parse(listed.stdout) as TokenInfo[];
    assert.deepEqual(
      tokens.map((t) => ({ label: t.label, revoked: t.revokedAt !== null })),
      [{ label: 'served', revoked: true }],
    );
    const doctor = await kgw(['doctor'], store.env);
    assert.equal(lines(doctor.stdout)[1], 'checked via    embedded store');
    assert.equal(existsSync(lockOf(store)), false);
  });
});

describe('kgw serve on SIGTERM with a request in flight', () => {
  let store: CliStore;
  before(async () => {
    store = await embedded.open();
  });
  after(() => store.dispose());

  it('answers the request, then exits cleanly', async () => {
    const gateway = await serve(store.env);
    try {
      const applied = await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env);
      assert.equal(applied.code, 0, applied.stderr);
      const { token } = await issue(store, 'in-flight');
      const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }));
      // Expect: 100-continue: the gateway has begun the request when it says to go on.
      const request = http.request(`${gateway.url}/mcp`, {
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json',
          'content-length': String(body.length),
          expect: '100-continue',
        },
      });
      const answer = new Promise<{ status: number; connection: string | undefined; body: string }>((resolve, reject) => {
        request.once('error', reject);
        request.once('response', (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.once('end', () => resolve({ status: response.statusCode ?? 0, connection: response.headers.connection, body: text }));
        });
      });
      request.flushHeaders();
      await once(request, 'continue');
      const stopped = gateway.stop();
      // Closing has begun once new connections are refused.
      for (;;) {
        const refused = await fetch(`${gateway.url}/healthz`).then(
          (response) => response.arrayBuffer().then(() => false),
          () => true,
        );
        if (refused) break;
      }
      request.end(body);
      const answered = await answer;
      assert.partialDeepStrictEqual(
        { status: answered.status, connection: answered.connection, body: JSON.parse(answered.body) as unknown },
        { status: 200, connection: 'close', body: { jsonrpc: '2.0', id: 1, result: { structuredContent: { principal: { name: 'release-bot' } } } } },
      );
      const exit = await stopped;
      assert.equal(exit.code, 0, exit.stderr);
      assert.doesNotMatch(exit.stdout + exit.stderr, /"level":50/);
    } finally {
      await gateway.kill9();
    }
  });
});

describe('stale and busy lock files on an embedded data folder', () => {
  let store: CliStore;
  before(async () => {
    store = await embedded.open();
    await mkdir(store.dataDir, { recursive: true });
  });
  after(() => store.dispose());

  const writeLock = (owner: FolderOwner) => writeFile(lockOf(store), JSON.stringify(owner));

  it('a command takes over the lock of a dead gateway', async () => {
    await writeLock({ pid: await deadPid(), role: 'gateway', startedAt: new Date().toISOString(), adminUrl: 'http://127.0.0.1:9', adminSecret: 'gone' });
    const run = await kgw(['doctor'], store.env);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(lines(run.stdout)[1], 'checked via    embedded store');
    assert.equal(existsSync(lockOf(store)), false);
  });

  it('kgw serve takes over the lock of a dead command', async () => {
    await writeLock({ pid: await deadPid(), role: 'cli', startedAt: new Date().toISOString() });
    const gateway = await serve(store.env);
    try {
      assert.equal((await servingLock(store)).pid, gateway.pid);
    } finally {
      assert.equal((await gateway.stop()).code, 0);
    }
    assert.equal(existsSync(lockOf(store)), false);
  });

  it('a command waits while a live command holds the folder, then runs', async () => {
    // This test process stands in for another kgw command: its pid is alive.
    await writeLock({ pid: process.pid, role: 'cli', startedAt: new Date().toISOString() });
    let finished = false;
    const running = kgw(['migrate'], store.env).finally(() => (finished = true));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(finished, false, 'still waiting for the folder');
    assert.equal(readLock(store).pid, process.pid, 'a live lock is left alone');
    await unlink(lockOf(store));
    const run = await running;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `database is up to date (migration ${(await loadMigrations()).length})\n`);
  });

  // src/store/folder-lock.ts tryLockFolder: a lock naming the caller's own pid counts as held by
  // a live process. A containerised gateway killed uncleanly restarts with the same pid (1 without
  // an init, or the same small number with one), finds its predecessor's lock "alive", and
  // \`kgw serve\` exits with "already served by a gateway (pid 1)" on every restart.
  it('a lock left under this very pid is stale', async () => {
    await writeLock({ pid: process.pid, role: 'gateway', startedAt: '2020-01-01T00:00:00.000Z', adminUrl: 'http://127.0.0.1:9', adminSecret: 'gone' });
    try {
      const attempt = tryLockFolder(store.dataDir, { pid: process.pid, role: 'gateway', startedAt: new Date().toISOString() });
      assert.ok('lock' in attempt, `held by ${JSON.stringify('heldBy' in attempt ? attempt.heldBy : undefined)}`);
      attempt.lock.release();
    } finally {
      await rm(lockOf(store), { force: true });
    }
  });
});

const postgres = postgresBackend();
describe('kgw commands while kgw serve runs on PostgreSQL', { skip: postgres === undefined ? 'KGW_TEST_DATABASE_URL is not set' : false }, () => {
  let store: CliStore;
  let gateway: Served;

  before(async () => {
    store = await postgres!.open();
    gateway = await serve(store.env);
  });
  after(async () => {
    await gateway.stop();
    await store.dispose();
  });

  it('takes no folder lock; the CLI opens PostgreSQL itself and its tokens work on the gateway at once', async () => {
    assert.equal(existsSync(path.join(store.dataDir, 'kgw.lock')), false);
    const applied = await kgw(['apply', await writeIn(store.workDir, 'org.yaml', ORG)], store.env);
    assert.equal(applied.code, 0, applied.stderr);
    const doctor = await kgw(['doctor'], store.env);
    assert.equal(lines(doctor.stdout)[1], 'checked via    PostgreSQL');
    const { token, id } = await issue(store, 'pg');
    assert.equal(await initializeStatus(`${gateway.url}/atmina/mcp`, token), 200);
    assert.equal((await kgw(['token', 'revoke', id], store.env)).code, 0);
    assert.equal(await initializeStatus(`${gateway.url}/atmina/mcp`, token), 401);
  });

  it('a second kgw serve on the same database serves too, and both stop cleanly', async () => {
    const second = await serve(store.env);
    assert.equal((await fetch(`${second.url}/readyz`)).status, 200);
    assert.equal((await second.stop()).code, 0);
    assert.equal(gateway.exited(), false);
  });
});

// src/cli/serve.ts: when listen() fails, serveCommand releases the folder lock and rethrows but
// never closes the gateway it created, so the open store keeps the process alive (PostgreSQL:
// until the pool's 30 s idle timeout; PGlite: about 10 s) after the lock is already gone.
for (const backend of cliStoreBackends()) {
  describe(`kgw serve on a port already in use (${backend.name})`, () => {
    let store: CliStore;
    let blocker: net.Server;
    let port: number;
    before(async () => {
      store = await backend.open();
      blocker = net.createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      port = (blocker.address() as net.AddressInfo).port;
    });
    after(async () => {
      await new Promise((resolve) => blocker.close(resolve));
      await store.dispose();
    });

    it('exits 1 with one line instead of lingering', async () => {
      // Opening a fresh store may take long on a loaded machine, so what is bounded is the time
      // from the error line to the exit: closing the gateway takes well under a second, while a
      // process that kept its store open lingers for PGlite's ~10 s or PostgreSQL's 30 s idle pool.
      const run = await kgw(['serve'], { ...store.env, KGW_PORT: String(port) }, { timeoutMs: 180_000 });
      assert.equal(run.signal, null, `still running after 180 s; stderr: ${run.stderr}`);
      assert.equal(run.code, 1);
      assert.deepEqual(lines(run.stderr), [
        `kgw: port ${port} on 127.0.0.1 is already in use (another gateway?): stop what listens there, or set KGW_PORT to a free port`,
      ]);
      const lingered = run.exitMs - (run.firstStderrMs ?? 0);
      assert.ok(lingered < 8_000, `exited ${Math.round(lingered)} ms after its error line`);
      assert.equal(existsSync(lockOf(store)), false);
    });
  });
}
