import { RateLimiter } from '../auth/rate-limit.ts';
import type { RateLimitsConfig } from '../config.ts';
import type { Caller } from '../core/access/caller.ts';
import type { KgwError } from '../core/errors.ts';
import { refuseUpload } from '../core/kb/upload-refusals.ts';

/**
 * The rate limiters a tool may name (ToolDef.rateLimit), each counting calls per principal a
 * minute. `kb_writes`: Knowledge-Base file writes and uploads, KGW_KB_WRITES_PER_MINUTE (default
 * 600), so one runaway agent cannot fill a KB's history or the blob store faster than people
 * can notice. The rate is a guard against runaways, not a quota.
 */
export type RateLimiterName = 'kb_writes';

/** The refusal of a call over each limiter's rate. */
const REFUSALS: Readonly<Record<RateLimiterName, (retryAfterSeconds: number) => KgwError>> = {
  kb_writes: refuseUpload.rateLimited,
};

/** Which limiter counts a tool's calls and, for a tool where only some calls write, which ones. */
export interface ToolRate<Args> {
  readonly limiter: RateLimiterName;
  /** Whether this call counts (and may be refused); omitted, every call does. */
  readonly counts?: (args: Args) => boolean;
}

/**
 * The limiters of one gateway process, in fixed one-minute windows. They count in memory rather
 * than in the store: several replicas each allow the whole rate (docs/atmina.md, Rates), which
 * is enough for a runaway guard and puts no store write on every call.
 */
export class ToolRates {
  readonly #limiters: Readonly<Record<RateLimiterName, RateLimiter>>;

  constructor(config: RateLimitsConfig) {
    this.#limiters = { kb_writes: new RateLimiter(config.kbWritesPerMinute, 60_000) };
  }

  /**
   * Counts one call of the caller's principal, or throws the limiter's refusal when the
   * principal is over its rate; a refused call is not counted, so waiting out the window
   * suffices. A call the rate's `counts` leaves out is neither counted nor refused.
   */
  spend<Args>(rate: ToolRate<Args>, caller: Caller, args: Args): void {
    if (rate.counts !== undefined && !rate.counts(args)) return;
    const limiter = this.#limiters[rate.limiter];
    const key = `${caller.tenant.id}:${caller.principal.id}`;
    const wait = limiter.wait(key);
    if (wait !== undefined) throw REFUSALS[rate.limiter](wait);
    limiter.hit(key);
  }
}
