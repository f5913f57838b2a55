/**
 * The team role names, as the directory stores them: a team member's role (team_members.role)
 * and an agent's cap on its roles (principals.policy_max_team_role). They are facts of the
 * directory, which the org file sets; what a role allows is Atmina's decision
 * (src/atmina/access/team-roles.ts).
 */

/** Team roles, weakest first. */
export const TEAM_ROLES = ['viewer', 'editor', 'admin'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];

export function isTeamRole(value: string): value is TeamRole {
  return (TEAM_ROLES as readonly string[]).includes(value);
}
