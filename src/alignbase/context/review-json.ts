import type { AcceptResult, PublicAttachment, RejectResult, ReviewDetail, ReviewItem } from './review.ts';
import { iso, isoOrNull } from '../../kernel/instants.ts';

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
