import type { Queryable } from '../../store/db.ts';
import { selectEnabled } from './queries.ts';
import { refuse } from './refusals.ts';

/** Whether Activity is on for the tenant: on unless an admin switched it off (kgw activity --disable). */
export async function activityEnabled(q: Queryable, tenantId: string): Promise<boolean> {
  return (await selectEnabled(q, tenantId)) ?? true;
}

export async function requireEnabled(q: Queryable, tenantId: string): Promise<void> {
  if (!(await activityEnabled(q, tenantId))) throw refuse.disabled();
}
