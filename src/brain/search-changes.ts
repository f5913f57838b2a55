import type { UpsertNodeInput } from '../../connectors/graph/contract.ts';
import type { OutboxEntry } from '../../connectors/projection.ts';

/*
 * Which search documents a change of the tenant's graph touches: one per node, keyed by its id
 * (search-source.ts reads each as it then is). Apart from the source, so that the graph's
 * writers (org-graph.ts) enqueue these rows without importing what reads the graph back.
 */

export const BRAIN_NODE_KEY_PREFIX = 'brain_node:';
export const brainNodeKey = (nodeId: string): string => `${BRAIN_NODE_KEY_PREFIX}${nodeId}`;

/** What the rows are worked out from: a graph's nodes (org-graph.ts's GraphSnapshot is one). */
interface NodesOf {
  readonly nodes: readonly UpsertNodeInput[];
}

/** The search rows for nodes a graph change touched; the source reads each node as it then is (none: it is removed). */
export function brainSearchEntries(tenantId: string, nodeIds: Iterable<string>): OutboxEntry[] {
  return [...new Set(nodeIds)].map((id) => ({ tenantId, projection: 'search', resourceKey: brainNodeKey(id), operation: 'upsert', payload: {} }));
}

/** The search rows of what turned `before` into `after`: every node added, changed or removed. */
export function brainSearchChanges(tenantId: string, before: NodesOf, after: NodesOf): OutboxEntry[] {
  const was = new Map(before.nodes.map((n) => [n.id, JSON.stringify(n)]));
  const now = new Set(after.nodes.map((n) => n.id));
  return brainSearchEntries(tenantId, [
    ...after.nodes.filter((n) => was.get(n.id) !== JSON.stringify(n)).map((n) => n.id),
    ...before.nodes.filter((n) => !now.has(n.id)).map((n) => n.id),
  ]);
}
