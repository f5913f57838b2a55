import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TokenCache } from '../../src/kernel/tokens/token-cache.ts';
import { AUTH_CHANNEL, revokeToken } from '../../src/kernel/tokens/tokens.ts';
import type { Db } from '../../src/store/db.ts';
import { openPostgres } from '../../src/store/postgres.ts';
import { cliTrail } from '../support/audit.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { ACME_ORG, issueToken, seedOrg, startGateway } from '../support/gateway.ts';
import { until } from '../support/kgw-process.ts';
import { postToolCall } from '../support/mcp-client.ts';
import { recordingDb } from '../support/recording-db.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * The gateway checks a bearer token once and answers it from memory after that
 * (src/kernel/tokens/token-cache.ts). What a check answered must be forgotten the moment it
 * changes, whoever changes it: a revocation through the gateway's own code is heard at commit,
 * any other change (another process, an operator's SQL) through the store's triggers, at once on
 * PGlite and as soon as PostgreSQL delivers the NOTIFY on a replica. Calls go over HTTP as an
 * agent's would; the statements the gateway runs are recorded to see whether it read the token.
 */

const TOKEN_READ = 'FROM tokens t JOIN tenants n';
/** How long another process's change may take to arrive through NOTIFY: a bound on correctness, not a speed figure. */
const DELIVERY_DEADLINE_MS = 10_000;

async function whoami(url: string, token: string): Promise<{ status: number; name?: string; tenantName?: string }> {
  const response = await postToolCall(`${url}/atmina/mcp`, token, 'whoami');
  if (response.status !== 200) return { status: response.status };
  const body = (await response.json()) as { result: { structuredContent: { principal: { name: string }; tenant: { name: string } } } };
  return { status: 200, name: body.result.structuredContent.principal.name, tenantName: body.result.structuredContent.tenant.name };
}

/** Polls `probe` until `done` holds (PostgreSQL's NOTIFY reaches another session a moment after commit); fails past the deadline. */
function eventually<T>(probe: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  return until(
    'the change to be heard',
    async () => {
      const value = await probe();
      return done(value) ? value : undefined;
    },
    DELIVERY_DEADLINE_MS,
    20,
  );
}

/** Until the store's signals on the token channel reach this process. */
async function heard(db: Db): Promise<void> {
  assert.ok(
    await eventually(
      () => Promise.resolve(db.hears(AUTH_CHANNEL)),
      (hears) => hears,
    ),
    'the signals are heard',
  );
}

for (const backend of storeBackends()) {
  describe(`token cache on ${backend.name}`, () => {
    let store: TestStore;
    let recorder: ReturnType<typeof recordingDb>;
    let running: RunningGateway;
    /** Another process's store: on PostgreSQL its own pool (its changes reach the gateway only through NOTIFY); PGlite has one owner. */
    let other: Db;

    before(async () => {
      store = await backend.open({ migrated: true });
      await seedOrg(store.db, ACME_ORG);
      recorder = recordingDb(store.db);
      running = await startGateway(recorder.db);
      other = store.databaseUrl === undefined ? store.db : openPostgres(store.databaseUrl, { max: 2 });
    });
    after(async () => {
      if (other !== store.db) await other.close();
      await running.close();
      await store.dispose();
    });

    it('reads a token once, then answers it from memory', async () => {
      const token = await issueToken(store.db, 'acme', 'alice@acme.test', 'context.read');
      const first = await recorder.record(async () => assert.equal((await whoami(running.url, token)).status, 200));
      assert.equal(first.filter((sql) => sql.includes(TOKEN_READ)).length, 1, 'the first call reads the token');
      // The first check subscribes to the store's signals; until they are heard, nothing is kept.
      await heard(store.db);
      assert.equal((await whoami(running.url, token)).status, 200);
      const again = await recorder.record(async () => {
        for (let i = 0; i < 5; i++) assert.equal((await whoami(running.url, token)).status, 200);
      });
      assert.deepEqual(
        again.filter((sql) => sql.includes(TOKEN_READ)),
        [],
        'later calls do not read it again',
      );
    });

    it('refuses a token revoked through the gateway’s own code on the very next call', async () => {
      const token = await issueToken(store.db, 'acme', 'alice@acme.test', 'context.read');
      assert.equal((await whoami(running.url, token)).status, 200);
      const [row] = await store.db.query<{ id: string }>('SELECT id FROM tokens WHERE revoked_at IS NULL ORDER BY created_at DESC LIMIT 1');
      await revokeToken(store.db, row!.id, cliTrail(store.db));
      assert.equal((await whoami(running.url, token)).status, 401);
    });

    it('refuses a token revoked by another process’s plain SQL, which only the store’s trigger tells of', async () => {
      const token = await issueToken(store.db, 'acme', 'alice@acme.test', 'context.read');
      assert.equal((await whoami(running.url, token)).status, 200);
      await other.tx((tx) => tx.query('UPDATE tokens SET revoked_at = now() WHERE revoked_at IS NULL AND label IS NULL'));
      if (backend.name === 'pglite') assert.equal((await whoami(running.url, token)).status, 401, 'PGlite hears its trigger at commit');
      else
        assert.equal(
          (
            await eventually(
              () => whoami(running.url, token),
              (r) => r.status === 401,
            )
          ).status,
          401,
        );
    });

    it('answers with a principal’s and tenant’s new names once they change, whoever changes them', async () => {
      const token = await issueToken(store.db, 'acme', 'alice@acme.test', 'context.read');
      assert.equal((await whoami(running.url, token)).name, 'Alice');
      await other.tx(async (tx) => {
        await tx.query("UPDATE principals SET name = 'Alice Renamed' WHERE email = 'alice@acme.test'");
        await tx.query("UPDATE tenants SET name = 'Acme Renamed' WHERE slug = 'acme'");
      });
      const renamed = await eventually(
        () => whoami(running.url, token),
        (r) => r.name === 'Alice Renamed',
      );
      assert.deepEqual(renamed, { status: 200, name: 'Alice Renamed', tenantName: 'Acme Renamed' });
      await other.tx(async (tx) => {
        await tx.query("UPDATE principals SET name = 'Alice' WHERE email = 'alice@acme.test'");
        await tx.query("UPDATE tenants SET name = 'Acme Inc.' WHERE slug = 'acme'");
      });
      assert.equal(
        (
          await eventually(
            () => whoami(running.url, token),
            (r) => r.name === 'Alice',
          )
        ).name,
        'Alice',
      );
    });

    it('refuses a token past its expiry although its check is kept', async () => {
      const token = await issueToken(store.db, 'acme', 'alice@acme.test', 'context.read', 1500);
      assert.equal((await whoami(running.url, token)).status, 200);
      await new Promise((resolve) => setTimeout(resolve, 1600));
      assert.equal((await whoami(running.url, token)).status, 401);
    });

    if (backend.name === 'postgres') {
      it('trusts nothing it kept while its LISTEN connection is lost, and again once it is back', async () => {
        const token = await issueToken(store.db, 'acme', 'alice@acme.test', 'context.read');
        assert.equal((await whoami(running.url, token)).status, 200);
        assert.equal(store.db.hears(AUTH_CHANNEL), true);
        await other.tx((tx) =>
          tx.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE '% listen'"),
        );
        await eventually(
          () => Promise.resolve(store.db.hears(AUTH_CHANNEL)),
          (hears) => !hears,
        );
        assert.equal(store.db.hears(AUTH_CHANNEL), false, 'the lost connection is noticed');
        // Revoked while no NOTIFY can arrive: the gateway must read the token, not trust its memory.
        await other.tx((tx) => tx.query('UPDATE tokens SET revoked_at = now() WHERE revoked_at IS NULL AND label IS NULL'));
        assert.equal((await whoami(running.url, token)).status, 401);
        const fresh = await issueToken(store.db, 'acme', 'alice@acme.test', 'context.read');
        await eventually(
          () => Promise.resolve(store.db.hears(AUTH_CHANNEL)),
          (hears) => hears,
        );
        assert.equal(store.db.hears(AUTH_CHANNEL), true, 'the connection is opened again');
        assert.equal((await whoami(running.url, fresh)).status, 200);
        const cached = await recorder.record(async () => assert.equal((await whoami(running.url, fresh)).status, 200));
        assert.deepEqual(
          cached.filter((sql) => sql.includes(TOKEN_READ)),
          [],
          'answered from memory again',
        );
      });
    }

    it('keeps no check read while a change was signalled, and at most its bound of tokens', async () => {
      // The store, with the token's read held back until released: a change signalled meanwhile.
      let hold: Promise<void> | undefined;
      let reads = 0;
      const held: Db = {
        ...store.db,
        async query(sql, params, options) {
          const rows = await store.db.query(sql, params, options);
          if (sql.replace(/\s+/g, ' ').includes(TOKEN_READ)) reads += 1;
          if (hold !== undefined) await hold;
          return rows as never;
        },
      };
      const cache = new TokenCache(held, { entries: 2 });
      try {
        const tokens = await Promise.all([1, 2, 3].map(() => issueToken(store.db, 'acme', 'alice@acme.test', 'context.read')));
        await cache.authenticate(tokens[0]!);
        await heard(store.db);
        let release = (): void => undefined;
        hold = new Promise((resolve) => (release = resolve));
        const racing = cache.authenticate(tokens[1]!);
        await store.db.tx((tx) => tx.signal(AUTH_CHANNEL));
        release();
        hold = undefined;
        assert.ok((await racing) !== undefined);
        reads = 0;
        await cache.authenticate(tokens[1]!);
        assert.equal(reads, 1, 'what was read while a change was signalled was not kept');
        for (const token of tokens) assert.ok((await cache.authenticate(token)) !== undefined);
        assert.equal(cache.size, 2, 'the bound holds');
        reads = 0;
        await cache.authenticate(tokens[2]!);
        assert.equal(reads, 0, 'the newest is kept');
        await cache.authenticate(tokens[0]!);
        assert.equal(reads, 1, 'the one used longest ago went');
        assert.equal(await cache.authenticate('kgw_not-a-token'), undefined);
        assert.equal(await cache.authenticate('x'.repeat(10_000)), undefined);
      } finally {
        cache.close();
      }
    });
  });
}
