import pg from 'pg';
import type { Db, Transaction } from './db.ts';
import { assertReadOnly, isRetryable } from './db.ts';

// Return int8 and numeric as JS numbers (counts, sizes); none of ours exceed 2^53.
const toNumber = (value: string): number => Number(value);
const textParser = (oid: number) => pg.types.getTypeParser(oid, 'text') as (value: string) => unknown;
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number) => (oid === 20 || oid === 1700 ? toNumber : textParser(oid))) as pg.CustomTypesConfig['getTypeParser'],
};

const MAX_ATTEMPTS = 5;

/** A pooled connection to real PostgreSQL. */
export function openPostgres(url: string, options: { max?: number; applicationName?: string } = {}): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'knowledge-gateway',
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    types,
  });
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);

  return {
    kind: 'postgres',
    async query<R>(sql: string, params: readonly unknown[] = []) {
      assertReadOnly(sql);
      const result = await pool.query(sql, params as unknown[]);
      return result.rows as R[];
    },
    async tx<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        const client = await pool.connect();
        let broken = false;
        try {
          await client.query('BEGIN');
          const tx: Transaction = {
            async query<R>(sql: string, params: readonly unknown[] = []) {
              return (await client.query(sql, params as unknown[])).rows as R[];
            },
            async exec(script: string) {
              await client.query(script);
            },
          };
          const result = await work(tx);
          await client.query('COMMIT');
          return result;
        } catch (error) {
          try {
            await client.query('ROLLBACK');
          } catch {
            broken = true;
          }
          if (attempt < MAX_ATTEMPTS && isRetryable(error)) continue;
          throw error;
        } finally {
          client.release(broken);
        }
      }
    },
    async close() {
      await pool.end();
    },
  };
}
