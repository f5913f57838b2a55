import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import neo4j from 'neo4j-driver';
import type { Driver } from 'neo4j-driver';
import type { Served } from '../cli/support.ts';
import { cliStoreBackends, kgw, serve, writeIn } from '../cli/support.ts';
import type { CliStore } from '../cli/support.ts';
import type { PrivateNeo4j } from '../support/services.ts';
import { neo4jSkip, startNeo4j } from '../support/services.ts';
import { until as untilWithin } from '../support/kgw-process.ts';

/**
 * Neo4j goes down under a running `kgw serve` while `kgw apply` keeps writing: the writes
 * commit, the outbox holds the graph rows, /readyz reports the outage, and once Neo4j is back
 * the projection catches up with nothing lost and nothing doubled. Everything runs as real
 * processes against a private Neo4j server (the shared one serves other suites).
 */

const BEFORE = `tenant: faultco
name: Fault Co
people:
  - email: ada@fault.test
    name: Ada
    departments: [research]
    projects: [engine]
  - email: bo@fault.test
    name: Bo
    departments: [research]
agents:
  - name: helper
    owner: ada@fault.test
`;
// organization, ada, bo, helper, research, engine; research and engine part of the org,
// ada and bo belong to research, ada works on engine, ada owns helper.
const BEFORE_GRAPH = { nodes: 6, relations: 6 };

const AFTER = `tenant: faultco
name: Fault Co
people:
  - email: ada@fault.test
    name: Ada
    departments: [research]
    projects: []
  - email: bo@fault.test
    name: Bo
    departments: [sales]
    projects: [engine]
  - email: cy@fault.test
    name: Cy
    departments: [sales]
agents:
  - name: helper
    owner: bo@fault.test
`;
// + cy and sales; 3 "is part of", ada → research, bo and cy → sales, bo works on engine, bo owns helper.
const AFTER_GRAPH = { nodes: 8, relations: 8 };

interface ReadyBody {
  status: string;
  backends: Record<string, { backend: string; ok: boolean }>;
  projections: Record<string, { backlog: number; last_error: string | null }>;
}

async function readyz(url: string): Promise<{ status: number; body: ReadyBody }> {
  const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(30_000) });
  return { status: response.status, body: (await response.json()) as ReadyBody };
}

/** Everything here waits on a real Neo4j restarting: two minutes, polled every 200 ms. */
const until = <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => untilWithin(what, probe, 120_000, 200);

for (const backend of cliStoreBackends()) {
  describe(`the graph projection while Neo4j goes down and comes back, store ${backend.name}`, { skip: neo4jSkip(), timeout: 600_000 }, () => {
    let server: PrivateNeo4j;
    let store: CliStore;
    let gateway: Served;
    let driver: Driver;
    let env: Record<string, string>;

    /** Everything in the private server (it holds this one tenant only). */
    async function graphCounts(): Promise<{ nodes: number; relations: number; relationIds: number }> {
      const session = driver.session();
      try {
        const nodes = await session.run('MATCH (n:KgwNode) RETURN count(n) AS n');
        const relations = await session.run('MATCH ()-[r:KGW_REL]->() RETURN count(r) AS n, count(DISTINCT r.id) AS ids');
        return {
          nodes: Number(nodes.records[0]?.get('n')),
          relations: Number(relations.records[0]?.get('n')),
          relationIds: Number(relations.records[0]?.get('ids')),
        };
      } finally {
        await session.close();
      }
    }

    async function relationsOf(verb: string): Promise<string[]> {
      const session = driver.session();
      try {
        const result = await session.run(
          'MATCH (a:KgwNode)-[r:KGW_REL {verb: $verb}]->(b:KgwNode) RETURN a.props AS a, b.props AS b ORDER BY a.props, b.props',
          { verb },
        );
        return result.records.map(
          (r) => `${(JSON.parse(String(r.get('a'))) as { title: string }).title} -> ${(JSON.parse(String(r.get('b'))) as { title: string }).title}`,
        );
      } finally {
        await session.close();
      }
    }

    before(async () => {
      server = await startNeo4j();
      store = await backend.open();
      env = { ...store.env, ...server.gatewayEnv() };
      gateway = await serve(env, { timeoutMs: 60_000 });
      driver = neo4j.driver(server.url, neo4j.auth.basic(server.user, server.password), { disableLosslessIntegers: true });
    });
    after(async () => {
      await driver?.close();
      await gateway?.stop();
      await store?.dispose();
      await server?.close();
    });

    it('projects the directory that kgw apply writes', async () => {
      const applied = await kgw(['apply', await writeIn(store.workDir, 'before.yaml', BEFORE)], env);
      assert.equal(applied.code, 0, applied.stderr);
      await until('the graph in Neo4j', async () => {
        const counts = await graphCounts();
        return counts.nodes === BEFORE_GRAPH.nodes && counts.relations === BEFORE_GRAPH.relations ? counts : undefined;
      });
      assert.deepEqual(await relationsOf('owns'), ['Ada -> helper']);
    });

    it('commits writes while Neo4j is down, reports the outage and the backlog, and catches up after', async () => {
      await server.stop();
      const down = await until('/readyz 503', async () => {
        const ready = await readyz(gateway.url);
        return ready.status === 503 ? ready : undefined;
      });
      assert.equal(down.body.backends.graph?.backend, 'neo4j');
      assert.equal(down.body.backends.graph?.ok, false);
      assert.equal(down.body.backends.store?.ok, true);

      const applied = await kgw(['apply', await writeIn(store.workDir, 'after.yaml', AFTER)], env);
      assert.equal(applied.code, 0, applied.stderr);
      // A second apply of the same file changes nothing and adds no row.
      const again = await kgw(['apply', await writeIn(store.workDir, 'after.yaml', AFTER)], env);
      assert.equal(again.code, 0, again.stderr);

      const waiting = await until('a graph backlog with its error', async () => {
        const ready = await readyz(gateway.url);
        const graph = ready.body.projections.graph;
        return graph !== undefined && graph.backlog > 0 && graph.last_error !== null ? graph : undefined;
      });
      assert.ok(waiting.backlog > 0);
      const doctor = await kgw(['doctor', '--json'], env);
      const report = JSON.parse(doctor.stdout) as { projections: { projection: string; backlog: number }[] };
      assert.equal(report.projections.find((p) => p.projection === 'graph')?.backlog, waiting.backlog);

      await server.restart();
      await until('the backlog drained', async () => {
        const ready = await readyz(gateway.url);
        return ready.status === 200 && ready.body.projections.graph?.backlog === 0 ? ready : undefined;
      });
      const counts = await graphCounts();
      assert.deepEqual(counts, { ...AFTER_GRAPH, relationIds: AFTER_GRAPH.relations });
      assert.deepEqual(await relationsOf('owns'), ['Bo -> helper']);
      assert.deepEqual(await relationsOf('belongs to'), ['Ada -> research', 'Bo -> sales', 'Cy -> sales']);
      assert.deepEqual(await relationsOf('works on'), ['Bo -> engine']);
    });

    it('kgw reindex --graph rebuilds the same graph from the store alone', async () => {
      const run = await kgw(['reindex', '--graph'], env);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, `graph: cleared, ${AFTER_GRAPH.nodes + AFTER_GRAPH.relations} changes enqueued for the outbox worker\n`);
      await until('the rebuilt graph', async () => {
        const ready = await readyz(gateway.url);
        return ready.body.projections.graph?.backlog === 0 ? ready : undefined;
      });
      assert.deepEqual(await graphCounts(), { ...AFTER_GRAPH, relationIds: AFTER_GRAPH.relations });
      assert.deepEqual(await relationsOf('belongs to'), ['Ada -> research', 'Bo -> sales', 'Cy -> sales']);
    });
  });
}
