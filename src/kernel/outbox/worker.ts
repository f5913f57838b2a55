import type { OutboxRow, Projection } from '../../../connectors/projection.ts';
import type { Db, Queryable } from '../../store/db.ts';
import { OUTBOX_CHANNEL } from './outbox.ts';
import type { OutboxDbRow } from './queries.ts';
import { toOutboxRow } from './queries.ts';

/**
 * Rows claimed per transaction by default, per store. On PostgreSQL a bigger batch shares each
 * statement's fixed cost among more documents (the search projection's postings go in one
 * statement per batch): 10 k files were searchable in 34 s with 100, 27 s with 400
 * (docs/search.md, "Speed"). PGlite runs one transaction at a time, so a batch holds up every
 * write for as long as it takes; 100 keeps that under about a second there.
 */
export const DEFAULT_BATCH = { postgres: 400, pglite: 100 } as const;

export interface WorkerOptions {
  /** Rows claimed per transaction (default: DEFAULT_BATCH for the store), the rows of one resource included: a resource's run of rows fills up to a whole batch. */
  readonly batchSize?: number;
  /**
   * How long a projection's loop sleeps when it found nothing to apply (default 1 s). A commit
   * that enqueued rows wakes it sooner (in this process, and through the store's LISTEN in
   * others on the same PostgreSQL), so this is the fallback when a signal is missed.
   */
  readonly idleMs?: number;
  /** Retry delay after the n-th failure: min(maxMs, baseMs * 2^(n-1)), then jittered to 50-100 %. */
  readonly backoff?: { readonly baseMs: number; readonly maxMs: number };
  /** A projection call that takes longer fails (and its signal aborts); default 30 s. */
  readonly applyTimeoutMs?: number;
  /** Told about failures of the loop itself (store unreachable) and of projections. */
  readonly onError?: (error: unknown, projection: string) => void;
  /** For tests: the jitter source. */
  readonly random?: () => number;
}

export interface DrainResult {
  readonly applied: number;
  readonly failed: number;
  /** The projection's `prepare` failed, so nothing was claimed (recorded as its last error). */
  readonly unprepared?: boolean;
}

/**
 * Claims the oldest waiting rows of one projection, up to a batch ($2), in id order: the rows
 * of each resource whose head (its earliest row still in the table; applied rows are deleted,
 * so that is its earliest row not yet applied) is due and this transaction can lock. A
 * resource whose head it locks thus comes with its following rows, in order, as far as the
 * batch reaches, so a resource with many rows (a tenant's graph) drains a batch per
 * transaction rather than a row. Only heads are locked, with SKIP LOCKED: a resource whose
 * head another worker holds, or whose head backs off after a failure, is passed over whole, so
 * a worker never takes a later row of a resource that another one is applying, and several
 * workers and processes drain side by side. (The following rows need no lock of their own:
 * nobody takes them without their head. A head deleted or moved to a later attempt since the
 * statement's snapshot is skipped when it is locked, as PostgreSQL rechecks a locked row's
 * conditions.) Only the head's next_attempt_at counts: a row fails only as its resource's
 * head (everything before it in its batch was applied), so a backing-off row heads its
 * resource.
 *
 * It looks at the oldest $3 rows of the projection (all of them when $3 is null), the window.
 * The window is a prefix in id order, so a resource's first row in it is its head, found
 * without looking further; and the rows of a resource it sees are a prefix of that resource's
 * rows (one snapshot, and writers of one resource commit in id order), so no row of a taken
 * run is passed over. The first `batch` lockable heads in id order are locked: the first
 * `batch` rows of the resources that can be taken have their heads among them.
 */
function claimSql(lock: boolean): string {
  return `WITH w AS MATERIALIZED (
       SELECT id, resource_key FROM outbox WHERE projection = $1 ORDER BY id LIMIT $3),
     heads AS MATERIALIZED (
       SELECT h.id, h.resource_key FROM outbox h
        WHERE h.id IN (SELECT min(id) FROM w GROUP BY resource_key)
          AND h.next_attempt_at <= clock_timestamp()
        ORDER BY h.id
        LIMIT $2${lock ? '\n        FOR UPDATE OF h SKIP LOCKED' : ''})
SELECT r.id, r.tenant_id, r.projection, r.resource_key, r.operation, r.payload, r.created_at, r.attempts
  FROM outbox r
 WHERE r.id IN (SELECT w.id FROM w JOIN heads ON heads.resource_key = w.resource_key)
 ORDER BY r.id
 LIMIT $2`;
}

const CLAIM = claimSql(true);
const DUE = claimSql(false);

/**
 * CLAIM's window, in batches. Looking at a window rather than the whole backlog bounds what a
 * claim reads (PGlite gathers no statistics, so no plan can be counted on to stop early).
 * When the window holds nothing to take (all its rows belong to resources held elsewhere or
 * backing off), the claim looks again at every row; the transaction holds no head by then,
 * so that second statement's snapshot decides alone.
 */
const CLAIM_WINDOW_BATCHES = 10;

/**
 * The rows a claim of `limit` would take now (CLAIM's window), without locking them: what a
 * projection's `prepare` is given, so it prepares the rows the claim takes, unless another
 * worker takes some first.
 */
export async function dueRows(db: Queryable, projection: string, limit: number): Promise<OutboxRow[]> {
  return (await db.query<OutboxDbRow>(DUE, [projection, limit, limit * CLAIM_WINDOW_BATCHES])).map(toOutboxRow);
}

function describe(error: unknown): string {
  const text = error instanceof Error ? (error.message.split('\n')[0] ?? error.name) : String(error);
  return text.slice(0, 1000);
}

/** A backend that is down is asked again at least this often, so it is back in use soon after it is. */
const HEALTH_RECHECK_MAX_MS = 30_000;

async function recordError(tx: Queryable, projection: string, message: string): Promise<void> {
  await tx.query(
    `INSERT INTO projection_state (projection, last_error, last_error_at) VALUES ($1, $2, clock_timestamp())
     ON CONFLICT (projection) DO UPDATE SET last_error = EXCLUDED.last_error, last_error_at = EXCLUDED.last_error_at`,
    [projection, message],
  );
}

const sleepUntil = (ms: number, wake: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      wake.removeEventListener('abort', done);
      resolve();
    }
    wake.addEventListener('abort', done, { once: true });
  });

/**
 * Drains the outbox into the projections: one loop per projection, each claiming a batch in a
 * transaction, applying it, and deleting the applied rows in that same transaction, so a row
 * is applied once even with several gateway processes draining at once (a crash between the
 * backend call and the commit re-applies it, with the rest of its batch; projections are
 * idempotent). A batch takes a resource's consecutive rows together (see CLAIM), so a tenant's
 * graph, whose rows all share one resource key, drains up to a batch per transaction.
 */
export class OutboxWorker {
  readonly #db: Db;
  readonly #projections: readonly Projection[];
  readonly #batchSize: number;
  readonly #idleMs: number;
  readonly #backoff: { readonly baseMs: number; readonly maxMs: number };
  readonly #applyTimeoutMs: number;
  readonly #onError: (error: unknown, projection: string) => void;
  readonly #random: () => number;
  #loops: Promise<void>[] = [];
  #stopping = false;
  #wake = new AbortController();
  /** Counts wakes, so a loop that was draining when one came looks again instead of sleeping. */
  #wakes = 0;
  #unlisten: (() => void) | undefined;
  readonly #stop = new AbortController();

  constructor(db: Db, projections: readonly Projection[], options: WorkerOptions = {}) {
    const names = projections.map((p) => p.name);
    if (new Set(names).size !== names.length) throw new Error(`two projections share a name: ${names.join(', ')}`);
    this.#db = db;
    this.#projections = projections;
    this.#batchSize = options.batchSize ?? DEFAULT_BATCH[db.kind];
    this.#idleMs = options.idleMs ?? 1000;
    this.#backoff = options.backoff ?? { baseMs: 1000, maxMs: 5 * 60_000 };
    this.#applyTimeoutMs = options.applyTimeoutMs ?? 30_000;
    this.#onError = options.onError ?? (() => undefined);
    this.#random = options.random ?? Math.random;
  }

  get projections(): readonly Projection[] {
    return this.#projections;
  }

  /** Starts one loop per projection; they run until `stop`. */
  start(): void {
    if (this.#loops.length > 0 || this.#stopping) return;
    this.#unlisten = this.#db.listen(OUTBOX_CHANNEL, () => this.wake());
    this.#loops = this.#projections.map((projection) => this.#loop(projection));
  }

  /** Lets sleeping loops look again now (e.g. after a write enqueued rows). */
  wake(): void {
    this.#wakes += 1;
    const previous = this.#wake;
    this.#wake = new AbortController();
    previous.abort();
  }

  /** Stops the loops after the batch each is applying, if any. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#unlisten?.();
    this.#unlisten = undefined;
    this.#stop.abort();
    this.wake();
    await Promise.all(this.#loops);
    this.#loops = [];
  }

  /**
   * Drains one projection until `stop`. Before claiming anything at start, and again after a
   * failure, it asks the backend's health outside any transaction: while the backend is down
   * it claims nothing (so no rows stay locked, and on PGlite no write waits on a connect
   * timeout), records the failure for /readyz and kgw doctor, and looks again after a
   * backoff that writes do not cut short.
   */
  async #loop(projection: Projection): Promise<void> {
    let suspect = projection.health !== undefined;
    let down = 0;
    let unprepared = 0;
    while (!this.#stopping) {
      if (suspect) {
        if (!(await this.#healthy(projection))) {
          down += 1;
          await sleepUntil(Math.min(HEALTH_RECHECK_MAX_MS, this.#delay(down)), this.#stop.signal);
          continue;
        }
        suspect = false;
        down = 0;
      }
      let result: DrainResult = { applied: 0, failed: 0 };
      const wakes = this.#wakes;
      try {
        result = await this.drainBatch(projection);
      } catch (error) {
        this.#onError(error, projection.name);
      }
      if (result.failed > 0) suspect = projection.health !== undefined;
      // A service a projection prepares from is down: back off like a health check, not cut short by writes.
      unprepared = result.unprepared === true ? unprepared + 1 : 0;
      if (unprepared > 0) {
        await sleepUntil(Math.min(HEALTH_RECHECK_MAX_MS, this.#delay(unprepared)), this.#stop.signal);
        continue;
      }
      // A wake during the drain may be for rows its claim did not yet see: look again first.
      if (result.applied === 0 && !this.#stopping && this.#wakes === wakes) await sleepUntil(this.#idleMs, this.#wake.signal);
    }
  }

  /** The backend's health check, bounded by the apply timeout; a failure is recorded as the projection's last error. */
  async #healthy(projection: Projection): Promise<boolean> {
    try {
      await this.#bounded(projection, 'health check did not answer', (signal) => projection.health?.(signal));
      return true;
    } catch (error) {
      this.#onError(error, projection.name);
      try {
        await this.#db.tx((tx) => recordError(tx, projection.name, `backend unavailable: ${describe(error)}`));
      } catch (storeError) {
        this.#onError(storeError, projection.name);
      }
      return false;
    }
  }

  /** The wait after the n-th consecutive failure: min(max, base · 2^(n-1)), jittered to 50-100 %. */
  #delay(attempt: number): number {
    return Math.round(Math.min(this.#backoff.maxMs, this.#backoff.baseMs * 2 ** (attempt - 1)) * (0.5 + 0.5 * this.#random()));
  }

  /** One claim-apply-commit round for each projection, one after the other. */
  async drainOnce(): Promise<DrainResult> {
    let applied = 0;
    let failed = 0;
    for (const projection of this.#projections) {
      const result = await this.drainBatch(projection);
      applied += result.applied;
      failed += result.failed;
    }
    return { applied, failed };
  }

  /** Rounds until one finds nothing due (rows backing off stay), at most `maxRounds`; for tests and tools. */
  async drainAll(maxRounds = 1000): Promise<DrainResult> {
    let applied = 0;
    let failed = 0;
    for (let round = 0; round < maxRounds; round++) {
      const result = await this.drainOnce();
      applied += result.applied;
      failed += result.failed;
      if (result.applied === 0 && result.failed === 0) break;
    }
    return { applied, failed };
  }

  /**
   * Claims up to a batch, applies it, and in the same transaction deletes what was applied and
   * records a failure. A batch holds, for each resource whose head it claimed, that resource's
   * rows in order from the head on, and goes to `apply` in id order, which keeps every
   * resource's order. When the batch as a whole fails, its rows are tried one by one until
   * one fails: the rows before it are applied, it backs off, and the rest are released untried
   * (their turn comes in the next round), so one bad row delays only its own resource. Its
   * resource's later rows in the batch come after it, so they are among those released: they
   * wait behind it while it backs off.
   */
  async drainBatch(projection: Projection): Promise<DrainResult> {
    const own = projection.batchSize ?? this.#batchSize;
    const batch = Math.max(1, this.#db.kind === 'pglite' ? Math.min(this.#batchSize, own) : own);
    if (projection.prepare !== undefined && !(await this.#prepare(projection, batch))) return { applied: 0, failed: 0, unprepared: true };
    return this.#db.tx(async (tx) => {
      let claimed = await tx.query<OutboxDbRow>(CLAIM, [projection.name, batch, batch * CLAIM_WINDOW_BATCHES]);
      if (claimed.length === 0) claimed = await tx.query<OutboxDbRow>(CLAIM, [projection.name, batch, null]);
      const rows = claimed.map(toOutboxRow);
      if (rows.length === 0) return { applied: 0, failed: 0 };
      const applied: OutboxRow[] = [];
      let failure: { row: OutboxRow; error: unknown } | undefined;
      try {
        await this.#apply(tx, projection, rows);
        applied.push(...rows);
      } catch (batchError) {
        if (rows.length === 1 && rows[0] !== undefined) failure = { row: rows[0], error: batchError };
        else {
          for (const row of rows) {
            try {
              await this.#apply(tx, projection, [row]);
              applied.push(row);
            } catch (error) {
              failure = { row, error };
              break;
            }
          }
        }
      }
      if (applied.length > 0) {
        const ids = applied.map((r) => r.id);
        await tx.query('DELETE FROM outbox WHERE id = ANY($1::bigint[])', [ids]);
        await tx.query(
          `INSERT INTO projection_state (projection, last_applied_id, last_applied_at, applied_total) VALUES ($1, $2, clock_timestamp(), $3)
           ON CONFLICT (projection) DO UPDATE SET last_applied_id = GREATEST(projection_state.last_applied_id, EXCLUDED.last_applied_id),
             last_applied_at = EXCLUDED.last_applied_at, applied_total = projection_state.applied_total + EXCLUDED.applied_total`,
          [projection.name, ids.reduce((a, b) => (BigInt(a) > BigInt(b) ? a : b)), applied.length],
        );
      }
      if (failure !== undefined) {
        const message = describe(failure.error);
        const attempt = failure.row.attempts + 1;
        const delayMs = this.#delay(attempt);
        await tx.query(
          `UPDATE outbox SET attempts = $2, last_error = $3, last_error_at = clock_timestamp(),
             next_attempt_at = clock_timestamp() + $4 * interval '1 millisecond' WHERE id = $1`,
          [failure.row.id, attempt, message, delayMs],
        );
        await recordError(tx, projection.name, message);
        this.#onError(failure.error, projection.name);
      }
      return { applied: applied.length, failed: failure === undefined ? 0 : 1 };
    });
  }

  /** The projection's preparation, outside any transaction, bounded by the apply timeout and by stop; false (recorded) when it failed. */
  async #prepare(projection: Projection, limit: number): Promise<boolean> {
    try {
      await this.#bounded(projection, 'did not prepare', async (signal) => {
        const due = await dueRows(this.#db, projection.name, limit);
        if (due.length > 0) await projection.prepare?.({ db: this.#db, rows: due, signal: AbortSignal.any([signal, this.#stop.signal]) });
      });
      return true;
    } catch (error) {
      this.#onError(error, projection.name);
      try {
        await this.#db.tx((tx) => recordError(tx, projection.name, describe(error)));
      } catch (storeError) {
        this.#onError(storeError, projection.name);
      }
      return false;
    }
  }

  /** One projection call under a savepoint (so a failed write through `tx` is undone) and a timeout. */
  async #apply(tx: Queryable, projection: Projection, rows: readonly OutboxRow[]): Promise<void> {
    await tx.query('SAVEPOINT outbox_apply');
    try {
      await this.#bounded(projection, 'did not answer', (signal) => projection.apply(rows, { tx, signal }));
      await tx.query('RELEASE SAVEPOINT outbox_apply');
    } catch (error) {
      await tx.query('ROLLBACK TO SAVEPOINT outbox_apply');
      throw error;
    }
  }

  /** A backend call bounded by the apply timeout: aborted through its signal and failed with "projection NAME <what> within N ms". */
  async #bounded(projection: Projection, what: string, call: (signal: AbortSignal) => Promise<unknown> | undefined): Promise<void> {
    const controller = new AbortController();
    const timedOut = new Promise<never>((_, reject) =>
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error), { once: true }),
    );
    const timer = setTimeout(
      () => controller.abort(new Error(`projection ${projection.name} ${what} within ${this.#applyTimeoutMs} ms`)),
      this.#applyTimeoutMs,
    );
    try {
      await Promise.race([call(controller.signal), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}
