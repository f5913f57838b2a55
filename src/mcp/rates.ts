import { SharedRateLimiter } from '../auth/shared-rate.ts';
import type { Config } from '../config.ts';
import type { Caller } from '../kernel/access/caller.ts';
import { KgwError } from '../kernel/errors.ts';
import type { Db } from '../store/db.ts';
import type { StoreCallSlots } from './call-slots.ts';
import { CALL_SLOT_LIMITS } from './call-slots.ts';

/**
 * A rate limiter a product declares and its tools name (ToolDef.rateLimit), counting calls per
 * principal a minute: a guard against runaway agents, not a quota (Atmina's `kb_writes`, its
 * file writes and uploads).
 */
export interface RateLimiterDef {
  readonly name: string;
  /** Calls per principal a minute, from the configuration. */
  perMinute(config: Config): number;
  /** The refusal of a call over the rate, in the product's reasons. */
  refusal(retryAfterSeconds: number): KgwError;
}

/** Which limiter counts a tool's calls and, for a tool where only some calls write, which ones. */
export interface ToolRate<Args> {
  /** The name of a limiter the tool's product declares (RateLimiterDef). */
  readonly limiter: string;
  /** Whether this call counts (and may be refused); omitted, every call does. */
  readonly counts?: (args: Args) => boolean;
}

/**
 * The limiters of the tools, in fixed one-minute windows kept in the store (SharedRateLimiter):
 * every replica of the gateway counts against the same limit, so a runaway agent whose calls a
 * load balancer spreads over two replicas gets the configured rate, not twice it. Counting costs
 * one statement, and only the calls of a tool that declares a rate count (Atmina's writes).
 */
export class ToolRates {
  readonly #limiters: ReadonlyMap<string, { readonly def: RateLimiterDef; readonly limiter: SharedRateLimiter }>;

  constructor(defs: readonly RateLimiterDef[], config: Config, db: Db) {
    this.#limiters = new Map(defs.map((def) => [def.name, { def, limiter: new SharedRateLimiter(db, def.name, def.perMinute(config), 60_000) }]));
  }

  /**
   * Counts one call of the caller's principal, or throws the limiter's refusal when the
   * principal is over its rate; a refused call is not counted, so waiting out the window
   * suffices. A call the rate's `counts` leaves out is neither counted nor refused.
   */
  async spend<Args>(rate: ToolRate<Args>, caller: Caller, args: Args): Promise<void> {
    if (rate.counts !== undefined && !rate.counts(args)) return;
    const declared = this.#limiters.get(rate.limiter);
    // The registry refuses to start with a tool naming an undeclared limiter (ToolRegistry).
    if (declared === undefined) throw new Error(`no rate limiter ${rate.limiter} is declared`);
    const wait = await declared.limiter.take(`${caller.tenant.id}:${caller.principal.id}`);
    if (wait !== undefined) throw declared.def.refusal(wait);
  }
}

/** How many heavy calls (ToolDef.heavy) one token runs at once, how many more may wait, and how long. */
export interface HeavyCallLimits {
  readonly running: number;
  readonly waiting: number;
  readonly waitMs: number;
}

/** Two at once per token, eight more waiting at most 30 s each: a batch of 100 searches runs two at a time. */
export const HEAVY_CALL_LIMITS: HeavyCallLimits = { running: 2, waiting: 8, waitMs: 30_000 };

/**
 * The heavy calls of each token (searches that read many documents): at most `running` at
 * once, later ones wait in order, and a call that finds the queue full or waits too long is
 * refused `rate_limited` with a retry interval. One caller's flood then takes at most its own
 * share of the gateway, and the others do not notice it. The queue is this process's; with
 * `shared` slots (PostgreSQL, where replicas share the store) a call first in line here also
 * takes one of its token's slots in the store, so the bound holds across replicas: a token whose
 * calls a load balancer spreads over two gateways still runs `running` at once in all, and
 * waits, within the same `waitMs`, for a slot another replica holds.
 */
export class HeavyCalls {
  readonly #limits: HeavyCallLimits;
  readonly #shared: StoreCallSlots | undefined;
  readonly #tokens = new Map<string, { running: number; queue: (() => void)[] }>();

  constructor(limits: HeavyCallLimits = HEAVY_CALL_LIMITS, shared?: StoreCallSlots) {
    this.#limits = limits;
    this.#shared = shared;
  }

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const deadline = performance.now() + this.#limits.waitMs;
    let state = this.#tokens.get(key);
    if (state === undefined) {
      state = { running: 0, queue: [] };
      this.#tokens.set(key, state);
    }
    if (state.running >= this.#limits.running) await this.#wait(state);
    else state.running += 1;
    try {
      const release = this.#shared === undefined ? undefined : await this.#sharedSlot(this.#shared, key, deadline);
      try {
        return await work();
      } finally {
        // A slot that cannot be given back (the store is gone) frees itself when its lease ends.
        await release?.().catch(() => undefined);
      }
    } finally {
      const next = state.queue.shift();
      // The slot passes to the next waiter as it is; the last one out forgets the token.
      if (next !== undefined) next();
      else if (--state.running === 0) this.#tokens.delete(key);
    }
  }

  async #sharedSlot(shared: StoreCallSlots, key: string, deadline: number): Promise<() => Promise<void>> {
    for (;;) {
      const release = await shared.acquire(key, this.#limits.running);
      if (release !== undefined) return release;
      if (performance.now() + CALL_SLOT_LIMITS.pollMs > deadline) throw this.#refused();
      await new Promise((resolve) => setTimeout(resolve, CALL_SLOT_LIMITS.pollMs));
    }
  }

  #refused(): KgwError {
    const seconds = Math.max(1, Math.ceil(this.#limits.waitMs / 1000));
    return new KgwError('rate_limited', `too many searches of this token at once; retry in ${seconds} s`, { details: { retryAfterSeconds: seconds } });
  }

  #wait(state: { running: number; queue: (() => void)[] }): Promise<void> {
    if (state.queue.length >= this.#limits.waiting) return Promise.reject(this.#refused());
    return new Promise<void>((resolve, reject) => {
      const go = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const at = state.queue.indexOf(go);
        if (at !== -1) state.queue.splice(at, 1);
        reject(this.#refused());
      }, this.#limits.waitMs);
      state.queue.push(go);
    });
  }
}
