import type { Scope } from './scopes.ts';

export type PrincipalKind = 'person' | 'agent';

export interface Principal {
  readonly id: string;
  readonly kind: PrincipalKind;
  readonly name: string;
  /** People only. */
  readonly email: string | undefined;
  /** Agents only: the person who owns the agent. */
  readonly ownerId: string | undefined;
}

export interface TenantRef {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  readonly language: string;
}

/** Who is calling: established once per request from the bearer token, then passed everywhere. */
export interface Caller {
  readonly tenant: TenantRef;
  readonly principal: Principal;
  readonly scopes: ReadonlySet<Scope>;
  readonly tokenId: string;
}

/** The required scopes the caller's token lacks (empty when it may call). */
export function missingScopes(caller: Caller, required: readonly Scope[]): Scope[] {
  return required.filter((scope) => !caller.scopes.has(scope));
}

export function hasScopes(caller: Caller, required: readonly Scope[]): boolean {
  return missingScopes(caller, required).length === 0;
}
