import type { AcceptResult, PublicAttachment, RejectResult, ReviewDetail, ReviewItem } from '../alignbase/context/review.ts';
import type { BrainDecision, BrainReviewDetail, BrainReviewItem } from '../brain/review.ts';
import { iso, isoOrNull } from '../kernel/instants.ts';

/**
 * The review operations' results as JSON: what `kgw review --json` prints and what the admin
 * endpoint sends the CLI (snake_case, instants as ISO strings). The core answers domain values
 * (src/alignbase/context/review.ts); this is their wire.
 */

export interface ReviewItemJson {
  id: string;
  kind: ReviewItem['kind'];
  type: ReviewItem['type'];
  resource_id: string | null;
  name: string;
  base_version: number | null;
  current_version: number | null;
  is_stale: boolean;
  author_name: string | null;
  author_email: string | null;
  agent_name: string | null;
  rationale: string | null;
  created_at: string;
}

export interface ReviewDetailJson extends ReviewItemJson {
  status: ReviewDetail['status'];
  content: string;
  authority: ReviewDetail['authority'];
  attachments: { path: string; media_type: string; size: number; digest_encoding: 'text' | 'binary' }[];
  base: { version: number; content: string } | null;
  latest: { version: number; content: string } | null;
  diff: string | null;
  diff_latest: string | null;
  decided_at: string | null;
  decided_by: string | null;
  decision_note: string | null;
  result_version: number | null;
  result_resource_id: string | null;
}

export interface AcceptResultJson {
  id: string;
  kind: AcceptResult['kind'];
  type: AcceptResult['type'];
  resource_id: string;
  name: string;
  status: 'accepted';
  base_version: number | null;
  previous_version: number | null;
  version: number;
  version_id: string;
  saved: boolean;
  published: boolean;
  forced: boolean;
  decided_at: string;
  decided_by: string | null;
}

export interface RejectResultJson {
  id: string;
  kind: RejectResult['kind'];
  type: RejectResult['type'];
  resource_id: string | null;
  name: string;
  status: 'rejected';
  note: string | null;
  decided_at: string;
  decided_by: string | null;
}

export function reviewItemJson(i: ReviewItem): ReviewItemJson {
  return {
    id: i.id,
    kind: i.kind,
    type: i.type,
    resource_id: i.resourceId,
    name: i.name,
    base_version: i.baseVersion,
    current_version: i.currentVersion,
    is_stale: i.isStale,
    author_name: i.authorName,
    author_email: i.authorEmail,
    agent_name: i.agentName,
    rationale: i.rationale,
    created_at: iso(i.createdAt),
  };
}

const attachmentJson = (a: PublicAttachment) => ({ path: a.path, media_type: a.mediaType, size: a.size, digest_encoding: a.digestEncoding });

export function reviewDetailJson(d: ReviewDetail): ReviewDetailJson {
  return {
    ...reviewItemJson(d),
    status: d.status,
    content: d.content,
    decided_at: isoOrNull(d.decidedAt),
    decided_by: d.decidedBy,
    decision_note: d.decisionNote,
    result_version: d.resultVersion,
    result_resource_id: d.resultResourceId,
    authority: d.authority,
    attachments: d.attachments.map(attachmentJson),
    base: d.base,
    latest: d.latest,
    diff: d.diff,
    diff_latest: d.diffLatest,
  };
}

export function acceptResultJson(r: AcceptResult): AcceptResultJson {
  return {
    id: r.id,
    kind: r.kind,
    type: r.type,
    resource_id: r.resourceId,
    name: r.name,
    status: r.status,
    base_version: r.baseVersion,
    previous_version: r.previousVersion,
    version: r.version,
    version_id: r.versionId,
    saved: r.saved,
    published: r.published,
    forced: r.forced,
    decided_at: iso(r.decidedAt),
    decided_by: r.decidedBy,
  };
}

export function rejectResultJson(r: RejectResult): RejectResultJson {
  return {
    id: r.id,
    kind: r.kind,
    type: r.type,
    resource_id: r.resourceId,
    name: r.name,
    status: r.status,
    note: r.note,
    decided_at: iso(r.decidedAt),
    decided_by: r.decidedBy,
  };
}

// ---------------------------------------------------------------------------------------------
// The Company Brain inbox (src/brain/review.ts)

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
