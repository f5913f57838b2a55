import { requireTenant } from '../../kernel/directory/directory.ts';
import type { Queryable } from '../../store/db.ts';
import type { ContextType } from '../access/context-roles.ts';
import { WHOLE_TYPES } from './context-references.ts';

/**
 * The whole-type grants of a tenant for the operator (`kgw export folder`, whose org.yaml
 * recreates them): `all_knowledge`, `all_skills`, `all_memories` and `all_artifacts`, each with
 * its grantee as the org file's `grants:` names it (a person by email, an agent by name, a group
 * as `group:NAME`) and its role. The grants on one resource come with each resource
 * (operatorContext). Not paged: a grantee holds at most one grant per type, so there are at most
 * four per person, agent and group of the tenant, each a few dozen bytes.
 */

export interface OperatorTypeGrant {
  readonly to: string;
  /** all_knowledge, all_skills, all_memories or all_artifacts. */
  readonly on: string;
  readonly role: string;
}

/** The org file's word for each whole type (`knowledge` → `all_knowledge`). */
const WORD_OF = new Map<ContextType, string>([...WHOLE_TYPES].map(([word, type]) => [type, word]));

/** Sorted by UTF-16 code units, the same on every machine (localeCompare is not). */
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Every whole-type grant of the tenant, by grantee and then type. */
export async function operatorTypeGrants(q: Queryable, input: { tenant: string }): Promise<{ tenant: string; grants: OperatorTypeGrant[] }> {
  const tenant = await requireTenant(q, input.tenant);
  const rows = await q.query<{ target: string; type: ContextType; role: string }>(
    `SELECT COALESCE(p.email, p.name, 'group:' || g.name) AS target, c.resource_type AS type, c.role
       FROM context_grants c
       LEFT JOIN principals p ON p.tenant_id = c.tenant_id AND p.id = c.principal_id
       LEFT JOIN groups g ON g.tenant_id = c.tenant_id AND g.id = c.group_id
      WHERE c.tenant_id = $1 AND c.resource_id IS NULL`,
    [tenant.id],
  );
  const grants = rows.map((row) => ({ to: row.target, on: WORD_OF.get(row.type) ?? row.type, role: row.role }));
  grants.sort((a, b) => byText(a.to, b.to) || byText(a.on, b.on));
  return { tenant: tenant.slug, grants };
}

/** Grants and routes on single resources that an org file could hold but does not, named and with why. */
export interface OperatorAccessLeftOut {
  readonly name: string;
  readonly reason: string;
}

/**
 * Every grant and route of the tenant as an org file names them (the console's "download org
 * file", whose file declares no Knowledge, Skills or Memories and so names each resource as it
 * exists in the tenant: `knowledge:TITLE`). A grant or route on a resource the file cannot name
 * (an Artifact; an archived resource; one of several active ones of one name) is left out with
 * why, as `kgw export folder` leaves them out. Not paged: at most one grant per grantee and
 * resource, and one route per resource and agent or group.
 */
export async function operatorAccess(
  q: Queryable,
  input: { tenant: string },
): Promise<{
  tenant: string;
  grants: OperatorTypeGrant[];
  routes: { deliver: string; to: string }[];
  leftOut: OperatorAccessLeftOut[];
}> {
  const { tenant, grants } = await operatorTypeGrants(q, input);
  const { id: tenantId } = await requireTenant(q, tenant);
  type Row = { type: string; name: string; status: string; same: string; target: string; role: string | null };
  // `same`: active resources of the type and name, which the file could not tell apart when more than one.
  const named = `r.type, r.name, r.status,
       (SELECT count(*) FROM context_resources o WHERE o.tenant_id = r.tenant_id AND o.type = r.type AND o.name = r.name AND o.status = 'active')::text AS same`;
  const resourceGrants = await q.query<Row>(
    `SELECT ${named}, COALESCE(p.email, p.name, 'group:' || g.name) AS target, c.role
       FROM context_grants c
       JOIN context_resources r ON r.tenant_id = c.tenant_id AND r.id = c.resource_id
       LEFT JOIN principals p ON p.tenant_id = c.tenant_id AND p.id = c.principal_id
       LEFT JOIN groups g ON g.tenant_id = c.tenant_id AND g.id = c.group_id
      WHERE c.tenant_id = $1 AND c.resource_id IS NOT NULL`,
    [tenantId],
  );
  const routeRows = await q.query<Row>(
    `SELECT ${named}, COALESCE(a.name, 'group:' || g.name) AS target, NULL AS role
       FROM context_routes t
       JOIN context_resources r ON r.tenant_id = t.tenant_id AND r.id = t.resource_id
       LEFT JOIN principals a ON a.tenant_id = t.tenant_id AND a.id = t.agent_id
       LEFT JOIN groups g ON g.tenant_id = t.tenant_id AND g.id = t.group_id
      WHERE t.tenant_id = $1`,
    [tenantId],
  );
  const leftOut: OperatorAccessLeftOut[] = [];
  const whyNot = (row: Row): string | undefined =>
    row.type === 'artifact'
      ? 'on an Artifact, which the org file cannot name'
      : row.status !== 'active'
        ? 'on an archived resource, which the org file cannot name'
        : Number(row.same) > 1
          ? `${row.same} active resources have this name; the org file cannot tell them apart`
          : undefined;
  const routes: { deliver: string; to: string }[] = [];
  for (const row of resourceGrants) {
    const on = `${row.type}:${row.name}`;
    const reason = whyNot(row);
    if (reason === undefined) grants.push({ to: row.target, on, role: row.role ?? '' });
    else leftOut.push({ name: `grant to ${row.target} on ${on} (${row.role ?? ''})`, reason });
  }
  for (const row of routeRows) {
    const deliver = `${row.type}:${row.name}`;
    const reason = whyNot(row);
    if (reason === undefined) routes.push({ deliver, to: row.target });
    else leftOut.push({ name: `route of ${deliver} to ${row.target}`, reason });
  }
  grants.sort((a, b) => byText(a.to, b.to) || byText(a.on, b.on));
  routes.sort((a, b) => byText(a.deliver, b.deliver) || byText(a.to, b.to));
  leftOut.sort((a, b) => byText(a.name, b.name) || byText(a.reason, b.reason));
  return { tenant, grants, routes, leftOut };
}
