import type { Queryable } from '../../store/db.ts';
import type { TeamRole } from './team-roles.ts';
import type { BrainRole, Tier, TierViewer } from './tiers.ts';

/** The access attributes a principal carries, as the org file sets them. */
export interface PrincipalAccess extends TierViewer {
  readonly brainRole: BrainRole;
  /** Agents only: the cap on the agent's Atmina team roles (effectiveKbRole's agentPolicyMax). */
  readonly policyMaxTeamRole: TeamRole | undefined;
}

/** What a principal has when the org file says nothing: the lowest of everything. */
export const DEFAULT_ACCESS: PrincipalAccess = { tier: 'public', departments: [], projects: [], brainRole: 'viewer', policyMaxTeamRole: undefined };

interface AccessRow {
  tier: Tier;
  brain_role: BrainRole;
  departments: string[];
  projects: string[];
  policy_max_team_role: TeamRole | null;
}

/** Loads a principal's access attributes; undefined when the principal is not in the tenant. */
export async function loadPrincipalAccess(q: Queryable, tenantId: string, principalId: string): Promise<PrincipalAccess | undefined> {
  const [row] = await q.query<AccessRow>(
    'SELECT tier, brain_role, departments, projects, policy_max_team_role FROM principals WHERE tenant_id = $1 AND id = $2',
    [tenantId, principalId],
  );
  return (
    row && {
      tier: row.tier,
      brainRole: row.brain_role,
      departments: row.departments,
      projects: row.projects,
      policyMaxTeamRole: row.policy_max_team_role ?? undefined,
    }
  );
}
