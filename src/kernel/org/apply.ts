import type { BlobStore } from '../../../connectors/blob/contract.ts';
import type { Db, Transaction } from '../../store/db.ts';
import type { AuditTrail } from '../audit/trail.ts';
import { AUTH_CHANNEL } from '../tokens/tokens.ts';
import { changeCounts, DryRunRollback, unlessDryRun } from './dry-run.ts';
import type { OrgEnvironment } from './org-file.ts';
import { planOrgFile, readOrgFile } from './org-file.ts';
import { OrgProblems } from './problems.ts';
import type { ReferencedFiles } from './referenced-files.ts';
import type { OrgChange, OrgFileParts } from './section.ts';

export type { OrgChange } from './section.ts';
export type { OrgEnvironment } from './org-file.ts';
export type { ReferencedFiles } from './referenced-files.ts';

export interface OrgApplyInput {
  /** The org file's text. */
  readonly source: string;
  /** Its name in messages (`org.yaml` when left out). */
  readonly fileName?: string | undefined;
  readonly dryRun?: boolean | undefined;
  /** Where `password_env` finds passwords; this process's environment when left out. */
  readonly env?: OrgEnvironment | undefined;
  /** What the file's `file:` and `dir:` values name, read by the applying process (readReferencedFiles). */
  readonly files?: ReferencedFiles | undefined;
  /** Where Skill files go; a file with a `skills` section is refused without one. */
  readonly blob?: BlobStore | undefined;
}

export interface OrgApplyResult {
  tenant: string;
  dryRun: boolean;
  changes: OrgChange[];
}

/** Applies an org file made of `parts` (see applyOrgFileWith); the composition root binds it to the products' parts. */
export type OrgFileApplier = (db: Db, input: OrgApplyInput, audit: AuditTrail) => Promise<OrgApplyResult>;

/**
 * Makes a tenant's directory, and what the products' sections declare (`parts`), what the org
 * file says, in one transaction. What the file does not list is left alone; what it lists is
 * created or updated (a Memory's, Knowledge's or Skill's content only where the file's content
 * for it changed since the file last applied it), and each listed group's and team's membership
 * becomes exactly the file's. Every problem in the file is reported at once as one validation
 * error with line numbers, and then nothing is written. A dry run plans and writes the same way,
 * then rolls back (and stores no Skill files, and runs no apply hook). `env` is where
 * `password_env` finds passwords; it defaults to this process's environment, and a gateway
 * applying a file for the CLI passes the CLI's (see passwordEnvironment). `files` is what
 * `file:` and `dir:` name, never read here from this process's file system: the CLI reads and
 * sends them (see readReferencedFiles). An apply that changes something runs the products'
 * hooks (Company Brain enqueues its graph's difference) and records `org.apply` with its change
 * counts through `audit` (a surface trail, told the tenant here); a dry run or an apply that
 * changes nothing records nothing.
 */
export async function applyOrgFileWith(parts: OrgFileParts, db: Db, input: OrgApplyInput, audit: AuditTrail): Promise<OrgApplyResult> {
  const dryRun = input.dryRun ?? false;
  const problems = new OrgProblems(input.fileName ?? 'org.yaml');
  const file = readOrgFile(parts.sections, input.source, problems, input.env, input.files);
  if (!file) throw problems.toError();
  const needsBlob = parts.sections.find((section) => section.blobFiles !== undefined && file.sections.has(section.key));
  if (needsBlob && input.blob === undefined)
    throw new Error(`applyOrgFile: the org file has a ${needsBlob.key} section, so it needs a blob store (input.blob) for ${needsBlob.blobFiles}`);
  return unlessDryRun(() =>
    db.tx(async (tx) => {
      // The plan is made inside the transaction so that it matches the rows it is applied to;
      // the store may run this function again after a serialisation failure, hence the fork.
      const found = problems.fork();
      // Planning locks the tenant first (one apply per tenant at a time) and writes nothing, so
      // what a hook reads after it is the state this transaction replaces.
      const { id, existed, steps } = await planOrgFile(tx, file, found, input.blob);
      if (found.count > 0) throw found.toError();
      // A dry run rolls back before a hook's work is needed, so it runs none.
      const afterWrites: ((tx: Transaction) => Promise<void>)[] = [];
      if (!dryRun) for (const hook of parts.hooks) afterWrites.push(await hook.before(tx, { id, existed }));
      // Bytes before metadata: Skill files are in the blob store before a version names them.
      // Blobs are content-addressed, so storing them again (a retried transaction) is harmless.
      if (!dryRun) for (const step of steps) await step.prepare?.();
      // Writing in a dry run too lets the database's own checks judge the plan before rollback.
      for (const step of steps) await step.write(tx);
      // A tenant or principal renamed changes what a token's check answered: this process's
      // token cache forgets at commit (other processes hear the store's own trigger).
      if (!dryRun && steps.length > 0) await tx.signal(AUTH_CHANNEL);
      const result: OrgApplyResult = { tenant: file.tenant.slug.value, dryRun, changes: steps.map((step) => step.change) };
      if (dryRun) throw new DryRunRollback(result);
      if (steps.length === 0) return result;
      for (const after of afterWrites) await after(tx);
      await audit.about({ tenantId: id }).recordIn(tx, 'org.apply', [], { file: input.fileName ?? 'org.yaml', changes: changeCounts(result.changes) });
      return result;
    }),
  );
}
