import type { Queryable } from '../src/store/db.ts';

/**
 * A projection: a backend (search, graph) that shows a derived view of the store. Postgres is
 * the truth; a projection is fed by the outbox and can always be rebuilt from Postgres alone.
 */

/** What a writer enqueues: one change to one resource, for one projection. */
export interface OutboxEntry {
  readonly tenantId: string;
  /** The projection that applies it, e.g. 'search' or 'graph'. */
  readonly projection: string;
  /** The resource it concerns, e.g. 'kb_file:<id>'; rows of one key are applied in order. */
  readonly resourceKey: string;
  readonly operation: 'upsert' | 'delete';
  /** Identifiers and what the projector needs to apply the change; never secrets. */
  readonly payload?: Readonly<Record<string, unknown>>;
}

/** An outbox row as a projection receives it. */
export interface OutboxRow extends Required<OutboxEntry> {
  /** Global order (a bigint, as a decimal string). */
  readonly id: string;
  readonly createdAt: Date;
  /** Earlier attempts that failed. */
  readonly attempts: number;
}

export interface ApplyContext {
  /**
   * The transaction that claimed the rows; it deletes them when `apply` resolves. A projection
   * kept in Postgres itself (the built-in search) writes through it, so its change and the
   * claim commit together. Other backends ignore it.
   */
  readonly tx: Queryable;
  /** Aborted when the worker gives up on the call (its apply timeout); pass it to the backend. */
  readonly signal: AbortSignal;
}

export interface Projection {
  /** Matches OutboxEntry.projection. */
  readonly name: string;
  /**
   * Applies rows in the order given (global id order); rows of one resource never come out of
   * order, and the rows of one resource waiting together come in one call, as far as the batch
   * reaches. Must be idempotent: a row may be applied again (with the rest of its call) after a
   * crash between the backend call and the commit, or when a failed call's rows are tried
   * again one by one. Throws when the backend refused or could not be reached; nothing is lost
   * then.
   */
  apply(rows: readonly OutboxRow[], context: ApplyContext): Promise<void>;
  /** Removes everything this projection holds (all tenants), before a rebuild. */
  clear(): Promise<void>;
  /** Resolves when the backend answers. */
  health?(signal: AbortSignal): Promise<void>;
  /**
   * Rows claimed per transaction when the projection wants a batch of its own: fewer than the
   * worker's (one request's worth to a remote service) or, on PostgreSQL, more (a remote engine
   * whose every task has a fixed cost). On PGlite never more than the worker's batch, which
   * holds up every write there while it runs.
   */
  readonly batchSize?: number;
  /**
   * Work done before each claim, outside any transaction: what a projection must fetch from a
   * slow service (an embeddings endpoint) for the rows it is about to apply, so no transaction
   * stays open while it waits (PGlite runs one transaction at a time, so an open one holds up
   * every write). It is given the rows that are due, reads what it needs through `db`
   * (read-only), and keeps what it fetched for `apply`, which must still be correct, though
   * slower, for rows it did not prepare. A failure claims nothing: the worker records it and
   * backs off.
   */
  prepare?(context: PrepareContext): Promise<void>;
}

export interface PrepareContext {
  /** The store, read-only. */
  readonly db: Queryable;
  /**
   * The rows the next claim would take, in id order, as they stood a moment ago (another
   * worker may take some first, and later rows may join): never empty.
   */
  readonly rows: readonly OutboxRow[];
  /** Aborted when the worker gives up on the call (its apply timeout) or stops. */
  readonly signal: AbortSignal;
}

/** One resource a rebuild visits. */
export interface ResourceRef {
  readonly tenantId: string;
  readonly resourceKey: string;
}

/**
 * How to rebuild a projection from Postgres alone: which resources exist, and their current
 * state as outbox entries. `load` runs in the transaction that enqueues the entries, after
 * the resources are locked against concurrent writers, so it reads their latest state.
 */
export interface Rebuilder {
  readonly projection: string;
  keys(db: Queryable): AsyncIterable<ResourceRef>;
  /** Entries for the resources still present; a missing resource may be omitted. */
  load(tx: Queryable, refs: readonly ResourceRef[]): Promise<OutboxEntry[]>;
}

/** The projections a gateway runs, and how each is rebuilt. */
export interface ProjectionSet {
  readonly projections: readonly Projection[];
  readonly rebuilders: readonly Rebuilder[];
}
