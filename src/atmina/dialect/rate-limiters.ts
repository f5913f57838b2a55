import type { RateLimiterDef } from '../../mcp/rates.ts';
import { refuseUpload } from '../kb/upload-refusals.ts';
import { KB_WRITES } from './schemas.ts';

/**
 * Knowledge-Base file writes and uploads per principal a minute, KGW_KB_WRITES_PER_MINUTE
 * (default 600), so one runaway agent cannot fill a KB's history or the blob store faster than
 * people can notice. A guard against runaways, not a quota (docs/atmina.md, Rates).
 */
export const kbWritesLimiter: RateLimiterDef = {
  name: KB_WRITES.limiter,
  perMinute: (config) => config.rateLimits.kbWritesPerMinute,
  refusal: refuseUpload.rateLimited,
};
