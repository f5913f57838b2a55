import { loadConfig } from '../config.ts';
import { withOps } from './session.ts';
import { jsonText, print } from './terminal.ts';
import { parseCommand } from './usage.ts';

export const reindexHelp = `Usage: kgw reindex [--search] [--graph] [--json]

Rebuilds projections from PostgreSQL alone: clears each one, then enqueues the current state
of every resource it shows; the outbox worker of a running gateway applies the rows (see
kgw doctor for the backlog). Without --search or --graph every configured projection is
rebuilt; one that is not configured here is reported as skipped. With an embeddings endpoint
configured, --search also embeds every document again (a vector goes with its document). Runs through a running
gateway when that gateway holds the data folder.`;

export async function reindexCommand(argv: readonly string[]): Promise<void> {
  const { values, help } = parseCommand(argv, { search: { type: 'boolean' }, graph: { type: 'boolean' }, json: { type: 'boolean' } }, { min: 0, max: 0 });
  if (help) return void print(reindexHelp);
  const names = [...(values.search === true ? ['search'] : []), ...(values.graph === true ? ['graph'] : [])];
  const outcome = await withOps(loadConfig(), (run) => run('projections.rebuild', names.length === 0 ? {} : { names }));
  if (values.json === true) return void print(jsonText(outcome));
  if (outcome.configured.length === 0) return void print('no projection is configured; nothing to rebuild');
  for (const report of outcome.rebuilt) print(`${report.projection}: cleared, ${report.enqueued} changes enqueued for the outbox worker`);
  for (const name of outcome.skipped) print(`${name}: not configured; skipped`);
}
