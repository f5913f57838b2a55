import type { Neo4jConfig } from '../../src/config.ts';
import type { Probe } from '../probe.ts';

/** Neo4j accepts a Bolt connection with the configured credentials. */
export function neo4jProbe(neo4j: Neo4jConfig): Probe {
  return {
    role: 'graph',
    backend: 'neo4j',
    async check() {
      const { default: driverModule } = await import('neo4j-driver');
      const driver = driverModule.driver(neo4j.url, driverModule.auth.basic(neo4j.user, neo4j.password), { connectionTimeout: 2500, maxConnectionPoolSize: 1 });
      try {
        await driver.verifyConnectivity();
      } finally {
        await driver.close();
      }
    },
  };
}
