import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Retrying a compare-and-set write (`expected_version`) after a version conflict. Writers that
 * read and write again at once keep colliding with each other: with no pause one writer can lose
 * round after round while the others win. So every retry waits first, a random time from 0 up to
 * an exponentially growing ceiling ("full jitter"): the ceiling spreads the writers out as the
 * contention shows, the randomness keeps them from waking together. docs/alignbase.md
 * ("Concurrent writers") states the rule for clients.
 */

export interface Backoff {
  /** The ceiling of the first wait, in milliseconds; it doubles with each conflict. */
  readonly baseMs: number;
  /** The ceiling never grows past this, in milliseconds. */
  readonly capMs: number;
  /** How many attempts in all, the first included, before giving up. */
  readonly attempts: number;
}

export const CONFLICT_BACKOFF: Backoff = { baseMs: 5, capMs: 200, attempts: 50 };

/**
 * The wait before the next attempt after the `conflicts`-th conflict in a row (1 for the first):
 * a whole number of milliseconds drawn uniformly from 0 to below min(cap, base·2^(conflicts−1)).
 */
export function backoffDelay(conflicts: number, options: { baseMs?: number; capMs?: number; random?: () => number } = {}): number {
  const base = options.baseMs ?? CONFLICT_BACKOFF.baseMs;
  const cap = options.capMs ?? CONFLICT_BACKOFF.capMs;
  // Past 2^30 the ceiling is the cap anyway; the bound keeps the power finite.
  const ceiling = Math.min(cap, base * 2 ** Math.min(Math.max(conflicts, 1) - 1, 30));
  return Math.floor((options.random ?? Math.random)() * ceiling);
}

/** What an attempt of `retryOnConflict` returns when its write met a version conflict. */
export const CONFLICT: unique symbol = Symbol('version conflict');

export interface RetryOptions extends Partial<Backoff> {
  /** For tests: the random source of the jitter and the wait itself. */
  readonly random?: () => number;
  readonly sleep?: (ms: number) => Promise<unknown>;
}

/**
 * Runs `attempt` (read, merge, write) until it returns anything but CONFLICT, waiting
 * `backoffDelay` before each retry; after `attempts` conflicts in a row it throws. `attempt` gets
 * its number, from 1. Errors that `attempt` throws are not retried.
 */
export async function retryOnConflict<T>(attempt: (n: number) => Promise<T | typeof CONFLICT>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? CONFLICT_BACKOFF.attempts;
  const wait = options.sleep ?? sleep;
  for (let n = 1; ; n++) {
    const result = await attempt(n);
    if (result !== CONFLICT) return result;
    if (n >= attempts) throw new Error(`still a version conflict after ${attempts} attempts`);
    await wait(backoffDelay(n, options));
  }
}
