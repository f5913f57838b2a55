import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../config.ts';
import type { OrgChange } from '../kernel/org/section.ts';
import { passwordEnvironment } from '../kernel/org/password-env.ts';
import { readReferencedFiles } from '../org-sections.ts';
import { withOps } from './session.ts';
import { jsonText, print } from './terminal.ts';
import { UsageError, parseCommand } from './usage.ts';

export const applyHelp = `Usage: kgw apply FILE [--dry-run] [--json]

Creates or updates, idempotently, what the org file (YAML) declares: the tenant, people,
agents, groups, teams, Knowledge, Skills, Memories, grants and routes. The files that its
knowledge, skills and memories sections name (file:, dir:) are read here, relative to the
org file's folder, and sent along. Nothing is applied when the file has any error; each
error names its line. See docs/org-file.md.

Options:
  --dry-run   print the plan and change nothing
  --json      print the result as JSON`;

const SIGN = { create: '+', add: '+', update: '~', publish: '~', remove: '-' } as const;

export async function applyCommand(argv: readonly string[]): Promise<void> {
  const { values, positionals, help } = parseCommand(argv, { 'dry-run': { type: 'boolean' }, json: { type: 'boolean' } }, { min: 1, max: 1 });
  if (help) return void print(applyHelp);
  const file = positionals[0] ?? '';
  const source = await readSource(file);
  const dryRun = values['dry-run'] === true;
  // Read here, not by a gateway that may apply the file for us: the paths are ours.
  const files = await readReferencedFiles(source, path.dirname(file));
  const args = { source, fileName: path.basename(file), dryRun, env: passwordEnvironment(source), files };
  const result = await withOps(loadConfig(), (run) => run('apply', args));
  if (values.json === true) return void print(jsonText(result));
  printChanges(result, dryRun);
}

/** A file the command was named, as text; one it cannot read is a usage error naming why. */
export async function readSource(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** One line per change, then what was done to which tenant (`kgw apply`, `kgw brain import`). */
export function printChanges(result: { readonly tenant: string; readonly changes: readonly OrgChange[] }, dryRun: boolean): void {
  for (const change of result.changes) {
    print(`${SIGN[change.action]} ${change.action} ${change.kind} ${change.name}${change.detail ? ` (${change.detail})` : ''}`);
  }
  const count = `${result.changes.length} change${result.changes.length === 1 ? '' : 's'}`;
  print(
    result.changes.length === 0
      ? `tenant ${result.tenant} is up to date`
      : dryRun
        ? `dry run: ${count} planned for tenant ${result.tenant}, nothing applied`
        : `applied ${count} to tenant ${result.tenant}`,
  );
}
