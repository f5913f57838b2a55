import type { ContextType } from '../access/context-roles.ts';
import type { Queryable } from '../../store/db.ts';
import type { OrgProblems } from './problems.ts';

/** The key of a context resource in the resource index and in `declaredResources`. */
export function resourceKey(type: ContextType, name: string): string {
  return `${type}:${name}`;
}

/**
 * Ids of one tenant's named things (groups, teams, context resources) by the name the file uses:
 * those stored plus those a plan creates, so that a later section can name what an earlier
 * one declares. A future `knowledge:` section adds its resources here with `add`, and lists
 * them in ReadContext.declaredResources at read time.
 */
export class ReferenceIndex {
  readonly #idByKey = new Map<string, string>();
  readonly #keyById = new Map<string, string>();
  readonly #declared: ReadonlySet<string>;
  readonly #tenantSlug: string;

  constructor(tenantSlug: string, declared: ReadonlySet<string>) {
    this.#tenantSlug = tenantSlug;
    this.#declared = declared;
  }

  add(key: string, id: string): void {
    this.#idByKey.set(key, id);
    this.#keyById.set(id, key);
  }

  find(key: string): string | undefined {
    return this.#idByKey.get(key);
  }

  /** The key that names an id, for messages about stored rows. */
  referenceOf(id: string): string {
    return this.#keyById.get(id) ?? id;
  }

  /**
   * The id of `key`, or undefined. A key that is neither stored nor declared is reported as
   * dangling (`what` names it: `group "eng"`); one that is declared but could not be planned
   * has its own problem reported already.
   */
  resolve(key: string, at: { readonly line: number; readonly path: string }, what: string, problems: OrgProblems): string | undefined {
    const id = this.#idByKey.get(key);
    if (id !== undefined) return id;
    if (!this.#declared.has(key)) problems.add(at.line, `${at.path}: no ${what} is declared in the file or exists in tenant "${this.#tenantSlug}"`);
    return undefined;
  }
}

export async function loadGroupIndex(q: Queryable, tenant: { id: string; slug: string }, declared: ReadonlySet<string>): Promise<ReferenceIndex> {
  const index = new ReferenceIndex(tenant.slug, declared);
  const rows = await q.query<{ id: string; name: string }>('SELECT id, name FROM groups WHERE tenant_id = $1', [tenant.id]);
  for (const row of rows) index.add(row.name, row.id);
  return index;
}

export async function loadTeamIndex(q: Queryable, tenant: { id: string; slug: string }, declared: ReadonlySet<string>): Promise<ReferenceIndex> {
  const index = new ReferenceIndex(tenant.slug, declared);
  const rows = await q.query<{ id: string; slug: string }>('SELECT id, slug FROM teams WHERE tenant_id = $1', [tenant.id]);
  for (const row of rows) index.add(row.slug, row.id);
  return index;
}

export async function loadResourceIndex(q: Queryable, tenant: { id: string; slug: string }, declared: ReadonlySet<string>): Promise<ReferenceIndex> {
  const index = new ReferenceIndex(tenant.slug, declared);
  const rows = await q.query<{ id: string; type: ContextType; name: string }>('SELECT id, type, name FROM context_resources WHERE tenant_id = $1', [tenant.id]);
  for (const row of rows) index.add(resourceKey(row.type, row.name), row.id);
  return index;
}
