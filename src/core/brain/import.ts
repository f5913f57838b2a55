import type { Db } from '../../store/db.ts';
import type { AuditTrail } from '../audit/trail.ts';
import { requireTenant } from '../directory/directory.ts';
import { validation } from '../errors.ts';
import { orgGraph, orgGraphChanges } from '../graph/org-graph.ts';
import { enqueue } from '../outbox/outbox.ts';
import { PrincipalIndex } from '../org/principal-index.ts';
import { OrgProblems } from '../org/problems.ts';
import { changeCounts, DryRunRollback, unlessDryRun } from '../org/dry-run.ts';
import type { OrgChange } from '../org/section.ts';
import { lockTenantSlug } from '../org/tenant.ts';
import { YamlReader } from '../org/yaml-reader.ts';
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
  if (Buffer.byteLength(input.source) > BRAIN_BOUNDS.importBytes) throw validation(`${fileName} is larger than ${BRAIN_BOUNDS.importBytes} bytes`);
  const problems = new OrgProblems(fileName);
  const parsed = YamlReader.parse(input.source, problems);
  if (!parsed) throw problems.toError();
  // Problems of reading and of planning are reported together, as for the org file.
  const spec = readBrainContent(parsed.root, parsed.reader);
  return unlessDryRun(() =>
    db.tx(async (tx) => {
      const found = problems.fork();
      const tenant = await requireTenant(tx, input.tenant);
      await lockTenantSlug(tx, tenant.slug);
      const principals = await PrincipalIndex.load(tx, tenant, new Set());
      const steps = await planBrainContent(spec, { tx, tenantId: tenant.id, principals, problems: found, origin: 'import' });
      if (found.count > 0) throw found.toError();
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
