import { randomUUID } from 'node:crypto';
import type { Db } from '../store/db.ts';

/**
 * How a slot is held (README "Hardening"): a lease of 70 s (a tool call's 60 s deadline and
 * some), after which another replica may take it over, so a replica that died frees its
 * token's slots; a call waiting for a slot another replica holds looks again every 50 ms.
 */
export const CALL_SLOT_LIMITS = { leaseMs: 70_000, pollMs: 50 } as const;

/*
 * Takes a free slot of the key, in random order so that replicas asking at once seldom race for
 * the same one: inserted, or taken over when its lease ran out. Two takers of one slot are
 * serialised by its row; the second finds it held and gets nothing, and asks again.
 */
const ACQUIRE = `INSERT INTO call_slots AS c (key, slot, holder, expires_at)
SELECT $1, s, $2, now() + make_interval(secs => $4::float8 / 1000)
  FROM generate_series(0, $3::integer - 1) AS s
 WHERE NOT EXISTS (SELECT 1 FROM call_slots h WHERE h.key = $1 AND h.slot = s AND h.expires_at > now())
 ORDER BY random() LIMIT 1
ON CONFLICT (key, slot) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
 WHERE c.expires_at <= now()
RETURNING slot`;

const RELEASE = 'DELETE FROM call_slots WHERE key = $1 AND slot = $2 AND holder = $3';

/**
 * The slots of each key (a token) shared by every replica through the store: at most `count`
 * held at once. A slot is given back by the function `acquire` returns.
 */
export class StoreCallSlots {
  readonly #db: Db;
  readonly #leaseMs: number;

  constructor(db: Db, leaseMs: number = CALL_SLOT_LIMITS.leaseMs) {
    this.#db = db;
    this.#leaseMs = leaseMs;
  }

  /** One of the key's `count` slots, held until the returned function runs (or the lease ends); undefined when all are held. */
  async acquire(key: string, count: number): Promise<(() => Promise<void>) | undefined> {
    const holder = randomUUID();
    const [row] = await this.#db.write<{ slot: number }>(ACQUIRE, [key, holder, count, this.#leaseMs]);
    if (row === undefined) return undefined;
    return async () => {
      await this.#db.write(RELEASE, [key, row.slot, holder]);
    };
  }
}
