/**
 * One side of `npm run bench:context-ab`: a fresh store (PGlite, or a new database on
 * BENCH_DATABASE_URL) with N routed Knowledge items (BENCH_AB_ITEMS) served by a gateway of the
 * code this file sits in. Prints one line of JSON, `{"url", "token"}`, once it answers, and
 * removes the store when told to stop (SIGTERM). bench/context-ab.ts copies this file and
 * bench/context-org.ts into the other side's tree, so both serve the same data.
 */
import { drainedOutbox, issueToken, seedOrg, startGateway } from '../test/support/gateway.ts';
import { orgFile, positiveList } from './context-org.ts';
import { openBenchStore } from './store.ts';

const [items = 1000] = positiveList('BENCH_AB_ITEMS', [1000]);
const bench = await openBenchStore(process.env.BENCH_DATABASE_URL || undefined, { poolMax: 10, prefix: 'kgw-bench-context-ab' });
const { migrate } = await import('../src/store/migrate.ts');
await migrate(bench.db);
await seedOrg(bench.db, orgFile(items));
const token = await issueToken(bench.db, 'acme', 'bot', 'context.read');
const running = await startGateway(bench.db);
await drainedOutbox(bench.db);
process.once('SIGTERM', () => {
  void running
    .close()
    .then(() => bench.dispose())
    .finally(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ url: running.url, token })}\n`);
