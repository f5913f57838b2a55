import type { OrgChange } from './section.ts';

/**
 * Thrown inside a transaction to roll a dry run back once its plan is known: the plan's
 * writes ran, so the database's own checks judged it, and none of them stays.
 */
export class DryRunRollback<R> extends Error {
  readonly result: R;

  constructor(result: R) {
    super('dry run');
    this.result = result;
  }
}

/** Runs `apply`, giving back the result a dry run rolled back with. */
export async function unlessDryRun<R>(apply: () => Promise<R>): Promise<R> {
  try {
    return await apply();
  } catch (error) {
    if (error instanceof DryRunRollback) return error.result as R;
    throw error;
  }
}

/** How many changes of each `action kind` a plan makes, for the audit record. */
export function changeCounts(changes: readonly OrgChange[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const change of changes) counts[`${change.action} ${change.kind}`] = (counts[`${change.action} ${change.kind}`] ?? 0) + 1;
  return counts;
}
