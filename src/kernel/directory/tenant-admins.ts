import type { Queryable } from '../../store/db.ts';

/** Whether the person administers their tenant (the org file's `admin: true`; docs/org-file.md). */
export async function isTenantAdmin(q: Queryable, tenantId: string, principalId: string): Promise<boolean> {
  const rows = await q.query<{ tenant_admin: boolean }>("SELECT tenant_admin FROM principals WHERE tenant_id = $1 AND id = $2 AND kind = 'person'", [
    tenantId,
    principalId,
  ]);
  return rows[0]?.tenant_admin === true;
}
