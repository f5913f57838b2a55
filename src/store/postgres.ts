import pg from 'pg';
import type { Db, QueryOptions, Transaction } from './db.ts';
import { assertChannel, assertReadOnly, CommitListeners, isRetryable, StatementNames, Wakes } from './db.ts';

// Return int8 and numeric as JS numbers (counts, sizes); none of ours exceed 2^53.
const toNumber = (value: string): number => Number(value);
const textParser = (oid: number) => pg.types.getTypeParser(oid, 'text') as (value: string) => unknown;

const parseTimestamptzSlowly = textParser(1184);

/** The number written by `count` ASCII digits of `text` from `at`, or -1 where one is not a digit. */
function digitsAt(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const digit = text.charCodeAt(i) - 48;
    // Written so that past the end (NaN) is not a digit either.
    if (!(digit >= 0 && digit <= 9)) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * timestamptz to Date. pg's parser is general (any year, BC, infinity, seconds in the offset)
 * and was a tenth of a list's time at 1,000 rows (four instants a row). The shape PostgreSQL
 * writes in the common case, 2026-12-06 22:13:34.123456+00 (a fraction of 1 to 6 digits or
 * none, an offset of hours or hours and minutes), is read here by position, with Date.UTC
 * (a regular expression took twice as long); anything else goes to pg's parser. The answers
 * are the same (test/store/timestamps.test.ts): milliseconds, the microseconds dropped.
 */
export function parseTimestamptz(value: string): unknown {
  const year = digitsAt(value, 0, 4);
  const month = digitsAt(value, 5, 2);
  const day = digitsAt(value, 8, 2);
  const hour = digitsAt(value, 11, 2);
  const minute = digitsAt(value, 14, 2);
  const second = digitsAt(value, 17, 2);
  const separated =
    value.charCodeAt(4) === 45 && value.charCodeAt(7) === 45 && value.charCodeAt(10) === 32 && value.charCodeAt(13) === 58 && value.charCodeAt(16) === 58;
  if (year < 1000 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0 || !separated) return parseTimestamptzSlowly(value);
  let at = 19;
  let micros = 0;
  if (value.charCodeAt(at) === 46) {
    let width = 0;
    at++;
    for (let digit = value.charCodeAt(at) - 48; width < 6 && digit >= 0 && digit <= 9; digit = value.charCodeAt(at) - 48) {
      micros = micros * 10 + digit;
      width++;
      at++;
    }
    if (width === 0) return parseTimestamptzSlowly(value);
    micros *= 10 ** (6 - width);
  }
  const sign = value.charCodeAt(at);
  const offsetHours = digitsAt(value, at + 1, 2);
  if ((sign !== 43 && sign !== 45) || offsetHours < 0) return parseTimestamptzSlowly(value);
  let offsetMinutes = offsetHours * 60;
  at += 3;
  if (value.charCodeAt(at) === 58) {
    const minutes = digitsAt(value, at + 1, 2);
    if (minutes < 0) return parseTimestamptzSlowly(value);
    offsetMinutes += minutes;
    at += 3;
  }
  if (at !== value.length) return parseTimestamptzSlowly(value);
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, Math.trunc(micros / 1000));
  return new Date(utc - (sign === 45 ? -offsetMinutes : offsetMinutes) * 60_000);
}

const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number) =>
    oid === 20 || oid === 1700 ? toNumber : oid === 1184 ? parseTimestamptz : textParser(oid)) as pg.CustomTypesConfig['getTypeParser'],
};

const MAX_ATTEMPTS = 5;

/** The statement names in use in this process: a pool's connections prepare them as they come. */
const named = new StatementNames();

/** What `pg` runs: a named statement (parsed once per connection, see QueryOptions.prepare) or an unnamed one. */
function statement(sql: string, params: readonly unknown[], options: QueryOptions | undefined): pg.QueryConfig {
  if (options?.prepare === undefined) return { text: sql, values: params as unknown[] };
  named.claim(options.prepare, sql);
  return { text: sql, values: params as unknown[], name: options.prepare };
}
/** A lost LISTEN connection is opened again after this pause, doubling up to the maximum. */
const LISTEN_RETRY_MS = { base: 1000, max: 30_000 } as const;

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
  const listeners = new CommitListeners();
  const wakes = new Wakes((channel) => pool.query('SELECT pg_notify($1, $2)', [channel, '']));
  const listening = listenConnection(url, options.applicationName ?? 'knowledge-gateway', listeners);

  const max = options.max ?? 10;
  return {
    kind: 'postgres',
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
    async query<R>(sql: string, params: readonly unknown[] = [], options?: QueryOptions) {
      assertReadOnly(sql);
      return (await pool.query(statement(sql, params, options))).rows as R[];
    },
    async write<R>(sql: string, params: readonly unknown[] = []) {
      return (await pool.query(statement(sql, params, undefined))).rows as R[];
    },
    async tx<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        const client = await pool.connect();
        let broken = false;
        const signals = new Set<string>();
        const woken = new Set<string>();
        try {
          await client.query('BEGIN');
          const tx: Transaction = {
            async query<R>(sql: string, params: readonly unknown[] = [], options?: QueryOptions) {
              return (await client.query(statement(sql, params, options))).rows as R[];
            },
            async exec(script: string) {
              await client.query(script);
            },
            async signal(channel: string) {
              assertChannel(channel);
              if (signals.has(channel)) return;
              signals.add(channel);
              // Queued with the transaction: other sessions hear it at commit, never after a rollback.
              await client.query('SELECT pg_notify($1, $2)', [channel, '']);
            },
            wake(channel: string) {
              assertChannel(channel);
              woken.add(channel);
            },
          };
          const result = await work(tx);
          await client.query('COMMIT');
          // This process hears at once, without the round trip through the LISTEN connection.
          for (const channel of signals) listeners.emit(channel);
          for (const channel of woken) {
            if (!signals.has(channel)) listeners.emit(channel);
            wakes.wake(channel);
          }
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
    listen(channel: string, listener: () => void) {
      const { first, remove } = listeners.add(channel, listener);
      if (first) listening.changed();
      return () => {
        if (remove()) listening.changed();
      };
    },
    hears: (channel: string) => listening.hears(channel),
    async close() {
      await wakes.close();
      await listening.close();
      await pool.end();
    },
  };
}

/**
 * One connection outside the pool that LISTENs to the channels this process's listeners want,
 * opened when the first one subscribes, closed when the last one leaves or the store closes.
 * A connection that fails is replaced after a pause (1 s, doubling to 30 s); what was signalled
 * meanwhile is missed, which listeners cover by polling.
 */
function listenConnection(url: string, applicationName: string, listeners: CommitListeners) {
  let client: pg.Client | undefined;
  let heard = new Set<string>();
  let closed = false;
  let failures = 0;
  let retry: NodeJS.Timeout | undefined;
  let work = Promise.resolve();

  const later = () => {
    if (closed || retry !== undefined) return;
    failures += 1;
    retry = setTimeout(
      () => {
        retry = undefined;
        changed();
      },
      Math.min(LISTEN_RETRY_MS.max, LISTEN_RETRY_MS.base * 2 ** (failures - 1)),
    );
    retry.unref();
  };

  // A connection that failed or ended under us: forget it, and open another one later. Signals
  // may be missed from now on, so every listener hears once (whoever trusts them stops).
  const drop = (broken: pg.Client) => {
    if (client !== broken) return;
    client = undefined;
    const lost = [...heard];
    heard = new Set();
    broken.removeAllListeners('notification');
    void broken.end().catch(() => undefined);
    later();
    for (const channel of lost) listeners.emit(channel);
  };

  const sync = async (): Promise<void> => {
    const wanted = closed ? [] : listeners.channels;
    if (wanted.length === 0) {
      if (client !== undefined) {
        const done = client;
        client = undefined;
        heard = new Set();
        done.removeAllListeners('notification');
        await done.end().catch(() => undefined);
      }
      return;
    }
    if (retry !== undefined) return;
    try {
      if (client === undefined) {
        const next = new pg.Client({ connectionString: url, application_name: `${applicationName} listen`, connectionTimeoutMillis: 10_000 });
        next.on('error', () => drop(next));
        next.on('end', () => drop(next));
        next.on('notification', (message) => listeners.emit(message.channel));
        await next.connect();
        client = next;
      }
      for (const channel of wanted) {
        if (heard.has(channel)) continue;
        await client.query(`LISTEN ${channel}`);
        heard.add(channel);
      }
      for (const channel of [...heard]) {
        if (wanted.includes(channel)) continue;
        await client.query(`UNLISTEN ${channel}`);
        heard.delete(channel);
      }
      failures = 0;
    } catch {
      if (client !== undefined) drop(client);
      else later();
    }
  };

  // One change at a time, in order.
  function changed(): void {
    work = work.then(sync, sync);
  }

  return {
    changed,
    /** Whether the connection is up and LISTENs to `channel`: every NOTIFY on it is heard. */
    hears: (channel: string) => client !== undefined && heard.has(channel),
    async close() {
      closed = true;
      if (retry !== undefined) clearTimeout(retry);
      retry = undefined;
      changed();
      await work;
    },
  };
}
