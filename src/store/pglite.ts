import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import type { Db, Transaction } from './db.ts';
import { assertChannel, assertReadOnly, CommitListeners } from './db.ts';
import { PRIVATE_DIR_MODE, securePrivateTree } from './private-dir.ts';

const NUMBER_TYPES = { 20: (value: string) => Number(value), 1700: (value: string) => Number(value) };

/**
 * Embedded PostgreSQL (WebAssembly) in a data folder, or in memory when `dataDir` is undefined.
 * PGlite runs one statement at a time and serialises transactions itself.
 *
 * File modes: PGlite's file system (Emscripten's NODEFS) creates each file and then chmods it
 * to the mode the C code asked for, unmasked, so the ~970 files initdb writes (catalog, first
 * WAL segment, configuration) are 0666 whatever the process umask, and files written through
 * fopen (pg_internal.init, rewritten at every start) 0644; folders are mkdir'ed 0777 less the
 * umask. What PostgreSQL creates while running (relations, WAL segments) ends up 0600/0700,
 * after an instant at 0777 less the umask. So the folder is created 0700 before PGlite sees
 * it, which keeps everything below out of others' reach at every moment, and the modes below
 * are made 0600/0700 after opening and again after closing.
 *
 * Durability: PGlite starts PostgreSQL with `-F` (fsync off), and NODEFS has no fsync of its
 * own, so nothing is ever flushed to the disk, even with fsync turned back on: a commit is
 * durable against a crash of this process (the kernel holds the written pages), not against
 * an OS crash or power loss (see docs/architecture.md).
 */
export async function openPglite(dataDir: string | undefined): Promise<Db> {
  if (dataDir !== undefined) await mkdir(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const db = await PGlite.create(dataDir === undefined ? { parsers: NUMBER_TYPES } : { dataDir, parsers: NUMBER_TYPES });
  if (dataDir !== undefined) {
    try {
      await securePrivateTree(dataDir);
    } catch (error) {
      await db.close();
      throw error;
    }
  }
  // One process holds the database, so signals need no NOTIFY: the listeners are all here.
  const listeners = new CommitListeners();
  return {
    kind: 'pglite',
    async query<R>(sql: string, params: readonly unknown[] = []) {
      assertReadOnly(sql);
      return (await db.query<R>(sql, params as unknown[])).rows;
    },
    async tx<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
      const signals = new Set<string>();
      const result = await db.transaction(async (inner) => {
        const tx: Transaction = {
          async query<R>(sql: string, params: readonly unknown[] = []) {
            return (await inner.query<R>(sql, params as unknown[])).rows;
          },
          async exec(script: string) {
            await inner.exec(script);
          },
          signal(channel: string) {
            assertChannel(channel);
            signals.add(channel);
            return Promise.resolve();
          },
        };
        return work(tx);
      });
      // Resolved means committed.
      for (const channel of signals) listeners.emit(channel);
      return result;
    },
    listen(channel: string, listener: () => void) {
      const { remove } = listeners.add(channel, listener);
      return () => void remove();
    },
    async close() {
      await db.close();
      // Closing writes a shutdown checkpoint: repair whatever was written since opening.
      if (dataDir !== undefined) await securePrivateTree(dataDir);
    },
  };
}
