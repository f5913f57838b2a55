import type { Db } from '../store/db.ts';
import type { EventLimiter } from './rate-limit.ts';

/**
 * How the shared windows are kept (README "Hardening"): a key is at most 300 characters, and
 * every `sweepEvery` events a limiter counts in one process, the windows of that limiter that
 * ended a window ago or more are deleted, so a table of client addresses cannot grow unbounded.
 */
export const SHARED_RATE_LIMITS = { keyMaxChars: 300, sweepEvery: 1_000 } as const;

/*
 * One statement counts an event: it starts a new window for a key whose window ended (or that
 * has none), counts one more in a window with room, and otherwise changes nothing. The row lock
 * of ON CONFLICT serialises the replicas counting the same key, and re-reads the row each waited
 * for, so no count is lost or made twice. The store's clock (now(): this statement's) starts
 * every window. A refused event reads its window's end from the statement's snapshot; a window
 * another replica started meanwhile is not in it, and the wait is then the whole window.
 */
const TAKE = `WITH taken AS (
  INSERT INTO rate_windows AS w (limiter, key, started_at, spent) VALUES ($1, $2, now(), 1)
  ON CONFLICT (limiter, key) DO UPDATE
     SET started_at = CASE WHEN w.started_at <= now() - make_interval(secs => $3::float8 / 1000) THEN now() ELSE w.started_at END,
         spent = CASE WHEN w.started_at <= now() - make_interval(secs => $3::float8 / 1000) THEN 1 ELSE w.spent + 1 END
   WHERE w.started_at <= now() - make_interval(secs => $3::float8 / 1000) OR w.spent < $4
  RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM taken) AS taken,
       (SELECT extract(epoch FROM started_at - now()) * 1000 + $3::float8 FROM rate_windows WHERE limiter = $1 AND key = $2) AS wait_ms`;

const SWEEP = `DELETE FROM rate_windows WHERE limiter = $1 AND started_at <= now() - make_interval(secs => $2::float8 / 1000 * 2)`;

/**
 * Counts events per key in fixed windows kept in the store, so that every replica of the
 * gateway counts against the same limit: two replicas behind a load balancer allow a runaway
 * agent the configured rate, not twice it. One statement an event, a transaction of its own.
 */
export class SharedRateLimiter implements EventLimiter {
  readonly #db: Db;
  readonly #name: string;
  readonly #limit: number;
  readonly #windowMs: number;
  #sinceSweep = 0;

  constructor(db: Db, name: string, limit: number, windowMs: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`rate limiter ${name}: the limit must be a whole number of at least 1, not ${limit}`);
    this.#db = db;
    this.#name = name;
    this.#limit = limit;
    this.#windowMs = windowMs;
  }

  /**
   * Counts one event for `key`, or answers the whole seconds to wait (at least 1) when `key` has
   * spent its window; a refused event is not counted, so waiting out the window suffices.
   */
  async take(key: string): Promise<number | undefined> {
    const stored = key.length > SHARED_RATE_LIMITS.keyMaxChars ? key.slice(0, SHARED_RATE_LIMITS.keyMaxChars) : key;
    const [row] = await this.#db.write<{ taken: boolean; wait_ms: number | string | null }>(TAKE, [this.#name, stored, this.#windowMs, this.#limit]);
    this.#sinceSweep += 1;
    if (this.#sinceSweep >= SHARED_RATE_LIMITS.sweepEvery) {
      this.#sinceSweep = 0;
      await this.#db.write(SWEEP, [this.#name, this.#windowMs]);
    }
    if (row?.taken === true) return undefined;
    const waitMs = row?.wait_ms === null || row?.wait_ms === undefined ? this.#windowMs : Number(row.wait_ms);
    return Math.max(1, Math.ceil(Math.min(waitMs, this.#windowMs) / 1000));
  }
}
