import { randomUUID } from 'node:crypto';
import type { Queryable, Transaction } from '../../store/db.ts';
import type { KbAccess, KbAccessInput, TeamRole } from './team-roles.ts';
import { effectiveKbRole, TEAM_ROLES } from './team-roles.ts';

/**
 * Team shares (`team_shares`): a team shares every Knowledge Base it owns, present and future,
 * with another team (every current and future member of it) or with one person or agent, at
 * a team role. This file loads the inputs of effectiveKbRole for one principal and one owning
 * team, and writes shares for the org file. See docs/access.md.
 */

/** Who a team share is for: every member of another team, or one principal. */
export type ShareGrantee = { readonly teamId: string } | { readonly principalId: string };

/** What decides a principal's access to the KBs of one team, before the KB's own visibility. */
export type TeamKbAccess = Omit<KbAccessInput, 'isPublic'>;

const NO_ACCESS: TeamKbAccess = { teamRole: undefined, shareRoles: [], agentPolicyMax: undefined };

interface AccessRow {
  team_role: TeamRole | null;
  share_roles: TeamRole[];
  policy_max_team_role: TeamRole | null;
}

// One row for the principal, or none when it is not in the tenant. Every condition names the
// tenant, so a membership, share or team of another tenant never matches. Shares reach the
// principal directly or through any team it is a member of (at any role there).
const TEAM_KB_ACCESS = `
  SELECT (SELECT m.role FROM team_members m
           WHERE m.tenant_id = $1 AND m.team_id = $3 AND m.principal_id = $2) AS team_role,
         ARRAY(SELECT s.role FROM team_shares s
                WHERE s.tenant_id = $1 AND s.team_id = $3
                  AND (s.principal_id = $2
                       OR s.grantee_team_id IN (SELECT g.team_id FROM team_members g WHERE g.tenant_id = $1 AND g.principal_id = $2))) AS share_roles,
         p.policy_max_team_role
    FROM principals p
   WHERE p.tenant_id = $1 AND p.id = $2`;

/**
 * The inputs of effectiveKbRole (all but `isPublic`) for a principal and the team that owns
 * a KB, in one query: the principal's role in that team (undefined when not a member), the
 * role of every team share that reaches it (weakest first), and an agent's policy cap. A
 * principal or team that is not in the tenant has nothing.
 */
export async function teamKbAccess(q: Queryable, tenantId: string, principalId: string, owningTeamId: string): Promise<TeamKbAccess> {
  const [row] = await q.query<AccessRow>(TEAM_KB_ACCESS, [tenantId, principalId, owningTeamId]);
  if (!row) return NO_ACCESS;
  return {
    teamRole: row.team_role ?? undefined,
    shareRoles: [...row.share_roles].sort((a, b) => TEAM_ROLES.indexOf(a) - TEAM_ROLES.indexOf(b)),
    agentPolicyMax: row.policy_max_team_role ?? undefined,
  };
}

interface TeamAccessRow {
  team_id: string;
  team_role: TeamRole | null;
  share_roles: TeamRole[];
}

// Every team of the tenant with the principal's role in it and the roles of the shares of it
// that reach the principal; the policy comes from the principal's own row (none: not in the tenant).
const TEAM_KB_ACCESS_ALL = `
  SELECT t.id AS team_id,
         (SELECT m.role FROM team_members m
           WHERE m.tenant_id = $1 AND m.team_id = t.id AND m.principal_id = $2) AS team_role,
         ARRAY(SELECT s.role FROM team_shares s
                WHERE s.tenant_id = $1 AND s.team_id = t.id
                  AND (s.principal_id = $2
                       OR s.grantee_team_id IN (SELECT g.team_id FROM team_members g WHERE g.tenant_id = $1 AND g.principal_id = $2))) AS share_roles
    FROM teams t
   WHERE t.tenant_id = $1 AND EXISTS (SELECT 1 FROM principals p WHERE p.tenant_id = $1 AND p.id = $2)`;

/**
 * teamKbAccess for every team of the tenant at once, for lists of KBs of many teams: two
 * queries whatever the number of teams. A team missing from the map gives nothing.
 */
export async function teamKbAccessByTeam(q: Queryable, tenantId: string, principalId: string): Promise<ReadonlyMap<string, TeamKbAccess>> {
  const [rows, policy] = await Promise.all([
    q.query<TeamAccessRow>(TEAM_KB_ACCESS_ALL, [tenantId, principalId]),
    q.query<{ policy_max_team_role: TeamRole | null }>('SELECT policy_max_team_role FROM principals WHERE tenant_id = $1 AND id = $2', [tenantId, principalId]),
  ]);
  const agentPolicyMax = policy[0]?.policy_max_team_role ?? undefined;
  return new Map(
    rows.map((row) => [
      row.team_id,
      {
        teamRole: row.team_role ?? undefined,
        shareRoles: [...row.share_roles].sort((a, b) => TEAM_ROLES.indexOf(a) - TEAM_ROLES.indexOf(b)),
        agentPolicyMax,
      },
    ]),
  );
}

/**
 * A principal's access to a KB of `owningTeamId`: effectiveKbRole over teamKbAccess. `none`,
 * or `search` when the KB is public, for a principal that no role reaches.
 */
export async function kbRoleFor(q: Queryable, tenantId: string, principalId: string, owningTeamId: string, isPublic: boolean): Promise<KbAccess> {
  return effectiveKbRole({ ...(await teamKbAccess(q, tenantId, principalId, owningTeamId)), isPublic });
}

const granteeColumns = (grantee: ShareGrantee): [string | null, string | null] => ('teamId' in grantee ? [grantee.teamId, null] : [null, grantee.principalId]);

/**
 * Shares every KB of `teamId` with the grantee at `role`; sharing again replaces the role.
 * The database refuses a team sharing with itself. Returns whether anything changed.
 */
export async function shareTeamKbs(tx: Transaction, input: { tenantId: string; teamId: string; grantee: ShareGrantee; role: TeamRole }): Promise<boolean> {
  const [granteeTeamId, principalId] = granteeColumns(input.grantee);
  const rows = await tx.query(
    `INSERT INTO team_shares (tenant_id, id, team_id, grantee_team_id, principal_id, role)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT ON CONSTRAINT team_shares_grantee DO UPDATE SET role = EXCLUDED.role
       WHERE team_shares.role <> EXCLUDED.role
     RETURNING id`,
    [input.tenantId, randomUUID(), input.teamId, granteeTeamId, principalId, input.role],
  );
  return rows.length > 0;
}

/** Removes the team's share with the grantee; returns whether there was one. */
export async function revokeTeamShare(tx: Transaction, input: { tenantId: string; teamId: string; grantee: ShareGrantee }): Promise<boolean> {
  const [granteeTeamId, principalId] = granteeColumns(input.grantee);
  const rows = await tx.query(
    `DELETE FROM team_shares
      WHERE tenant_id = $1 AND team_id = $2
        AND grantee_team_id IS NOT DISTINCT FROM $3 AND principal_id IS NOT DISTINCT FROM $4
      RETURNING id`,
    [input.tenantId, input.teamId, granteeTeamId, principalId],
  );
  return rows.length > 0;
}
