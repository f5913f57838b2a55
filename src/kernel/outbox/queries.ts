import type { OutboxRow } from '../../../connectors/projection.ts';
import type { Queryable } from '../../store/db.ts';
import { instantOf } from '../instants.ts';

/*
 * The rows of outbox and projection_state as the drivers return them, the status reads, and
 * the mappers to the domain: the one place where a count becomes a number and a timestamp a
 * Date, for the worker that claims rows (its claim stays beside its locking rules) and the
 * status that reports on them.
 */

export interface OutboxDbRow {
  id: string;
  tenant_id: string;
  projection: string;
  resource_key: string;
  operation: 'upsert' | 'delete';
  payload: Record<string, unknown> | string;
  created_at: Date | string;
  attempts: number;
}

export function toOutboxRow(row: OutboxDbRow): OutboxRow {
  return {
    id: String(row.id),
    tenantId: row.tenant_id,
    projection: row.projection,
    resourceKey: row.resource_key,
    operation: row.operation,
    payload: typeof row.payload === 'string' ? (JSON.parse(row.payload) as Record<string, unknown>) : row.payload,
    createdAt: instantOf(row.created_at),
    attempts: Number(row.attempts),
  };
}

/** One projection's waiting rows: how many, how many failed at least once, and the oldest one's age. */
export interface Backlog {
  readonly projection: string;
  readonly backlog: number;
  readonly failing: number;
  readonly oldestAgeMs: number;
}

interface BacklogRow {
  projection: string;
  backlog: string | number;
  failing: string | number;
  oldest_age_ms: string | number | null;
}

const toBacklog = (row: BacklogRow): Backlog => ({
  projection: row.projection,
  backlog: Number(row.backlog),
  failing: Number(row.failing),
  oldestAgeMs: Number(row.oldest_age_ms ?? 0),
});

/** The backlog of every projection that has rows waiting. */
export async function selectBacklogs(q: Queryable): Promise<Backlog[]> {
  const rows = await q.query<BacklogRow>(
    `SELECT projection, count(*) AS backlog, count(*) FILTER (WHERE attempts > 0) AS failing,
            floor(extract(epoch FROM (clock_timestamp() - min(created_at))) * 1000) AS oldest_age_ms
       FROM outbox GROUP BY projection`,
  );
  return rows.map(toBacklog);
}

/** What a projection last recorded: when it last applied rows, and its latest failure. */
export interface ProjectionState {
  readonly projection: string;
  readonly lastAppliedAt: Date | null;
  readonly lastError: string | null;
  readonly lastErrorAt: Date | null;
}

interface ProjectionStateRow {
  projection: string;
  last_applied_at: Date | string | null;
  last_error: string | null;
  last_error_at: Date | string | null;
}

const toProjectionState = (row: ProjectionStateRow): ProjectionState => ({
  projection: row.projection,
  lastAppliedAt: row.last_applied_at === null ? null : new Date(row.last_applied_at),
  lastError: row.last_error,
  lastErrorAt: row.last_error_at === null ? null : new Date(row.last_error_at),
});

/** What every projection last recorded. */
export async function selectProjectionStates(q: Queryable): Promise<ProjectionState[]> {
  const rows = await q.query<ProjectionStateRow>('SELECT projection, last_applied_at, last_error, last_error_at FROM projection_state');
  return rows.map(toProjectionState);
}
