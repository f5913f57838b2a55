/**
 * Alignbase context roles and how grants combine into one effective role. Pure: the loaders
 * in grants.ts fetch the grants, these functions decide. See docs/access.md.
 */

/** The context roles, weakest first: each role includes every capability of those before it. */
export const CONTEXT_ROLES = ['viewer', 'proposer', 'editor', 'publisher', 'owner'] as const;
export type ContextRole = (typeof CONTEXT_ROLES)[number];

/** The resource types; a grant names one resource of a type or the whole type (All Knowledge …). */
export const CONTEXT_TYPES = ['knowledge', 'skill', 'memory', 'artifact'] as const;
export type ContextType = (typeof CONTEXT_TYPES)[number];

/** Artifacts are data handed over explicitly; only these types can have an Always route. */
export const ROUTABLE_TYPES = ['knowledge', 'skill', 'memory'] as const satisfies readonly ContextType[];
export type RoutableType = (typeof ROUTABLE_TYPES)[number];

export function isContextRole(value: string): value is ContextRole {
  return (CONTEXT_ROLES as readonly string[]).includes(value);
}

export function isContextType(value: string): value is ContextType {
  return (CONTEXT_TYPES as readonly string[]).includes(value);
}

export function isRoutableType(value: string): value is RoutableType {
  return (ROUTABLE_TYPES as readonly string[]).includes(value);
}

/** True when `role` is `minimum` or stronger; no role at all reaches nothing. */
export function atLeast(role: ContextRole | undefined, minimum: ContextRole): boolean {
  return role !== undefined && CONTEXT_ROLES.indexOf(role) >= CONTEXT_ROLES.indexOf(minimum);
}

/** The strongest of the roles, or undefined when there are none. */
export function highestRole(roles: Iterable<ContextRole>): ContextRole | undefined {
  let best: ContextRole | undefined;
  for (const role of roles) if (!atLeast(best, role)) best = role;
  return best;
}

/** One grant that reaches a principal, directly or through one of its groups. */
export interface ReachingGrant {
  /** The resource the grant is on, or null for the whole type. */
  readonly resourceId: string | null;
  readonly role: ContextRole;
}

/**
 * The effective role on one resource (or, with `resourceId` undefined, on the whole type):
 * the highest role among whole-type grants and grants on that resource. Access is additive,
 * so a more specific grant adds capability but never takes away an inherited one.
 */
export function combineGrants(grants: Iterable<ReachingGrant>, resourceId: string | undefined): ContextRole | undefined {
  const roles: ContextRole[] = [];
  for (const grant of grants) {
    if (grant.resourceId === null || (resourceId !== undefined && grant.resourceId === resourceId)) roles.push(grant.role);
  }
  return highestRole(roles);
}
