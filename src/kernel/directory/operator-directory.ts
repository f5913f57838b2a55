import { validation } from '../errors.ts';
import type { MailboxSettings } from '../mail/mailbox.ts';
import { isUuid } from '../text.ts';
import type { Queryable } from '../../store/db.ts';
import { requireTenant } from './directory.ts';
import type { TeamRole } from './team-roles.ts';
import type { BrainRole, Tier } from './tiers.ts';

/**
 * The directory for the operator (`kgw export folder`, whose org.yaml recreates it): a tenant's
 * people and agents with everything the org file sets on them except a password, and its groups
 * with their members, each named as the org file names it (a person by email, an agent by name).
 * No caller of the tenant, so no role applies; the operator names the tenant. Both are paged
 * by id, so that a large directory goes in requests of a bounded size.
 */

/** People and agents of one page of operatorPrincipals, and the bound on it: a row is a few hundred bytes. */
export const OPERATOR_PRINCIPALS_PAGE_DEFAULT = 500;
export const OPERATOR_PRINCIPALS_PAGE_MAX = 1000;
/**
 * Groups of one page of operatorGroups, and the bound on it. A group comes with all of its
 * members, at most the tenant's people and agents, so a page holds fewer groups than principals.
 */
export const OPERATOR_GROUPS_PAGE_DEFAULT = 50;
export const OPERATOR_GROUPS_PAGE_MAX = 200;

export interface OperatorPrincipal {
  readonly id: string;
  readonly kind: 'person' | 'agent';
  readonly name: string;
  /** A person's email (lower-case); null for an agent. */
  readonly email: string | null;
  /** An agent's owner, by email; null for a person. */
  readonly owner: string | null;
  readonly tier: Tier;
  /** Sorted, as the org file stores them. */
  readonly departments: readonly string[];
  readonly projects: readonly string[];
  readonly brainRole: BrainRole;
  readonly policyMaxTeamRole: TeamRole | null;
  /** A person's mailbox settings (the name of the variable holding its password, never a password). */
  readonly mailbox: MailboxSettings | null;
  /** A person the org file makes a tenant administrator (`admin: true`); false for an agent. */
  readonly tenantAdmin: boolean;
}

export interface OperatorGroup {
  readonly id: string;
  readonly name: string;
  /** People by email and agents by name, sorted. */
  readonly members: readonly string[];
}

const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/** The checked paging arguments: `after` an id (the first page when left out), `limit` within 1 and `max`. */
function page(input: { after?: string | undefined; limit: number }, max: number): { after: string; limit: number } {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > max) throw validation(`limit must be a whole number from 1 to ${max}`);
  const after = input.after ?? FIRST_ID;
  if (!isUuid(after)) throw validation('after must be an id of the page before');
  return { after, limit: input.limit };
}

/** Sorted by UTF-16 code units, the same on every machine (localeCompare is not). */
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

interface PrincipalRow {
  id: string;
  kind: 'person' | 'agent';
  name: string;
  email: string | null;
  owner: string | null;
  tier: Tier;
  departments: string[];
  projects: string[];
  brain_role: BrainRole;
  policy_max_team_role: TeamRole | null;
  mailbox: MailboxSettings | null;
  tenant_admin: boolean;
}

/**
 * The people and agents of the tenant after id `after`, at most `limit` (1 to
 * OPERATOR_PRINCIPALS_PAGE_MAX), by id; `next` is the id to continue after, or undefined on the
 * last page.
 */
export async function operatorPrincipals(
  q: Queryable,
  input: { tenant: string; after?: string | undefined; limit: number },
): Promise<{ tenant: string; principals: OperatorPrincipal[]; next: string | undefined }> {
  const { after, limit } = page(input, OPERATOR_PRINCIPALS_PAGE_MAX);
  const tenant = await requireTenant(q, input.tenant);
  const rows = await q.query<PrincipalRow>(
    `SELECT p.id, p.kind, p.name, p.email, o.email AS owner, p.tier, p.departments, p.projects, p.brain_role, p.policy_max_team_role, p.mailbox,
            p.tenant_admin
       FROM principals p LEFT JOIN principals o ON o.tenant_id = p.tenant_id AND o.id = p.owner_id
      WHERE p.tenant_id = $1 AND p.id > $2::uuid ORDER BY p.id LIMIT $3`,
    [tenant.id, after, limit + 1],
  );
  const principals = rows.slice(0, limit).map((row): OperatorPrincipal => ({
    id: row.id,
    kind: row.kind,
    name: row.name,
    email: row.email,
    owner: row.owner,
    tier: row.tier,
    departments: [...row.departments].sort(byText),
    projects: [...row.projects].sort(byText),
    brainRole: row.brain_role,
    policyMaxTeamRole: row.policy_max_team_role,
    mailbox: row.kind === 'person' ? row.mailbox : null,
    tenantAdmin: row.kind === 'person' && row.tenant_admin,
  }));
  return { tenant: tenant.slug, principals, next: rows.length > limit ? principals.at(-1)?.id : undefined };
}

/**
 * The groups of the tenant after id `after`, at most `limit` (1 to OPERATOR_GROUPS_PAGE_MAX), by
 * id, each with every member; `next` as for operatorPrincipals.
 */
export async function operatorGroups(
  q: Queryable,
  input: { tenant: string; after?: string | undefined; limit: number },
): Promise<{ tenant: string; groups: OperatorGroup[]; next: string | undefined }> {
  const { after, limit } = page(input, OPERATOR_GROUPS_PAGE_MAX);
  const tenant = await requireTenant(q, input.tenant);
  const rows = await q.query<{ id: string; name: string }>('SELECT id, name FROM groups WHERE tenant_id = $1 AND id > $2::uuid ORDER BY id LIMIT $3', [
    tenant.id,
    after,
    limit + 1,
  ]);
  const heads = rows.slice(0, limit);
  const members = await q.query<{ group_id: string; member: string }>(
    `SELECT m.group_id, COALESCE(p.email, p.name) AS member
       FROM group_members m JOIN principals p ON p.tenant_id = m.tenant_id AND p.id = m.principal_id
      WHERE m.tenant_id = $1 AND m.group_id = ANY($2::uuid[])`,
    [tenant.id, heads.map((group) => group.id)],
  );
  const membersOf = Map.groupBy(members, (row) => row.group_id);
  const groups = heads.map((group): OperatorGroup => ({
    id: group.id,
    name: group.name,
    members: (membersOf.get(group.id) ?? []).map((row) => row.member).sort(byText),
  }));
  return { tenant: tenant.slug, groups, next: rows.length > limit ? groups.at(-1)?.id : undefined };
}
