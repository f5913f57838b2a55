import type { BlobStore } from '../../../connectors/blob/contract.ts';
import type { Transaction } from '../../store/db.ts';
import { PrincipalIndex } from './principal-index.ts';
import type { OrgProblems } from './problems.ts';
import type { ReferenceIndex } from './reference-index.ts';
import { loadGroupIndex, loadTeamIndex } from './reference-index.ts';
import type { ReferencedFiles } from './referenced-files.ts';
import type { OrgSection, ReferenceKind, SectionPlanner } from './section.ts';
import type { PlannedTenant, TenantSpec } from './tenant.ts';
import { planTenant, readTenant, TENANT_KEYS } from './tenant.ts';
import type { Located } from './yaml-reader.ts';
import { YamlReader } from './yaml-reader.ts';

/** An org file that has been read: its tenant and one planner per section present. */
export interface OrgFile {
  readonly tenant: TenantSpec & { readonly slug: Located };
  readonly planners: readonly SectionPlanner[];
  /** The sections the file has (`people`, `skills` …). */
  readonly sections: ReadonlySet<string>;
  /** What the file declares, for the indexes to tell a dangling reference (see ReadContext). */
  readonly declared: {
    readonly principals: ReadonlySet<string>;
    readonly groups: ReadonlySet<string>;
    readonly teams: ReadonlySet<string>;
    /** Every kind of name the sections refer to (OrgSection.references), with the names the file declares. */
    readonly byKind: ReadonlyMap<ReferenceKind, ReadonlySet<string>>;
  };
}

/** Where `password_env` reads passwords from: the environment of the process applying the file. */
export type OrgEnvironment = Readonly<Record<string, string | undefined>>;

/**
 * Parses and validates the file, section by section in the order of `sections`, reporting every
 * problem it can find without the database. Returns undefined when there is no tenant slug to
 * plan against (a problem is reported then). `files` holds what the file's `file:` and `dir:`
 * values name (referenced-files.ts).
 */
export function readOrgFile(
  sections: readonly OrgSection[],
  source: string,
  problems: OrgProblems,
  env: OrgEnvironment = process.env,
  files: ReferencedFiles = {},
): OrgFile | undefined {
  const parsed = YamlReader.parse(source, problems);
  if (!parsed) return undefined;
  const { reader, root } = parsed;
  const fields = reader.fields(root, [...TENANT_KEYS, ...sections.map((section) => section.key)], ['tenant', 'name']);
  if (!fields) return undefined;
  const tenant = readTenant(fields, reader);
  const byKind = new Map<ReferenceKind, Set<string>>();
  for (const section of sections) for (const kind of section.references ?? []) byKind.set(kind, new Set());
  const context = {
    reader,
    declared: new Set<string>(),
    declaredGroups: new Set<string>(),
    declaredTeams: new Set<string>(),
    declaredOf: (kind: ReferenceKind) => known(byKind, kind),
    env,
    files,
  };
  const planners: SectionPlanner[] = [];
  const present = new Set<string>();
  for (const section of sections) {
    const slot = fields.get(section.key);
    if (!slot) continue;
    present.add(section.key);
    planners.push(section.read(slot, context));
  }
  if (!tenant.slug) return undefined;
  const declared = { principals: context.declared, groups: context.declaredGroups, teams: context.declaredTeams, byKind };
  return { tenant: { ...tenant, slug: tenant.slug }, planners, sections: present, declared };
}

/**
 * Compares the file with the tenant's current rows and returns the tenant and the steps in
 * apply order. Runs inside the apply transaction and takes the tenant lock before reading
 * anything (planTenant), so the rows cannot change under it; it writes nothing. References
 * that name nothing are added to `problems`.
 */
export async function planOrgFile(tx: Transaction, file: OrgFile, problems: OrgProblems, blob?: BlobStore): Promise<PlannedTenant> {
  const slug = file.tenant.slug.value;
  const tenant = await planTenant(tx, file.tenant);
  const ref = { id: tenant.id, slug };
  const principals = await PrincipalIndex.load(tx, ref, file.declared.principals);
  const groups = await loadGroupIndex(tx, ref, file.declared.groups);
  const teams = await loadTeamIndex(tx, ref, file.declared.teams);
  const indexes = new Map<ReferenceKind, ReferenceIndex>();
  for (const [kind, declared] of file.declared.byKind) indexes.set(kind, await kind.load(tx, ref, declared));
  const context = { tx, tenant: ref, principals, groups, teams, indexOf: (kind: ReferenceKind) => known(indexes, kind), problems, blob };
  const steps = [...tenant.steps];
  for (const planner of file.planners) steps.push(...(await planner(context)));
  return { ...tenant, steps };
}

/** What `kinds` holds for a kind; a kind no section listed in OrgSection.references is a mistake in that section. */
function known<T>(kinds: ReadonlyMap<ReferenceKind, T>, kind: ReferenceKind): T {
  const found = kinds.get(kind);
  if (found === undefined) throw new Error('org file: a section uses a kind of name it does not list in its references');
  return found;
}
