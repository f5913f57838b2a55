import { randomUUID } from 'node:crypto';
import type { GraphStore } from '../../connectors/graph/contract.ts';
import { openNeo4jGraphStore } from '../../connectors/graph/neo4j.ts';
import { PostgresGraphStore } from '../../connectors/graph/postgres.ts';
import { storeBackends } from './stores.ts';

/**
 * The graph stores the graph suites run against: the tables on each store backend, and Neo4j
 * when KGW_TEST_NEO4J_URL names one (test/services/neo4j.sh starts it; CI requires it).
 */

export interface Harness {
  readonly store: GraphStore;
  /** A fresh tenant id, known to the backend. */
  tenant(): Promise<string>;
  dispose(): Promise<void>;
}

export interface GraphBackend {
  readonly name: string;
  open(): Promise<Harness>;
}

export function neo4jUrl(): string | undefined {
  const url = process.env.KGW_TEST_NEO4J_URL;
  if ((url === undefined || url === '') && process.env.CI === 'true') {
    throw new Error('KGW_TEST_NEO4J_URL must be set in CI: the graph contract runs against Neo4j too (test/services/neo4j.sh)');
  }
  return url === '' ? undefined : url;
}

export function graphBackends(): GraphBackend[] {
  const backends: GraphBackend[] = storeBackends().map((backend) => ({
    name: `postgres graph tables on ${backend.name}`,
    async open() {
      const test = await backend.open({ migrated: true });
      return {
        store: new PostgresGraphStore(test.db),
        async tenant() {
          const id = randomUUID();
          await test.db.tx((tx) => tx.query('INSERT INTO tenants (id, slug, name) VALUES ($1, $2, $3)', [id, `t-${id.slice(0, 8)}`, 'Graph test']));
          return id;
        },
        async dispose() {
          await test.dispose();
        },
      };
    },
  }));
  const url = neo4jUrl();
  if (url !== undefined) {
    backends.push({
      name: 'neo4j',
      async open() {
        const store = await openNeo4jGraphStore(
          { url, user: process.env.KGW_TEST_NEO4J_USER ?? 'neo4j', password: process.env.KGW_TEST_NEO4J_PASSWORD ?? 'neo4j' },
          { timeoutMs: 20_000 },
        );
        const tenants: string[] = [];
        return {
          store,
          tenant() {
            const id = randomUUID();
            tenants.push(id);
            return Promise.resolve(id);
          },
          async dispose() {
            for (const id of tenants) await store.clear(id);
            await store.close();
          },
        };
      },
    });
  }
  return backends;
}

/** The gateway's graph store as its environment sets it: the tables always, Neo4j too when one is configured. */
export function gatewayGraphs(): { readonly name: string; readonly env: Readonly<Record<string, string>> }[] {
  const url = neo4jUrl();
  return [
    { name: 'graph tables', env: {} },
    ...(url === undefined
      ? []
      : [
          {
            name: 'neo4j',
            env: { NEO4J_URL: url, NEO4J_USER: process.env.KGW_TEST_NEO4J_USER ?? 'neo4j', NEO4J_PASSWORD: process.env.KGW_TEST_NEO4J_PASSWORD ?? 'neo4j' },
          },
        ]),
  ];
}
