import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../config.ts';
import { isKgwError } from '../kernel/errors.ts';
import { readReferencedFiles } from '../org-sections.ts';
import { applyResource, skillSection, tenantKeys } from './org-apply.ts';
import { withOps } from './session.ts';
import { jsonText, print, progressReporter, visible } from './terminal.ts';
import { UsageError, parseCommand, requireOptions } from './usage.ts';

export const importSkillsHelp = `Usage:
  kgw import skills PATH --tenant SLUG [--publish] [--dry-run] [--json]

Brings Skill packages kept as agent tools keep them (a folder per Skill holding SKILL.md and
its files, e.g. a project's .claude/skills) into the tenant's Alignbase Skills. PATH is one
such folder, or a folder of them. Each is read and written as the org file's skills: section
does (docs/org-file.md): the folder's name is the Skill's name and must be SKILL.md's name;
every file under it is an attachment; a Skill of that name is created, or gets a new version
when its package differs from the latest one, and an unchanged package changes nothing.

Left out, and listed: entries of PATH whose names start with "." and folders without SKILL.md.
A package the Skill rules refuse (SKILL.md's front matter, a file over 2 MiB, more than 500
files or 3 MiB, a symbolic link) is refused alone, with the reason; the others are imported.

--publish  publishes each imported version (as the org file's publish: true).
--dry-run  says what would change; writes nothing.
--json     prints the report as one JSON object, without progress lines.

Exits 1 when a Skill was refused.`;

interface Report {
  tenant: string;
  dry_run: boolean;
  skills: number;
  created: string[];
  updated: { name: string; detail: string }[];
  published: string[];
  unchanged: string[];
  skipped: { path: string; reason: string }[];
  failed: { name: string; reason: string }[];
}

const isDir = async (at: string): Promise<boolean> => (await lstat(at).catch(() => undefined))?.isDirectory() === true;
const hasSkillMd = async (dir: string): Promise<boolean> => (await lstat(path.join(dir, 'SKILL.md')).catch(() => undefined))?.isFile() === true;

/** The Skill folders under `root` (itself when it holds SKILL.md), by name; what is left out goes to `report.skipped`. */
async function skillFolders(root: string, report: Report): Promise<string[]> {
  if (await hasSkillMd(root)) return [root];
  const entries: Dirent[] = await readdir(root, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const found: string[] = [];
  for (const entry of entries) {
    const at = path.join(root, entry.name);
    if (entry.name.startsWith('.')) report.skipped.push({ path: entry.name, reason: 'hidden (a tool’s folder or file)' });
    else if (entry.isSymbolicLink()) report.skipped.push({ path: entry.name, reason: 'a symbolic link (not followed)' });
    else if (!entry.isDirectory()) report.skipped.push({ path: entry.name, reason: 'not a Skill folder' });
    else if (!(await hasSkillMd(at))) report.skipped.push({ path: entry.name, reason: 'no SKILL.md in it' });
    else found.push(at);
  }
  return found;
}

export async function importSkillsCommand(argv: readonly string[]): Promise<void> {
  const { values, positionals, help } = parseCommand(
    argv,
    { tenant: { type: 'string' }, publish: { type: 'boolean' }, 'dry-run': { type: 'boolean' }, json: { type: 'boolean' } },
    { min: 1, max: 1 },
  );
  if (help) return void print(importSkillsHelp);
  const { tenant } = requireOptions(values, 'tenant');
  const root = path.resolve(positionals[0] ?? '');
  if (!(await isDir(root))) throw new UsageError(`${root} is not a folder`);
  const dryRun = values['dry-run'] === true;
  const json = values.json === true;
  const report: Report = { tenant, dry_run: dryRun, skills: 0, created: [], updated: [], published: [], unchanged: [], skipped: [], failed: [] };
  const folders = await skillFolders(root, report);
  const progress = progressReporter(json);
  await withOps(loadConfig(), async (run) => {
    const head = await tenantKeys(run, tenant);
    for (const folder of folders) {
      const name = path.basename(folder);
      report.skills += 1;
      const source = `${head}${skillSection(name, values.publish === true)}`;
      try {
        const files = await readReferencedFiles(source, path.dirname(folder));
        const applied = await applyResource(run, 'skill', { source, fileName: `${name}/SKILL.md`, dryRun, files });
        if (applied.outcome === 'created') report.created.push(name);
        else if (applied.outcome === 'updated') report.updated.push({ name, detail: applied.detail });
        if (applied.published) report.published.push(name);
        else if (applied.outcome === 'unchanged') report.unchanged.push(name);
      } catch (error) {
        if (!isKgwError(error) && !(error instanceof UsageError)) throw error;
        report.failed.push({ name, reason: error.message });
      }
      progress(`${report.skills}/${folders.length} Skills`);
    }
  });
  if (report.failed.length > 0) process.exitCode = 1;
  if (json) return void print(jsonText(report));
  const would = dryRun ? 'would be ' : '';
  print(
    `${report.skills} Skills into ${tenant}: ${report.created.length} ${would}created, ${report.updated.length} ${would}updated, ` +
      `${report.unchanged.length} unchanged, ${report.skipped.length} left out, ${report.failed.length} refused`,
  );
  for (const name of report.created) print(`  + ${name}`);
  for (const item of report.updated) print(`  ~ ${item.name} (${item.detail})`);
  for (const name of report.published) print(`  published ${name}`);
  for (const item of report.skipped) print(`  left out ${visible(item.path, { inline: true })}: ${item.reason}`);
  for (const item of report.failed) print(`  refused ${item.name}: ${item.reason}`);
}
