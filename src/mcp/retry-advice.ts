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
 * The refusals a dialect advises to back off from, by reason, each set declared by the product
 * whose tools refuse so: `lostRace`, a write that lost a race (Alignbase's stale
 * expected_version, Atmina's stale if_match); `busy`, work another call holds for a moment (an
 * upload batch being confirmed).
 */
export interface RetryReasons {
  readonly lostRace: ReadonlySet<Reason>;
  readonly busy?: ReadonlySet<Reason>;
}

/** The advice to back off with jitter for a refusal that waiting can resolve; undefined for any other. */
export function retryAdvice(error: KgwError, reasons: RetryReasons): string | undefined {
  if (error.reason === undefined) return undefined;
  if (reasons.lostRace.has(error.reason)) return CONFLICT_ADVICE;
  if (reasons.busy?.has(error.reason) === true) return BUSY_ADVICE;
  return undefined;
}
