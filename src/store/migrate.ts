import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import type { Db } from './db.ts';

export interface Migration {
  readonly number: number;
  readonly name: string;
  readonly sql: string;
  readonly checksum: string;
}

export interface MigrationReport {
  readonly applied: readonly string[];
  readonly current: number;
}

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;
// Any constant shared by every process; taken inside the migration transaction.
const MIGRATION_LOCK_KEY = 727_001;

/** The numbered migrations shipped with this build, in order. */
export async function loadMigrations(dir: URL = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((file) => file.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = FILE_NAME.exec(file);
    if (!match) throw new Error(`migration file ${file} is not named NNNN_name.sql`);
    const sql = await readFile(new URL(file, dir), 'utf8');
    const number = Number(match[1]);
    if (number !== migrations.length + 1) throw new Error(`migration ${file} is out of sequence; expected number ${migrations.length + 1}`);
    migrations.push({ number, name: match[2] ?? file, sql, checksum: createHash('sha256').update(sql).digest('hex') });
  }
  return migrations;
}

/**
 * Applies every pending migration in one transaction, holding an advisory lock so that
 * processes starting at once apply each migration exactly once. Forward only: a database
 * that is ahead of this build, or whose applied migrations differ from ours, is refused.
 */
export async function migrate(db: Db, migrations?: readonly Migration[]): Promise<MigrationReport> {
  const all = migrations ?? (await loadMigrations());
  return db.tx(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      number      integer PRIMARY KEY,
      name        text NOT NULL,
      checksum    text NOT NULL,
      applied_at  timestamptz NOT NULL DEFAULT now()
    )`);
    const rows = await tx.query<{ number: number; name: string; checksum: string }>('SELECT number, name, checksum FROM schema_migrations ORDER BY number');
    for (const row of rows) {
      const known = all[row.number - 1];
      if (!known) throw new Error(`database is at migration ${row.number} (${row.name}), newer than this build (${all.length}); upgrade the gateway`);
      if (known.checksum !== row.checksum) throw new Error(`migration ${row.number} (${row.name}) differs from the one applied to this database`);
    }
    const applied: string[] = [];
    for (const migration of all.slice(rows.length)) {
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (number, name, checksum) VALUES ($1, $2, $3)', [migration.number, migration.name, migration.checksum]);
      applied.push(`${String(migration.number).padStart(4, '0')}_${migration.name}`);
    }
    return { applied, current: all.length };
  });
}
