import type { Queryable } from '../../store/db.ts';
import type { ContributionRow } from './queries.ts';
import { toLastWrite } from './queries.ts';
import { teamSettings } from './settings.ts';

/**
 * When each principal last wrote to a KB (kb_contributions): the reader's own record behind the
 * contribution note of read_file, which another principal's writes never silence. Every saved
 * version records it in its own transaction.
 */

export async function recordContribution(tx: Queryable, tenantId: string, kbId: string, principalId: string): Promise<void> {
  await tx.query(
    `INSERT INTO kb_contributions (tenant_id, kb_id, principal_id, last_write_at) VALUES ($1, $2, $3, clock_timestamp())
     ON CONFLICT (tenant_id, kb_id, principal_id) DO UPDATE SET last_write_at = GREATEST(kb_contributions.last_write_at, EXCLUDED.last_write_at)`,
    [tenantId, kbId, principalId],
  );
}

/** When the principal last wrote to the KB; undefined when it never has. */
export async function lastContribution(q: Queryable, tenantId: string, kbId: string, principalId: string): Promise<Date | undefined> {
  const [row] = await q.query<ContributionRow>('SELECT last_write_at FROM kb_contributions WHERE tenant_id = $1 AND kb_id = $2 AND principal_id = $3', [
    tenantId,
    kbId,
    principalId,
  ]);
  return row === undefined ? undefined : toLastWrite(row);
}

/**
 * How recent a principal's last write to a KB must be to silence the contribution note, in days:
 * the owning team's `contribution_note_days` (settings.ts; 14 unless the team set another).
 */
export async function contributionWindowDays(q: Queryable, tenantId: string, teamId: string): Promise<number> {
  return (await teamSettings(q, tenantId, teamId)).contributionNoteDays;
}

/**
 * The contribution note a read shows the reader ahead of the content: that it has never written
 * to the KB, or not within the window; undefined when it has written lately. It reports a
 * condition, it asks for nothing. Only the reader's own writes count (kb_contributions is per
 * principal), so another agent's writes never silence it. The window is compared on the store's
 * clock, the one that stamped the write.
 */
export async function contributionNote(
  q: Queryable,
  tenantId: string,
  kb: { readonly id: string; readonly teamId: string },
  principalId: string,
): Promise<string | undefined> {
  const days = await contributionWindowDays(q, tenantId, kb.teamId);
  const [row] = await q.query<{ recent: boolean }>(
    `SELECT last_write_at > clock_timestamp() - make_interval(days => $4::int) AS recent
       FROM kb_contributions WHERE tenant_id = $1 AND kb_id = $2 AND principal_id = $3`,
    [tenantId, kb.id, principalId, days],
  );
  if (row === undefined) return 'You have never written to this Knowledge Base.';
  if (row.recent) return undefined;
  return `You have not written to this Knowledge Base in the last ${days} days.`;
}
