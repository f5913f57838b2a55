import type { AuditTrail } from '../kernel/audit/trail.ts';
import type { TenantRef } from '../kernel/access/caller.ts';
import type { Tier, TierViewer } from '../kernel/directory/tiers.ts';
import { findPrincipal, requireTenant } from '../kernel/directory/directory.ts';
import { principalAccess } from '../kernel/directory/principals.ts';
import { conflict, notFound, permissionDenied, validation } from '../kernel/errors.ts';
import { orgGraph, orgGraphChanges } from './org-graph.ts';
import { enqueue } from '../kernel/outbox/outbox.ts';
import { lockTenantSlug } from '../kernel/org/tenant.ts';
import { isUuid } from '../kernel/text.ts';
import type { Db, Queryable, Transaction } from '../store/db.ts';
import { planBrainFile, readBrainFile } from './import.ts';
import type { OrgChange } from '../kernel/org/section.ts';
import type { InboxItemKind } from './inbox.ts';
import { composeDraft } from '../kernel/mail/draft.ts';
import type { MailboxSettings } from '../kernel/mail/mailbox.ts';
import { deliverDraft } from '../kernel/mail/mailbox.ts';
import type { OnboardingAction } from './onboarding.ts';
import { ONBOARDING_ACTIONS } from './onboarding.ts';
import { accessText, actionReach, relationText, sees } from './action-reach.ts';
import type { BrainNode } from './model.ts';
import { removeBrainNode, removeBrainRelation, writeBrainNode, writeBrainRelation } from './store.ts';

/**
 * A manager's decisions on the Company Brain inbox (`kgw review … --kind brain`): the person
 * deciding must be a manager or admin of the brain; accepting an onboarding action applies it
 * to the brain's truth in the decision's transaction (and the graph store and search engine
 * follow through the outbox), so a failure leaves the item pending and nothing changed; any
 * other item is acknowledged. docs/company-brain.md, "Decisions".
 */

export interface BrainReviewItem {
  readonly id: string;
  readonly kind: InboxItemKind;
  readonly title: string;
  readonly action: OnboardingAction | null;
  readonly risk: string | null;
  readonly status: 'pending' | 'accepted' | 'rejected';
  readonly authorName: string | null;
  readonly authorEmail: string | null;
  readonly createdAt: Date;
}

/** A node's tier as a review shows it: the access literal, with its department or project. */
export interface NodeTier {
  readonly access: Tier;
  readonly department?: string;
  readonly project?: string;
}

/** The access of a brain node an onboarding action names: now, and after the action. */
export interface AccessChange {
  readonly node: string;
  /** null: there is no such node now. */
  readonly current: NodeTier | null;
  /** null: the action removes it (or, for a node that is not there, leaves none). */
  readonly new: NodeTier | null;
}

export interface BrainReviewDetail extends BrainReviewItem {
  readonly body: string;
  readonly relatedNodeIds: readonly string[];
  readonly details: Readonly<Record<string, unknown>> | null;
  /**
   * An onboarding action's brain nodes with their access now and after it, side by side, so a
   * decider sees what a change would declassify or hide; empty for any other item.
   */
  readonly access: readonly AccessChange[];
  /** An email draft's addresses (its subject is the title, its text the body). */
  readonly recipients: readonly string[];
  /** Where an approved email draft was put: an imap:// location or an .eml file's path. */
  readonly deliveredTo: string | null;
  readonly decidedAt: Date | null;
  readonly decidedBy: string | null;
  readonly decisionNote: string | null;
}

interface Row {
  id: string;
  kind: BrainReviewItem['kind'];
  title: string;
  body: string;
  related_node_ids: string[];
  action: OnboardingAction | null;
  details: Record<string, unknown> | null;
  recipients: string[];
  delivered_to: string | null;
  status: BrainReviewItem['status'];
  author_name: string | null;
  author_email: string | null;
  created_at: Date;
  decided_at: Date | null;
  decided_by_email: string | null;
  decision_note: string | null;
}

const SELECT = `
  SELECT i.id, i.kind, i.title, i.body, i.related_node_ids, i.action, i.details, i.recipients, i.delivered_to, i.status, i.created_at, i.decided_at, i.decision_note,
         a.name AS author_name, a.email AS author_email, d.email AS decided_by_email
    FROM brain_inbox i
    LEFT JOIN principals a ON a.tenant_id = i.tenant_id AND a.id = i.author_id
    LEFT JOIN principals d ON d.tenant_id = i.tenant_id AND d.id = i.decided_by`;

const toItem = (row: Row): BrainReviewItem => ({
  id: row.id,
  kind: row.kind,
  title: row.title,
  action: row.action,
  risk: row.action === null ? null : ONBOARDING_ACTIONS[row.action].risk,
  status: row.status,
  authorName: row.author_name,
  authorEmail: row.author_email,
  createdAt: row.created_at,
});

const toDetail = (row: Row, access: readonly AccessChange[]): BrainReviewDetail => ({
  ...toItem(row),
  body: row.body,
  relatedNodeIds: row.related_node_ids,
  details: row.details,
  access,
  recipients: row.recipients,
  deliveredTo: row.delivered_to,
  decidedAt: row.decided_at,
  decidedBy: row.decided_by_email,
  decisionNote: row.decision_note,
});

/** The pending items of a tenant's brain inbox, oldest first. */
export async function listBrainReviews(db: Db, input: { readonly tenant: string }): Promise<BrainReviewItem[]> {
  const tenant = await requireTenant(db, input.tenant);
  const rows = await db.query<Row>(`${SELECT} WHERE i.tenant_id = $1 AND i.status = 'pending' ORDER BY i.created_at, i.id`, [tenant.id]);
  return rows.map(toItem);
}

/** Whether `id` names an item of the tenant's brain inbox (decided or not). */
export async function isBrainReview(db: Db, input: { readonly tenant: string; readonly id: string }): Promise<boolean> {
  if (!isUuid(input.id)) return false;
  const tenant = await requireTenant(db, input.tenant);
  const [row] = await db.query<{ id: string }>('SELECT id FROM brain_inbox WHERE tenant_id = $1 AND id = $2', [tenant.id, input.id]);
  return row !== undefined;
}

export async function showBrainReview(db: Db, input: { readonly tenant: string; readonly id: string }): Promise<BrainReviewDetail> {
  const tenant = await requireTenant(db, input.tenant);
  const [row] = isUuid(input.id) ? await db.query<Row>(`${SELECT} WHERE i.tenant_id = $1 AND i.id = $2`, [tenant.id, input.id]) : [];
  if (row === undefined) throw notFound(`no brain inbox item ${input.id} in tenant ${input.tenant}`);
  return toDetail(row, await accessChanges(db, tenant, row));
}

const tierOf = (node: BrainNode): NodeTier => ({
  access: node.access,
  ...(node.department === null ? {} : { department: node.department }),
  ...(node.project === null ? {} : { project: node.project }),
});

/** The access of each brain node an action names, as the brain is now and as the action would leave it. */
async function accessChanges(q: Queryable, tenant: TenantRef, row: Row): Promise<AccessChange[]> {
  if (row.action === null || row.details === null) return [];
  const nodes = (await actionNodeChanges(q, tenant, row.action, row.details)) ?? [];
  return nodes.map(({ node, current, proposed }) => ({
    node,
    current: current === null ? null : tierOf(current),
    new: proposed === null ? null : tierOf(proposed),
  }));
}

/** A brain node an onboarding action names, whole: as the brain holds it now and as accepting would leave it. */
export interface NodeChange {
  /** The node as the details write it. */
  readonly node: string;
  /** null: there is no such node now. */
  readonly current: BrainNode | null;
  /** null: the action removes it (or, for a node that is not there, leaves none). */
  readonly proposed: BrainNode | null;
}

/**
 * Each brain node an onboarding action names with every field now and after the action, for a
 * decider to compare: the console shows them side by side, and `kgw review show` their access
 * (accessChanges). A relation's ends are named as they are: the action changes neither.
 * Undefined when the details no longer match the action's schema, so that nothing is shown
 * as the action's that accepting would refuse.
 */
export async function actionNodeChanges(
  q: Queryable,
  tenant: { readonly id: string; readonly slug: string },
  action: OnboardingAction,
  details: Readonly<Record<string, unknown>>,
): Promise<NodeChange[] | undefined> {
  const parsed = ONBOARDING_ACTIONS[action].details.safeParse(details);
  if (!parsed.success) return undefined;
  const reach = await actionReach(q, tenant, action, parsed.data);
  return reach.nodes.map(({ written, node }) => {
    const current = node ?? null;
    let proposed = current;
    if (reach.after !== undefined) proposed = reach.after;
    else if (action === 'remove_node') proposed = null;
    else if (action === 'confirm_node' && current !== null) proposed = confirmedNode(current, parsed.data as ConfirmDetails);
    return { node: written, current, proposed };
  });
}

interface ConfirmDetails {
  readonly id: string;
  readonly verified: string;
  readonly review_by: string;
}

/** The instants confirm_node sets, as UTC instants whatever offset the details write. */
const confirmInstants = (d: ConfirmDetails): { verifiedAt: string; reviewBy: string } => ({
  verifiedAt: new Date(d.verified).toISOString(),
  reviewBy: new Date(d.review_by).toISOString(),
});

/** The node confirm_node leaves: verified and to be reviewed when the details say, its mark gone. */
const confirmedNode = (node: BrainNode, d: ConfirmDetails): BrainNode => ({ ...node, ...confirmInstants(d), mark: null });

/**
 * What accepting an action whose details match its schema changes, as the decision's line says
 * it (BrainDecision.applied): the decision stores no lines, so the console says an accepted
 * action's from its details, in the same words.
 */
export function actionLine(action: OnboardingAction, details: Readonly<Record<string, unknown>>): string {
  switch (action) {
    case 'add_node':
    case 'update_node':
      return `${action === 'add_node' ? 'create' : 'update'} brain node ${String(details['id'])}`;
    case 'remove_node':
      return `remove brain node ${String(details['id'])}`;
    case 'confirm_node': {
      const { verifiedAt, reviewBy } = confirmInstants(details as unknown as ConfirmDetails);
      return `confirm brain node ${String(details['id'])} (verified ${verifiedAt}, review by ${reviewBy})`;
    }
    case 'add_relation':
    case 'remove_relation':
      return `${action === 'add_relation' ? 'add' : 'remove'} brain relation ${relationText(details as unknown as { from: string; verb: string; to: string })}`;
  }
}

interface Approver {
  readonly id: string;
  readonly email: string;
  readonly name: string;
  /** What they see of the brain: an accepted action changes only nodes they see. */
  readonly access: TierViewer;
}

/** The deciding person: named, of the tenant, and a manager or admin of the brain. */
async function approver(tx: Transaction, tenantId: string, as: string | undefined): Promise<Approver> {
  if (as === undefined) throw validation('a decision on a brain inbox item needs --as EMAIL: the manager or admin of the brain who decides');
  const person = await findPrincipal(tx, tenantId, as);
  if (person?.kind !== 'person' || person.email === undefined) throw validation(`no person ${as} in the tenant`);
  const access = await principalAccess(tx, tenantId, person.id);
  if (access?.brainRole !== 'manager' && access?.brainRole !== 'admin') throw permissionDenied(`${as} is not a manager or admin of the brain (brain_role)`);
  return { id: person.id, email: person.email, name: person.name, access };
}

/** The pending item, locked; an item of another tenant is not found, as one that never existed. */
async function lockPending(tx: Transaction, tenant: TenantRef, id: string): Promise<Row> {
  const [row] = isUuid(id) ? await tx.query<Row>(`${SELECT} WHERE i.tenant_id = $1 AND i.id = $2 FOR UPDATE OF i`, [tenant.id, id]) : [];
  if (row === undefined) throw notFound(`no brain inbox item ${id} in tenant ${tenant.slug}`);
  if (row.status !== 'pending') throw conflict(`brain inbox item ${id} is already ${row.status}`);
  return row;
}

export interface BrainDecision {
  readonly id: string;
  readonly kind: BrainReviewItem['kind'];
  readonly status: 'accepted' | 'rejected';
  readonly action: OnboardingAction | null;
  /** What accepting changed in the brain, one line each; empty for an acknowledged item. */
  readonly applied: readonly string[];
  /** Where an accepted email draft was put (an imap:// location or an .eml file's path). */
  readonly deliveredTo: string | null;
  readonly decidedAt: Date;
  readonly decidedBy: string;
}

/** Where approved email drafts go: the deciding process's settings and the deciding command's environment. */
export interface DraftMail {
  readonly dataDir: string;
  /** KGW_MAIL_IMAP_URL, if set. */
  readonly defaultImapUrl: string | undefined;
  /** Where a mailbox's password_env is looked up: the environment of the `kgw review accept` command. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/**
 * Accepts an item. An onboarding action is applied to the brain's truth here, against the
 * graph as it is now (a node to update must exist, one to add must not, relation ends must
 * resolve), under the tenant's apply lock, and the difference is enqueued; an email draft is
 * put in the approver's own mailbox (never sent). Any failure throws and the transaction
 * leaves everything, the item included, as it was. (A draft put in a mailbox just before a
 * failed commit stays there: its Message-ID, from the approval id, marks a second one as the
 * same message.)
 */
export async function acceptBrainReview(
  db: Db,
  audit: AuditTrail,
  input: {
    readonly tenant: string;
    readonly id: string;
    readonly as?: string | undefined;
    /** A brain file (as `kgw brain import` reads) to apply with an observation, correction, proposal or work output. */
    readonly apply?: { readonly source: string; readonly fileName?: string | undefined } | undefined;
  },
  mail: DraftMail,
): Promise<BrainDecision> {
  // Read (and its syntax checked) before anything is locked.
  const file = input.apply === undefined ? undefined : readBrainFile(input.apply.source, input.apply.fileName ?? 'brain.yaml');
  return db.tx(async (tx) => {
    const tenant = await requireTenant(tx, input.tenant);
    const by = await approver(tx, tenant.id, input.as);
    await lockTenantSlug(tx, tenant.slug);
    const row = await lockPending(tx, tenant, input.id);
    if (file !== undefined && (row.kind === 'onboarding_action' || row.kind === 'email_draft')) {
      throw validation(`a brain file is applied with an observation, correction, proposal or work output, not with ${row.kind.replace('_', ' ')} ${row.id}`);
    }
    let applied: string[] = [];
    let deliveredTo: string | null = null;
    const steps = file === undefined ? [] : await planBrainFile(tx, tenant, file, 'inbox');
    // The tenant's whole graph is read only when the decision changes something in it.
    if ((row.action !== null && row.details !== null) || steps.length > 0) {
      const before = await orgGraph(tx, tenant.id);
      if (row.action !== null && row.details !== null) applied = await applyAction(tx, tenant, by, row.action, row.details);
      for (const step of steps) await step.write(tx);
      applied = [...applied, ...steps.map((step) => changeLine(step.change))];
      await enqueue(tx, orgGraphChanges(tenant.id, before, await orgGraph(tx, tenant.id)));
    }
    if (row.kind === 'email_draft') deliveredTo = await putDraft(tx, tenant.id, by, row, mail);
    const [decided] = await tx.query<{ decided_at: Date }>(
      "UPDATE brain_inbox SET status = 'accepted', decided_at = now(), decided_by = $3, delivered_to = $4 WHERE tenant_id = $1 AND id = $2 RETURNING decided_at",
      [tenant.id, row.id, by.id, deliveredTo],
    );
    await audit.about({ tenantId: tenant.id, principalId: by.id }).recordIn(tx, 'review.accept', [{ type: 'brain_inbox', id: row.id }], {
      kind: row.kind,
      action: row.action,
      applied: applied.length,
      ...(deliveredTo === null ? {} : { delivered: deliveredTo.startsWith('imap') ? 'imap' : 'file' }),
    });
    return {
      id: row.id,
      kind: row.kind,
      status: 'accepted',
      action: row.action,
      applied,
      deliveredTo,
      decidedAt: decided?.decided_at ?? new Date(),
      decidedBy: by.email,
    };
  });
}

export async function rejectBrainReview(
  db: Db,
  audit: AuditTrail,
  input: { readonly tenant: string; readonly id: string; readonly as?: string | undefined; readonly note?: string | undefined },
): Promise<BrainDecision> {
  return db.tx(async (tx) => {
    const tenant = await requireTenant(tx, input.tenant);
    const by = await approver(tx, tenant.id, input.as);
    const row = await lockPending(tx, tenant, input.id);
    const [decided] = await tx.query<{ decided_at: Date }>(
      "UPDATE brain_inbox SET status = 'rejected', decided_at = now(), decided_by = $3, decision_note = $4 WHERE tenant_id = $1 AND id = $2 RETURNING decided_at",
      [tenant.id, row.id, by.id, input.note ?? null],
    );
    await audit
      .about({ tenantId: tenant.id, principalId: by.id })
      .recordIn(tx, 'review.reject', [{ type: 'brain_inbox', id: row.id }], { kind: row.kind, action: row.action });
    return {
      id: row.id,
      kind: row.kind,
      status: 'rejected',
      action: row.action,
      applied: [],
      deliveredTo: null,
      decidedAt: decided?.decided_at ?? new Date(),
      decidedBy: by.email,
    };
  });
}

/** A change of an applied file as one line, as an action's are. */
const changeLine = (c: OrgChange): string => `${c.action} ${c.kind} ${c.name}${c.detail === undefined ? '' : ` (${c.detail})`}`;

/** The approver's mailbox settings (people[].mailbox), if they have one. */
export async function approverMailbox(q: Queryable, tenantId: string, personId: string): Promise<MailboxSettings | null> {
  const [row] = await q.query<{ mailbox: MailboxSettings | null }>('SELECT mailbox FROM principals WHERE tenant_id = $1 AND id = $2', [tenantId, personId]);
  return row?.mailbox ?? null;
}

/**
 * The environment variable an approver's mailbox password is read from, if they have a
 * mailbox: the CLI sends that variable, and nothing else of its environment, with the decision.
 */
export async function approverPasswordEnv(db: Db, input: { readonly tenant: string; readonly as?: string | undefined }): Promise<string | null> {
  if (input.as === undefined) return null;
  const tenant = await requireTenant(db, input.tenant);
  const person = await findPrincipal(db, tenant.id, input.as);
  if (person?.kind !== 'person') return null;
  return (await approverMailbox(db, tenant.id, person.id))?.password_env ?? null;
}

/** Composes the approved email as the approver's draft and puts it in their mailbox; where it went. */
async function putDraft(tx: Transaction, tenantId: string, by: Approver, row: Row, mail: DraftMail): Promise<string> {
  const mailbox = await approverMailbox(tx, tenantId, by.id);
  const message = await composeDraft({
    approvalId: row.id,
    from: { name: by.name, address: by.email },
    to: row.recipients,
    subject: row.title,
    bodyText: row.body,
    date: new Date(),
    // Without a mailbox the draft becomes an .eml file, which only this header marks as a draft.
    unsent: mailbox === null,
  });
  return deliverDraft({
    person: { email: by.email },
    mailbox,
    defaultImapUrl: mail.defaultImapUrl,
    env: mail.env,
    dataDir: mail.dataDir,
    approvalId: row.id,
    message,
  });
}

/**
 * Applies one action's details (valid against its schema, checked again here) to the truth, as
 * `by` decides it; the lines say what changed. What the action names must be there as it says,
 * now (a node to update must exist, one to add must not, relation ends must resolve), and `by`
 * must see every node it changes or joins, as it is and as it would be after: whoever proposed
 * it, an approver never changes, declassifies or hides what they cannot read themselves
 * (docs/decisions.md, "Brain approvals stay within the approver's tier").
 */
async function applyAction(
  tx: Transaction,
  tenant: { readonly id: string; readonly slug: string },
  by: Approver,
  action: OnboardingAction,
  raw: Record<string, unknown>,
): Promise<string[]> {
  const parsed = ONBOARDING_ACTIONS[action].details.safeParse(raw);
  if (!parsed.success) throw validation(`the ${action} details no longer match the action's schema`);
  const reach = await actionReach(tx, tenant, action, parsed.data);
  for (const named of reach.nodes) {
    if (action === 'add_node') {
      if (named.node !== undefined) throw conflict(`add_node: the node ${named.written} exists already`);
    } else if (named.node === undefined) {
      throw action === 'add_relation' || action === 'remove_relation'
        ? validation(`${action}: ${named.field}: no node ${JSON.stringify(named.written)}`)
        : notFound(`${action}: no node ${named.written}`);
    }
  }
  const [dangling] = reach.dangling;
  if (dangling !== undefined) throw validation(`${action}: ${dangling.field}: no ${dangling.missing} ${JSON.stringify(dangling.name)}`);
  for (const { node } of reach.nodes) {
    if (node !== undefined && !sees(by.access, node))
      throw permissionDenied(
        `${by.email} cannot see the node ${node.id} (access ${accessText(node)}) that this ${action} changes; it stays pending for a manager or admin of the brain who does`,
      );
  }
  if (reach.after !== undefined && !sees(by.access, reach.after))
    throw permissionDenied(
      `${by.email} would not see the node ${reach.after.id} at the access this ${action} gives it (${accessText(reach.after)}); it stays pending for a manager or admin of the brain who would`,
    );
  const [named] = reach.nodes;
  switch (action) {
    case 'add_node':
    case 'update_node': {
      // The keeper stays: an org file's node is still the org file's, and its next apply wins.
      await writeBrainNode(tx, tenant.id, reach.after!, named!.origin ?? 'inbox');
      return [actionLine(action, parsed.data)];
    }
    case 'remove_node': {
      await removeBrainNode(tx, tenant.id, named!.written);
      return [actionLine(action, parsed.data)];
    }
    case 'confirm_node': {
      await writeBrainNode(tx, tenant.id, confirmedNode(named!.node!, parsed.data as ConfirmDetails), named!.origin!);
      return [actionLine(action, parsed.data)];
    }
    case 'add_relation':
    case 'remove_relation': {
      const relation = reach.relation!;
      if (action === 'add_relation') {
        if (relation.exists) throw conflict(`add_relation: ${relation.written} exists already`);
        await writeBrainRelation(tx, tenant.id, relation.value, 'inbox');
        return [actionLine(action, parsed.data)];
      }
      if (!relation.exists) throw notFound(`remove_relation: no relation ${relation.written}`);
      await removeBrainRelation(tx, tenant.id, relation.value);
      return [actionLine(action, parsed.data)];
    }
  }
}
