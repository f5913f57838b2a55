import type { Principal, TenantRef } from '../access/caller.ts';
import { notFound, validation } from '../errors.ts';
import type { Queryable } from '../../store/db.ts';

interface PrincipalRow {
  id: string;
  kind: 'person' | 'agent';
  name: string;
  email: string | null;
  owner_id: string | null;
}

export const toPrincipal = (row: PrincipalRow): Principal => ({
  id: row.id,
  kind: row.kind,
  name: row.name,
  email: row.email ?? undefined,
  ownerId: row.owner_id ?? undefined,
});

export async function findTenant(q: Queryable, slug: string): Promise<TenantRef | undefined> {
  const [row] = await q.query<TenantRef>('SELECT id, slug, name, language FROM tenants WHERE slug = $1', [slug]);
  return row;
}

export async function requireTenant(q: Queryable, slug: string): Promise<TenantRef> {
  const tenant = await findTenant(q, slug);
  if (!tenant) throw notFound(`tenant "${slug}" not found`);
  return tenant;
}

/** A person is named by email (it holds "@"), an agent by its name. */
export function isEmailReference(reference: string): boolean {
  return reference.includes('@');
}

export async function findPrincipal(q: Queryable, tenantId: string, reference: string): Promise<Principal | undefined> {
  const trimmed = reference.trim();
  if (trimmed === '') throw validation('principal reference is empty');
  const rows = isEmailReference(trimmed)
    ? await q.query<PrincipalRow>("SELECT id, kind, name, email, owner_id FROM principals WHERE tenant_id = $1 AND kind = 'person' AND email = $2", [
        tenantId,
        trimmed.toLowerCase(),
      ])
    : await q.query<PrincipalRow>("SELECT id, kind, name, email, owner_id FROM principals WHERE tenant_id = $1 AND kind = 'agent' AND name = $2", [
        tenantId,
        trimmed,
      ]);
  return rows[0] ? toPrincipal(rows[0]) : undefined;
}

export async function requirePrincipal(q: Queryable, tenant: TenantRef, reference: string): Promise<Principal> {
  const principal = await findPrincipal(q, tenant.id, reference);
  if (!principal) throw notFound(`no person or agent "${reference}" in tenant "${tenant.slug}"`);
  return principal;
}

/** An agent of the tenant by name; not found for anything else, a person's email included. */
export async function requireAgent(q: Queryable, tenant: TenantRef, name: string): Promise<Principal> {
  const principal = await findPrincipal(q, tenant.id, name);
  if (principal?.kind !== 'agent') throw notFound(`no agent "${name}" in tenant "${tenant.slug}"`);
  return principal;
}

export interface TeamMembership {
  readonly teamId: string;
  readonly slug: string;
  readonly name: string;
  readonly role: 'viewer' | 'editor' | 'admin';
}

export async function teamsOf(q: Queryable, tenantId: string, principalId: string): Promise<TeamMembership[]> {
  return q.query<TeamMembership>(
    `SELECT t.id AS "teamId", t.slug, t.name, m.role
       FROM team_members m JOIN teams t ON t.tenant_id = m.tenant_id AND t.id = m.team_id
      WHERE m.tenant_id = $1 AND m.principal_id = $2
      ORDER BY t.slug`,
    [tenantId, principalId],
  );
}

export async function groupsOf(q: Queryable, tenantId: string, principalId: string): Promise<{ groupId: string; name: string }[]> {
  return q.query(
    `SELECT g.id AS "groupId", g.name
       FROM group_members m JOIN groups g ON g.tenant_id = m.tenant_id AND g.id = m.group_id
      WHERE m.tenant_id = $1 AND m.principal_id = $2
      ORDER BY g.name`,
    [tenantId, principalId],
  );
}

/** The agents of the tenant among `ids` (anything else is left out), by id and name; no order. */
export async function findAgents(q: Queryable, tenantId: string, ids: readonly string[]): Promise<{ id: string; name: string }[]> {
  if (ids.length === 0) return [];
  return q.query<{ id: string; name: string }>("SELECT id, name FROM principals WHERE tenant_id = $1 AND kind = 'agent' AND id = ANY($2::uuid[])", [
    tenantId,
    [...ids],
  ]);
}
