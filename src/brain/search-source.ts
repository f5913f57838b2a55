import type { UpsertNodeInput } from '../../connectors/graph/contract.ts';
import type { OutboxEntry, Rebuilder, ResourceRef } from '../../connectors/projection.ts';
import type { SearchDocument, SearchSource } from '../../connectors/search/contract.ts';
import type { Queryable } from '../store/db.ts';
import type { TierViewer } from '../kernel/directory/tiers.ts';
import { clears, TIERS } from '../kernel/directory/tiers.ts';
import { orgGraph } from './org-graph.ts';
import { BRAIN_NODE_KEY_PREFIX, brainNodeKey } from './search-changes.ts';
import { analyzerLanguage } from '../search-text/analyzer.ts';

/**
 * The Company Brain's nodes in the search engine, for `query_index`: one document per node of
 * the tenant's graph (the directory's and the brain's own), fed by the outbox like every other
 * document. Its tier is its scope, so the engine's filter applies the tier inside the query
 * (docs/company-brain.md, "query_index"):
 *
 *   brain:<access>                 public, manager, hr, executive, restricted
 *   brain:department:<name>        a department node, with its department
 *   brain:project:<name>           a project node, with its project
 *
 * A node's type is its document's media type (`brain-node/sop-process`), which the `types`
 * filter of query_index filters on inside the query too.
 */

const BRAIN_SCOPE_PREFIX = 'brain:';

/** The search scope of a node of `access` (with its department or project). */
export function brainScope(node: { readonly access: string; readonly department?: string | undefined; readonly project?: string | undefined }): string {
  if (node.access === 'department') return `${BRAIN_SCOPE_PREFIX}department:${node.department ?? ''}`;
  if (node.access === 'project') return `${BRAIN_SCOPE_PREFIX}project:${node.project ?? ''}`;
  return `${BRAIN_SCOPE_PREFIX}${node.access}`;
}

/** The media type that stands for a node type in the engine: `SOP / process` → `brain-node/sop-process`. */
export const nodeTypeMedia = (type: string): string => `brain-node/${type.toLowerCase().replaceAll(' / ', '-').replaceAll(' ', '-')}`;

/**
 * The scopes a viewer may search, as visibleAtTier decides (src/kernel/directory/tiers.ts): every
 * level its tier clears; department and project nodes of its own departments and projects, or
 * all of them from manager up (a prefix). `hidden` is what it may not: every brain scope
 * (`brain:`) outside `visible`, which counts the matches it is told of only as a number.
 */
export function brainScopes(viewer: TierViewer): { readonly scopes: string[]; readonly prefixes: string[] } {
  const scopes: string[] = [];
  const prefixes: string[] = [];
  const allScoped = clears(viewer.tier, 'manager');
  for (const level of TIERS) {
    if (!clears(viewer.tier, level)) continue;
    if (level === 'department' || level === 'project') {
      const names = level === 'department' ? viewer.departments : viewer.projects;
      if (allScoped) prefixes.push(`${BRAIN_SCOPE_PREFIX}${level}:`);
      else scopes.push(...names.map((name) => brainScope({ access: level, [level]: name })));
    } else scopes.push(brainScope({ access: level }));
  }
  return { scopes, prefixes };
}

/** Every brain scope: what a count of all matches, visible or not, searches. */
export const ALL_BRAIN_SCOPES = { scopes: [] as string[], prefixes: [BRAIN_SCOPE_PREFIX] };

/** A node's document: its title, its id as the path (an id is searchable), and its summary, tags and metadata values as the body (the type is a filter, not text). */
function documentOf(tenantId: string, language: string, node: UpsertNodeInput): SearchDocument {
  const p = node.properties as { title?: unknown; summary?: unknown; tags?: unknown; metadata?: unknown };
  const tags = Array.isArray(p.tags) ? p.tags.filter((t): t is string => typeof t === 'string') : [];
  const metadata = typeof p.metadata === 'object' && p.metadata !== null ? Object.values(p.metadata as Record<string, unknown>).map(String) : [];
  return {
    tenantId,
    id: brainNodeKey(node.id),
    kind: 'brain_node',
    scope: brainScope(node),
    language: analyzerLanguage(language),
    path: node.id,
    title: typeof p.title === 'string' ? p.title : node.id,
    body: [typeof p.summary === 'string' ? p.summary : '', tags.join(' '), metadata.join(' ')].filter((s) => s !== '').join('\n'),
    tags: tags.map((t) => t.toLowerCase()),
    mediaType: nodeTypeMedia(node.type),
    contentKind: 'text',
    updatedAt: new Date(0).toISOString(),
    ref: { node_id: node.id, type: node.type, access: node.access },
  };
}

export const brainSearchSource: SearchSource = {
  async load(tx, refs) {
    const byTenant = new Map<string, Set<string>>();
    for (const ref of refs) byTenant.set(ref.tenantId, (byTenant.get(ref.tenantId) ?? new Set()).add(ref.resourceKey.slice(BRAIN_NODE_KEY_PREFIX.length)));
    const docs: SearchDocument[] = [];
    for (const [tenantId, ids] of byTenant) {
      const [tenant] = await tx.query<{ language: string }>('SELECT language FROM tenants WHERE id = $1', [tenantId]);
      if (tenant === undefined) continue;
      // One read of the tenant's graph serves every node of the batch.
      for (const node of (await orgGraph(tx, tenantId)).nodes) if (ids.has(node.id)) docs.push(documentOf(tenantId, tenant.language, node));
    }
    return docs;
  },
};

/** Rebuilds every tenant's node documents (`kgw reindex --search`). */
export const brainSearchRebuilder: Rebuilder = {
  projection: 'search',
  async *keys(db: Queryable): AsyncIterable<ResourceRef> {
    for (const tenant of await db.query<{ id: string }>('SELECT id FROM tenants ORDER BY id')) {
      for (const node of (await orgGraph(db, tenant.id)).nodes) yield { tenantId: tenant.id, resourceKey: brainNodeKey(node.id) };
    }
  },
  load(_tx: Queryable, refs: readonly ResourceRef[]): Promise<OutboxEntry[]> {
    return Promise.resolve(
      refs.map((ref) => ({ tenantId: ref.tenantId, projection: 'search', resourceKey: ref.resourceKey, operation: 'upsert' as const, payload: {} })),
    );
  },
};
