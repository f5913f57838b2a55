import path from 'node:path';
import { loadConfig } from '../config.ts';
import { printChanges, readSource } from './apply.ts';
import { withOps } from './session.ts';
import { jsonText, print } from './terminal.ts';
import { UsageError, parseCommand } from './usage.ts';

export const brainHelp = `Usage:
  kgw brain import FILE --tenant SLUG [--dry-run] [--json]

Company Brain knowledge, for the operator (docs/company-brain.md).

import   adds or updates the nodes and relations of FILE (YAML or JSON: { nodes: [...],
         relations: [...] }, written like the org file's brain section), all or nothing:
         nothing is imported when the file has any error, and each error names its line.
         Relations may name the directory's person:<email or id>, agent:<name or id>,
         department:<name> and project:<name>. Nothing is removed.

Options:
  --tenant SLUG  the tenant to import into
  --dry-run      print the plan and change nothing
  --json         print the result as JSON`;

export async function brainCommand(argv: readonly string[]): Promise<void> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h') return void print(brainHelp);
  if (sub !== 'import') throw new UsageError(`unknown brain command "${sub}" (expected import)`);
  const { values, positionals, help } = parseCommand(
    rest,
    { tenant: { type: 'string' }, 'dry-run': { type: 'boolean' }, json: { type: 'boolean' } },
    { min: 1, max: 1 },
  );
  if (help) return void print(brainHelp);
  const tenant = values.tenant;
  if (tenant === undefined) throw new UsageError('kgw brain import needs --tenant SLUG');
  const file = positionals[0] ?? '';
  const source = await readSource(file);
  const dryRun = values['dry-run'] === true;
  const result = await withOps(loadConfig(), (run) => run('brain.import', { tenant, source, fileName: path.basename(file), dryRun }));
  if (values.json === true) return void print(jsonText(result));
  printChanges(result, dryRun);
}
