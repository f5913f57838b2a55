import type { Db, Transaction } from '../store/db.ts';
import type { AuditTrail } from '../kernel/audit/trail.ts';
import { requireTenant } from '../kernel/directory/directory.ts';
import { validation } from '../kernel/errors.ts';
import { orgGraph, orgGraphChanges } from './org-graph.ts';
import { enqueue } from '../kernel/outbox/outbox.ts';
import { PrincipalIndex } from '../kernel/org/principal-index.ts';
import { OrgProblems } from '../kernel/org/problems.ts';
import { changeCounts, DryRunRollback, unlessDryRun } from '../kernel/org/dry-run.ts';
import type { OrgChange, PlannedStep } from '../kernel/org/section.ts';
import { lockTenantSlug } from '../kernel/org/tenant.ts';
import { YamlReader } from '../kernel/org/yaml-reader.ts';
import { planBrainContent, readBrainContent } from './content.ts';
import { BRAIN_BOUNDS } from './model.ts';

export interface BrainImportInput {
  readonly tenant: string;
  /** The file's text: YAML or JSON, `{ nodes: [...], relations: [...] }`. */
  readonly source: string;
  /** Its name in messages. */
  readonly fileName?: string | undefined;
  readonly dryRun?: boolean | undefined;
}

export interface BrainImportResult {
  readonly tenant: string;
  readonly dryRun: boolean;
  readonly changes: OrgChange[];
}

/**
 * `kgw brain import FILE`: adds or updates the file's nodes and relations, all or nothing. The
 * file is read like the org file's `brain:` section (docs/company-brain.md), with every problem
 * reported at once by line; relations may name the directory's people (by email), agents (by
 * name), departments and projects. Nothing is removed: what the org file keeps is removed by
 * the org file. The graph store follows through the outbox; an import that changes something
 * is audited as `brain.import`.
 */
export async function importBrain(db: Db, input: BrainImportInput, audit: AuditTrail): Promise<BrainImportResult> {
  const fileName = input.fileName ?? 'brain.yaml';
  const dryRun = input.dryRun ?? false;
  const file = readBrainFile(input.source, fileName);
  return unlessDryRun(() =>
    db.tx(async (tx) => {
      const tenant = await requireTenant(tx, input.tenant);
      await lockTenantSlug(tx, tenant.slug);
      const steps = await planBrainFile(tx, tenant, file, 'import');
      // The tenant's whole graph is read only when something changes: a re-import is the usual case.
      const before = dryRun || steps.length === 0 ? undefined : await orgGraph(tx, tenant.id);
      for (const step of steps) await step.write(tx);
      const result: BrainImportResult = { tenant: tenant.slug, dryRun, changes: steps.map((s) => s.change) };
      if (dryRun) throw new DryRunRollback<BrainImportResult>(result);
      if (before === undefined) return result;
      await enqueue(tx, orgGraphChanges(tenant.id, before, await orgGraph(tx, tenant.id)));
      await audit.about({ tenantId: tenant.id }).recordIn(tx, 'brain.import', [], { file: fileName, changes: changeCounts(result.changes) });
      return result;
    }),
  );
}

/** A brain file read: its content and where its problems are reported, by line. */
export interface BrainFile {
  readonly spec: ReturnType<typeof readBrainContent>;
  readonly problems: OrgProblems;
}

/** Reads a brain file (YAML or JSON, `{ nodes, relations }`) within its size bound; throws every problem of its syntax at once. */
export function readBrainFile(source: string, fileName: string): BrainFile {
  if (Buffer.byteLength(source) > BRAIN_BOUNDS.importBytes) throw validation(`${fileName} is larger than ${BRAIN_BOUNDS.importBytes} bytes`);
  const problems = new OrgProblems(fileName);
  const parsed = YamlReader.parse(source, problems);
  if (!parsed) throw problems.toError();
  return { spec: readBrainContent(parsed.root, parsed.reader), problems };
}

/**
 * The steps that add or update a read file's nodes and relations in the tenant's brain, planned
 * in `tx` (the caller holds the tenant's apply lock, writes the steps and enqueues the graph's
 * difference); problems of reading and of planning are thrown together, as for the org file.
 */
export async function planBrainFile(
  tx: Transaction,
  tenant: { readonly id: string; readonly slug: string },
  file: BrainFile,
  origin: 'import' | 'inbox',
): Promise<PlannedStep[]> {
  const found = file.problems.fork();
  const principals = await PrincipalIndex.load(tx, tenant, new Set());
  const steps = await planBrainContent(file.spec, { tx, tenantId: tenant.id, principals, problems: found, origin });
  if (found.count > 0) throw found.toError();
  return steps;
}
