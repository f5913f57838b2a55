import type { Db } from '../../store/db.ts';
import type { AuthenticatedToken } from './tokens.ts';
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

interface Entry {
  readonly token: AuthenticatedToken;
  readonly until: number;
}

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
  readonly #entries = new Map<string, Entry>();
  readonly #limit: number;
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  #generation = 0;
  #unlisten: (() => void) | undefined;

  constructor(db: Db, options: TokenCacheOptions = {}) {
    this.#db = db;
    this.#limit = options.entries ?? TOKEN_CACHE_LIMITS.entries;
    this.#maxAgeMs = options.maxAgeMs ?? TOKEN_CACHE_LIMITS.maxAgeMs;
    this.#now = options.now ?? Date.now;
  }

  /** The caller, audience and expiry of a bearer secret; undefined when it is unknown, revoked or expired. */
  async authenticate(secret: string): Promise<AuthenticatedToken | undefined> {
    if (!plausibleSecret(secret)) return undefined;
    // Subscribed on first use, so a CLI process that never checks a token holds no LISTEN connection.
    this.#unlisten ??= this.#db.listen(AUTH_CHANNEL, () => this.#forget());
    const key = hashSecret(secret);
    const trusted = this.#db.hears(AUTH_CHANNEL);
    const now = this.#now();
    const entry = this.#entries.get(key);
    if (entry !== undefined) {
      this.#entries.delete(key);
      if (trusted && entry.until > now) {
        // Re-inserted: a Map iterates in insertion order, so the first key is the one used longest ago.
        this.#entries.set(key, entry);
        return entry.token;
      }
    }
    const generation = this.#generation;
    const token = await authenticateHash(this.#db, key);
    if (token !== undefined && trusted && this.#db.hears(AUTH_CHANNEL) && generation === this.#generation) this.#keep(key, token, now);
    return token;
  }

  /** How many checks are kept (metrics, tests). */
  get size(): number {
    return this.#entries.size;
  }

  /** Stops listening; the cache answers from the store from then on. */
  close(): void {
    this.#unlisten?.();
    this.#unlisten = undefined;
    this.#forget();
  }

  #keep(key: string, token: AuthenticatedToken, now: number): void {
    const expires = token.expiresAt === null ? Infinity : token.expiresAt.getTime();
    const until = Math.min(now + this.#maxAgeMs, expires);
    if (until <= now) return;
    this.#entries.set(key, { token, until });
    while (this.#entries.size > this.#limit) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  #forget(): void {
    this.#generation += 1;
    this.#entries.clear();
  }
}
