import type { Queryable } from '../../store/db.ts';
import type { OrgProblems } from './problems.ts';

/**
 * Ids of one tenant's named things (groups, teams, a product's kind of name: ReferenceKind) by
 * the name the file uses: those stored plus those a plan creates, so that a later section can
 * name what an earlier one declares. A section that creates one adds it here with `add`, and
 * lists it in ReadContext at read time. A name that several stored rows share (Knowledge titles
 * and Memory names may repeat) is ambiguous: resolving it is a problem.
 */
export class ReferenceIndex {
  readonly #idByKey = new Map<string, string>();
  readonly #keyById = new Map<string, string>();
  /** Keys that name several stored rows, with how many. */
  readonly #ambiguous = new Map<string, number>();
  readonly #declared: ReadonlySet<string>;
  readonly #tenantSlug: string;

  constructor(tenantSlug: string, declared: ReadonlySet<string>) {
    this.#tenantSlug = tenantSlug;
    this.#declared = declared;
  }

  add(key: string, id: string): void {
    this.#idByKey.set(key, id);
    this.#keyById.set(id, key);
    this.#ambiguous.delete(key);
  }

  /** Several stored rows named `key`: each keeps its label, but the key resolves to none of them. */
  addAmbiguous(key: string, ids: readonly string[]): void {
    for (const id of ids) this.#keyById.set(id, key);
    this.#idByKey.delete(key);
    this.#ambiguous.set(key, ids.length);
  }

  /** Remembers how to name a stored row without letting its name resolve to it. */
  label(key: string, id: string): void {
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
    const count = this.#ambiguous.get(key);
    if (count !== undefined) {
      problems.add(at.line, `${at.path}: ${what} is ambiguous: tenant "${this.#tenantSlug}" has ${count} with that name (rename all but one to name it here)`);
      return undefined;
    }
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
