import { randomUUID } from 'node:crypto';
import type { TierViewer } from '../kernel/directory/tiers.ts';
import { visibleAtTier } from '../kernel/directory/tiers.ts';
import type { AuditTrail } from '../kernel/audit/trail.ts';
import { conflict, permissionDenied, validation } from '../kernel/errors.ts';
import type { Queryable } from '../store/db.ts';
import type { ActionReach } from './action-reach.ts';
import { accessText, actionReach, graphNodeIds, sees } from './action-reach.ts';
import type { OnboardingAction } from './onboarding.ts';
import { ONBOARDING_ACTIONS } from './onboarding.ts';
import type { Services } from '../kernel/services.ts';
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

/** Every kind an inbox item has: write_inbox's four, onboarding actions and email drafts. */
export type InboxItemKind = InboxKind | 'onboarding_action' | 'email_draft';

export interface InboxReceipt {
  readonly id: string;
  readonly kind: InboxItemKind;
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
  // A person or agent may be named as the org file names them or as the read tools cite them: kept as the graph's id.
  const graphIds = await graphNodeIds(services.db, { id: viewer.tenantId, slug: viewer.tenantSlug }, input.relatedNodeIds);
  const related = [...new Set(graphIds)];
  for (const id of related) {
    const found = await services.graph.node({ tenantId: viewer.tenantId, id });
    const visible =
      found !== undefined && visibleAtTier(viewer.visible, { access: found.node.access, department: found.node.department, project: found.node.project });
    const i = graphIds.indexOf(id);
    if (!visible) throw validation(`relatedNodeIds[${i}]: no node you can see has the id ${JSON.stringify(input.relatedNodeIds[i])}`);
  }
  const id = await register(
    services,
    viewer.tenantId,
    { kind: input.kind, title: input.title, body: input.body, related, authorId, action: null, details: null },
    (tx, id) => audit.recordIn(tx, 'brain.inbox.write', [{ type: 'brain_inbox', id }], { kind: input.kind, related: related.length }),
  );
  return { id, kind: input.kind, status: 'pending' };
}

export interface InboxItem {
  readonly kind: InboxItemKind;
  readonly title: string;
  readonly body: string;
  readonly related: readonly string[];
  readonly authorId: string;
  readonly action: string | null;
  readonly details: Record<string, unknown> | null;
  readonly recipients?: readonly string[];
}

/**
 * Stores one pending item under the tenant's inbox lock, refusing past the pending cap, and
 * audits it in the same transaction.
 */
async function register(services: Services, tenantId: string, item: InboxItem, audited: (tx: Queryable, id: string) => Promise<void>): Promise<string> {
  const id = randomUUID();
  await services.db.tx(async (tx) => {
    await lockInbox(tx, tenantId);
    await insertItem(tx, tenantId, id, item);
    await audited(tx, id);
  });
  return id;
}

/** The status of an item registered under an id derived from its content; undefined when it is new and now stored (and audited). */
export async function registerOnce(
  services: Services,
  tenantId: string,
  id: string,
  item: InboxItem,
  audited: (tx: Queryable) => Promise<void>,
): Promise<'pending' | 'accepted' | 'rejected' | undefined> {
  return services.db.tx(async (tx) => {
    await lockInbox(tx, tenantId);
    // Under the inbox lock, so concurrent replays of one proposal find each other's row.
    const [existing] = await tx.query<{ status: 'pending' | 'accepted' | 'rejected' }>('SELECT status FROM brain_inbox WHERE tenant_id = $1 AND id = $2', [
      tenantId,
      id,
    ]);
    if (existing !== undefined) return existing.status;
    await insertItem(tx, tenantId, id, item);
    await audited(tx);
    return undefined;
  });
}

const lockInbox = (tx: Queryable, tenantId: string) => tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [INBOX_LOCK_CLASS, tenantId]);

/** Inserts a pending item, refusing past the pending cap; the caller holds the inbox lock. */
async function insertItem(tx: Queryable, tenantId: string, id: string, item: InboxItem): Promise<void> {
  const [pending] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM brain_inbox WHERE tenant_id = $1 AND status = 'pending'", [tenantId]);
  if ((pending?.n ?? 0) >= INBOX_BOUNDS.pendingPerTenant) {
    throw conflict(`the inbox holds ${INBOX_BOUNDS.pendingPerTenant} pending items; a manager must decide some before more can be registered`);
  }
  await tx.query(
    'INSERT INTO brain_inbox (tenant_id, id, kind, title, body, related_node_ids, author_id, action, details, recipients) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
    [
      tenantId,
      id,
      item.kind,
      item.title,
      item.body,
      [...item.related],
      item.authorId,
      item.action,
      item.details === null ? null : JSON.stringify(item.details),
      [...(item.recipients ?? [])],
    ],
  );
}

/**
 * Queues an onboarding action (propose_onboarding_action): its details valid against the
 * action's schema (the dialect checked them), its proposer a manager or admin of the brain,
 * and what it names checked against the brain as the proposer sees it now (proposalProblem).
 * Never applied here: a manager's approval applies it, checking again.
 */
export async function proposeOnboardingAction(
  services: Services,
  viewer: BrainViewer,
  authorId: string,
  input: { readonly action: OnboardingAction; readonly summary: string; readonly details: Record<string, unknown> },
  audit: AuditTrail,
): Promise<InboxReceipt> {
  if (viewer.access.brainRole !== 'manager' && viewer.access.brainRole !== 'admin') {
    throw permissionDenied('propose_onboarding_action needs a manager or admin brain role');
  }
  const problem = proposalProblem(
    input.action,
    await actionReach(services.db, { id: viewer.tenantId, slug: viewer.tenantSlug }, input.action, input.details),
    viewer.visible,
  );
  if (problem !== undefined) throw validation(problem);
  const id = await register(
    services,
    viewer.tenantId,
    { kind: 'onboarding_action', title: input.summary, body: '', related: [], authorId, action: input.action, details: input.details },
    (tx, id) =>
      audit.recordIn(tx, 'brain.onboarding.propose', [{ type: 'brain_inbox', id }], { action: input.action, risk: ONBOARDING_ACTIONS[input.action].risk }),
  );
  return { id, kind: 'onboarding_action', status: 'pending' };
}

/**
 * Why a proposal names what its proposer cannot act on, in the dialect's words after
 * "Invalid input: "; undefined when it may be queued. A proposer changes only what they see, as
 * it is and as it would be. A brain node the proposer does not see is refused with the same
 * words as one that does not exist (as write_inbox's related nodes), so the refusal tells
 * nothing of hidden nodes. The node add_node creates is the one id that may name nothing;
 * whether it exists already is left to the decision, as telling it here would answer for
 * hidden ids too.
 */
export function proposalProblem(action: OnboardingAction, reach: ActionReach, viewer: TierViewer): string | undefined {
  for (const named of reach.nodes) {
    if (action === 'add_node') continue;
    if (named.node === undefined || !sees(viewer, named.node)) return `details.${named.field}: no node you can see has the id ${JSON.stringify(named.written)}`;
  }
  const [dangling] = reach.dangling;
  if (dangling !== undefined) return `details.${dangling.field}: no ${dangling.missing} ${JSON.stringify(dangling.name)}`;
  // No one proposes a node they would not see: neither a new one above their tier nor an update that hides one.
  if (reach.after !== undefined && !sees(viewer, reach.after))
    return `details.access: the node would be one you cannot see (access ${accessText(reach.after)})`;
  if (action === 'add_relation' && reach.relation?.exists === true) return `details: the relation ${reach.relation.written} exists already`;
  if (action === 'remove_relation' && reach.relation?.exists === false) return `details: there is no relation ${reach.relation.written}`;
  return undefined;
}
