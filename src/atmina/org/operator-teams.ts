import { requireTenant } from '../../kernel/directory/directory.ts';
import { validation } from '../../kernel/errors.ts';
import { isUuid } from '../../kernel/text.ts';
import type { Queryable } from '../../store/db.ts';
import type { TeamRole } from '../access/team-roles.ts';

/**
 * Atmina's teams for the operator (`kgw export folder`, whose org.yaml recreates them): each
 * team with its members and roles and its shares, named as the org file's `teams:` section names
 * them (a person by email, an agent by name, another team as `team:SLUG`). No caller of the
 * tenant, so no role applies; the operator names the tenant. Paged by id.
 */

/**
 * Teams of one page of operatorTeams, and the bound on it. A team comes with all of its members
 * and shares, each at most one per person, agent and team of the tenant.
 */
export const OPERATOR_TEAMS_PAGE_DEFAULT = 50;
export const OPERATOR_TEAMS_PAGE_MAX = 200;

export interface OperatorTeam {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  /** By member (email or agent name), sorted. */
  readonly members: readonly { readonly member: string; readonly role: TeamRole }[];
  /** By `with` (`team:SLUG`, email or agent name), sorted. */
  readonly shares: readonly { readonly with: string; readonly role: TeamRole }[];
}

/** Sorted by UTF-16 code units, the same on every machine (localeCompare is not). */
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The teams of the tenant after id `after`, at most `limit` (1 to OPERATOR_TEAMS_PAGE_MAX), by
 * id; `next` is the id to continue after, or undefined on the last page.
 */
export async function operatorTeams(
  q: Queryable,
  input: { tenant: string; after?: string | undefined; limit: number },
): Promise<{ tenant: string; teams: OperatorTeam[]; next: string | undefined }> {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > OPERATOR_TEAMS_PAGE_MAX)
    throw validation(`limit must be a whole number from 1 to ${OPERATOR_TEAMS_PAGE_MAX}`);
  const after = input.after ?? '00000000-0000-0000-0000-000000000000';
  if (!isUuid(after)) throw validation('after must be a team id');
  const tenant = await requireTenant(q, input.tenant);
  const rows = await q.query<{ id: string; slug: string; name: string }>(
    'SELECT id, slug, name FROM teams WHERE tenant_id = $1 AND id > $2::uuid ORDER BY id LIMIT $3',
    [tenant.id, after, input.limit + 1],
  );
  const heads = rows.slice(0, input.limit);
  const ids = heads.map((team) => team.id);
  const members = await q.query<{ team_id: string; member: string; role: TeamRole }>(
    `SELECT m.team_id, COALESCE(p.email, p.name) AS member, m.role
       FROM team_members m JOIN principals p ON p.tenant_id = m.tenant_id AND p.id = m.principal_id
      WHERE m.tenant_id = $1 AND m.team_id = ANY($2::uuid[])`,
    [tenant.id, ids],
  );
  const shares = await q.query<{ team_id: string; grantee: string; role: TeamRole }>(
    `SELECT s.team_id, COALESCE('team:' || t.slug, p.email, p.name) AS grantee, s.role
       FROM team_shares s
       LEFT JOIN teams t ON t.tenant_id = s.tenant_id AND t.id = s.grantee_team_id
       LEFT JOIN principals p ON p.tenant_id = s.tenant_id AND p.id = s.principal_id
      WHERE s.tenant_id = $1 AND s.team_id = ANY($2::uuid[])`,
    [tenant.id, ids],
  );
  const membersOf = Map.groupBy(members, (row) => row.team_id);
  const sharesOf = Map.groupBy(shares, (row) => row.team_id);
  const teams = heads.map((team): OperatorTeam => ({
    id: team.id,
    slug: team.slug,
    name: team.name,
    members: (membersOf.get(team.id) ?? []).map(({ member, role }) => ({ member, role })).sort((a, b) => byText(a.member, b.member)),
    shares: (sharesOf.get(team.id) ?? []).map((row) => ({ with: row.grantee, role: row.role })).sort((a, b) => byText(a.with, b.with)),
  }));
  return { tenant: tenant.slug, teams, next: rows.length > input.limit ? teams.at(-1)?.id : undefined };
}
