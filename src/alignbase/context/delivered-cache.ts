/**
 * What get_current_context read for an agent, kept on the embedded store until anything it depends
 * on changes. There one process holds the database, and the bundle's statement is most of a call
 * at scale: PGlite pays for every value it returns (about 12 ms of a 29 ms call at 1,000 routed
 * items). A PostgreSQL server reads it in a few milliseconds and serves replicas that could not
 * hear each other's writes at once, so there nothing is kept.
 *
 * The store signals every change to what the statement reads (resources, routes, group members,
 * principals: migration 0037) on CONTEXT_CHANNEL as it commits, to the session that asked for the
 * signals; any signal forgets everything. A reading that a signal overtook is not kept, as it may
 * predate the change; nothing is kept while the channel is not heard. Expiry depends on the day,
 * so a reading is kept for the UTC day it was made on. Versions never change, so their content
 * read once stays true.
 */
import type { Db } from '../../store/db.ts';
import { utcDay } from '../../kernel/instants.ts';
import { SignalledCache } from '../../kernel/signalled-cache.ts';

/** The channel migration 0037's triggers signal on. */
export const CONTEXT_CHANNEL = 'kgw_context';

/** The bounds of what is kept, per store. */
export const DELIVERED_CACHE_LIMITS = {
  /** Agents whose reading is kept; the one used longest ago goes first. */
  entries: 64,
  /**
   * What is kept in all, and so at most for one agent, weighed as its content's characters (a
   * byte each for most text) and ROW_WEIGHT a row: about the memory it holds.
   */
  weight: 32 * 1024 * 1024,
} as const;

/** What a row's fields hold in V8 besides its content: about 320 bytes measured at 1,000 rows, rounded up. */
const ROW_WEIGHT = 512;

/** What a reading weighs: its content's characters and ROW_WEIGHT a row. */
const weigh = (rows: readonly { readonly v_content: string | null }[]): number => rows.reduce((sum, row) => sum + ROW_WEIGHT + (row.v_content?.length ?? 0), 0);

export class DeliveredCache<T extends { readonly v_content: string | null }> {
  readonly #kept: SignalledCache<readonly T[]>;

  constructor(db: Db) {
    this.#kept = new SignalledCache<readonly T[]>(db, {
      channel: CONTEXT_CHANNEL,
      entries: DELIVERED_CACHE_LIMITS.entries,
      weight: DELIVERED_CACHE_LIMITS.weight,
      weigh,
      // The triggers signal only to a session that asks; the embedded store has one session.
      prepare: async () => {
        await db.write("SELECT set_config('kgw.context_signals', 'on', false)");
        return true;
      },
    });
  }

  /** The rows `read` gives for the agent, from memory while nothing they depend on has changed. */
  rows(tenantId: string, agentId: string, read: () => Promise<T[]>): Promise<readonly T[]> {
    return this.#kept.get(`${tenantId}/${agentId}/${utcDay(new Date())}`, read);
  }

  /** How many readings are kept (tests). */
  get size(): number {
    return this.#kept.size;
  }

  /** How many calls were answered from memory (tests). */
  get hits(): number {
    return this.#kept.hits;
  }
}
