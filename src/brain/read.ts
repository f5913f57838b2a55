import { bridgeSplits } from '../../connectors/graph/analysis.ts';
import type { GraphNode, GraphVisibility, VisibleGraph } from '../../connectors/graph/contract.ts';
import type { Caller } from '../kernel/access/caller.ts';
import { DEFAULT_ACCESS } from '../kernel/access/principal-access.ts';
import type { PrincipalAccess } from '../kernel/access/principal-access.ts';
import { visibleAtTier } from '../kernel/directory/tiers.ts';
import { principalAccess } from '../kernel/directory/principals.ts';
import { analyzerLanguage } from '../search-text/analyzer.ts';
import type { Services } from '../kernel/services.ts';
import { graphNodeIds } from './action-reach.ts';
import type { Mark } from './model.ts';
import { ALL_BRAIN_SCOPES, brainScopes, nodeTypeMedia } from './search-source.ts';

/**
 * What a Company Brain token reads, decided by its principal's tier and memberships
 * (docs/access.md, "Company Brain: tiers"). Every read filters by tier inside the store's or
 * the engine's query; what is hidden is only counted.
 */

export interface BrainViewer {
  readonly tenantId: string;
  readonly tenantSlug: string;
  /** The organisation's language, for display text. */
  readonly language: string;
  readonly access: PrincipalAccess;
  readonly visible: GraphVisibility;
}

export async function brainViewer(services: Services, caller: Caller): Promise<BrainViewer> {
  const access = (await principalAccess(services.db, caller.tenant.id, caller.principal.id)) ?? DEFAULT_ACCESS;
  return {
    tenantId: caller.tenant.id,
    tenantSlug: caller.tenant.slug,
    language: caller.tenant.language,
    access,
    visible: { tier: access.tier, departments: access.departments, projects: access.projects },
  };
}

/** The brain's own nodes have ids without ':'; `org` and `kind:…` are the directory's. */
export const isDirectoryNode = (id: string): boolean => id === 'org' || id.includes(':');

/** Whether the tenant has any knowledge of its own yet (beyond the directory): the contract's empty state otherwise. */
export async function hasBrainContent(services: Services, tenantId: string): Promise<boolean> {
  const [row] = await services.db.query<{ found: boolean }>('SELECT EXISTS (SELECT 1 FROM brain_nodes WHERE tenant_id = $1) AS found', [tenantId]);
  return row?.found === true;
}

// ---------------------------------------------------------------------------------------------
// read_concept

export interface ConceptRelation {
  /** out: the concept is the relation's `from`; in: its `to`. */
  readonly direction: 'out' | 'in';
  readonly verb: string;
  readonly other: GraphNode;
  readonly mark: Mark | null;
}

export type Concept =
  | { readonly found: 'unknown' }
  | { readonly found: 'above_tier' }
  | { readonly found: 'visible'; readonly node: GraphNode; readonly relations: readonly ConceptRelation[]; readonly hiddenRelations: number };

const markOf = (status: string): Mark | null => (status === 'inferred' || status === 'unresolved' ? status : null);

/** One node (by its graph id, or a person or agent as the org file names them) with its relations to visible nodes; relations to hidden ones only counted. */
export async function readConcept(services: Services, viewer: BrainViewer, written: string): Promise<Concept> {
  const [id = written] = await graphNodeIds(services.db, { id: viewer.tenantId, slug: viewer.tenantSlug }, [written]);
  const found = await services.graph.node({ tenantId: viewer.tenantId, id });
  if (found === undefined) return { found: 'unknown' };
  if (!visibleAtTier(viewer.visible, { access: found.node.access, department: found.node.department, project: found.node.project }))
    return { found: 'above_tier' };
  const around = await services.graph.neighbours({ tenantId: viewer.tenantId, id, depth: 1, direction: 'both', visible: viewer.visible });
  const nodes = new Map(around.nodes.map((n) => [n.node.id, n.node]));
  const relations: ConceptRelation[] = [];
  for (const r of around.relations) {
    const out = r.from === id;
    const other = nodes.get(out ? r.to : r.from) ?? (r.from === r.to ? found.node : undefined);
    if (other === undefined) continue;
    relations.push({ direction: out ? 'out' : 'in', verb: r.verb, other, mark: markOf(r.status) });
  }
  relations.sort(
    (a, b) => (a.direction === b.direction ? 0 : a.direction === 'out' ? -1 : 1) || a.verb.localeCompare(b.verb, 'en') || (a.other.id < b.other.id ? -1 : 1),
  );
  return { found: 'visible', node: found.node, relations, hiddenRelations: Math.max(0, found.degree - around.relations.length) };
}

// ---------------------------------------------------------------------------------------------
// query_index

export const QUERY_INDEX_LIMIT = { min: 1, max: 20, default: 10 } as const;

export interface IndexHit {
  readonly id: string;
  readonly type: string;
  readonly title: string;
  readonly access: string;
  readonly snippet: string | undefined;
}

/**
 * Ranked nodes for a query, through the search engine with the viewer's tier as the query's
 * scopes, so a hidden node never takes a place; then the same query over every brain scope
 * counts all matches, and the difference is the hidden count (exact: both are the engine's
 * totals of one query under two filters).
 */
export async function queryIndex(
  services: Services,
  viewer: BrainViewer,
  input: { readonly query: string; readonly types?: readonly string[] | undefined; readonly limit: number },
  signal?: AbortSignal,
): Promise<{ readonly hits: readonly IndexHit[]; readonly hidden: number }> {
  const filters = { kinds: ['brain_node'] as const, ...(input.types === undefined ? {} : { mediaTypes: input.types.map(nodeTypeMedia) }) };
  // The question is analysed with the analyser the nodes were indexed with (search-source.ts):
  // the tenant's language tag itself names no stemmer, and unstemmed words miss stemmed titles.
  const base = { tenantId: viewer.tenantId, text: input.query, language: analyzerLanguage(viewer.language), filters };
  const reach = brainScopes(viewer.access);
  const visible = await services.search.search({ ...base, scopes: reach.scopes, scopePrefixes: reach.prefixes, limit: input.limit, snippets: 1 }, signal);
  const all = await services.search.search(
    { ...base, scopes: ALL_BRAIN_SCOPES.scopes, scopePrefixes: ALL_BRAIN_SCOPES.prefixes, limit: 1, snippets: 0 },
    signal,
  );
  return {
    hits: visible.hits.map((hit) => ({
      id: String(hit.ref.node_id ?? ''),
      type: String(hit.ref.type ?? ''),
      title: hit.title,
      access: String(hit.ref.access ?? ''),
      snippet: hit.snippets[0],
    })),
    hidden: Math.max(0, all.total - visible.total),
  };
}

// ---------------------------------------------------------------------------------------------
// list_gaps

export const GAP_KINDS = ['clarification', 'thin_link', 'sparse_theme', 'stale_evidence'] as const;
export type GapKind = (typeof GAP_KINDS)[number];

export type Gap =
  | { readonly kind: 'clarification'; readonly node: GraphNode; readonly relation?: { readonly verb: string; readonly other: GraphNode } }
  | { readonly kind: 'thin_link'; readonly from: GraphNode; readonly verb: string; readonly to: GraphNode }
  | { readonly kind: 'sparse_theme'; readonly node: GraphNode; readonly relations: number }
  | { readonly kind: 'stale_evidence'; readonly node: GraphNode; readonly reviewBy: string };

/** The themes whose coverage counts: departments and processes. */
const THEMES = new Set(['department', 'SOP / process']);
/** A theme held by at most this many visible relations is sparse. */
export const SPARSE_RELATIONS_MAX = 1;

/**
 * The weak spots of the visible graph, in a fixed order (kind, then ids):
 * - clarification: every "needs clarification with" relation, every node or relation marked
 *   unresolved;
 * - thin_link: a relation whose removal splits its part of the graph (a bridge) into two parts
 *   of at least THIN_LINK_SIDE_MIN nodes each: two themes held together by that one relation;
 * - sparse_theme: a department or process with at most SPARSE_RELATIONS_MAX visible relations;
 * - stale_evidence: a node whose Review by has passed.
 * Only visible nodes and relations between them are looked at, so a gap never shows or hints at
 * what the viewer cannot see.
 */
export async function listGaps(services: Services, viewer: BrainViewer, now: Date): Promise<Gap[]> {
  return gapsOf(await services.graph.visibleGraph({ tenantId: viewer.tenantId, visible: viewer.visible }), now);
}

/** A thin link joins two parts of at least this many nodes each: a relation to a lone leaf is a sparse node, not a thin link. */
export const THIN_LINK_SIDE_MIN = 3;

export function gapsOf(graph: VisibleGraph, now: Date): Gap[] {
  const nodes = new Map(graph.nodes.map((n) => [n.id, n]));
  const degree = new Map<string, number>();
  for (const r of graph.relations) {
    degree.set(r.from, (degree.get(r.from) ?? 0) + 1);
    if (r.to !== r.from) degree.set(r.to, (degree.get(r.to) ?? 0) + 1);
  }
  const gaps: Gap[] = [];
  for (const node of graph.nodes) if (node.status === 'unresolved') gaps.push({ kind: 'clarification', node });
  for (const r of graph.relations) {
    const from = nodes.get(r.from);
    const to = nodes.get(r.to);
    if (from === undefined || to === undefined) continue;
    if (r.verb === 'needs clarification with' || r.status === 'unresolved')
      gaps.push({ kind: 'clarification', node: from, relation: { verb: r.verb, other: to } });
  }
  for (const { relation: r, sides } of bridgeSplits(
    graph.nodes.map((n) => n.id),
    graph.relations,
  )) {
    const from = nodes.get(r.from);
    const to = nodes.get(r.to);
    if (from !== undefined && to !== undefined && Math.min(...sides) >= THIN_LINK_SIDE_MIN) gaps.push({ kind: 'thin_link', from, verb: r.verb, to });
  }
  for (const node of graph.nodes) {
    const relations = degree.get(node.id) ?? 0;
    if (THEMES.has(node.type) && relations <= SPARSE_RELATIONS_MAX) gaps.push({ kind: 'sparse_theme', node, relations });
  }
  for (const node of graph.nodes) {
    const reviewBy = node.properties.reviewBy;
    if (typeof reviewBy === 'string' && Date.parse(reviewBy) < now.getTime()) gaps.push({ kind: 'stale_evidence', node, reviewBy });
  }
  const keyOf = (g: Gap): string =>
    g.kind === 'thin_link'
      ? `${g.from.id}\u0000${g.verb}\u0000${g.to.id}`
      : `${g.node.id}\u0000${g.kind === 'clarification' && g.relation ? `${g.relation.verb}\u0000${g.relation.other.id}` : ''}`;
  return gaps.sort((a, b) => GAP_KINDS.indexOf(a.kind) - GAP_KINDS.indexOf(b.kind) || (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
}
