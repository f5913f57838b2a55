import type { Db } from '../../store/db.ts';
import type { AuthenticatedToken } from './tokens.ts';
import { SignalledCache } from '../signalled-cache.ts';
import { AUTH_CHANNEL, authenticateHash, hashSecret, plausibleSecret } from './tokens.ts';

/** The bounds of the cache: how many tokens it keeps and for how long at most. */
export const TOKEN_CACHE_LIMITS = {
  /** Tokens kept; the one used longest ago goes first. */
  entries: 10_000,
  /**
   * How long a check is reused at most, even with every signal heard: the bound on a change the
   * store could not signal (a LISTEN connection cut without its socket noticing).
   */
  maxAgeMs: 60_000,
} as const;

export interface TokenCacheOptions {
  readonly entries?: number;
  readonly maxAgeMs?: number;
  /** The clock, for tests. */
  readonly now?: () => number;
}

/**
 * Bearer tokens checked once and then answered from memory: a tool call would otherwise read the
 * token, its tenant and its principal on every request (a round trip that cost more than the
 * rest of a cheap call). A check is reused only while the store's signals on `AUTH_CHANNEL`
 * reach this process (`Db.hears`); any signal forgets every check, so a revocation, anywhere,
 * takes effect as soon as its commit is heard (at once in this process, within a NOTIFY's
 * delivery on another replica). A check read while a signal arrived is not kept: it may predate
 * the change. Refusals are never kept, so a token issued a moment ago works at once; expiry is
 * kept to the token's own time.
 */
export class TokenCache {
  readonly #db: Db;
  readonly #kept: SignalledCache<AuthenticatedToken>;

  constructor(db: Db, options: TokenCacheOptions = {}) {
    this.#db = db;
    const maxAgeMs = options.maxAgeMs ?? TOKEN_CACHE_LIMITS.maxAgeMs;
    this.#kept = new SignalledCache<AuthenticatedToken>(db, {
      channel: AUTH_CHANNEL,
      entries: options.entries ?? TOKEN_CACHE_LIMITS.entries,
      until: (token, now) => Math.min(now + maxAgeMs, token.expiresAt === null ? Infinity : token.expiresAt.getTime()),
      now: options.now,
    });
  }

  /** The caller, audience and expiry of a bearer secret; undefined when it is unknown, revoked or expired. */
  async authenticate(secret: string): Promise<AuthenticatedToken | undefined> {
    if (!plausibleSecret(secret)) return undefined;
    const key = hashSecret(secret);
    return this.#kept.get(key, () => authenticateHash(this.#db, key));
  }

  /** How many checks are kept (metrics, tests). */
  get size(): number {
    return this.#kept.size;
  }

  /** Stops listening; the cache answers from the store from then on. */
  close(): void {
    this.#kept.close();
  }
}
