import type { Caller, TenantRef } from '../../kernel/access/caller.ts';
import type { TeamKbAccess } from '../access/team-shares.ts';
import { teamKbAccess, teamKbAccessByTeam } from '../access/team-shares.ts';
import type { KbAccess, TeamRole } from '../access/team-roles.ts';
import { effectiveKbRole, kbAllows } from '../access/team-roles.ts';
import type { Queryable } from '../../store/db.ts';
import type { Kb, KbRow, KbVisibility } from './queries.ts';
import { KB_COLUMNS, KB_FROM, toKb } from './queries.ts';
import { refuseKb } from './refusals.ts';

/**
 * Which Knowledge Bases a caller may use, and with which access. The role comes from the team
 * model (src/atmina/access: team role, team shares, agent policy) and the KB's own shares (kb_shares,
 * sharing.ts), which count as shares; the KB's visibility decides which of them count (docs/atmina.md, "Visibility"):
 *
 * - `team`: the owning team's members at their roles, plus the team's shares;
 * - `private`: the owning team's Admins and the shares only (other members see nothing);
 * - `public`: as `team`, and everyone else in the organisation may `search` it.
 *
 * A KB the caller has no access to (another team's without a share, another tenant's, an
 * archived one, one that does not exist, a malformed id) is refused with one and the same
 * `not_found`, so identifiers cannot be probed. A KB the caller sees with too low a role is
 * `permission_denied`.
 */

/** The caller's access to a KB of this visibility, from its team access. */
export function visibleAccess(visibility: KbVisibility, team: TeamKbAccess): KbAccess {
  const teamRole = visibility === 'private' && team.teamRole !== 'admin' ? undefined : team.teamRole;
  return effectiveKbRole({ ...team, teamRole, isPublic: visibility === 'public' });
}

/** Access to a KB the caller knows of: at least `search`. */
export type SeenAccess = Exclude<KbAccess, 'none'>;

/** A KB with the caller's access to it. */
export interface KbWithAccess {
  readonly kb: Kb;
  readonly access: SeenAccess;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** How a caller named a KB: by id or by slug, or by nothing that can name one of its tenant's KBs. */
export type KbName = { readonly id: string } | { readonly slug: string } | undefined;

/**
 * The KB a name given by a caller of `tenant` means: its id, its slug, or its tenant-qualified
 * slug `<tenant-slug>/<kb-slug>` (the spec's `"kb_slugs": ["acme/handbook"]`). Only the caller's
 * own tenant may qualify it: another tenant's prefix names nothing, so it is refused as not found
 * exactly like an unknown slug, and says nothing of that tenant.
 */
export function kbName(tenant: TenantRef, given: string): KbName {
  if (UUID.test(given)) return { id: given.toLowerCase() };
  const slash = given.indexOf('/');
  const slug = slash === -1 ? given : given.slice(0, slash) === tenant.slug ? given.slice(slash + 1) : '';
  return SLUG.test(slug) ? { slug } : undefined;
}

/** The SQL condition on `k` (as $2) and its parameter for a KB name. */
export function kbNameWhere(name: NonNullable<KbName>): { readonly where: string; readonly param: string } {
  return 'id' in name ? { where: 'k.id = $2::uuid', param: name.id } : { where: 'k.slug = $2', param: name.slug };
}

/**
 * The live KB the caller names by id, slug or tenant-qualified slug (kbName) with the caller's
 * access, or `not_found` when there is none the caller may know of. `lock`: `share` holds the KB
 * against being archived or changed until the transaction ends (file writes), `update` locks it
 * for a change of its own.
 */
export async function resolveKb(q: Queryable, caller: Caller, given: string, options: { lock?: 'share' | 'update' } = {}): Promise<KbWithAccess> {
  const name = kbName(caller.tenant, given);
  if (name === undefined) throw refuseKb.kbNotFound(given);
  const { where, param } = kbNameWhere(name);
  const lock = options.lock === undefined ? '' : options.lock === 'share' ? 'FOR SHARE OF k' : 'FOR UPDATE OF k';
  const [row] = await q.query<KbRow>(
    `SELECT ${KB_COLUMNS} FROM ${KB_FROM}
      WHERE k.tenant_id = $1 AND ${where} AND k.archived_at IS NULL ${lock}`,
    [caller.tenant.id, param],
  );
  // The caller's access is looked up whether or not the KB exists (for none, of ids that name
  // nothing), so a KB hidden from the caller and one that does not exist run the same statements
  // and take the same time: the answer's timing cannot tell them apart (docs/decisions.md).
  const team = await teamKbAccess(q, caller.tenant.id, caller.principal.id, row?.team_id ?? NO_ID);
  const shareRoles = await kbShareRoles(q, caller.tenant.id, caller.principal.id, row?.id ?? NO_ID);
  if (row === undefined) throw refuseKb.kbNotFound(given);
  const kb = toKb(row);
  const access = visibleAccess(kb.visibility, withKbShares(team, shareRoles));
  if (access === 'none') throw refuseKb.kbNotFound(given);
  return { kb, access };
}

/** An id no row has (ids are random UUIDs): what the access statements look up when there is no KB. */
const NO_ID = '00000000-0000-0000-0000-000000000000';

/** The team access with the KB's own shares added: they are shares like the team's and combine the same way. */
function withKbShares(team: TeamKbAccess, kbShares: readonly TeamRole[] | undefined): TeamKbAccess {
  return kbShares === undefined || kbShares.length === 0 ? team : { ...team, shareRoles: [...team.shareRoles, ...kbShares] };
}

// The roles of a KB's own shares (kb_shares) that reach a principal: to it, or to a team it is a
// member of at any role. A pending invitation (invited_email) reaches nobody until accepted.
const KB_SHARE_ROLES = `
  SELECT s.kb_id, s.role FROM kb_shares s
   WHERE s.tenant_id = $1
     AND (s.principal_id = $2
          OR s.grantee_team_id IN (SELECT g.team_id FROM team_members g WHERE g.tenant_id = $1 AND g.principal_id = $2))`;

/** The roles of the shares of one KB that reach the principal. */
async function kbShareRoles(q: Queryable, tenantId: string, principalId: string, kbId: string): Promise<TeamRole[]> {
  const rows = await q.query<{ kb_id: string; role: TeamRole }>(`${KB_SHARE_ROLES} AND s.kb_id = $3`, [tenantId, principalId, kbId]);
  return rows.map((row) => row.role);
}

/** The roles of every KB share that reaches the principal, by KB. */
async function kbShareRolesByKb(q: Queryable, tenantId: string, principalId: string): Promise<ReadonlyMap<string, TeamRole[]>> {
  const rows = await q.query<{ kb_id: string; role: TeamRole }>(KB_SHARE_ROLES, [tenantId, principalId]);
  const byKb = new Map<string, TeamRole[]>();
  for (const row of rows) byKb.set(row.kb_id, [...(byKb.get(row.kb_id) ?? []), row.role]);
  return byKb;
}

/** Refuses with `permission_denied` unless the access reaches `needed`; `action` starts the message ("writing files"). */
export function requireKbRole(target: KbWithAccess, needed: TeamRole, action: string): void {
  if (!kbAllows(target.access, needed)) throw refuseKb.kbRole(action, needed, target.access);
}

/** resolveKb and requireKbRole in one: the KB when the caller holds at least `needed` on it. */
export async function kbFor(
  q: Queryable,
  caller: Caller,
  given: string,
  needed: TeamRole,
  action: string,
  options: { lock?: 'share' | 'update' } = {},
): Promise<KbWithAccess> {
  const target = await resolveKb(q, caller, given, options);
  requireKbRole(target, needed, action);
  return target;
}

/** Every live KB of the tenant the caller has any access to (search included), by slug. */
export async function accessibleKbs(q: Queryable, caller: Caller): Promise<KbWithAccess[]> {
  const [rows, teams, kbShares] = await Promise.all([
    q.query<KbRow>(`SELECT ${KB_COLUMNS} FROM ${KB_FROM} WHERE k.tenant_id = $1 AND k.archived_at IS NULL ORDER BY k.slug`, [caller.tenant.id]),
    teamKbAccessByTeam(q, caller.tenant.id, caller.principal.id),
    kbShareRolesByKb(q, caller.tenant.id, caller.principal.id),
  ]);
  const nothing: TeamKbAccess = { teamRole: undefined, shareRoles: [], agentPolicyMax: undefined };
  return rows.flatMap((row) => {
    const kb = toKb(row);
    const access = visibleAccess(kb.visibility, withKbShares(teams.get(kb.team.id) ?? nothing, kbShares.get(kb.id)));
    return access === 'none' ? [] : [{ kb, access }];
  });
}
