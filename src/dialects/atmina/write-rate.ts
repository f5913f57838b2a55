import type { Caller } from '../../core/access/caller.ts';
import type { Services } from '../../core/services.ts';
import { refuseUpload } from '../../core/kb/upload-refusals.ts';
import { RateLimiter } from '../../auth/rate-limit.ts';

/**
 * The rate of Knowledge-Base writes and uploads per principal: KGW_KB_WRITES_PER_MINUTE calls
 * (default 600) a minute, counted per gateway process in fixed one-minute windows, so one
 * runaway agent cannot fill a KB's history or the blob store faster than people can notice. A
 * call over the rate is `rate_limited: … retry in N s`, with nothing done.
 */
const limiters = new WeakMap<Services['config'], RateLimiter>();

export function checkWriteRate(services: Services, caller: Caller): void {
  let limiter = limiters.get(services.config);
  if (limiter === undefined) {
    limiter = new RateLimiter(services.config.rateLimits.kbWritesPerMinute, 60_000);
    limiters.set(services.config, limiter);
  }
  const key = `${caller.tenant.id}:${caller.principal.id}`;
  const wait = limiter.wait(key);
  if (wait !== undefined) throw refuseUpload.rateLimited(wait);
  limiter.hit(key);
}
