import { validation } from '../errors.ts';

/** Every OAuth scope the gateway understands. Tools declare which of these they need. */
export const SCOPES = ['context.read', 'context.write', 'activity.write', 'brain:read', 'brain:propose', 'outreach:propose'] as const;
export type Scope = (typeof SCOPES)[number];

/** Legacy Alignbase scope names accepted during migration. */
const ALIASES: Readonly<Record<string, Scope>> = { 'documents.read': 'context.read', 'documents.write': 'context.write' };

/** Scopes that bring others with them: asking for write alone means read and write. */
const IMPLIES: Readonly<Partial<Record<Scope, readonly Scope[]>>> = { 'context.write': ['context.read'] };

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * Turns requested scope names (space or comma separated, or a list) into the canonical,
 * sorted set: aliases resolved, implied scopes added, unknown names refused.
 */
export function normalizeScopes(requested: string | readonly string[]): Scope[] {
  const names = (typeof requested === 'string' ? requested.split(/[\s,]+/) : requested).map((s) => s.trim()).filter((s) => s !== '');
  if (names.length === 0) throw validation('at least one scope is required');
  const result = new Set<Scope>();
  for (const name of names) {
    const scope = ALIASES[name] ?? (isScope(name) ? name : undefined);
    if (scope === undefined) throw validation(`unknown scope "${name}"; known scopes: ${SCOPES.join(', ')}`);
    result.add(scope);
    for (const implied of IMPLIES[scope] ?? []) result.add(implied);
  }
  return SCOPES.filter((scope) => result.has(scope));
}
