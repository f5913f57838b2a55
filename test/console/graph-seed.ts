import type { Db } from '../../src/store/db.ts';
import { seedOrg } from '../support/gateway.ts';

/**
 * A large Company Brain for the Organisation graph's responsiveness measure (graph-browser.test.ts,
 * bench/console-graph.ts): a tenant whose graph projection holds `nodes` nodes and `relations`
 * relations, written with two set-based INSERTs straight into the projection the reads use, as
 * applying an org file of that size node by node would take minutes. Every tenth node is
 * restricted (above the manager who looks), every fiftieth inferred; types cycle through the
 * contract's.
 */
export const BIG_TENANT = 'bigco';
export const BIG_VIEWER = 'max@bigco.test';

export async function seedBigBrain(db: Db, nodes: number, relations: number): Promise<{ readonly tenantId: string }> {
  await seedOrg(
    db,
    `tenant: ${BIG_TENANT}
name: Big Co
people:
  - { email: ${BIG_VIEWER}, name: Max, tier: manager }
`,
  );
  const [tenant] = await db.query<{ id: string }>('SELECT id FROM tenants WHERE slug = $1', [BIG_TENANT]);
  if (tenant === undefined) throw new Error('the big tenant was not created');
  await db.tx(async (tx) => {
    await tx.query(
      `INSERT INTO graph_nodes (tenant_id, id, type, properties, access, department, project, status)
       SELECT $1, 'n' || i,
              (ARRAY['person', 'department', 'project', 'agent', 'SOP / process', 'tool', 'strategy', 'data source', 'policy'])[1 + i % 9],
              jsonb_build_object('title', 'Node ' || i, 'summary', 'Generated node ' || i),
              CASE WHEN i % 10 = 0 THEN 'restricted' ELSE 'public' END, NULL, NULL,
              CASE WHEN i % 50 = 0 THEN 'inferred' ELSE 'verified' END
         FROM generate_series(1, $2::int) AS i`,
      [tenant.id, nodes],
    );
    // Pseudo-random pairs (two coprime strides), each relation with an id of its own.
    await tx.query(
      `INSERT INTO graph_relations (tenant_id, id, from_id, to_id, verb, status, properties)
       SELECT $1, 'r' || i, 'n' || (1 + (i * 7919) % $2::int), 'n' || (1 + (i * 104729 + i / $2::int) % $2::int),
              (ARRAY['uses', 'depends on', 'supports', 'owns', 'belongs to'])[1 + i % 5],
              CASE WHEN i % 97 = 0 THEN 'unresolved' ELSE 'verified' END, '{}'::jsonb
         FROM generate_series(1, $3::int) AS i`,
      [tenant.id, nodes, relations],
    );
  });
  // Fresh statistics, as autovacuum keeps them on a server (PGlite runs none): planned against
  // the empty tables the seed started from, the store's join of relations to their nodes would scan.
  await db.tx(async (tx) => {
    await tx.query('ANALYZE graph_nodes');
    await tx.query('ANALYZE graph_relations');
  });
  return { tenantId: tenant.id };
}
