/**
 * Atmina's access to a Knowledge Base, decided from the caller's role in the owning team, the
 * shares that reach the caller and an agent's policy. Pure: `teamKbAccess` (team-shares.ts)
 * loads the inputs from team memberships and team shares; per-KB shares, when they arrive, add
 * their roles to `shareRoles` the same way. A KB's visibility picks which roles count
 * (src/atmina/kb/access.ts). See docs/access.md.
 */

import type { TeamRole } from '../../kernel/directory/team-roles.ts';
import { TEAM_ROLES } from '../../kernel/directory/team-roles.ts';

// The role names are the directory's facts; Atmina's code takes them from here, with what they allow.
export { isTeamRole, TEAM_ROLES, type TeamRole } from '../../kernel/directory/team-roles.ts';

/**
 * What a caller may do on one KB, weakest first: nothing, search only (anonymous or
 * role-less callers on a public KB), or a team role's tools.
 */
export const KB_ACCESS = ['none', 'search', ...TEAM_ROLES] as const;
export type KbAccess = (typeof KB_ACCESS)[number];

const rank = (access: KbAccess): number => KB_ACCESS.indexOf(access);

/** The weaker of two accesses. */
function lower(a: KbAccess, b: KbAccess): KbAccess {
  return rank(a) <= rank(b) ? a : b;
}

export interface KbAccessInput {
  /** The caller's role in the team that owns the KB; undefined when not a member (or anonymous). */
  readonly teamRole: TeamRole | undefined;
  /** Roles of the shares that reach the caller (to them, or to a team they belong to): the owning team's shares, and later the KB's own. */
  readonly shareRoles: readonly TeamRole[];
  /** An agent's policy cap (principals.policy_max_team_role); undefined for people and unset policies. */
  readonly agentPolicyMax: TeamRole | undefined;
  /** Whether the KB is public: anyone, even without a token, may search it. */
  readonly isPublic: boolean;
}

/**
 * The caller's access to a KB: the highest of the owning-team role and every share (roles
 * add up, as in Alignbase), capped by the agent's policy, which narrows and never raises. A
 * caller left without a role may still search a public KB, and nothing else.
 */
export function effectiveKbRole(input: KbAccessInput): KbAccess {
  let access: KbAccess = 'none';
  for (const role of [input.teamRole, ...input.shareRoles]) {
    if (role !== undefined && rank(role) > rank(access)) access = role;
  }
  if (input.agentPolicyMax !== undefined) access = lower(access, input.agentPolicyMax);
  if (access === 'none' && input.isPublic) access = 'search';
  return access;
}

/** Whether an access reaches a tool's minimum: `search` for search, else Viewer, Editor or Admin. */
export function kbAllows(access: KbAccess, minimum: Exclude<KbAccess, 'none'>): boolean {
  return rank(access) >= rank(minimum);
}
