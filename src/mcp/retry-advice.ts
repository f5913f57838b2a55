import type { KgwError, Reason } from '../kernel/errors.ts';
import { CONFLICT_ADVICE } from './errors.ts';

/*
 * Which refusals get the advice to wait and try again, said after the spec's text. Only those
 * that waiting can resolve: a write that lost a race with concurrent writers, and work another
 * call holds for a moment. A conflict the caller must resolve itself (a path or slug taken, a
 * move target that exists, a stale preview, a wrong chained if_match, a reused idempotency key,
 * a limit reached) gets none: the Atmina spec treats `conflict` as stale state to reread and
 * reapply, and says "do not blindly retry"; advice to wait would send an agent round a loop
 * that cannot end.
 */

/** Said after a busy refusal: the other call finishes on its own; asking again at once only adds load. */
export const BUSY_ADVICE =
  'Another call is working on this right now. Wait a random time that doubles with each try (full jitter) before asking again, so that callers waiting together do not ask at the same moment.';

/**
 * The reasons of a write that lost a race: Alignbase's stale expected_version (its spec: read
 * latest, merge, write again), Atmina's stale if_match and an append or patch whose file kept
 * changing under it.
 */
const LOST_RACE: ReadonlySet<Reason> = new Set<Reason>(['version_conflict', 'stale_if_match', 'write_contended']);

/** The reasons of work another call holds for a moment: an upload batch being confirmed. */
const BUSY: ReadonlySet<Reason> = new Set<Reason>(['upload_batch_busy']);

/** The advice to back off with jitter for a refusal that waiting can resolve; undefined for any other. */
export function retryAdvice(error: KgwError): string | undefined {
  if (error.reason === undefined) return undefined;
  if (LOST_RACE.has(error.reason)) return CONFLICT_ADVICE;
  if (BUSY.has(error.reason)) return BUSY_ADVICE;
  return undefined;
}
