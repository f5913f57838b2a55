import type { ReferencedFiles } from '../kernel/org/referenced-files.ts';
import type { OpRunner } from './session.ts';

/**
 * Imports that write as the org file does (`kgw import skills`, `kgw import export`): one small
 * org file per resource, so that one refused resource leaves the others to be imported.
 */

/**
 * The tenant's keys of such a file. The tenant must exist (an org file naming an unknown one
 * would create it), and its name and language are restated as they are, since an org file's
 * tenant keys are the whole truth.
 */
export async function tenantKeys(run: OpRunner, tenant: string): Promise<string> {
  const found = await run('tenant.show', { tenant });
  return `tenant: ${JSON.stringify(found.tenant)}\nname: ${JSON.stringify(found.name)}\nlanguage: ${JSON.stringify(found.language)}\n`;
}

/** The `skills:` section of one Skill folder (by its name, beside the file), with its staleness dates when it has them. */
export const skillSection = (dir: string, publish: boolean, dates: { readonly review_by?: string | null; readonly expires_at?: string | null } = {}): string =>
  `skills:\n  - dir: ${JSON.stringify(dir)}\n${publish ? '    publish: true\n' : ''}` +
  (dates.review_by ? `    review_by: ${JSON.stringify(dates.review_by)}\n` : '') +
  (dates.expires_at ? `    expires_at: ${JSON.stringify(dates.expires_at)}\n` : '');

export interface AppliedResource {
  /** Created, given a new version, or neither. */
  readonly outcome: 'created' | 'updated' | 'unchanged';
  /** What the update changed, as the org file words it. */
  readonly detail: string;
  readonly published: boolean;
}

/** Applies (or plans, with `dryRun`) a file that declares one resource of `kind`, and says what it did to it. */
export async function applyResource(
  run: OpRunner,
  kind: string,
  input: { readonly source: string; readonly fileName: string; readonly dryRun: boolean; readonly files: ReferencedFiles },
): Promise<AppliedResource> {
  const result = await run('apply', { source: input.source, fileName: input.fileName, dryRun: input.dryRun, env: {}, files: input.files });
  const changes = result.changes.filter((change) => change.kind === kind);
  const updated = changes.find((change) => change.action === 'update');
  return {
    outcome: changes.some((change) => change.action === 'create') ? 'created' : updated !== undefined ? 'updated' : 'unchanged',
    detail: updated?.detail ?? '',
    published: changes.some((change) => change.action === 'publish'),
  };
}
