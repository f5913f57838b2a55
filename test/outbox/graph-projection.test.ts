import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { GraphStore } from '../../connectors/graph/contract.ts';
import { openNeo4jGraphStore } from '../../connectors/graph/neo4j.ts';
import { PostgresGraphStore } from '../../connectors/graph/postgres.ts';
import { graphChange, graphEntries, graphProjection } from '../../connectors/graph/projection.ts';
import { configuredProjections } from '../../src/open-services.ts';
import { orgGraph } from '../../src/brain/org-graph.ts';
import type { GraphSnapshot } from '../../src/brain/org-graph.ts';
import { applyOrgFile } from '../../src/org-sections.ts';
import { rebuildProjection } from '../../src/kernel/outbox/rebuild.ts';
import { OutboxWorker } from '../../src/kernel/outbox/worker.ts';
import type { Db } from '../../src/store/db.ts';
import { cliTrail } from '../support/audit.ts';
import { pick } from '../support/fixtures.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

const PUBLIC = { tier: 'public', departments: [], projects: [] } as const;

/** An org file of `slug` with the given people (email local part → departments, projects). */
function orgFile(slug: string, people: Record<string, { departments?: string[]; projects?: string[] }>, agents: Record<string, string> = {}): string {
  const lines = [`tenant: ${slug}`, `name: ${slug} Ltd`, 'people:'];
  for (const [name, p] of Object.entries(people)) {
    lines.push(`  - email: ${name}@${slug}.test`, `    name: ${name}`);
    if (p.departments) lines.push(`    departments: [${p.departments.join(', ')}]`);
    if (p.projects) lines.push(`    projects: [${p.projects.join(', ')}]`);
  }
  if (Object.keys(agents).length > 0) {
    lines.push('agents:');
    for (const [name, owner] of Object.entries(agents)) lines.push(`  - name: ${name}`, `    owner: ${owner}@${slug}.test`);
  }
  return `${lines.join('\n')}\n`;
}

async function tenantId(db: Db, slug: string): Promise<string> {
  const [row] = await db.query<{ id: string }>('SELECT id FROM tenants WHERE slug = $1', [slug]);
  assert.ok(row, `tenant ${slug}`);
  return row.id;
}

/**
 * What the graph store shows of a tenant, read through its query interface: every node of the
 * truth with its title, and every relation reached from one of them.
 */
async function projected(
  store: GraphStore,
  tenant: string,
  truth: GraphSnapshot,
): Promise<{ counts: { nodes: number; relations: number }; titles: Record<string, unknown>; relations: string[] }> {
  const titles: Record<string, unknown> = {};
  const relations = new Set<string>();
  for (const node of truth.nodes) {
    const around = await store.neighbours({ tenantId: tenant, id: node.id, depth: 1, direction: 'both', visible: PUBLIC });
    for (const r of around.relations) relations.add(`${r.from} -${r.verb}-> ${r.to}`);
    for (const { node: n } of around.nodes) titles[n.id] = n.properties.title;
  }
  return { counts: await store.counts(tenant), titles, relations: [...relations].sort() };
}

function expected(truth: GraphSnapshot): { counts: { nodes: number; relations: number }; titles: Record<string, unknown>; relations: string[] } {
  const linked = new Set(truth.relations.flatMap((r) => [r.from, r.to]));
  return {
    counts: { nodes: truth.nodes.length, relations: truth.relations.length },
    titles: Object.fromEntries(truth.nodes.filter((n) => linked.has(n.id)).map((n) => [n.id, n.properties.title])),
    relations: truth.relations.map((r) => `${r.from} -${r.verb}-> ${r.to}`).sort(),
  };
}

function sortedTitles(value: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1)));
}

interface Harness {
  readonly name: string;
  /** Whether this graph store is private to the test (a rebuild clears every tenant). */
  readonly privateStore: boolean;
  open(db: Db): Promise<GraphStore>;
}

function harnesses(): Harness[] {
  const list: Harness[] = [{ name: 'postgres graph tables', privateStore: true, open: (db) => Promise.resolve(new PostgresGraphStore(db)) }];
  const url = process.env.KGW_TEST_NEO4J_URL;
  if (url !== undefined && url !== '') {
    list.push({
      name: 'neo4j',
      privateStore: false,
      open: () =>
        openNeo4jGraphStore(
          { url, user: process.env.KGW_TEST_NEO4J_USER ?? 'neo4j', password: process.env.KGW_TEST_NEO4J_PASSWORD ?? 'neo4j' },
          { timeoutMs: 20_000 },
        ),
    });
  } else if (process.env.CI === 'true') throw new Error('KGW_TEST_NEO4J_URL must be set in CI (test/services/neo4j.sh)');
  return list;
}

for (const backend of storeBackends()) {
  for (const harness of harnesses()) {
    describe(`the directory in the graph projection: ${harness.name}, store on ${backend.name}`, () => {
      let store: TestStore;
      let graph: GraphStore;
      let worker: OutboxWorker;
      // Tenant slugs unique per run: the Neo4j server is shared by every suite.
      const run = Math.random().toString(36).slice(2, 8);
      const slug = (name: string) => `${name}-${run}`;

      before(async () => {
        store = await backend.open({ migrated: true });
        graph = await harness.open(store.db);
        worker = new OutboxWorker(store.db, [graphProjection(graph)], { backoff: { baseMs: 1, maxMs: 5 } });
      });
      after(async () => {
        await graph.close();
        await store.dispose();
      });

      async function truthFor(name: string): Promise<{ id: string; truth: GraphSnapshot }> {
        const id = await tenantId(store.db, slug(name));
        return { id, truth: await orgGraph(store.db, id) };
      }

      async function assertMirrors(name: string): Promise<void> {
        const { id, truth } = await truthFor(name);
        const seen = await projected(graph, id, truth);
        const want = expected(truth);
        assert.deepEqual(seen.counts, want.counts);
        assert.deepEqual(seen.relations, want.relations);
        assert.deepEqual(sortedTitles(seen.titles), sortedTitles(want.titles));
      }

      it('follows org applies: created, changed and emptied departments, owners of agents', async () => {
        const a = slug('alpha');
        await applyOrgFile(
          store.db,
          {
            source: orgFile(a, { ada: { departments: ['research'], projects: ['engine'] }, bo: { departments: ['research', 'sales'] } }, { helper: 'ada' }),
          },
          cliTrail(store.db),
        );
        const first = await worker.drainAll();
        assert.deepEqual(first.failed, 0);
        await assertMirrors('alpha');
        const { truth } = await truthFor('alpha');
        assert.deepEqual(truth.nodes.map((n) => n.type).sort(), ['agent', 'department', 'department', 'organization', 'person', 'person', 'project']);

        // Bo leaves sales (the department goes, nobody is in it), Ada moves to the engine's sibling.
        await applyOrgFile(
          store.db,
          {
            source: orgFile(a, { ada: { departments: ['research'], projects: ['turbine'] }, bo: { departments: ['research'] } }, { helper: 'bo' }),
          },
          cliTrail(store.db),
        );
        await worker.drainAll();
        await assertMirrors('alpha');
        const { truth: now } = await truthFor('alpha');
        assert.ok(!now.nodes.some((n) => n.id === 'department:sales'));
        assert.ok(!now.nodes.some((n) => n.id === 'project:engine'));
        const ids = Object.fromEntries(
          (await store.db.query<{ name: string; id: string }>('SELECT name, id FROM principals WHERE tenant_id = $1', [await tenantId(store.db, a)])).map(
            (p) => [p.name, p.id],
          ),
        );
        assert.deepEqual(
          now.relations.filter((r) => r.verb === 'owns').map((r) => pick(r, ['from', 'to'])),
          [{ from: `person:${String(ids.bo)}`, to: `agent:${String(ids.helper)}` }],
        );
      });

      it('an apply that changes nothing enqueues nothing; a dry run enqueues nothing', async () => {
        const b = slug('beta');
        const file = orgFile(b, { cy: { departments: ['ops'] } });
        await applyOrgFile(store.db, { source: file }, cliTrail(store.db));
        await worker.drainAll();
        const count = async () => Number((await store.db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox WHERE projection = 'graph'"))[0]?.n);
        await applyOrgFile(store.db, { source: file }, cliTrail(store.db));
        assert.equal(await count(), 0);
        await applyOrgFile(store.db, { source: orgFile(b, { cy: { departments: ['legal'] } }), dryRun: true }, cliTrail(store.db));
        assert.equal(await count(), 0);
        await assertMirrors('beta');
      });

      it('concurrent applies of one tenant end with the projection equal to the truth', async () => {
        const c = slug('gamma');
        await applyOrgFile(store.db, { source: orgFile(c, { dee: { departments: ['d0'] } }) }, cliTrail(store.db));
        // Eight writers, each moving people between departments; every interleaving must converge.
        await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            applyOrgFile(
              store.db,
              {
                source: orgFile(c, { dee: { departments: [`d${i % 3}`] }, [`p${i}`]: { departments: [`d${(i + 1) % 3}`], projects: [`x${i % 2}`] } }),
              },
              cliTrail(store.db),
            ),
          ),
        );
        await worker.drainAll();
        await assertMirrors('gamma');
      });

      it('applies a row again without duplicating anything (a crash between the backend call and the commit)', async () => {
        const d = slug('delta');
        await applyOrgFile(store.db, { source: orgFile(d, { eve: { departments: ['qa'], projects: ['p'] } }, { bot: 'eve' }) }, cliTrail(store.db));
        const { id, truth } = await truthFor('delta');
        const rows = await store.db.query<{ tenant_id: string; payload: Record<string, unknown> }>(
          "SELECT tenant_id, payload FROM outbox WHERE projection = 'graph' ORDER BY id",
        );
        const changes = rows.map((r) => graphChange({ tenantId: r.tenant_id, payload: r.payload }));
        await graph.write(changes);
        await graph.write(changes);
        await worker.drainAll();
        assert.deepEqual(await graph.counts(id), { nodes: truth.nodes.length, relations: truth.relations.length });
        await assertMirrors('delta');
      });

      it('never applies a relation before its nodes: one tenant is one resource, in commit order', () => {
        const t = '00000000-0000-4000-8000-000000000001';
        const keys = new Set([
          graphEntries.upsertNode({ tenantId: t, id: 'a', type: 'person', properties: {}, access: 'public' }).resourceKey,
          graphEntries.upsertRelation({ tenantId: t, id: 'r', from: 'a', to: 'b', verb: 'owns', properties: {} }).resourceKey,
          graphEntries.deleteNode(t, 'a').resourceKey,
          graphEntries.deleteRelation(t, 'r').resourceKey,
        ]);
        assert.equal(keys.size, 1);
      });

      if (harness.privateStore) {
        it('kgw reindex --graph: a cleared store is rebuilt from the directory alone', async () => {
          await graph.clearAll();
          assert.deepEqual(await graph.counts(await tenantId(store.db, slug('alpha'))), { nodes: 0, relations: 0 });
          const report = await rebuildProjection(store.db, configuredProjections(graph), 'graph');
          assert.ok(report.enqueued > 0);
          await worker.drainAll();
          for (const name of ['alpha', 'beta', 'gamma', 'delta']) await assertMirrors(name);
        });
      }
    });
  }
}
