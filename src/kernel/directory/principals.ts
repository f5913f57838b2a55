import type { Principal } from '../access/caller.ts';
import type { PrincipalAccess } from '../access/principal-access.ts';
import type { TeamRole } from './team-roles.ts';
import type { BrainRole, Tier } from './tiers.ts';
import type { Queryable } from '../../store/db.ts';

/*
 * Every read of the principals table outside the org file's own writes and the migrations:
 * each with the row type the store returns and its mapper. People are found by their
 * lower-case email, agents by name; the org file keeps both unique per tenant.
 */

interface PrincipalRow {
  id: string;
  kind: 'person' | 'agent';
  name: string;
  email: string | null;
  owner_id: string | null;
}

export const toPrincipal = (row: PrincipalRow): Principal => ({
  id: row.id,
  kind: row.kind,
  name: row.name,
  email: row.email ?? undefined,
  ownerId: row.owner_id ?? undefined,
});

const PRINCIPAL_COLUMNS = 'id, kind, name, email, owner_id';

/** A person of the tenant by email (compare it in lower case). */
export async function personByEmail(q: Queryable, tenantId: string, email: string): Promise<Principal | undefined> {
  const [row] = await q.query<PrincipalRow>(`SELECT ${PRINCIPAL_COLUMNS} FROM principals WHERE tenant_id = $1 AND kind = 'person' AND email = $2`, [
    tenantId,
    email,
  ]);
  return row === undefined ? undefined : toPrincipal(row);
}

/** An agent of the tenant by name. */
export async function agentByName(q: Queryable, tenantId: string, name: string): Promise<Principal | undefined> {
  const [row] = await q.query<PrincipalRow>(`SELECT ${PRINCIPAL_COLUMNS} FROM principals WHERE tenant_id = $1 AND kind = 'agent' AND name = $2`, [
    tenantId,
    name,
  ]);
  return row === undefined ? undefined : toPrincipal(row);
}

/** An agent by id and name. */
export interface AgentName {
  readonly id: string;
  readonly name: string;
}

/** The agents of the tenant among `ids` (anything else is left out); no order. */
export async function findAgents(q: Queryable, tenantId: string, ids: readonly string[]): Promise<AgentName[]> {
  if (ids.length === 0) return [];
  return q.query<AgentName>("SELECT id, name FROM principals WHERE tenant_id = $1 AND kind = 'agent' AND id = ANY($2::uuid[])", [tenantId, [...ids]]);
}

/** The agents a person owns, by name. */
export async function agentsOwnedBy(q: Queryable, tenantId: string, ownerId: string): Promise<AgentName[]> {
  return q.query<AgentName>("SELECT id, name FROM principals WHERE tenant_id = $1 AND kind = 'agent' AND owner_id = $2 ORDER BY name, id", [tenantId, ownerId]);
}

/** The agent `agentId` when `ownerId` owns it. */
export async function ownedAgent(q: Queryable, tenantId: string, agentId: string, ownerId: string): Promise<AgentName | undefined> {
  const [row] = await q.query<AgentName>("SELECT id, name FROM principals WHERE tenant_id = $1 AND id = $2 AND kind = 'agent' AND owner_id = $3", [
    tenantId,
    agentId,
    ownerId,
  ]);
  return row;
}

/** What a sign-in checks: the person of an organisation (by slug) with this email, and their password hash. */
export async function personSignIn(
  q: Queryable,
  tenantSlug: string,
  email: string,
): Promise<{ tenantId: string; personId: string; passwordHash: string | null } | undefined> {
  const [row] = await q.query<{ tenant_id: string; id: string; password_hash: string | null }>(
    `SELECT p.tenant_id, p.id, p.password_hash
       FROM principals p JOIN tenants n ON n.id = p.tenant_id
      WHERE n.slug = $1 AND p.kind = 'person' AND p.email = $2`,
    [tenantSlug, email],
  );
  return row === undefined ? undefined : { tenantId: row.tenant_id, personId: row.id, passwordHash: row.password_hash };
}

interface AccessRow {
  tier: Tier;
  brain_role: BrainRole;
  departments: string[];
  projects: string[];
  policy_max_team_role: TeamRole | null;
}

const toAccess = (row: AccessRow): PrincipalAccess => ({
  tier: row.tier,
  brainRole: row.brain_role,
  departments: row.departments,
  projects: row.projects,
  policyMaxTeamRole: row.policy_max_team_role ?? undefined,
});

const ACCESS_COLUMNS = 'tier, brain_role, departments, projects, policy_max_team_role';

/** A principal's access attributes as the org file set them; undefined when the principal is not in the tenant. */
export async function principalAccess(q: Queryable, tenantId: string, principalId: string): Promise<PrincipalAccess | undefined> {
  const [row] = await q.query<AccessRow>(`SELECT ${ACCESS_COLUMNS} FROM principals WHERE tenant_id = $1 AND id = $2`, [tenantId, principalId]);
  return row === undefined ? undefined : toAccess(row);
}

/** A principal with everything the org file sets on it. */
export interface PrincipalRecord {
  readonly id: string;
  readonly kind: 'person' | 'agent';
  readonly name: string;
  readonly email: string | null;
  readonly ownerId: string | null;
  readonly access: PrincipalAccess;
}

/** Every person and agent of the tenant, by id. */
export async function listPrincipals(q: Queryable, tenantId: string): Promise<PrincipalRecord[]> {
  const rows = await q.query<PrincipalRow & AccessRow>(`SELECT ${PRINCIPAL_COLUMNS}, ${ACCESS_COLUMNS} FROM principals WHERE tenant_id = $1 ORDER BY id`, [
    tenantId,
  ]);
  return rows.map((row) => ({ id: row.id, kind: row.kind, name: row.name, email: row.email, ownerId: row.owner_id, access: toAccess(row) }));
}
