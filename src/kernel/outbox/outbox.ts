import type { OutboxEntry, ResourceRef } from '../../../connectors/projection.ts';
import { isoOrNull } from '../instants.ts';
import type { Queryable, Transaction } from '../../store/db.ts';
import { valuesList } from '../../store/db.ts';
import { selectBacklogs, selectProjectionStates } from './queries.ts';

export type { OutboxEntry, OutboxRow } from '../../../connectors/projection.ts';

/** The channel a transaction that enqueued rows signals at commit, so sleeping workers look at once (here and in other processes). */
export const OUTBOX_CHANNEL = 'kgw_outbox';

// The first key of the two-key advisory locks that order writers per resource.
const RESOURCE_LOCK_CLASS = 727_007;
const WIDTH = 5;

/**
 * Takes a transaction-scoped lock per (projection, resource key), in a fixed order. Held until
 * the writer commits, it makes outbox ids of one resource increase in commit order: a second
 * writer of the same resource takes its id only after the first one committed. (Hash
 * collisions only serialise two unrelated resources a little.)
 */
export async function lockResources(tx: Queryable, projection: string, refs: readonly ResourceRef[]): Promise<void> {
  const keys = [...new Set(refs.map((r) => `${projection}\n${r.tenantId}\n${r.resourceKey}`))].sort();
  if (keys.length === 0) return;
  await tx.query(`SELECT pg_advisory_xact_lock(${RESOURCE_LOCK_CLASS}, hashtext(k)) FROM unnest($1::text[]) WITH ORDINALITY AS t(k, n) ORDER BY n`, [keys]);
}

/**
 * Records changes for projections inside the writer's own transaction, so a row exists exactly
 * when the change does. Call it after the write itself. The outbox worker applies them later:
 * the commit wakes the workers (OUTBOX_CHANNEL), so a write does not wait for their next poll.
 */
export async function enqueue(tx: Transaction, entries: readonly OutboxEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await insertOutboxRows(tx, entries);
  // A wake, not a signal: the workers poll too, and a NOTIFY inside every write's transaction
  // would make the writers commit one at a time (Transaction.wake).
  tx.wake(OUTBOX_CHANNEL);
}

/**
 * Records changes like `enqueue` without waking the workers at commit: for a projection that
 * feeds another from inside its own apply (the search projection the vectors one), in the
 * transaction the worker gave it. The other projection's loop finds them at its next poll.
 */
export async function insertOutboxRows(tx: Queryable, entries: readonly OutboxEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const byProjection = new Map<string, OutboxEntry[]>();
  for (const entry of entries) byProjection.set(entry.projection, [...(byProjection.get(entry.projection) ?? []), entry]);
  for (const [projection, group] of [...byProjection].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) await lockResources(tx, projection, group);
  for (let start = 0; start < entries.length; start += 500) {
    const chunk = entries.slice(start, start + 500);
    await tx.query(
      `INSERT INTO outbox (tenant_id, projection, resource_key, operation, payload) VALUES ${valuesList(chunk.length, WIDTH)}`,
      chunk.flatMap((e) => [e.tenantId, e.projection, e.resourceKey, e.operation, JSON.stringify(e.payload ?? {})]),
    );
  }
}

/** How far behind one projection is, and its latest failure. */
export interface ProjectionStatus {
  readonly projection: string;
  /** Rows waiting (including rows backing off after failures). */
  readonly backlog: number;
  /** Age of the oldest waiting row; 0 when none waits. */
  readonly oldestAgeMs: number;
  /** Waiting rows that failed at least once. */
  readonly failing: number;
  readonly lastAppliedAt: string | null;
  readonly lastError: string | null;
  readonly lastErrorAt: string | null;
}

/** Status of the named projections plus any other that has rows waiting or a recorded state. */
export async function projectionStatus(db: Queryable, names: readonly string[] = []): Promise<ProjectionStatus[]> {
  const backlog = await selectBacklogs(db);
  const state = await selectProjectionStates(db);
  const all = [...new Set([...names, ...backlog.map((b) => b.projection), ...state.map((s) => s.projection)])].sort();
  return all.map((projection) => {
    const b = backlog.find((r) => r.projection === projection);
    const s = state.find((r) => r.projection === projection);
    return {
      projection,
      backlog: b?.backlog ?? 0,
      oldestAgeMs: Math.max(0, b?.oldestAgeMs ?? 0),
      failing: b?.failing ?? 0,
      lastAppliedAt: isoOrNull(s?.lastAppliedAt),
      lastError: s?.lastError ?? null,
      lastErrorAt: isoOrNull(s?.lastErrorAt),
    };
  });
}
