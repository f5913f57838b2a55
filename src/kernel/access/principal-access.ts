import type { TeamRole } from '../directory/team-roles.ts';
import type { BrainRole, TierViewer } from '../directory/tiers.ts';

/** The access attributes a principal carries, as the org file sets them (read by directory/principals.ts). */
export interface PrincipalAccess extends TierViewer {
  readonly brainRole: BrainRole;
  /** Agents only: the cap on the agent's Atmina team roles (effectiveKbRole's agentPolicyMax). */
  readonly policyMaxTeamRole: TeamRole | undefined;
}

/** What a principal has when the org file says nothing: the lowest of everything. */
export const DEFAULT_ACCESS: PrincipalAccess = { tier: 'public', departments: [], projects: [], brainRole: 'viewer', policyMaxTeamRole: undefined };
