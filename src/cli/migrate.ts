import { loadConfig } from '../config.ts';
import { withOps } from './session.ts';
import { print } from './terminal.ts';
import { parseCommand } from './usage.ts';

export const migrateHelp = `Usage: kgw migrate

Applies the database migrations this build ships that the store lacks. The gateway also
migrates at start; two processes migrating at once apply each migration once.`;

export async function migrateCommand(argv: readonly string[]): Promise<void> {
  const { help } = parseCommand(argv, {}, { min: 0, max: 0 });
  if (help) return void print(migrateHelp);
  const report = await withOps(loadConfig(), (run) => run('migrate'), { migrate: false });
  print(report.applied.length ? `applied: ${report.applied.join(', ')}` : `database is up to date (migration ${report.current})`);
}
