import type { BrainDecision, BrainReviewDetail, BrainReviewItem } from './review.ts';
import { iso, isoOrNull } from '../kernel/instants.ts';

/**
 * The Company Brain inbox's review results as JSON (src/brain/review.ts): what `kgw review --json`
 * prints beside Alignbase's drafts and proposals and what the admin endpoint sends the CLI
 * (snake_case, instants as ISO strings).
 */

/**
 * A brain inbox item as `kgw review list --json` shows it beside drafts and proposals: kind
 * "email" for an email draft, "brain" for the rest, its inbox kind as type.
 */
export interface BrainItemJson {
  id: string;
  kind: 'brain' | 'email';
  type: BrainReviewItem['kind'];
  title: string;
  action: string | null;
  risk: string | null;
  status: BrainReviewItem['status'];
  author_name: string | null;
  author_email: string | null;
  created_at: string;
}

export interface BrainDetailJson extends BrainItemJson {
  body: string;
  related_node_ids: string[];
  /** An onboarding action's details as JSON text (their shape is the action's schema, not fixed here). */
  details: string | null;
  /**
   * Each brain node an onboarding action names, with its access now (null: no such node) and
   * after the action (null: removed); empty for other items.
   */
  access: { node: string; current: NodeTierJson | null; new: NodeTierJson | null }[];
  /** An email draft's addresses; its subject is the title and its text the body. */
  recipients: string[];
  /** Where an approved email draft was put: an imap:// location or an .eml file's path. */
  delivered_to: string | null;
  decided_at: string | null;
  decided_by: string | null;
  decision_note: string | null;
}

/** A node's access literal, with its department or project when the tier has one. */
export interface NodeTierJson {
  access: string;
  department?: string;
  project?: string;
}

export interface BrainDecisionJson {
  id: string;
  kind: 'brain' | 'email';
  type: BrainReviewItem['kind'];
  status: 'accepted' | 'rejected';
  action: string | null;
  applied: string[];
  delivered_to: string | null;
  decided_at: string;
  decided_by: string;
}

/** Which `--kind` of `kgw review list` an inbox item is listed under. */
export const reviewKind = (kind: BrainReviewItem['kind']): 'brain' | 'email' => (kind === 'email_draft' ? 'email' : 'brain');

export function brainItemJson(item: BrainReviewItem): BrainItemJson {
  return {
    id: item.id,
    kind: reviewKind(item.kind),
    type: item.kind,
    title: item.title,
    action: item.action,
    risk: item.risk,
    status: item.status,
    author_name: item.authorName,
    author_email: item.authorEmail,
    created_at: iso(item.createdAt),
  };
}

export function brainDetailJson(detail: BrainReviewDetail): BrainDetailJson {
  return {
    ...brainItemJson(detail),
    body: detail.body,
    related_node_ids: [...detail.relatedNodeIds],
    details: detail.details === null ? null : JSON.stringify(detail.details),
    access: detail.access.map((a) => ({ node: a.node, current: a.current === null ? null : { ...a.current }, new: a.new === null ? null : { ...a.new } })),
    recipients: [...detail.recipients],
    delivered_to: detail.deliveredTo,
    decided_at: isoOrNull(detail.decidedAt),
    decided_by: detail.decidedBy,
    decision_note: detail.decisionNote,
  };
}

export function brainDecisionJson(decision: BrainDecision): BrainDecisionJson {
  return {
    id: decision.id,
    kind: reviewKind(decision.kind),
    type: decision.kind,
    status: decision.status,
    action: decision.action,
    applied: [...decision.applied],
    delivered_to: decision.deliveredTo,
    decided_at: iso(decision.decidedAt),
    decided_by: decision.decidedBy,
  };
}
