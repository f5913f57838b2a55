import { AnalyzeSchedule } from '../analyze-schedule.ts';
import type { Db, Queryable } from '../../src/store/db.ts';
import type { Tier } from '../../src/kernel/directory/tiers.ts';
import { bridgesOf, byId, componentsOf } from './analysis.ts';
import { ANALYSIS_NODE_CAP, ANALYSIS_RELATION_CAP, fileNameOf, GraphEndpointMissing, GraphTooLarge, visibilityFilter } from './contract.ts';
import type {
  KbFileRecord,
  KbLinkReads,
  KbLinkRecord,
  KbLinkType,
  GraphChange,
  GraphCounts,
  GraphHealth,
  GraphNode,
  GraphRelation,
  GraphStatus,
  GraphStore,
  GraphVisibility,
  GraphWriteContext,
  Neighbourhood,
  NeighboursInput,
  UpsertNodeInput,
  UpsertRelationInput,
  WeakNode,
} from './contract.ts';

/**
 * The default graph store: graph_nodes and graph_relations (migration 0006) in the gateway's
 * own Postgres or PGlite. Walks are recursive CTEs; components and bridges load the visible
 * graph (capped, ANALYSIS_NODE_CAP) and compute in TypeScript.
 */

interface NodeRow {
  id: string;
  type: string;
  properties: Record<string, unknown>;
  access: Tier;
  department: string | null;
  project: string | null;
  status: GraphStatus;
}

interface RelationRow {
  id: string;
  from_id: string;
  to_id: string;
  verb: string;
  status: GraphStatus;
  properties: Record<string, unknown>;
}

const NODE_COLUMNS = 'n.id, n.type, n.properties, n.access, n.department, n.project, n.status';
const RELATION_COLUMNS = 'r.id, r.from_id, r.to_id, r.verb, r.status, r.properties';

function toNode(row: NodeRow): GraphNode {
  return {
    id: row.id,
    type: row.type,
    properties: row.properties,
    access: row.access,
    department: row.department ?? undefined,
    project: row.project ?? undefined,
    status: row.status,
  };
}

function toRelation(row: RelationRow): GraphRelation {
  return { id: row.id, from: row.from_id, to: row.to_id, verb: row.verb, status: row.status, properties: row.properties };
}

/** visibilityFilter as SQL over the node alias; takes four parameters from $first on. */
function visibleSql(alias: string, first: number): string {
  const [levels, all, departments, projects] = [first, first + 1, first + 2, first + 3].map((n) => `$${n}`);
  return `(${alias}.access = ANY(${levels}::text[]) AND (${alias}.access NOT IN ('department', 'project') OR ${all}::boolean
    OR (${alias}.access = 'department' AND ${alias}.department = ANY(${departments}::text[]))
    OR (${alias}.access = 'project' AND ${alias}.project = ANY(${projects}::text[]))))`;
}

function visibleParams(visible: GraphVisibility): unknown[] {
  const filter = visibilityFilter(visible);
  return [filter.levels, filter.allScoped, filter.departments, filter.projects];
}

interface KbFileRow {
  file_id: string;
  path: string;
  kind: 'text' | 'asset';
  media_type: string;
}

interface KbLinkRow {
  from_file_id: string;
  type: KbLinkType;
  key: string | null;
  target: string;
  path: string | null;
  alt_path: string | null;
  name: string | null;
}

const toKbFile = (row: KbFileRow): KbFileRecord => ({ fileId: row.file_id, path: row.path, kind: row.kind, mediaType: row.media_type });

function toKbLink(row: KbLinkRow): KbLinkRecord {
  return {
    fromFileId: row.from_file_id,
    type: row.type,
    key: row.key ?? undefined,
    target: row.target,
    paths: [row.path, row.alt_path].filter((p): p is string => p !== null),
    name: row.name ?? undefined,
  };
}

const KB_LINK_COLUMNS = 'l.from_file_id, l.type, l.key, l.target, l.path, l.alt_path, l.name';

/** What `related` reads of the tables: each statement within one tenant and KB, parameters only. */
function kbLinkReads(q: Queryable): KbLinkReads {
  return {
    async files(input) {
      const rows = await q.query<KbFileRow>(
        `SELECT file_id, path, kind, media_type FROM graph_kb_files
          WHERE tenant_id = $1 AND kb_id = $2
            AND (file_id = ANY($3::uuid[]) OR path = ANY($4::text[]) OR name = ANY($5::text[]))
          ORDER BY path, file_id LIMIT $6`,
        [input.tenantId, input.kbId, [...(input.ids ?? [])], [...(input.paths ?? [])], [...(input.names ?? [])], input.limit],
      );
      return rows.map(toKbFile);
    },
    async linksFrom(input) {
      const rows = await q.query<KbLinkRow>(
        `SELECT ${KB_LINK_COLUMNS} FROM graph_kb_links l
          WHERE l.tenant_id = $1 AND l.kb_id = $2 AND l.from_file_id = ANY($3::uuid[]) AND l.type = ANY($4::text[])
          ORDER BY l.from_file_id, l.ord LIMIT $5`,
        [input.tenantId, input.kbId, [...input.fileIds], [...input.types], input.limit],
      );
      return rows.map(toKbLink);
    },
    async linksTo(input) {
      const rows = await q.query<KbLinkRow>(
        `SELECT ${KB_LINK_COLUMNS} FROM graph_kb_links l
          WHERE l.tenant_id = $1 AND l.kb_id = $2 AND l.type = ANY($5::text[])
            AND (l.path = ANY($3::text[]) OR l.alt_path = ANY($3::text[]) OR l.name = ANY($4::text[]))
          ORDER BY l.from_file_id, l.ord LIMIT $6`,
        [input.tenantId, input.kbId, [...input.paths], [...input.names], [...input.types], input.limit],
      );
      return rows.map(toKbLink);
    },
  };
}

/** Applies one change; true when it changed something (deletes: when the item existed). */
async function applyChange(q: Queryable, change: GraphChange): Promise<boolean> {
  switch (change.op) {
    case 'putKbFile': {
      const f = change.file;
      await q.query(
        `INSERT INTO graph_kb_files (tenant_id, file_id, kb_id, path, name, kind, media_type)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (tenant_id, file_id) DO UPDATE SET kb_id = EXCLUDED.kb_id, path = EXCLUDED.path, name = EXCLUDED.name,
           kind = EXCLUDED.kind, media_type = EXCLUDED.media_type, updated_at = now()`,
        [f.tenantId, f.fileId, f.kbId, f.path, fileNameOf(f.path), f.kind, f.mediaType],
      );
      await q.query('DELETE FROM graph_kb_links WHERE tenant_id = $1 AND from_file_id = $2', [f.tenantId, f.fileId]);
      if (change.links.length > 0) {
        // One statement for all of a file's references: arrays in, a row per element out.
        const links = change.links;
        await q.query(
          `INSERT INTO graph_kb_links (tenant_id, from_file_id, ord, kb_id, type, key, target, path, alt_path, name)
           SELECT $1, $2, t.ord::int, $3, t.type, t.key, t.target, t.path, t.alt_path, t.name
             FROM unnest($4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
                  AS t (ord, type, key, target, path, alt_path, name)`,
          [
            f.tenantId,
            f.fileId,
            f.kbId,
            links.map((_, i) => i),
            links.map((l) => l.type),
            links.map((l) => l.key ?? null),
            links.map((l) => l.target),
            links.map((l) => l.paths[0] ?? null),
            links.map((l) => l.paths[1] ?? null),
            links.map((l) => l.name ?? null),
          ],
        );
      }
      return true;
    }
    case 'removeKbFile':
      return (await q.query('DELETE FROM graph_kb_files WHERE tenant_id = $1 AND file_id = $2 RETURNING file_id', [change.tenantId, change.fileId])).length > 0;
    case 'upsertNode': {
      const n = change.node;
      await q.query(
        `INSERT INTO graph_nodes (tenant_id, id, type, properties, access, department, project, status)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8)
         ON CONFLICT (tenant_id, id) DO UPDATE SET type = EXCLUDED.type, properties = EXCLUDED.properties,
           access = EXCLUDED.access, department = EXCLUDED.department, project = EXCLUDED.project,
           status = EXCLUDED.status, updated_at = now()`,
        [n.tenantId, n.id, n.type, JSON.stringify(n.properties), n.access, n.department ?? null, n.project ?? null, n.status ?? 'verified'],
      );
      return true;
    }
    case 'upsertRelation': {
      const r = change.relation;
      // Its own savepoint, so a missing endpoint leaves the caller's transaction usable.
      await q.query('SAVEPOINT graph_relation');
      try {
        await q.query(
          `INSERT INTO graph_relations (tenant_id, id, from_id, to_id, verb, status, properties)
           VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)
           ON CONFLICT (tenant_id, id) DO UPDATE SET from_id = EXCLUDED.from_id, to_id = EXCLUDED.to_id,
             verb = EXCLUDED.verb, status = EXCLUDED.status, properties = EXCLUDED.properties, updated_at = now()`,
          [r.tenantId, r.id, r.from, r.to, r.verb, r.status ?? 'verified', JSON.stringify(r.properties)],
        );
        await q.query('RELEASE SAVEPOINT graph_relation');
      } catch (error) {
        await q.query('ROLLBACK TO SAVEPOINT graph_relation');
        if (typeof error === 'object' && error !== null && 'code' in error && error.code === '23503') throw new GraphEndpointMissing(r.id);
        throw error;
      }
      return true;
    }
    case 'deleteNode':
      return (await q.query('DELETE FROM graph_nodes WHERE tenant_id = $1 AND id = $2 RETURNING id', [change.tenantId, change.id])).length > 0;
    case 'deleteRelation':
      return (await q.query('DELETE FROM graph_relations WHERE tenant_id = $1 AND id = $2 RETURNING id', [change.tenantId, change.id])).length > 0;
  }
}

export class PostgresGraphStore implements GraphStore {
  readonly backend = 'postgres' as const;
  readonly #db: Db;
  /** PGlite runs no autovacuum: the graph's tables are analysed as changes are written (AnalyzeSchedule). */
  readonly #analyze: AnalyzeSchedule;

  constructor(db: Db) {
    this.#db = db;
    this.#analyze = new AnalyzeSchedule(db, ['graph_nodes', 'graph_relations', 'graph_kb_files', 'graph_kb_links'], 'graph_relations');
  }

  async write(changes: readonly GraphChange[], context: GraphWriteContext = {}): Promise<void> {
    if (changes.length === 0) return;
    const run = async (q: Queryable) => {
      for (const change of changes) await applyChange(q, change);
      await this.#analyze.wrote(q, changes.length);
    };
    if (context.tx !== undefined) await run(context.tx);
    else await this.#db.tx(run);
  }

  async upsertNode(input: UpsertNodeInput): Promise<void> {
    await this.write([{ op: 'upsertNode', node: input }]);
  }

  deleteNode(input: { tenantId: string; id: string }): Promise<boolean> {
    return this.#db.tx((tx) => applyChange(tx, { op: 'deleteNode', ...input }));
  }

  async upsertRelation(input: UpsertRelationInput): Promise<void> {
    await this.write([{ op: 'upsertRelation', relation: input }]);
  }

  deleteRelation(input: { tenantId: string; id: string }): Promise<boolean> {
    return this.#db.tx((tx) => applyChange(tx, { op: 'deleteRelation', ...input }));
  }

  async neighbours(input: NeighboursInput): Promise<Neighbourhood> {
    const verbs = input.verbs === undefined ? null : [...input.verbs];
    // $1 tenant, $2 start, $3 depth, $4 direction, $5 verbs, $6.. visibility.
    const params = [input.tenantId, input.id, input.depth, input.direction, verbs, ...visibleParams(input.visible)];
    const reached = await this.#db.query<NodeRow & { depth: number }>(
      `WITH RECURSIVE walk (id, depth) AS (
         SELECT n.id, 0 FROM graph_nodes n WHERE n.tenant_id = $1 AND n.id = $2 AND ${visibleSql('n', 6)}
         UNION
         SELECT n.id, w.depth + 1
         FROM walk w
         JOIN graph_relations r ON r.tenant_id = $1
           AND (($4 IN ('out', 'both') AND r.from_id = w.id) OR ($4 IN ('in', 'both') AND r.to_id = w.id))
           AND ($5::text[] IS NULL OR r.verb = ANY($5::text[]))
         JOIN graph_nodes n ON n.tenant_id = $1
           AND n.id = CASE WHEN $4 IN ('out', 'both') AND r.from_id = w.id THEN r.to_id ELSE r.from_id END
           AND ${visibleSql('n', 6)}
         WHERE w.depth < $3::int
       ),
       nearest AS (SELECT id, min(depth) AS depth FROM walk GROUP BY id)
       SELECT ${NODE_COLUMNS}, d.depth::int AS depth
       FROM nearest d JOIN graph_nodes n ON n.tenant_id = $1 AND n.id = d.id`,
      params,
    );
    if (reached.length === 0) return { nodes: [], relations: [] };
    const near = reached.filter((row) => row.depth < input.depth).map((row) => row.id);
    const relations = await this.#db.query<RelationRow>(
      `SELECT ${RELATION_COLUMNS}
       FROM graph_relations r
       JOIN graph_nodes a ON a.tenant_id = r.tenant_id AND a.id = r.from_id
       JOIN graph_nodes b ON b.tenant_id = r.tenant_id AND b.id = r.to_id
       WHERE r.tenant_id = $1 AND ($3::text[] IS NULL OR r.verb = ANY($3::text[]))
         AND (($2 IN ('out', 'both') AND r.from_id = ANY($4::text[])) OR ($2 IN ('in', 'both') AND r.to_id = ANY($4::text[])))
         AND ${visibleSql('a', 5)} AND ${visibleSql('b', 5)}`,
      [input.tenantId, input.direction, verbs, near, ...visibleParams(input.visible)],
    );
    return {
      nodes: reached
        .filter((row) => row.id !== input.id)
        .map((row) => ({ node: toNode(row), depth: row.depth }))
        .sort((a, b) => a.depth - b.depth || byId(a.node, b.node)),
      relations: relations.map(toRelation).sort(byId),
    };
  }

  kbLinks(): KbLinkReads {
    return kbLinkReads(this.#db);
  }

  async weaklyLinked(input: { tenantId: string; maxDegree: number; visible: GraphVisibility }): Promise<WeakNode[]> {
    const rows = await this.#db.query<NodeRow & { degree: number }>(
      `SELECT ${NODE_COLUMNS}, (
         SELECT count(*) FROM graph_relations r
         JOIN graph_nodes o ON o.tenant_id = r.tenant_id AND o.id = CASE WHEN r.from_id = n.id THEN r.to_id ELSE r.from_id END
         WHERE r.tenant_id = n.tenant_id AND (r.from_id = n.id OR r.to_id = n.id) AND ${visibleSql('o', 2)}
       )::int AS degree
       FROM graph_nodes n WHERE n.tenant_id = $1 AND ${visibleSql('n', 2)}`,
      [input.tenantId, ...visibleParams(input.visible)],
    );
    return rows
      .filter((row) => row.degree <= input.maxDegree)
      .map((row) => ({ node: toNode(row), degree: row.degree }))
      .sort((a, b) => a.degree - b.degree || byId(a.node, b.node));
  }

  async components(input: { tenantId: string; visible: GraphVisibility }): Promise<string[][]> {
    return componentsOf(await this.visibleGraph(input));
  }

  async bridges(input: { tenantId: string; visible: GraphVisibility }): Promise<GraphRelation[]> {
    return bridgesOf(await this.visibleGraph(input));
  }

  async node(input: { tenantId: string; id: string }): Promise<{ node: GraphNode; degree: number } | undefined> {
    const [row] = await this.#db.query<NodeRow & { degree: number }>(
      `SELECT ${NODE_COLUMNS},
         (SELECT count(*) FROM graph_relations r WHERE r.tenant_id = n.tenant_id AND (r.from_id = n.id OR r.to_id = n.id))::int AS degree
       FROM graph_nodes n WHERE n.tenant_id = $1 AND n.id = $2`,
      [input.tenantId, input.id],
    );
    return row === undefined ? undefined : { node: toNode(row), degree: row.degree };
  }

  async visibleGraph(input: { tenantId: string; visible: GraphVisibility }): Promise<{ nodes: GraphNode[]; relations: GraphRelation[] }> {
    const q = this.#db;
    const params = [input.tenantId, ...visibleParams(input.visible)];
    const nodes = await q.query<NodeRow>(
      `SELECT ${NODE_COLUMNS} FROM graph_nodes n WHERE n.tenant_id = $1 AND ${visibleSql('n', 2)} LIMIT ${ANALYSIS_NODE_CAP + 1}`,
      params,
    );
    if (nodes.length > ANALYSIS_NODE_CAP) throw new GraphTooLarge('nodes', ANALYSIS_NODE_CAP);
    const relations = await q.query<RelationRow>(
      `SELECT ${RELATION_COLUMNS}
       FROM graph_relations r
       JOIN graph_nodes a ON a.tenant_id = r.tenant_id AND a.id = r.from_id
       JOIN graph_nodes b ON b.tenant_id = r.tenant_id AND b.id = r.to_id
       WHERE r.tenant_id = $1 AND ${visibleSql('a', 2)} AND ${visibleSql('b', 2)}
       LIMIT ${ANALYSIS_RELATION_CAP + 1}`,
      params,
    );
    if (relations.length > ANALYSIS_RELATION_CAP) throw new GraphTooLarge('relations', ANALYSIS_RELATION_CAP);
    return { nodes: nodes.map(toNode).sort(byId), relations: relations.map(toRelation).sort(byId) };
  }

  async counts(tenantId: string): Promise<GraphCounts> {
    const rows = await this.#db.query<{ nodes: number; relations: number }>(
      `SELECT (SELECT count(*) FROM graph_nodes WHERE tenant_id = $1)::int AS nodes,
              (SELECT count(*) FROM graph_relations WHERE tenant_id = $1)::int AS relations`,
      [tenantId],
    );
    return { nodes: rows[0]?.nodes ?? 0, relations: rows[0]?.relations ?? 0 };
  }

  async clear(tenantId: string): Promise<void> {
    await this.#db.tx(async (tx) => {
      await tx.query('DELETE FROM graph_kb_files WHERE tenant_id = $1', [tenantId]);
      await tx.query('DELETE FROM graph_relations WHERE tenant_id = $1', [tenantId]);
      await tx.query('DELETE FROM graph_nodes WHERE tenant_id = $1', [tenantId]);
    });
  }

  async clearAll(): Promise<void> {
    await this.#db.tx(async (tx) => {
      await tx.query('DELETE FROM graph_kb_links');
      await tx.query('DELETE FROM graph_kb_files');
      await tx.query('DELETE FROM graph_relations');
      await tx.query('DELETE FROM graph_nodes');
    });
  }

  async health(): Promise<GraphHealth> {
    await this.#db.query('SELECT 1 FROM graph_nodes LIMIT 1');
    return { backend: 'postgres', ok: true };
  }

  /** The Db belongs to the gateway; closing the graph store leaves it open. */
  async close(): Promise<void> {
    // Nothing of its own to release.
  }
}
