import type { ApplyContext, OutboxEntry, OutboxRow, Projection } from '../projection.ts';
import type { GraphChange, GraphStore, UpsertNodeInput, UpsertRelationInput } from './contract.ts';

/**
 * The 'graph' projection: outbox rows become GraphStore writes. All rows of one tenant share
 * one resource key, so the worker applies a tenant's graph changes strictly in commit order:
 * a relation never arrives before the nodes it joins, nor after one of them was deleted.
 */

export const GRAPH_PROJECTION = 'graph';

/** The outbox payload of a graph row: a node or relation (upsert), or its id (delete). */
export type GraphPayload =
  | { readonly node: Omit<UpsertNodeInput, 'tenantId'> }
  | { readonly relation: Omit<UpsertRelationInput, 'tenantId'> }
  | { readonly nodeId: string }
  | { readonly relationId: string };

/** The one outbox resource key of a tenant's graph. */
export const graphResourceKey = (tenantId: string): string => `tenant:${tenantId}`;

function entry(tenantId: string, operation: 'upsert' | 'delete', payload: GraphPayload): OutboxEntry {
  return { tenantId, projection: GRAPH_PROJECTION, resourceKey: graphResourceKey(tenantId), operation, payload };
}

/** Outbox entries for graph changes; enqueue them in the transaction that makes the change. */
export const graphEntries = {
  upsertNode: (node: UpsertNodeInput): OutboxEntry => {
    const { tenantId, ...rest } = node;
    return entry(tenantId, 'upsert', { node: rest });
  },
  upsertRelation: (relation: UpsertRelationInput): OutboxEntry => {
    const { tenantId, ...rest } = relation;
    return entry(tenantId, 'upsert', { relation: rest });
  },
  deleteNode: (tenantId: string, id: string): OutboxEntry => entry(tenantId, 'delete', { nodeId: id }),
  deleteRelation: (tenantId: string, id: string): OutboxEntry => entry(tenantId, 'delete', { relationId: id }),
};

/** The store change an outbox row stands for. */
export function graphChange(row: Pick<OutboxRow, 'tenantId' | 'payload'>): GraphChange {
  const payload = row.payload as Partial<Record<'node' | 'relation' | 'nodeId' | 'relationId', unknown>>;
  const tenantId = row.tenantId;
  if (typeof payload.node === 'object' && payload.node !== null)
    return { op: 'upsertNode', node: { ...(payload.node as Omit<UpsertNodeInput, 'tenantId'>), tenantId } };
  if (typeof payload.relation === 'object' && payload.relation !== null) {
    return { op: 'upsertRelation', relation: { ...(payload.relation as Omit<UpsertRelationInput, 'tenantId'>), tenantId } };
  }
  if (typeof payload.nodeId === 'string') return { op: 'deleteNode', tenantId, id: payload.nodeId };
  if (typeof payload.relationId === 'string') return { op: 'deleteRelation', tenantId, id: payload.relationId };
  throw new Error('graph outbox row without a node, relation, nodeId or relationId');
}

/**
 * Whether the graph shows what a row is about: the tenant's graph rows only. Writers enqueue
 * rows of other resources for the graph as well (Knowledge-Base files, `kb_file:<id>`), for
 * the links the graph will come to show; until it does, they are skipped, not failed, so they
 * never hold the tenant's graph back. A rebuild brings in what the graph learns to show later.
 */
export const isGraphRow = (row: Pick<OutboxRow, 'tenantId' | 'resourceKey'>): boolean => row.resourceKey === graphResourceKey(row.tenantId);

/** Wraps a graph store as the 'graph' projection: a claimed batch is one store transaction. */
export function graphProjection(store: GraphStore): Projection {
  return {
    name: GRAPH_PROJECTION,
    apply: (rows: readonly OutboxRow[], context: ApplyContext) => store.write(rows.filter(isGraphRow).map(graphChange), { tx: context.tx }),
    clear: () => store.clearAll(),
    health: async () => void (await store.health()),
  };
}
