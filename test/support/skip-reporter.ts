import { existsSync } from 'node:fs';
import type { TestEvent } from 'node:test/reporters';

/*
 * A node:test reporter that ends `npm test` with what did not run and how to run it: the real
 * services this environment lacks (their suites are left out, not failed: a suite per store or
 * engine exists only for the services configured) and every test skipped with its reason. The
 * spec reporter still prints the run itself; this one adds the summary (README, "Tests and CI").
 */

/** Each real service the suites use: the variable that enables it, and the script that starts it. */
const SERVICES: readonly { readonly name: string; readonly present: () => boolean; readonly enable: string }[] = [
  { name: 'PostgreSQL', present: () => has('KGW_TEST_DATABASE_URL'), enable: 'KGW_TEST_DATABASE_URL (bash test/services/postgres.sh)' },
  { name: 'MinIO (S3)', present: () => has('KGW_TEST_S3_ENDPOINT'), enable: 'KGW_TEST_S3_* (eval "$(bash test/services/minio.sh)")' },
  { name: 'Meilisearch', present: () => has('KGW_TEST_MEILI_URL'), enable: 'KGW_TEST_MEILI_* (eval "$(bash test/services/meilisearch.sh)")' },
  { name: 'Neo4j', present: () => has('KGW_TEST_NEO4J_URL'), enable: 'KGW_TEST_NEO4J_* (eval "$(bash test/services/neo4j.sh)")' },
  { name: 'Dovecot (IMAP)', present: () => has('KGW_TEST_IMAP_URL'), enable: 'KGW_TEST_IMAP_* (eval "$(bash test/services/dovecot.sh)")' },
  { name: 'an embedding model', present: () => has('KGW_TEST_EMBEDDINGS_URL'), enable: 'KGW_TEST_EMBEDDINGS_* (eval "$(bash test/services/embeddings.sh)")' },
  { name: 'the Python MCP SDK', present: () => has('KGW_TEST_PYTHON'), enable: 'KGW_TEST_PYTHON (eval "$(bash test/services/python-mcp.sh)")' },
  { name: 'Chromium', present: () => existsSync('/usr/bin/chromium'), enable: '/usr/bin/chromium (bash test/services/chromium.sh)' },
];

function has(name: string): boolean {
  const value = process.env[name];
  return value !== undefined && value !== '';
}

export default async function* skipReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const skipped = new Map<string, string[]>();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const reason = event.data.skip;
    if (reason === undefined || reason === false) continue;
    const why = reason === true ? 'skipped' : reason;
    const list = skipped.get(why) ?? [];
    list.push(event.data.name);
    skipped.set(why, list);
  }
  const missing = SERVICES.filter((service) => !service.present());
  const lines: string[] = [];
  if (missing.length > 0) {
    lines.push('', 'Not run here, for want of a service (the suites of each are left out); set and run again:');
    for (const service of missing) lines.push(`  ${service.name}: ${service.enable}`);
  }
  if (skipped.size > 0) {
    lines.push('', 'Skipped, by reason:');
    for (const [why, names] of skipped) lines.push(`  ${why} (${names.length}): ${names.slice(0, 3).join('; ')}${names.length > 3 ? '; …' : ''}`);
  }
  if (lines.length === 0) lines.push('', 'Every service was there and nothing was skipped.');
  yield `${lines.join('\n')}\n`;
}
