import type { Db } from '../store/db.ts';

export interface SignalledCacheOptions<V> {
  /** The store channel whose every signal forgets everything kept. */
  readonly channel: string;
  /** Values kept; the one used longest ago goes first. */
  readonly entries: number;
  /** What all kept values may weigh together, by `weigh`; a value heavier on its own is not kept. */
  readonly weight?: number;
  /** A value's weight; 0 each unless given. */
  readonly weigh?: (value: V) => number;
  /** Until when (ms) a value read at `now` may be reused; Infinity unless given, and a time not after `now` keeps nothing. */
  readonly until?: (value: V, now: number) => number;
  /**
   * Asked once, on first use, after the channel is listened to: whether the store will signal.
   * When it answers false every call reads (a store that cannot be asked for the signals).
   */
  readonly prepare?: () => Promise<boolean>;
  /** The clock, for tests. */
  readonly now?: () => number;
}

interface Entry<V> {
  readonly value: V;
  readonly until: number;
  readonly weight: number;
}

/**
 * Values read from the store and then answered from memory until the store signals a change on
 * one channel. What is kept is trusted only while that channel's signals reach this process
 * (`Db.hears`): a LISTEN connection being re-established may have missed one. Any signal forgets
 * everything, and a value whose read a signal overtook is not kept, since it may predate the
 * change (a generation counter tells). `undefined` is never kept, so what a read did not find is
 * found as soon as it exists. Bounded by entries and, optionally, by weight; the value used longest
 * ago goes first. Used by the token check and by what a context read, which differ only in what
 * they keep and for how long.
 */
export class SignalledCache<V> {
  readonly #db: Db;
  readonly #options: SignalledCacheOptions<V>;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry<V>>();
  #weight = 0;
  #generation = 0;
  #hits = 0;
  #ready: Promise<boolean> | boolean | undefined;
  #unlisten: (() => void) | undefined;

  constructor(db: Db, options: SignalledCacheOptions<V>) {
    this.#db = db;
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The value kept for `key`, or what `read` gives, kept when nothing changed meanwhile. Typed by
   * `read`: a read that always finds a value gets a value.
   */
  async get<R extends V | undefined>(key: string, read: () => Promise<R>): Promise<R | V> {
    // Subscribed on first use, so a process that never asks holds no LISTEN connection.
    if (!(await this.#subscribe())) return read();
    const channel = this.#options.channel;
    const trusted = this.#db.hears(channel);
    const now = this.#now();
    const kept = this.#entries.get(key);
    if (kept !== undefined) {
      this.#drop(key, kept);
      if (trusted && kept.until > now) {
        // Re-inserted: a Map iterates in insertion order, so the first key is the one used longest ago.
        this.#entries.set(key, kept);
        this.#weight += kept.weight;
        this.#hits += 1;
        return kept.value;
      }
    }
    const generation = this.#generation;
    const value = await read();
    if (value !== undefined && trusted && this.#db.hears(channel) && generation === this.#generation) this.#keep(key, value, now);
    return value;
  }

  /** How many values are kept (metrics, tests). */
  get size(): number {
    return this.#entries.size;
  }

  /** How many calls were answered from memory (tests). */
  get hits(): number {
    return this.#hits;
  }

  /** Stops listening and forgets; every call reads from then on. */
  close(): void {
    this.#unlisten?.();
    this.#unlisten = undefined;
    this.#ready = false;
    this.#forget();
  }

  #subscribe(): Promise<boolean> | boolean {
    if (this.#ready !== undefined) return this.#ready;
    this.#unlisten = this.#db.listen(this.#options.channel, () => this.#forget());
    const prepare = this.#options.prepare;
    this.#ready = prepare === undefined ? true : prepare().catch(() => false);
    return this.#ready;
  }

  #keep(key: string, value: V, now: number): void {
    const until = this.#options.until?.(value, now) ?? Infinity;
    if (until <= now) return;
    const weight = this.#options.weigh?.(value) ?? 0;
    const limit = this.#options.weight ?? Infinity;
    if (weight > limit) return;
    const previous = this.#entries.get(key);
    if (previous !== undefined) this.#drop(key, previous);
    this.#entries.set(key, { value, until, weight });
    this.#weight += weight;
    while (this.#entries.size > this.#options.entries || this.#weight > limit) {
      const oldest = this.#entries.entries().next().value;
      if (oldest === undefined) break;
      this.#drop(...oldest);
    }
  }

  #drop(key: string, entry: Entry<V>): void {
    this.#entries.delete(key);
    this.#weight -= entry.weight;
  }

  #forget(): void {
    this.#generation += 1;
    this.#entries.clear();
    this.#weight = 0;
  }
}
