import { randomUUID } from 'node:crypto';
import type { Queryable, Transaction } from '../../store/db.ts';
import type { ContextRole, ContextType, ReachingGrant } from './context-roles.ts';
import { combineGrants } from './context-roles.ts';

/** Who a grant is for: one principal, or every current and future member of a group. */
export type Grantee = { readonly principalId: string } | { readonly groupId: string };

// The principal's own grants and those of its groups, in one tenant; a grant of another tenant
// never matches because every condition names the tenant. Grants are the org file's
// (context_grants) plus the Artifact shares of messages (context_shares, always on one
// resource): both only ever add a role, so they are read as one set.
const REACHING = `
  SELECT g.resource_id AS "resourceId", g.role
    FROM (SELECT tenant_id, principal_id, group_id, resource_type, resource_id, role FROM context_grants
          UNION ALL
          SELECT tenant_id, principal_id, group_id, resource_type, resource_id, role FROM context_shares) g
   WHERE g.tenant_id = $1 AND g.resource_type = $3
     AND (g.principal_id = $2
          OR g.group_id IN (SELECT m.group_id FROM group_members m WHERE m.tenant_id = $1 AND m.principal_id = $2))`;

/**
 * The principal's effective role on one resource of `type`, or on the whole type when
 * `resourceId` is undefined (the role that decides creating). Highest of direct grants,
 * group grants and whole-type grants; undefined when none reaches it. A resource that is not
 * of `type` in this tenant has no role, so a whole-type grant cannot leak onto it.
 */
export async function effectiveContextRole(
  q: Queryable,
  tenantId: string,
  principalId: string,
  type: ContextType,
  resourceId: string | undefined,
): Promise<ContextRole | undefined> {
  if (resourceId === undefined) {
    const rows = await q.query<ReachingGrant>(`${REACHING} AND g.resource_id IS NULL`, [tenantId, principalId, type]);
    return combineGrants(rows, undefined);
  }
  const rows = await q.query<ReachingGrant>(
    `${REACHING} AND (g.resource_id IS NULL OR g.resource_id = $4)
       AND EXISTS (SELECT 1 FROM context_resources r WHERE r.tenant_id = $1 AND r.id = $4 AND r.type = $3)`,
    [tenantId, principalId, type, resourceId],
  );
  return combineGrants(rows, resourceId);
}

/** Every role a principal holds on one type, for list tools: one query instead of one per row. */
export interface ContextRoleTable {
  /** The role on the whole type (All Knowledge …): the floor of every resource's role. */
  readonly typeRole: ContextRole | undefined;
  /** The effective role on one resource of the type. */
  roleOn(resourceId: string): ContextRole | undefined;
  /** The resources with a grant of their own (whole-type grants reach every resource besides). */
  readonly grantedResourceIds: ReadonlySet<string>;
}

export async function contextRoleTable(q: Queryable, tenantId: string, principalId: string, type: ContextType): Promise<ContextRoleTable> {
  const rows = await q.query<ReachingGrant>(REACHING, [tenantId, principalId, type]);
  const typeRole = combineGrants(rows, undefined);
  const grantedResourceIds = new Set(rows.flatMap((row) => (row.resourceId === null ? [] : [row.resourceId])));
  return { typeRole, grantedResourceIds, roleOn: (resourceId) => combineGrants(rows, resourceId) };
}

const granteeColumns = (grantee: Grantee): [string | null, string | null] => ('principalId' in grantee ? [grantee.principalId, null] : [null, grantee.groupId]);

/**
 * Grants `role` to the grantee on one resource or, with `resourceId` undefined, on the whole
 * type. Granting again on the same target replaces the role. Returns whether anything changed.
 */
export async function grantContextRole(
  tx: Transaction,
  input: { tenantId: string; grantee: Grantee; type: ContextType; resourceId: string | undefined; role: ContextRole },
): Promise<boolean> {
  const [principalId, groupId] = granteeColumns(input.grantee);
  const rows = await tx.query(
    `INSERT INTO context_grants (tenant_id, id, principal_id, group_id, resource_type, resource_id, role)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT ON CONSTRAINT context_grants_target DO UPDATE SET role = EXCLUDED.role
       WHERE context_grants.role <> EXCLUDED.role
     RETURNING id`,
    [input.tenantId, randomUUID(), principalId, groupId, input.type, input.resourceId ?? null, input.role],
  );
  return rows.length > 0;
}

/** Removes the grantee's grant on the target; returns whether there was one. */
export async function revokeContextGrant(
  tx: Transaction,
  input: { tenantId: string; grantee: Grantee; type: ContextType; resourceId: string | undefined },
): Promise<boolean> {
  const [principalId, groupId] = granteeColumns(input.grantee);
  const rows = await tx.query(
    `DELETE FROM context_grants
      WHERE tenant_id = $1 AND principal_id IS NOT DISTINCT FROM $2 AND group_id IS NOT DISTINCT FROM $3
        AND resource_type = $4 AND resource_id IS NOT DISTINCT FROM $5
      RETURNING id`,
    [input.tenantId, principalId, groupId, input.type, input.resourceId ?? null],
  );
  return rows.length > 0;
}
