import type { ContextType } from '../access/context-roles.ts';
import { ReferenceIndex } from '../../kernel/org/reference-index.ts';
import type { ReferenceKind } from '../../kernel/org/section.ts';
import type { Queryable } from '../../store/db.ts';

/** The key of a context resource in its index and among the declared names: `knowledge:Handbook`. */
export function resourceKey(type: ContextType, name: string): string {
  return `${type}:${name}`;
}

/**
 * Context resources by `type:name`. A name resolves to the one active resource of that type and
 * name, or, when none is active, to the one archived; several of them make it ambiguous.
 */
async function loadResourceIndex(q: Queryable, tenant: { id: string; slug: string }, declared: ReadonlySet<string>): Promise<ReferenceIndex> {
  const index = new ReferenceIndex(tenant.slug, declared);
  const rows = await q.query<{ id: string; type: ContextType; name: string; status: 'active' | 'archived' }>(
    'SELECT id, type, name, status FROM context_resources WHERE tenant_id = $1 ORDER BY id',
    [tenant.id],
  );
  const byKey = new Map<string, { active: string[]; archived: string[] }>();
  for (const row of rows) {
    const key = resourceKey(row.type, row.name);
    const found = byKey.get(key) ?? { active: [], archived: [] };
    byKey.set(key, found);
    found[row.status === 'active' ? 'active' : 'archived'].push(row.id);
  }
  for (const [key, { active, archived }] of byKey) {
    const candidates = active.length > 0 ? active : archived;
    for (const id of [...active, ...archived]) index.label(key, id);
    if (candidates.length === 1) index.add(key, candidates[0]!);
    else index.addAmbiguous(key, candidates);
  }
  return index;
}

/**
 * Alignbase's context resources as the org file names them: the `knowledge`, `skills` and
 * `memories` sections declare them, grants and routes name them.
 */
export const CONTEXT_RESOURCES: ReferenceKind = { load: loadResourceIndex };
