import type { Caller, Principal, TenantRef } from '../access/caller.ts';
import type { Scope } from '../access/scopes.ts';
import { notFound, validation } from '../errors.ts';
import type { Queryable } from '../../store/db.ts';
import { agentByName, personByEmail } from './principals.ts';

export { toPrincipal } from './principals.ts';

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
  return isEmailReference(trimmed) ? personByEmail(q, tenantId, trimmed.toLowerCase()) : agentByName(q, tenantId, trimmed);
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

/**
 * The person an operator's import acts as, by email (kgw import): the author of the versions it
 * saves, whose roles every write checks, as a tool call of theirs would. The operator's command
 * holds no token; `scopes` are what the import's writes need of a connection (none for a KB,
 * whose tools check roles only), so that the product's own checks decide, not a bypass.
 */
export async function importingPerson(q: Queryable, tenantSlug: string, email: string, scopes: readonly Scope[] = []): Promise<Caller> {
  const tenant = await requireTenant(q, tenantSlug);
  if (!email.includes('@')) throw validation(`--as must name a person by email, not "${email}"`);
  const principal = await requirePrincipal(q, tenant, email);
  if (principal.kind !== 'person') throw notFound(`no person "${email}" in tenant "${tenant.slug}"`);
  return { tenant, principal, scopes: new Set(scopes), tokenId: '' };
}
