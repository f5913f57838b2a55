import { PGlite } from '@electric-sql/pglite';
import type { Db, Transaction } from './db.ts';
import { assertReadOnly } from './db.ts';

const NUMBER_TYPES = { 20: (value: string) => Number(value), 1700: (value: string) => Number(value) };

/**
 * Embedded PostgreSQL (WebAssembly) in a data folder, or in memory when `dataDir` is undefined.
 * PGlite runs one statement at a time and serialises transactions itself.
 */
export async function openPglite(dataDir: string | undefined): Promise<Db> {
  const db = await PGlite.create(dataDir === undefined ? { parsers: NUMBER_TYPES } : { dataDir, parsers: NUMBER_TYPES });
  return {
    kind: 'pglite',
    async query<R>(sql: string, params: readonly unknown[] = []) {
      assertReadOnly(sql);
      return (await db.query<R>(sql, params as unknown[])).rows;
    },
    async tx<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
      return db.transaction(async (inner) => {
        const tx: Transaction = {
          async query<R>(sql: string, params: readonly unknown[] = []) {
            return (await inner.query<R>(sql, params as unknown[])).rows;
          },
          async exec(script: string) {
            await inner.exec(script);
          },
        };
        return work(tx);
      });
    },
    async close() {
      await db.close();
    },
  };
}
