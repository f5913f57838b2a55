import type { Db, Transaction } from '../../src/store/db.ts';

/** `db`, recording the text of every statement it runs (in transactions too) while `recording` is on. */
export function recordingDb(db: Db): { db: Db; record<T>(work: () => Promise<T>): Promise<string[]> } {
  let log: string[] | undefined;
  const note = (sql: string): void => {
    log?.push(sql.replace(/\s+/g, ' ').trim());
  };
  const wrapTx = (tx: Transaction): Transaction => ({
    query: (sql, params, options) => (note(sql), tx.query(sql, params, options)),
    exec: (script) => (note(script), tx.exec(script)),
    signal: (channel) => tx.signal(channel),
    wake: (channel) => tx.wake(channel),
  });
  return {
    db: {
      kind: db.kind,
      query: (sql, params, options) => (note(sql), db.query(sql, params, options)),
      tx: (work) => db.tx((tx) => work(wrapTx(tx))),
      write: (sql, params) => (note(sql), db.write(sql, params)),
      listen: (channel, listener) => db.listen(channel, listener),
      hears: (channel) => db.hears(channel),
      close: () => db.close(),
    },
    async record(work) {
      const mine: string[] = [];
      log = mine;
      try {
        await work();
      } finally {
        log = undefined;
      }
      return mine;
    },
  };
}
