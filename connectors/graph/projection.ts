import type { Queryable } from '../../src/store/db.ts';
import type { ApplyContext, OutboxEntry, OutboxRow, Projection, ResourceRef } from '../projection.ts';
import type { GraphChange, GraphStore, KbFileNode, KbLinkInput, UpsertNodeInput, UpsertRelationInput } from './contract.ts';

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

/** Whether a row is one of the tenant's own graph rows (a Company Brain node or relation). */
export const isGraphRow = (row: Pick<OutboxRow, 'tenantId' | 'resourceKey'>): boolean => row.resourceKey === graphResourceKey(row.tenantId);

const KB_FILE_KEY_PREFIX = 'kb_file:';

/** Whether a row is about a Knowledge-Base file (`kb_file:<id>`), whose references the graph keeps. */
export const isKbFileRow = (row: Pick<OutboxRow, 'resourceKey'>): boolean => row.resourceKey.startsWith(KB_FILE_KEY_PREFIX);

/**
 * Where the graph learns a KB file's place and references: the rows only name the file, and the
 * source reads it as it now is, in the transaction that claimed the rows. A file it does not
 * return is no longer shown (deleted, or its KB archived) and is removed from the graph.
 */
export interface KbFileGraphSource {
  load(tx: Queryable, refs: readonly ResourceRef[], signal: AbortSignal): Promise<{ readonly file: KbFileNode; readonly links: readonly KbLinkInput[] }[]>;
}

/** The KB file changes of a batch: each file named once, as it now is. */
async function kbFileChanges(source: KbFileGraphSource, rows: readonly OutboxRow[], context: ApplyContext): Promise<GraphChange[]> {
  const refs = new Map<string, ResourceRef>();
  for (const row of rows) refs.set(`${row.tenantId}\u0000${row.resourceKey}`, { tenantId: row.tenantId, resourceKey: row.resourceKey });
  if (refs.size === 0) return [];
  const loaded = await source.load(context.tx, [...refs.values()], context.signal);
  const shown = new Map(loaded.map((item) => [`${item.file.tenantId}\u0000${KB_FILE_KEY_PREFIX}${item.file.fileId}`, item]));
  return [...refs.entries()].map(([key, ref]): GraphChange => {
    const item = shown.get(key);
    if (item !== undefined) return { op: 'putKbFile', file: item.file, links: item.links };
    return { op: 'removeKbFile', tenantId: ref.tenantId, fileId: ref.resourceKey.slice(KB_FILE_KEY_PREFIX.length) };
  });
}

/**
 * Wraps a graph store as the 'graph' projection: a claimed batch is one store transaction. With
 * a source, KB file rows record each file and its references; without one (a caller that wants
 * the Company Brain graph alone) they are skipped, not failed, so they never hold the tenant's
 * graph back. Rows of other resources are skipped likewise.
 */
export function graphProjection(store: GraphStore, source?: KbFileGraphSource): Projection {
  return {
    name: GRAPH_PROJECTION,
    async apply(rows: readonly OutboxRow[], context: ApplyContext) {
      // KB file rows and the graph's own rows touch disjoint parts of the store, so their relative order does not matter.
      const files = source === undefined ? [] : await kbFileChanges(source, rows.filter(isKbFileRow), context);
      await store.write([...rows.filter(isGraphRow).map(graphChange), ...files], { tx: context.tx });
    },
    clear: () => store.clearAll(),
    health: async () => void (await store.health()),
  };
}
