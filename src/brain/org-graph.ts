import { byId } from '../../connectors/graph/analysis.ts';
import { GRAPH_PROJECTION, graphEntries, graphResourceKey } from '../../connectors/graph/projection.ts';
import type { UpsertNodeInput, UpsertRelationInput } from '../../connectors/graph/contract.ts';
import type { OutboxEntry, Rebuilder, ResourceRef } from '../../connectors/projection.ts';
import type { Queryable } from '../store/db.ts';
import { brainSearchChanges } from './search-changes.ts';
import { loadBrainNodes, loadBrainRelations } from './store.ts';
import { relationId } from './model.ts';
import { listPrincipals } from '../kernel/directory/principals.ts';
import type { OrgApplyHook } from '../kernel/org/section.ts';
import { enqueue } from '../kernel/outbox/outbox.ts';

/**
 * A tenant's Company Brain graph as its truth holds it, in two parts. The directory: the
 * organization, people, departments, projects and agents, and how they hang together (a
 * department or project is part of the organization, a person belongs to a department and
 * works on a project, a person owns an agent); docs/decisions.md, "The directory in the
 * graph", says why every directory node is public. And the brain's own knowledge
 * (src/brain/): nodes with their tier, and relations among them and to the directory's
 * nodes. Writers (`kgw apply`, `kgw brain import`, approved proposals) read it before and
 * after their change and enqueue the difference, which reaches the graph store through the
 * outbox. A brain relation whose end is gone (a person left every department) stays in the
 * truth and is left out here until its end exists again.
 */

export interface GraphSnapshot {
  readonly nodes: readonly UpsertNodeInput[];
  readonly relations: readonly UpsertRelationInput[];
}

export const EMPTY_GRAPH: GraphSnapshot = { nodes: [], relations: [] };

const ORG = 'org';
const nodeId = {
  person: (id: string) => `person:${id}`,
  agent: (id: string) => `agent:${id}`,
  department: (name: string) => `department:${name}`,
  project: (name: string) => `project:${name}`,
};

/** Reads the tenant's directory as a graph, ordered by id so that equal states compare equal. */
export async function orgGraph(q: Queryable, tenantId: string): Promise<GraphSnapshot> {
  const [tenant] = await q.query<{ name: string }>('SELECT name FROM tenants WHERE id = $1', [tenantId]);
  if (tenant === undefined) return EMPTY_GRAPH;
  const principals = await listPrincipals(q, tenantId);
  const nodes = new Map<string, UpsertNodeInput>();
  const relations = new Map<string, UpsertRelationInput>();
  const node = (id: string, type: string, title: string) => nodes.set(id, { tenantId, id, type, properties: { title }, access: 'public', status: 'verified' });
  const relate = (from: string, verb: string, to: string) => {
    const id = `${from}|${verb}|${to}`;
    relations.set(id, { tenantId, id, from, to, verb, status: 'verified', properties: {} });
  };
  node(ORG, 'organization', tenant.name);
  for (const p of principals) {
    const id = p.kind === 'person' ? nodeId.person(p.id) : nodeId.agent(p.id);
    node(id, p.kind, p.name);
    for (const department of p.access.departments) {
      node(nodeId.department(department), 'department', department);
      relate(nodeId.department(department), 'is part of', ORG);
      relate(id, 'belongs to', nodeId.department(department));
    }
    for (const project of p.access.projects) {
      node(nodeId.project(project), 'project', project);
      relate(nodeId.project(project), 'is part of', ORG);
      relate(id, 'works on', nodeId.project(project));
    }
  }
  for (const p of principals) if (p.kind === 'agent' && p.ownerId !== null) relate(nodeId.person(p.ownerId), 'owns', nodeId.agent(p.id));
  for (const { node: n } of (await loadBrainNodes(q, tenantId)).values()) {
    nodes.set(n.id, {
      tenantId,
      id: n.id,
      type: n.type,
      properties: { title: n.title, summary: n.summary, metadata: n.metadata, tags: n.tags, verifiedAt: n.verifiedAt, reviewBy: n.reviewBy },
      access: n.access,
      department: n.department ?? undefined,
      project: n.project ?? undefined,
      status: n.mark ?? 'verified',
    });
  }
  for (const { relation: r } of (await loadBrainRelations(q, tenantId)).values()) {
    if (!nodes.has(r.from) || !nodes.has(r.to)) continue;
    const id = relationId(r);
    relations.set(id, { tenantId, id, from: r.from, to: r.to, verb: r.verb, status: r.mark ?? 'verified', properties: {} });
  }
  return { nodes: [...nodes.values()].sort(byId), relations: [...relations.values()].sort(byId) };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The outbox entries that turn the `before` graph into `after`: removed relations, removed
 * nodes, then new or changed nodes, then new or changed relations, so that every relation is
 * written after its nodes and removed before them.
 */
export function graphDiff(tenantId: string, before: GraphSnapshot, after: GraphSnapshot): OutboxEntry[] {
  const beforeNodes = new Map(before.nodes.map((n) => [n.id, n]));
  const beforeRelations = new Map(before.relations.map((r) => [r.id, r]));
  const afterNodes = new Set(after.nodes.map((n) => n.id));
  const afterRelations = new Set(after.relations.map((r) => r.id));
  return [
    ...before.relations.filter((r) => !afterRelations.has(r.id)).map((r) => graphEntries.deleteRelation(tenantId, r.id)),
    ...before.nodes.filter((n) => !afterNodes.has(n.id)).map((n) => graphEntries.deleteNode(tenantId, n.id)),
    ...after.nodes.filter((n) => !same(beforeNodes.get(n.id), n)).map((n) => graphEntries.upsertNode(n)),
    ...after.relations.filter((r) => !same(beforeRelations.get(r.id), r)).map((r) => graphEntries.upsertRelation(r)),
  ];
}

/**
 * What a writer of the tenant's graph enqueues after its change: the graph store's difference
 * and a search row for every node added, changed or removed (query_index finds nodes there).
 */
export function orgGraphChanges(tenantId: string, before: GraphSnapshot, after: GraphSnapshot): OutboxEntry[] {
  return [...graphDiff(tenantId, before, after), ...brainSearchChanges(tenantId, before, after)];
}

/**
 * What `kgw apply` does for the graph: it reads the tenant's graph once the plan has locked the
 * tenant (a new tenant has none), and after an apply that changed something enqueues the
 * difference, since the directory's part of the graph follows the org file.
 */
export const orgGraphApplyHook: OrgApplyHook = {
  async before(tx, tenant) {
    const before = tenant.existed ? await orgGraph(tx, tenant.id) : EMPTY_GRAPH;
    return async (after) => enqueue(after, orgGraphChanges(tenant.id, before, await orgGraph(after, tenant.id)));
  },
};

/** Rebuilds the graph store: every tenant's current graph (directory and brain), as upserts. */
export const orgGraphRebuilder: Rebuilder = {
  projection: GRAPH_PROJECTION,
  async *keys(db: Queryable): AsyncIterable<ResourceRef> {
    for (const tenant of await db.query<{ id: string }>('SELECT id FROM tenants ORDER BY id')) {
      yield { tenantId: tenant.id, resourceKey: graphResourceKey(tenant.id) };
    }
  },
  async load(tx: Queryable, refs: readonly ResourceRef[]): Promise<OutboxEntry[]> {
    const entries: OutboxEntry[] = [];
    for (const ref of refs) entries.push(...graphDiff(ref.tenantId, EMPTY_GRAPH, await orgGraph(tx, ref.tenantId)));
    return entries;
  },
};
