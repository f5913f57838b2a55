/** A limiter that counts one event for a key, or answers the whole seconds to wait (a refused event is not counted). */
export interface EventLimiter {
  take(key: string): Promise<number | undefined>;
}

/**
 * Counts events per key in fixed windows, in this process only: enough to make guessing
 * passwords or flooding registration slow, without shared state between replicas.
 */
export class RateLimiter implements EventLimiter {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #windows = new Map<string, { start: number; count: number }>();

  constructor(limit: number, windowMs: number) {
    this.#limit = limit;
    this.#windowMs = windowMs;
  }

  /** Seconds to wait before the key may act again, or undefined when it is under its limit. */
  wait(key: string, now = Date.now()): number | undefined {
    const window = this.#windows.get(key);
    if (!window || now - window.start >= this.#windowMs || window.count < this.#limit) return undefined;
    return Math.max(1, Math.ceil((window.start + this.#windowMs - now) / 1000));
  }

  take(key: string): Promise<number | undefined> {
    const wait = this.wait(key);
    if (wait === undefined) this.hit(key);
    return Promise.resolve(wait);
  }

  /** Counts one event for the key. */
  hit(key: string, now = Date.now()): void {
    if (this.#windows.size > 10_000) this.#sweep(now);
    const window = this.#windows.get(key);
    if (!window || now - window.start >= this.#windowMs) this.#windows.set(key, { start: now, count: 1 });
    else window.count += 1;
  }

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) if (now - window.start >= this.#windowMs) this.#windows.delete(key);
  }
}
