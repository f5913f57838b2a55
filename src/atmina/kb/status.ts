import type { Caller } from '../../kernel/access/caller.ts';
import { isoOrNull } from '../../kernel/instants.ts';
import type { Queryable } from '../../store/db.ts';
import type { KbWithAccess } from './access.ts';
import { kbFor } from './access.ts';
import { KB_FILE_PROJECTIONS } from './projection.ts';

/**
 * What a KB holds and how far search and the graph are behind it, for the Atmina status
 * resources: counts of live files and their bytes, and the outbox rows still waiting for the
 * KB's files (every write enqueues one per projection, so "indexed" means none waits).
 */

export interface KbTotals {
  readonly files: number;
  readonly bytes: number;
}

/** Live files and their bytes per KB, for the KBs given (a KB without files: zeros). */
export async function kbTotals(q: Queryable, tenantId: string, kbIds: readonly string[]): Promise<ReadonlyMap<string, KbTotals>> {
  if (kbIds.length === 0) return new Map();
  const rows = await q.query<{ kb_id: string; files: string | number; bytes: string | number | null }>(
    `SELECT kb_id, count(*) AS files, sum(size_bytes) AS bytes FROM kb_files
      WHERE tenant_id = $1 AND kb_id = ANY($2::uuid[]) AND deleted_at IS NULL GROUP BY kb_id`,
    [tenantId, [...kbIds]],
  );
  const totals = new Map(rows.map((r) => [r.kb_id, { files: Number(r.files), bytes: Number(r.bytes ?? 0) }]));
  return new Map(kbIds.map((id) => [id, totals.get(id) ?? { files: 0, bytes: 0 }]));
}

/** One projection's backlog for a KB's files. */
export interface KbProjectionBacklog {
  readonly projection: string;
  /** Outbox rows waiting (a file written twice before indexing may wait with two). */
  readonly pending: number;
  /** Waiting rows that failed at least once and back off. */
  readonly failing: number;
  readonly oldestPendingAt: string | null;
  readonly lastError: string | null;
  readonly lastErrorAt: string | null;
}

interface BacklogRow {
  projection: string;
  pending: string | number;
  failing: string | number;
  oldest: Date | string | null;
  last_error: string | null;
  last_error_at: Date | string | null;
}

const instant = (value: Date | string | null): string | null => isoOrNull(value === null ? null : new Date(value));

/** The backlog per projection (search, graph; every one that has rows for the KB) of the KBs given. */
export async function kbBacklogs(q: Queryable, tenantId: string, kbIds: readonly string[]): Promise<ReadonlyMap<string, KbProjectionBacklog[]>> {
  if (kbIds.length === 0) return new Map();
  // The rows of a KB's files carry its id in the payload (projection.ts); the latest
  // error is the one of the waiting row that failed last.
  const rows = await q.query<BacklogRow & { kb_id: string }>(
    `SELECT o.payload->>'kbId' AS kb_id, o.projection, count(*) AS pending, count(*) FILTER (WHERE o.attempts > 0) AS failing,
            min(o.created_at) AS oldest,
            (array_agg(o.last_error ORDER BY o.last_error_at DESC NULLS LAST))[1] AS last_error,
            max(o.last_error_at) AS last_error_at
       FROM outbox o
      WHERE o.tenant_id = $1 AND o.resource_key LIKE 'kb_file:%' AND o.payload->>'kbId' = ANY($2::text[])
      GROUP BY 1, 2`,
    [tenantId, [...kbIds]],
  );
  const result = new Map<string, KbProjectionBacklog[]>();
  for (const id of kbIds) {
    const mine = rows.filter((r) => r.kb_id === id);
    const names = [...new Set([...KB_FILE_PROJECTIONS, ...mine.map((r) => r.projection)])].sort();
    result.set(
      id,
      names.map((projection) => {
        const row = mine.find((r) => r.projection === projection);
        return {
          projection,
          pending: Number(row?.pending ?? 0),
          failing: Number(row?.failing ?? 0),
          oldestPendingAt: instant(row?.oldest ?? null),
          lastError: row?.last_error ?? null,
          lastErrorAt: instant(row?.last_error_at ?? null),
        };
      }),
    );
  }
  return result;
}

export interface IndexingStatus {
  readonly kb: KbWithAccess;
  readonly totals: KbTotals;
  readonly projections: readonly KbProjectionBacklog[];
}

/** The indexing status of one KB (Viewer): its files and what search and the graph still have to apply. */
export async function indexingStatus(q: Queryable, caller: Caller, kbId: string): Promise<IndexingStatus> {
  const kb = await kbFor(q, caller, kbId, 'viewer', 'reading the indexing status');
  const [totals, backlogs] = await Promise.all([kbTotals(q, caller.tenant.id, [kb.kb.id]), kbBacklogs(q, caller.tenant.id, [kb.kb.id])]);
  return { kb, totals: totals.get(kb.kb.id) ?? { files: 0, bytes: 0 }, projections: backlogs.get(kb.kb.id) ?? [] };
}
