import { projectionStatus } from '../outbox/outbox.ts';
import type { Queryable } from '../../store/db.ts';
import type { Readiness } from './readiness.ts';

/**
 * Whether search is provisioned, for a product's health tool (Atmina's `health`): which backend
 * the configuration names (the built-in engine, or Meilisearch), whether it answered its probe
 * just now, whether this gateway feeds it (the search projection runs here), and how far the
 * projection is behind.
 */
export interface SearchProvisioning {
  /** `builtin` or `meilisearch` (`none` only where a caller runs without search). */
  readonly backend: string;
  readonly configured: boolean;
  /** The backend answered its health check; null when none is configured. */
  readonly answers: boolean | null;
  /** The search projection runs in this gateway, so writes reach the backend. */
  readonly projectionRunning: boolean;
  /** Configured, answering and fed: search results can include what was written. */
  readonly provisioned: boolean;
  /** Outbox rows waiting for search (every tenant's), failing ones among them, and the latest error. */
  readonly pending: number;
  readonly failing: number;
  readonly lastError: string | null;
}

/**
 * `configured`: whether the configuration names a search backend; `projections`: the names of
 * the projections this gateway runs; `readiness`: the probes just run (the search one among them).
 */
export async function searchProvisioning(
  db: Queryable,
  input: { readonly configured: boolean; readonly projections: readonly string[] },
  readiness: Readiness,
): Promise<SearchProvisioning> {
  const probe = readiness.checks.find((c) => c.role === 'search');
  const { configured } = input;
  const projectionRunning = input.projections.includes('search');
  const status = (await projectionStatus(db, ['search'])).find((s) => s.projection === 'search');
  const answers = probe === undefined ? null : probe.ok;
  return {
    backend: probe?.backend ?? 'none',
    configured,
    answers,
    projectionRunning,
    provisioned: configured && answers === true && projectionRunning,
    pending: status?.backlog ?? 0,
    failing: status?.failing ?? 0,
    lastError: status?.lastError ?? null,
  };
}
