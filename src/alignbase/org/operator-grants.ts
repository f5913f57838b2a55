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
