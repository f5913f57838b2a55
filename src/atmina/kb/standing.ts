import type { Caller } from '../../kernel/access/caller.ts';
import type { KbAccess, TeamRole } from '../access/team-roles.ts';
import { KB_ACCESS, effectiveKbRole } from '../access/team-roles.ts';
import type { Queryable } from '../../store/db.ts';

/**
 * A caller's standing across the whole organisation, for deciding which Atmina tools it can use
 * at all (tools/list omits the rest, tools/call refuses them): its highest access on any KB or
 * team, and whether it is Admin as a member of some team (what create_kb needs). The tools
 * themselves still check the role on the KB they are given.
 */
export interface CallerStanding {
  /** The highest of the caller's team roles and shares, capped by an agent's policy; `search` with a public KB only. */
  readonly highest: KbAccess;
  /** Admin as a member of at least one team, after the agent's policy (create_kb's condition). */
  readonly teamAdmin: boolean;
  /** The caller may read some Knowledge, Memory or Artifact search shows (a grant, or a route to a published Knowledge). */
  readonly contextReader?: boolean;
}

interface StandingRow {
  policy: TeamRole | null;
  member_roles: TeamRole[];
  share_roles: TeamRole[];
  public_kb: boolean;
  context_reader: boolean;
}

// One row for a principal of the tenant: its roles as a member, the roles of every team share
// and every live KB's own share that reaches it (directly or through a team it belongs to; a
// pending invitation reaches nobody), its policy cap, and whether the
// tenant has a live public KB (which anyone may search), and whether it may read a resource of
// another product that search shows (`readableContext`: an SQL condition on $1 tenant and $2
// principal, handed in by the composition root). Every condition names the tenant.
const standingQuery = (readableContext: string): string => `
  SELECT p.policy_max_team_role AS policy,
         ARRAY(SELECT m.role FROM team_members m WHERE m.tenant_id = $1 AND m.principal_id = $2) AS member_roles,
         ARRAY(SELECT s.role FROM team_shares s
                WHERE s.tenant_id = $1
                  AND (s.principal_id = $2
                       OR s.grantee_team_id IN (SELECT g.team_id FROM team_members g WHERE g.tenant_id = $1 AND g.principal_id = $2)))
         || ARRAY(SELECT ks.role FROM kb_shares ks JOIN kbs k ON k.tenant_id = ks.tenant_id AND k.id = ks.kb_id
                   WHERE ks.tenant_id = $1 AND k.archived_at IS NULL
                     AND (ks.principal_id = $2
                          OR ks.grantee_team_id IN (SELECT g.team_id FROM team_members g WHERE g.tenant_id = $1 AND g.principal_id = $2))) AS share_roles,
         EXISTS (SELECT 1 FROM kbs k WHERE k.tenant_id = $1 AND k.visibility = 'public' AND k.archived_at IS NULL) AS public_kb,
         ${readableContext} AS context_reader
    FROM principals p
   WHERE p.tenant_id = $1 AND p.id = $2`;

const NOWHERE: CallerStanding = { highest: 'none', teamAdmin: false, contextReader: false };

/**
 * How to work out a caller's standing, in one query; `readableContext` is the SQL condition that
 * the caller may read some Knowledge, Memory or Artifact search shows (Alignbase's, handed in by
 * the composition root, so this product imports no other). A principal not in the tenant stands
 * nowhere.
 */
export function callerStanding(readableContext: string): (q: Queryable, caller: Caller) => Promise<CallerStanding> {
  const sql = standingQuery(readableContext);
  return async (q, caller) => {
    const [row] = await q.query<StandingRow>(sql, [caller.tenant.id, caller.principal.id], { prepare: 'kgw_caller_standing' });
    return row === undefined ? NOWHERE : standingOf(row);
  };
}

function standingOf(row: StandingRow): CallerStanding {
  const agentPolicyMax = row.policy ?? undefined;
  const highest = effectiveKbRole({ teamRole: undefined, shareRoles: [...row.member_roles, ...row.share_roles], agentPolicyMax, isPublic: row.public_kb });
  const teamAdmin = row.member_roles.includes('admin') && (agentPolicyMax === undefined || agentPolicyMax === 'admin');
  return { highest, teamAdmin, contextReader: row.context_reader };
}

/**
 * What a tool needs of the caller's standing: an access on some KB or team, Admin of a team
 * (create_kb), or `finder`: search access on some KB or the right to read some Knowledge,
 * Memory or Artifact (search, which finds both).
 */
export type ToolRole = Exclude<KbAccess, 'none'> | 'team_admin' | 'finder';

export function isToolRole(role: string): role is ToolRole {
  return role === 'team_admin' || role === 'finder' || (role !== 'none' && (KB_ACCESS as readonly string[]).includes(role));
}

/** Whether the standing reaches `needed`, a tool's minimum role (ToolDef.minimumRole); a role that is none of ToolRole is reached by nobody. */
export function standingAllows(standing: CallerStanding, needed: string): boolean {
  if (!isToolRole(needed)) return false;
  if (needed === 'team_admin') return standing.teamAdmin;
  if (needed === 'finder') return standing.contextReader === true || standingAllows(standing, 'search');
  return KB_ACCESS.indexOf(standing.highest) >= KB_ACCESS.indexOf(needed);
}
