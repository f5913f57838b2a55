import type { PrincipalAccess } from '../access/principal-access.ts';
import { listPrincipals } from '../directory/principals.ts';
import type { Queryable } from '../../store/db.ts';
import type { OrgProblems } from './problems.ts';
import type { Located } from './yaml-reader.ts';

export interface KnownPrincipal {
  readonly id: string;
  readonly kind: 'person' | 'agent';
  readonly name: string;
  readonly ownerId: string | null;
  /** Tier, departments, projects, brain role and (agents) policy, as stored or planned. */
  readonly access: PrincipalAccess;
}

/**
 * The people and agents of one tenant by reference (a person's lower-case email, an agent's
 * name): those already stored plus those the plan creates, so that later sections can name
 * principals created by earlier ones.
 */
export class PrincipalIndex {
  readonly #byReference = new Map<string, KnownPrincipal>();
  readonly #referenceById = new Map<string, string>();
  readonly #declared: ReadonlySet<string>;
  readonly #tenantSlug: string;

  private constructor(tenantSlug: string, declared: ReadonlySet<string>) {
    this.#tenantSlug = tenantSlug;
    this.#declared = declared;
  }

  static async load(q: Queryable, tenant: { id: string; slug: string }, declared: ReadonlySet<string>): Promise<PrincipalIndex> {
    const index = new PrincipalIndex(tenant.slug, declared);
    for (const p of await listPrincipals(q, tenant.id)) {
      index.add(p.kind === 'person' ? (p.email ?? p.name) : p.name, { id: p.id, kind: p.kind, name: p.name, ownerId: p.ownerId, access: p.access });
    }
    return index;
  }

  find(reference: string): KnownPrincipal | undefined {
    return this.#byReference.get(reference);
  }

  /** A principal by its directory id: how the graph names it (`person:<id>`, `agent:<id>`), and so how read tools cite it. */
  byId(id: string): KnownPrincipal | undefined {
    const reference = this.#referenceById.get(id);
    return reference === undefined ? undefined : this.#byReference.get(reference);
  }

  /** Records a principal, stored or about to be created by the plan. */
  add(reference: string, principal: KnownPrincipal): void {
    this.#byReference.set(reference, principal);
    this.#referenceById.set(principal.id, reference);
  }

  /** Every department and project some principal (stored or planned) is a member of: the directory's labels. */
  labels(): { readonly departments: ReadonlySet<string>; readonly projects: ReadonlySet<string> } {
    const departments = new Set<string>();
    const projects = new Set<string>();
    for (const principal of this.#byReference.values()) {
      for (const d of principal.access.departments) departments.add(d);
      for (const p of principal.access.projects) projects.add(p);
    }
    return { departments, projects };
  }

  /** How the file names a principal: its email for a person, its name for an agent. */
  referenceOf(id: string): string {
    return this.#referenceById.get(id) ?? id;
  }

  /**
   * The id a reference names, or undefined. A reference that is neither in the tenant nor
   * declared in the file is reported as dangling. One that is declared but could not be
   * planned belongs to an entry whose own problem is reported already, so it is not repeated.
   */
  resolve(reference: Located, problems: OrgProblems): string | undefined {
    const known = this.#byReference.get(reference.value);
    if (known) return known.id;
    if (!this.#declared.has(reference.value)) {
      const what = reference.value.includes('@') ? 'person' : 'agent';
      problems.add(reference.line, `${reference.path}: no ${what} "${reference.value}" is declared in the file or exists in tenant "${this.#tenantSlug}"`);
    }
    return undefined;
  }
}
