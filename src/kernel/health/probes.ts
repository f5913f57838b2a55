import { diskProbe, s3Probe } from '../../../connectors/blob/probe.ts';
import { neo4jProbe } from '../../../connectors/graph/probe.ts';
import type { Probe } from '../../../connectors/probe.ts';
import { meiliProbe } from '../../../connectors/search/probe.ts';
import type { Config } from '../../config.ts';
import type { Db } from '../../store/db.ts';

/**
 * The probes for the store and every backend the configuration names. Backend clients load
 * lazily, so a gateway on embedded defaults never loads the S3, Meilisearch or Neo4j code.
 */
export function configuredProbes(config: Config, db: Db): Probe[] {
  const probes: Probe[] = [{ role: 'store', backend: db.kind, check: async () => void (await db.query('SELECT 1')) }];
  probes.push(config.s3 ? s3Probe(config.s3) : diskProbe(config.dataDir));
  // The built-in engine lives in the store and its tables come with the store's migrations: it answers when the store does.
  probes.push(config.meili ? meiliProbe(config.meili) : { role: 'search', backend: 'builtin', check: async () => void (await db.query('SELECT 1')) });
  // Likewise the graph tables (connectors/graph/postgres.ts) when no Neo4j is configured: a row of its own, as Neo4j has.
  probes.push(config.neo4j ? neo4jProbe(config.neo4j) : { role: 'graph', backend: 'builtin', check: async () => void (await db.query('SELECT 1')) });
  return probes;
}
