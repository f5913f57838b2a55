import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../config.ts';
import { isKgwError } from '../kernel/errors.ts';
import type { ReferencedFiles } from '../kernel/org/referenced-files.ts';
import { readReferencedFiles } from '../org-sections.ts';
import type { ManifestResource } from './export-alignbase.ts';
import { earlierResources } from './export-alignbase.ts';
import { destination } from './export-files.ts';
import type { Outgoing, SentReport } from './kb-import.ts';
import { ItemRefused, KB_IMPORT_OPTIONS, noneSent, sendToKb } from './kb-import.ts';
import type { OpRunner } from './session.ts';
import { applyResource, skillSection, tenantKeys } from './org-apply.ts';
import { withOps } from './session.ts';
import { jsonText, print, progressReporter, visible } from './terminal.ts';
import { UsageError, parseCommand, requireOptions } from './usage.ts';

export const importExportHelp = `Usage:
  kgw import export PATH --tenant SLUG --as EMAIL [--dry-run] [--json]

Brings an export of kgw (kgw export folder) into a tenant of this gateway, so that the same
content has the same SHA-256 here:

  kbs/SLUG/…            each KB's files, as kgw import folder --keep-links would, into the
                        local KB of the same slug (which must exist: create_kb, or the org
                        file's kbs:), as the person --as names (an Editor of it)
  alignbase/knowledge   each active Knowledge's latest text (the export's front matter taken
                        off), authority, dates, and published when its latest version was
  alignbase/memories    each active Memory's latest text
  alignbase/skills      each active Skill's package, as kgw import skills would

as the org file writes them (docs/org-file.md): a resource of that title or name is created, or
gets a new version when its text differs, and an unchanged one changes nothing, so running it
again changes nothing. Archived resources, Artifacts, grants and routes are listed as not
carried. Files are imported as they are on disk now (edits made to the export included).

Exits 1 when something was refused; each is listed with the reason.`;

const MANIFEST = 'manifest.json';

interface KbPart extends SentReport {
  slug: string;
}

interface Report {
  tenant: string;
  dry_run: boolean;
  kbs: KbPart[];
  alignbase: {
    created: string[];
    updated: string[];
    unchanged: string[];
    not_carried: { name: string; reason: string }[];
    failed: { name: string; reason: string }[];
  };
}

interface ManifestKb {
  readonly slug: string;
  readonly files: readonly { readonly path: string; readonly size_bytes: number }[];
}

/** The text the export put below its front matter: everything after the block that starts `---` then `alignbase:`. */
export function exportedText(file: string): string | undefined {
  if (!file.startsWith('---\nalignbase: ')) return undefined;
  const end = file.indexOf('\n---\n', 4);
  return end < 0 ? undefined : file.slice(end + 5);
}

/** The org file entry that writes `resource` with `text`, or why it cannot. */
function orgEntry(resource: ManifestResource, text: string): string {
  const latest = resource.versions.find((v) => v.version === resource.latest_version);
  if (resource.type === 'knowledge') {
    const lines = [`knowledge:`, `  - title: ${JSON.stringify(resource.name)}`, `    content: ${JSON.stringify(text)}`];
    lines.push(`    authority: ${latest?.authority === 'must_follow' ? 'must_follow' : 'informational'}`);
    if (resource.published_version !== null && resource.published_version === resource.latest_version) lines.push('    publish: true');
    if (resource.review_by !== null) lines.push(`    review_by: ${JSON.stringify(resource.review_by)}`);
    if (resource.expires_at !== null) lines.push(`    expires_at: ${JSON.stringify(resource.expires_at)}`);
    return `${lines.join('\n')}\n`;
  }
  return `memories:\n  - name: ${JSON.stringify(resource.name)}\n    content: ${JSON.stringify(text)}\n`;
}

async function importKbs(
  run: OpRunner,
  root: string,
  kbs: readonly ManifestKb[],
  target: { tenant: string; as: string; dryRun: boolean },
  report: Report,
  progress: (line: string) => void,
): Promise<void> {
  for (const kb of kbs) {
    const part: KbPart = { slug: kb.slug, ...noneSent() };
    report.kbs.push(part);
    const folder = path.join(root, 'kbs', kb.slug);
    const items: Outgoing[] = kb.files.map((file) => ({
      source: file.path,
      path: file.path,
      size: file.size_bytes,
      bytes: async () => {
        try {
          return await readFile(destination(folder, file.path));
        } catch (error) {
          throw new ItemRefused(`cannot be read from the export (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
        }
      },
    }));
    try {
      // A KB this tenant does not have is one refusal, not one per file.
      await run('kb.show', { tenant: target.tenant, kb: kb.slug });
      await sendToKb(run, { tenant: target.tenant, kb: kb.slug, as: target.as, dryRun: target.dryRun }, items, part, (line) =>
        progress(`kbs/${kb.slug}: ${line}`),
      );
    } catch (error) {
      if (!isKgwError(error)) throw error;
      part.failed.push({ path: '.', reason: error.message });
    }
  }
}

async function importAlignbase(
  run: OpRunner,
  root: string,
  resources: readonly ManifestResource[],
  target: { tenant: string; dryRun: boolean },
  report: Report,
): Promise<void> {
  const head = await tenantKeys(run, target.tenant);
  const part = report.alignbase;
  for (const resource of resources) {
    const label = `${resource.type}:${resource.name}`;
    if (resource.status !== 'active') {
      part.not_carried.push({ name: label, reason: 'archived' });
      continue;
    }
    if (resource.type === 'artifact') {
      part.not_carried.push({ name: label, reason: 'Artifacts are not imported yet' });
      continue;
    }
    for (const grant of resource.grants)
      part.not_carried.push({ name: label, reason: `grant to ${grant.to} (${grant.role}): give it in the org file's grants` });
    for (const route of resource.routes) part.not_carried.push({ name: label, reason: `route to ${route}: give it in the org file's routes` });
    try {
      let source: string;
      let files: ReferencedFiles = {};
      if (resource.type === 'skill') {
        const folder = path.dirname(destination(root, resource.path));
        const publish = resource.published_version !== null && resource.published_version === resource.latest_version;
        source = `${head}${skillSection(path.basename(folder), publish, resource)}`;
        files = await readReferencedFiles(source, path.dirname(folder));
      } else {
        const text = exportedText(await readFile(destination(root, resource.path), 'utf8'));
        if (text === undefined) throw new UsageError(`${resource.path} has lost the export's front matter`);
        source = `${head}${orgEntry(resource, text)}`;
      }
      const applied = await applyResource(run, resource.type, { source, fileName: resource.path, dryRun: target.dryRun, files });
      part[applied.outcome].push(label);
    } catch (error) {
      if (!isKgwError(error) && !(error instanceof UsageError) && !(error as NodeJS.ErrnoException).code) throw error;
      part.failed.push({ name: label, reason: error instanceof Error ? error.message : String(error) });
    }
  }
}

export async function importExportCommand(argv: readonly string[]): Promise<void> {
  const { values, positionals, help } = parseCommand(argv, { ...KB_IMPORT_OPTIONS }, { min: 1, max: 1 });
  if (help) return void print(importExportHelp);
  const { tenant, as } = requireOptions(values, 'tenant', 'as');
  if (values.kb !== undefined) throw new UsageError('kgw import export takes every KB of the export; leave out --kb');
  const root = path.resolve(positionals[0] ?? '');
  let manifest: { format?: unknown; format_version?: unknown; kbs?: unknown };
  try {
    manifest = JSON.parse(await readFile(path.join(root, MANIFEST), 'utf8')) as typeof manifest;
  } catch {
    throw new UsageError(`${root} holds no export of kgw (${MANIFEST})`);
  }
  if (manifest.format !== 'kgw-export' || manifest.format_version !== 1 || !Array.isArray(manifest.kbs))
    throw new UsageError(`${root}/${MANIFEST} is not a manifest of kgw export format 1`);
  const dryRun = values['dry-run'] === true;
  const json = values.json === true;
  const report: Report = { tenant, dry_run: dryRun, kbs: [], alignbase: { created: [], updated: [], unchanged: [], not_carried: [], failed: [] } };
  const progress = progressReporter(json);
  await withOps(loadConfig(), async (run) => {
    await importKbs(run, root, manifest.kbs as ManifestKb[], { tenant, as, dryRun }, report, progress);
    await importAlignbase(run, root, earlierResources(manifest), { tenant, dryRun }, report);
  });
  if (report.kbs.some((kb) => kb.failed.length > 0) || report.alignbase.failed.length > 0) process.exitCode = 1;
  if (json) return void print(jsonText(report));
  const would = dryRun ? 'would be ' : '';
  for (const kb of report.kbs) {
    print(
      `kbs/${kb.slug}: ${kb.files} files, ${kb.created} ${would}created, ${kb.updated} ${would}updated, ${kb.unchanged} unchanged, ${kb.failed.length} refused`,
    );
    for (const item of kb.failed) print(`  refused ${visible(item.path, { inline: true })}: ${item.reason}`);
  }
  const ab = report.alignbase;
  print(`alignbase: ${ab.created.length} ${would}created, ${ab.updated.length} ${would}updated, ${ab.unchanged.length} unchanged, ${ab.failed.length} refused`);
  for (const item of ab.not_carried) print(`  not carried ${visible(item.name, { inline: true })}: ${item.reason}`);
  for (const item of ab.failed) print(`  refused ${visible(item.name, { inline: true })}: ${item.reason}`);
}
