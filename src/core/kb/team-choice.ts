import type { Caller } from '../access/caller.ts';
import type { TeamRole } from '../access/team-roles.ts';
import type { KgwError } from '../errors.ts';
import type { Queryable } from '../../store/db.ts';
import { refuseKb } from './refusals.ts';

export interface TeamRef {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
}

/** How a choice of team is refused, in the words of what the team is chosen for. */
export interface TeamChoiceRefusals {
  /** The team named, or with none named every team, lacks the caller as Admin; `choices` are the teams where it is. */
  readonly notAdmin: (team: string | undefined, choices: readonly string[]) => KgwError;
  /** None named, and the caller is Admin of several. */
  readonly ambiguous: (choices: readonly string[]) => KgwError;
}

interface MembershipRow extends TeamRef {
  role: TeamRole | null;
  policy: TeamRole | null;
}

/**
 * The team a caller in several teams means when it acts as a team's Admin (create_kb's owning
 * team, the team whose settings it reads or changes): the one named by slug or id, or else the
 * one team where it is Admin. It must be Admin as a member, capped by an agent's policy like
 * every team role; a share of a team's KBs does not make its holder a manager of the team.
 * Admin of several and none named, or Admin of none, is refused naming the caller's choices; a
 * team the organisation does not have (another tenant's included) is `validation`.
 */
export async function adminTeam(q: Queryable, caller: Caller, given: string | undefined, refuse: TeamChoiceRefusals): Promise<TeamRef> {
  const rows = await q.query<MembershipRow>(
    `SELECT t.id, t.slug, t.name, m.role, p.policy_max_team_role AS policy
       FROM teams t
       JOIN principals p ON p.tenant_id = t.tenant_id AND p.id = $2
       LEFT JOIN team_members m ON m.tenant_id = t.tenant_id AND m.team_id = t.id AND m.principal_id = p.id
      WHERE t.tenant_id = $1
      ORDER BY t.slug`,
    [caller.tenant.id, caller.principal.id],
  );
  const isAdmin = (row: MembershipRow) => row.role === 'admin' && (row.policy === null || row.policy === 'admin');
  const admin = rows.filter(isAdmin);
  const choices = admin.map((row) => row.slug);
  const ref = (row: MembershipRow): TeamRef => ({ id: row.id, slug: row.slug, name: row.name });
  if (given !== undefined) {
    const team = rows.find((row) => row.slug === given || row.id === given.toLowerCase());
    if (team === undefined) throw refuseKb.teamNotFound(given, choices);
    if (!isAdmin(team)) throw refuse.notAdmin(given, choices);
    return ref(team);
  }
  const [only] = admin;
  if (only === undefined) throw refuse.notAdmin(undefined, []);
  if (admin.length > 1) throw refuse.ambiguous(choices);
  return ref(only);
}
