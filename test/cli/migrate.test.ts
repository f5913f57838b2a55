import assert from 'node:assert/strict';
import { loadMigrations } from '../../src/store/migrate.ts';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { CliStore } from './support.ts';
import { cliStoreBackends, kgw, postgresBackend } from './support.ts';

const APPLIED = `applied: ${(await loadMigrations()).map((m) => `${String(m.number).padStart(4, '0')}_${m.name}`).join(', ')}\n`;
const UP_TO_DATE = `database is up to date (migration ${(await loadMigrations()).length})\n`;

async function migrationRows(databaseUrl: string): Promise<{ number: number; name: string; count: number }[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ number: number; name: string; count: number }>(
      'SELECT number, name, count(*)::int AS count FROM schema_migrations GROUP BY number, name ORDER BY number',
    );
    return rows;
  } finally {
    await client.end();
  }
}

const embedded = cliStoreBackends().find((b) => b.name === 'embedded');

describe('kgw migrate on embedded', () => {
  let store: CliStore;
  before(async () => {
    store = await embedded!.open({ migrated: false });
  });
  after(() => store.dispose());

  it('two commands at once on a fresh folder: the lock takes them in turn, one migrates', async () => {
    const runs = await Promise.all([kgw(['migrate'], store.env), kgw(['migrate'], store.env)]);
    for (const run of runs) assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(runs.map((r) => r.stdout).sort(), [APPLIED, UP_TO_DATE]);
    const again = await kgw(['migrate'], store.env);
    assert.equal(again.stdout, UP_TO_DATE);
  });
});

const postgres = postgresBackend();
describe('kgw migrate on PostgreSQL', { skip: postgres === undefined ? 'KGW_TEST_DATABASE_URL is not set' : false }, () => {
  // Twice, each on a fresh database, to give the race two chances to show.
  for (const round of [1, 2]) {
    it(`two commands started at once on a fresh database apply each migration once (round ${round})`, async () => {
      const store = await postgres!.open();
      try {
        const runs = await Promise.all([kgw(['migrate'], store.env), kgw(['migrate'], store.env)]);
        for (const run of runs) {
          assert.equal(run.code, 0, run.stderr);
          assert.equal(run.stderr, '');
        }
        assert.equal(runs.filter((r) => r.stdout === APPLIED).length, 1, runs.map((r) => r.stdout).join(''));
        assert.equal(runs.filter((r) => r.stdout === UP_TO_DATE).length, 1, runs.map((r) => r.stdout).join(''));
        assert.deepEqual(
          await migrationRows(store.databaseUrl ?? ''),
          (await loadMigrations()).map((m) => ({ number: m.number, name: m.name, count: 1 })),
        );
        const again = await kgw(['migrate'], store.env);
        assert.equal(again.stdout, UP_TO_DATE);
      } finally {
        await store.dispose();
      }
    });
  }
});
