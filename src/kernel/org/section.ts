import type { BlobStore } from '../../../connectors/blob/contract.ts';
import type { Queryable, Transaction } from '../../store/db.ts';
import type { PrincipalIndex } from './principal-index.ts';
import type { OrgProblems } from './problems.ts';
import type { ReferenceIndex } from './reference-index.ts';
import type { FileField, ReferencedFiles } from './referenced-files.ts';
import type { Slot, YamlReader } from './yaml-reader.ts';

/** One change an apply makes (or, in a dry run, would make). */
export interface OrgChange {
  action: 'create' | 'update' | 'publish' | 'add' | 'remove';
  /** What changed, as the section words it: the directory's `person`, `agent`, `group`, a product's `knowledge base` … */
  kind: string;
  name: string;
  detail?: string;
}

/** A planned change and the write that makes it. */
export interface PlannedStep {
  readonly change: OrgChange;
  write(tx: Transaction): Promise<void>;
  /**
   * Work outside the database that the write relies on, done before any write of the apply
   * and skipped by a dry run: storing a Skill's file bytes in the blob store.
   */
  prepare?(): Promise<void>;
}

/**
 * What every planner sees: the transaction, the tenant, and what is known so far (stored or
 * created by an earlier section's plan) of principals, groups, teams and the products' own
 * kinds of names (indexOf).
 */
export interface PlanContext {
  readonly tx: Transaction;
  readonly tenant: { readonly id: string; readonly slug: string };
  readonly principals: PrincipalIndex;
  /** Groups by name. */
  readonly groups: ReferenceIndex;
  /** Teams by slug. */
  readonly teams: ReferenceIndex;
  /** The index of a kind of name a section listed in OrgSection.references. */
  indexOf(kind: ReferenceKind): ReferenceIndex;
  readonly problems: OrgProblems;
  /** Where files kept in the blob store go (Skill files); see OrgSection.blobFiles. */
  readonly blob: BlobStore | undefined;
}

/** What every reader sees: the YAML reader, what the file declares and the apply's environment. */
export interface ReadContext {
  readonly reader: YamlReader;
  /** References (emails, agent names) declared in the file, even by entries with other problems. */
  readonly declared: Set<string>;
  /** Group names declared in the file, likewise. */
  readonly declaredGroups: Set<string>;
  /** Team slugs declared in the file, likewise. */
  readonly declaredTeams: Set<string>;
  /** The names of a kind (OrgSection.references) declared in the file by sections that create them, likewise. */
  declaredOf(kind: ReferenceKind): Set<string>;
  /** The environment of the apply, where `password_env` finds passwords. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** What `file:` and `dir:` name, as the applying process was given it (referenced-files.ts). */
  readonly files: ReferencedFiles;
}

/**
 * One top-level key of the org file. `read` validates its node (reporting problems with
 * lines) and returns the planner for what it read; the planner compares that with the
 * tenant's current rows inside the apply transaction and returns the steps to take.
 */
export interface OrgSection {
  readonly key: string;
  /**
   * What the section keeps in the blob store (`the Skill files`), when it always needs one:
   * applyOrgFile refuses a file with the section when it is given no blob store.
   */
  readonly blobFiles?: string | undefined;
  /** The products' kinds of names the section declares or names, loaded for every plan (indexOf). */
  readonly references?: readonly ReferenceKind[] | undefined;
  /** Where the section's entries name a file or folder next to the org file, which `kgw apply` reads and sends. */
  readonly files?: FileField | undefined;
  read(slot: Slot, context: ReadContext): SectionPlanner;
}

/**
 * A kind of name a product's sections share that the directory does not hold (Alignbase's
 * context resources by `type:name`): sections that create one list it at read time
 * (ReadContext.declaredOf) and add it to the index at plan time; others resolve it there.
 */
export interface ReferenceKind {
  /** The tenant's stored names of this kind; `declared` are those the file declares. */
  load(q: Queryable, tenant: { readonly id: string; readonly slug: string }, declared: ReadonlySet<string>): Promise<ReferenceIndex>;
}

/**
 * Work a product does around an apply that writes (never in a dry run): `before` runs once the
 * plan is made (the tenant is locked) and before any write; the function it returns runs after
 * the writes, in the same transaction, when they changed something.
 */
export interface OrgApplyHook {
  before(tx: Transaction, tenant: { readonly id: string; readonly existed: boolean }): Promise<(tx: Transaction) => Promise<void>>;
}

/**
 * What the products make of the org file: every section, in the order they are read, planned
 * and applied, and their apply hooks. The composition root assembles it (src/org-sections.ts).
 */
export interface OrgFileParts {
  readonly sections: readonly OrgSection[];
  readonly hooks: readonly OrgApplyHook[];
}

export type SectionPlanner = (context: PlanContext) => Promise<PlannedStep[]>;

/** Builds a section from a typed reader and planner, so the list of sections needs no generics. */
export function defineSection<Spec>(section: {
  key: string;
  blobFiles?: string;
  references?: readonly ReferenceKind[];
  files?: FileField;
  read(slot: Slot, context: ReadContext): Spec;
  plan(spec: Spec, context: PlanContext): PlannedStep[] | Promise<PlannedStep[]>;
}): OrgSection {
  return {
    key: section.key,
    blobFiles: section.blobFiles,
    references: section.references,
    files: section.files,
    read(slot, context) {
      const spec = section.read(slot, context);
      return (planContext) => Promise.resolve(section.plan(spec, planContext));
    },
  };
}

/** Reads a section that is a list of entries; an empty section (`people:`) is an empty list. */
export function readEntries<Entry>(slot: Slot, context: ReadContext, readEntry: (item: Slot) => Entry | undefined): Entry[] {
  if (context.reader.isEmpty(slot)) return [];
  const entries: Entry[] = [];
  for (const item of context.reader.list(slot) ?? []) {
    const entry = readEntry(item);
    if (entry !== undefined) entries.push(entry);
  }
  return entries;
}

/** Reports the second and later entries with the same identity (email, name, slug). */
export class DuplicateCheck {
  readonly #seen = new Map<string, number>();
  readonly #what: string;

  constructor(what: string) {
    this.#what = what;
  }

  /** True the first time `identity` is seen; otherwise reports it and returns false. */
  first(identity: { readonly value: string; readonly line: number; readonly path: string }, reader: YamlReader): boolean {
    const earlier = this.#seen.get(identity.value);
    if (earlier === undefined) {
      this.#seen.set(identity.value, identity.line);
      return true;
    }
    reader.fail(identity, `${identity.path}: duplicate ${this.#what} "${identity.value}" (already listed at line ${earlier})`);
    return false;
  }
}
