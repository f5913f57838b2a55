import { randomUUID } from 'node:crypto';
import { visibleAtTier } from '../access/tiers.ts';
import type { AuditTrail } from '../audit/trail.ts';
import { conflict, validation } from '../errors.ts';
import type { Services } from '../services.ts';
import type { BrainViewer } from './read.ts';

/**
 * The Company Brain inbox: what agents register with write_inbox, waiting for a manager's
 * decision. Registering never writes to the graph (docs/company-brain.md, "write_inbox").
 */

export const INBOX_KINDS = ['observation', 'correction', 'proposal', 'work_output'] as const;
export type InboxKind = (typeof INBOX_KINDS)[number];

export const INBOX_BOUNDS = {
  titleChars: { min: 3, max: 120 },
  bodyChars: { min: 10, max: 4000 },
  relatedNodes: 10,
  /** Pending items a tenant's inbox holds at most: past it, registering is refused until managers decide. */
  pendingPerTenant: 10_000,
} as const;

export interface InboxReceipt {
  readonly id: string;
  readonly kind: InboxKind;
  readonly status: 'pending';
}

// Any constant of our own, beside the org apply and skill pack locks.
const INBOX_LOCK_CLASS = 727_004;

/**
 * Registers an item. Each related node must be one the caller sees; one it does not see is
 * refused as if it did not exist, so the refusal tells nothing of hidden nodes.
 */
export async function writeInbox(
  services: Services,
  viewer: BrainViewer,
  authorId: string,
  input: { readonly kind: InboxKind; readonly title: string; readonly body: string; readonly relatedNodeIds: readonly string[] },
  audit: AuditTrail,
): Promise<InboxReceipt> {
  const related = [...new Set(input.relatedNodeIds)];
  for (const [i, id] of related.entries()) {
    const found = await services.graph.node({ tenantId: viewer.tenantId, id });
    const visible =
      found !== undefined && visibleAtTier(viewer.visible, { access: found.node.access, department: found.node.department, project: found.node.project });
    if (!visible) throw validation(`relatedNodeIds[${i}]: no node you can see has the id ${JSON.stringify(id)}`);
  }
  const id = randomUUID();
  await services.db.tx(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [INBOX_LOCK_CLASS, viewer.tenantId]);
    const [pending] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM brain_inbox WHERE tenant_id = $1 AND status = 'pending'", [
      viewer.tenantId,
    ]);
    if ((pending?.n ?? 0) >= INBOX_BOUNDS.pendingPerTenant) {
      throw conflict(`the inbox holds ${INBOX_BOUNDS.pendingPerTenant} pending items; a manager must decide some before more can be registered`);
    }
    await tx.query('INSERT INTO brain_inbox (tenant_id, id, kind, title, body, related_node_ids, author_id) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      viewer.tenantId,
      id,
      input.kind,
      input.title,
      input.body,
      related,
      authorId,
    ]);
    await audit.recordIn(tx, 'brain.inbox.write', [{ type: 'brain_inbox', id }], { kind: input.kind, related: related.length });
  });
  return { id, kind: input.kind, status: 'pending' };
}
