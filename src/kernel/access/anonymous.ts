import type { Caller, TenantRef } from './caller.ts';

/**
 * A connection without credentials to a tenant that allows anonymous search
 * (KGW_ANONYMOUS_SEARCH_TENANTS; docs/access.md, "Anonymous connections"). It has no principal,
 * no token and no scopes: the only thing it may do is search the tenant's public KBs, where
 * `effectiveKbRole` with nothing but `isPublic` gives `search`.
 */
export interface AnonymousCaller {
  readonly anonymous: true;
  readonly tenant: TenantRef;
}

/** Who may search: a signed-in caller, or an anonymous connection. */
export type Searcher = Caller | AnonymousCaller;

export function isAnonymous(searcher: Searcher): searcher is AnonymousCaller {
  return 'anonymous' in searcher;
}

export function anonymousCaller(tenant: TenantRef): AnonymousCaller {
  return Object.freeze({ anonymous: true, tenant });
}
