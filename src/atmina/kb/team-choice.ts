import type { Caller } from '../../kernel/access/caller.ts';
import type { CallerStanding } from '../../kernel/directory/whoami.ts';
import type { TeamRole } from '../access/team-roles.ts';
import type { KgwError } from '../../kernel/errors.ts';
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
}

interface MembershipRow extends TeamRef {
  role: TeamRole | null;
  policy: TeamRole | null;
}

/** The organisation's teams by slug (byte order, the same on every store), with the caller's role in each and its agent policy's cap. */
async function memberships(q: Queryable, caller: Caller): Promise<MembershipRow[]> {
  return q.query<MembershipRow>(
    `SELECT t.id, t.slug, t.name, m.role, p.policy_max_team_role AS policy
       FROM teams t
       JOIN principals p ON p.tenant_id = t.tenant_id AND p.id = $2
       LEFT JOIN team_members m ON m.tenant_id = t.tenant_id AND m.team_id = t.id AND m.principal_id = p.id
      WHERE t.tenant_id = $1
      ORDER BY t.slug COLLATE "C"`,
    [caller.tenant.id, caller.principal.id],
  );
}

// Admin as a member, capped by an agent's policy like every team role; a share of a team's KBs
// does not make its holder a manager of the team.
const isAdmin = (row: MembershipRow): boolean => row.role === 'admin' && (row.policy === null || row.policy === 'admin');
const ref = (row: MembershipRow): TeamRef => ({ id: row.id, slug: row.slug, name: row.name });

/**
 * The caller's current team, the one the team tools act for when no `team` is named (the spec:
 * "the current team is implicit"): the first team by slug where it is Admin, else the first team
 * by slug it belongs to, else none. A rule and not a stored choice, so every connection of the
 * caller has the same current team and the answer does not depend on what was called before;
 * `team` names another for one call (docs/decisions.md, "The current team"). `admin`: whether the
 * caller is its Admin (so create_kb would make a KB there).
 */
export async function currentTeam(q: Queryable, caller: Caller): Promise<(TeamRef & { readonly admin: boolean }) | undefined> {
  return chooseCurrent(await memberships(q, caller));
}

function chooseCurrent(rows: readonly MembershipRow[]): (TeamRef & { readonly admin: boolean }) | undefined {
  const chosen = rows.find(isAdmin) ?? rows.find((row) => row.role !== null);
  return chosen === undefined ? undefined : { ...ref(chosen), admin: isAdmin(chosen) };
}

/**
 * `currentTeam` from a standing already read (whoami and the my-team resource read it anyway):
 * the same rule over the caller's memberships, in the same order, without another round trip.
 */
export function currentTeamOf(standing: CallerStanding): (TeamRef & { readonly admin: boolean }) | undefined {
  return chooseCurrent(
    standing.profile.teams.map((team) => ({ id: team.team_id, slug: team.slug, name: team.name, role: team.role, policy: standing.teamRoleCap })),
  );
}

/**
 * The team a caller acts for as its Admin (create_kb's owning team, the team whose settings it
 * reads or changes): the one named by slug or id, or else its current team, which for an Admin
 * of any team is the first by slug where it is Admin. A team named where it is not Admin, or
 * none named and Admin of none, is refused naming the teams where it is; a team the
 * organisation does not have (another tenant's included) is `validation`.
 */
export async function adminTeam(q: Queryable, caller: Caller, given: string | undefined, refuse: TeamChoiceRefusals): Promise<TeamRef> {
  const rows = await memberships(q, caller);
  const choices = rows.filter(isAdmin).map((row) => row.slug);
  if (given !== undefined) {
    const team = rows.find((row) => row.slug === given || row.id === given.toLowerCase());
    if (team === undefined) throw refuseKb.teamNotFound(given, choices);
    if (!isAdmin(team)) throw refuse.notAdmin(given, choices);
    return ref(team);
  }
  const first = rows.find(isAdmin);
  if (first === undefined) throw refuse.notAdmin(undefined, []);
  return ref(first);
}
