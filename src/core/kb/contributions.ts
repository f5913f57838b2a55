import type { Queryable } from '../../store/db.ts';

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
  const [row] = await q.query<{ last_write_at: Date | string }>(
    'SELECT last_write_at FROM kb_contributions WHERE tenant_id = $1 AND kb_id = $2 AND principal_id = $3',
    [tenantId, kbId, principalId],
  );
  return row === undefined ? undefined : new Date(row.last_write_at);
}
