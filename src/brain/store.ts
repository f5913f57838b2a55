import type { Tier } from '../kernel/directory/tiers.ts';
import { isoOrNull } from '../kernel/instants.ts';
import type { Queryable } from '../store/db.ts';
import type { BrainNode, BrainRelation, Mark, MetadataKey, NodeType, Origin, RelationVerb } from './model.ts';
import { METADATA_KEYS, relationId } from './model.ts';

/** The truth of the brain's own nodes and relations (src/store/migrations/0023_brain.sql). */

interface NodeRow {
  id: string;
  type: NodeType;
  title: string;
  summary: string;
  access: Tier;
  department: string | null;
  project: string | null;
  metadata: Record<string, string | number>;
  tags: string[];
  verified_at: Date | null;
  review_by: Date | null;
  mark: Mark | null;
  origin: Origin;
}

/** Metadata in the contract's key order, whatever order it was stored in. */
function orderedMetadata(metadata: Readonly<Record<string, string | number>>): Partial<Record<MetadataKey, string | number>> {
  const out: Partial<Record<MetadataKey, string | number>> = {};
  for (const key of METADATA_KEYS) if (metadata[key] !== undefined) out[key] = metadata[key];
  return out;
}

const toNode = (row: NodeRow): BrainNode => ({
  id: row.id,
  type: row.type,
  title: row.title,
  summary: row.summary,
  access: row.access,
  department: row.department,
  project: row.project,
  metadata: orderedMetadata(row.metadata),
  tags: row.tags,
  verifiedAt: isoOrNull(row.verified_at),
  reviewBy: isoOrNull(row.review_by),
  mark: row.mark,
});

/** A tenant's brain nodes by id, ordered by id, each with who keeps it. */
export async function loadBrainNodes(q: Queryable, tenantId: string): Promise<Map<string, { readonly node: BrainNode; readonly origin: Origin }>> {
  const rows = await q.query<NodeRow>(
    `SELECT id, type, title, summary, access, department, project, metadata, tags, verified_at, review_by, mark, origin
       FROM brain_nodes WHERE tenant_id = $1 ORDER BY id COLLATE "C"`,
    [tenantId],
  );
  return new Map(rows.map((row) => [row.id, { node: toNode(row), origin: row.origin }]));
}

/** The tenant's nodes after id `after` in byte order (all from the first when undefined), at most `limit`. */
export async function loadBrainNodePage(q: Queryable, tenantId: string, after: string | undefined, limit: number): Promise<BrainNode[]> {
  const rows = await q.query<NodeRow>(
    `SELECT id, type, title, summary, access, department, project, metadata, tags, verified_at, review_by, mark, origin
       FROM brain_nodes WHERE tenant_id = $1 AND ($2::text IS NULL OR id COLLATE "C" > $2) ORDER BY id COLLATE "C" LIMIT $3`,
    [tenantId, after ?? null, limit],
  );
  return rows.map(toNode);
}

/** The brain nodes of `ids` that exist, by id, each with who keeps it: the few an onboarding action names. */
export async function loadNamedBrainNodes(
  q: Queryable,
  tenantId: string,
  ids: readonly string[],
): Promise<Map<string, { readonly node: BrainNode; readonly origin: Origin }>> {
  if (ids.length === 0) return new Map();
  const rows = await q.query<NodeRow>(
    `SELECT id, type, title, summary, access, department, project, metadata, tags, verified_at, review_by, mark, origin
       FROM brain_nodes WHERE tenant_id = $1 AND id = ANY($2::text[])`,
    [tenantId, [...ids]],
  );
  return new Map(rows.map((row) => [row.id, { node: toNode(row), origin: row.origin }]));
}

/** A tenant's brain relations by relation id (relationId), ordered by it, each with who keeps it. */
export async function loadBrainRelations(q: Queryable, tenantId: string): Promise<Map<string, { readonly relation: BrainRelation; readonly origin: Origin }>> {
  const rows = await q.query<{ from_id: string; verb: RelationVerb; to_id: string; mark: Mark | null; origin: Origin }>(
    `SELECT from_id, verb, to_id, mark, origin FROM brain_relations WHERE tenant_id = $1
      ORDER BY from_id COLLATE "C", verb COLLATE "C", to_id COLLATE "C"`,
    [tenantId],
  );
  return new Map(
    rows.map((row) => {
      const relation: BrainRelation = { from: row.from_id, verb: row.verb, to: row.to_id, mark: row.mark };
      return [relationId(relation), { relation, origin: row.origin }];
    }),
  );
}

/** Every field of a node, in one fixed order, so two nodes compare equal exactly when they are. */
const canonical = (n: BrainNode): string =>
  JSON.stringify([
    n.id,
    n.type,
    n.title,
    n.summary,
    n.access,
    n.department,
    n.project,
    Object.entries(orderedMetadata(n.metadata)),
    n.tags,
    n.verifiedAt,
    n.reviewBy,
    n.mark,
  ]);

export function sameNode(a: BrainNode, b: BrainNode): boolean {
  return canonical(a) === canonical(b);
}

/** Creates or replaces a node; `origin` becomes the node's keeper. */
export async function writeBrainNode(q: Queryable, tenantId: string, node: BrainNode, origin: Origin): Promise<void> {
  await q.query(
    `INSERT INTO brain_nodes (tenant_id, id, type, title, summary, access, department, project, metadata, tags, verified_at, review_by, mark, origin)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
     ON CONFLICT (tenant_id, id) DO UPDATE SET type = excluded.type, title = excluded.title, summary = excluded.summary,
       access = excluded.access, department = excluded.department, project = excluded.project, metadata = excluded.metadata,
       tags = excluded.tags, verified_at = excluded.verified_at, review_by = excluded.review_by, mark = excluded.mark,
       origin = excluded.origin, updated_at = now()`,
    [
      tenantId,
      node.id,
      node.type,
      node.title,
      node.summary,
      node.access,
      node.department,
      node.project,
      JSON.stringify(orderedMetadata(node.metadata)),
      [...node.tags],
      node.verifiedAt,
      node.reviewBy,
      node.mark,
      origin,
    ],
  );
}

/** Removes a node and every relation touching it. */
export async function removeBrainNode(q: Queryable, tenantId: string, id: string): Promise<void> {
  await q.query('DELETE FROM brain_relations WHERE tenant_id = $1 AND (from_id = $2 OR to_id = $2)', [tenantId, id]);
  await q.query('DELETE FROM brain_nodes WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
}

export async function writeBrainRelation(q: Queryable, tenantId: string, relation: BrainRelation, origin: Origin): Promise<void> {
  await q.query(
    `INSERT INTO brain_relations (tenant_id, from_id, verb, to_id, mark, origin) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (tenant_id, from_id, verb, to_id) DO UPDATE SET mark = excluded.mark, origin = excluded.origin, updated_at = now()`,
    [tenantId, relation.from, relation.verb, relation.to, relation.mark, origin],
  );
}

export async function removeBrainRelation(q: Queryable, tenantId: string, relation: Pick<BrainRelation, 'from' | 'verb' | 'to'>): Promise<void> {
  await q.query('DELETE FROM brain_relations WHERE tenant_id = $1 AND from_id = $2 AND verb = $3 AND to_id = $4', [
    tenantId,
    relation.from,
    relation.verb,
    relation.to,
  ]);
}
