import type { TenantRef } from '../../kernel/access/caller.ts';
import type { AuditResource } from '../../kernel/audit/audit-log.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { findPrincipal, isEmailReference, requireTenant } from '../../kernel/directory/directory.ts';
import { conflict, notFound, validation } from '../../kernel/errors.ts';
import type { Db, Queryable, Transaction } from '../../store/db.ts';
import { iso } from '../../kernel/instants.ts';
import type { VersionedType } from '../versions/selectors.ts';
import { isUuid } from '../versions/selectors.ts';
import { checkRationale } from './drafts.ts';
import type { Authority } from './knowledge.ts';
import { createKnowledge } from './knowledge.ts';
import { parseSkillMd } from './skill-md.ts';
import { checkKeptFiles, saveSkillVersion } from './skills.ts';
import { unifiedDiff } from '../../kernel/unified-diff.ts';
import type { AttachmentEntry, ResourceHead } from '../versions/queries.ts';
import { latestVersionOf, getVersions, lockHead, publishVersion, saveVersion, versionKey } from '../versions/versions.ts';
import type { DraftRecord, ProposalRecord, ReviewEntry, ReviewKind, ReviewRecord, ReviewStatus } from './queries.ts';
import { findReviewRecord, markDraftAccepted, markProposalAccepted, markRejected, selectOpenReviews } from './queries.ts';

/**
 * Human review of what agents submit: drafts (a proposed replacement of one Knowledge or
 * Skill, create_knowledge_draft / create_skill_draft) and proposals (a new Knowledge,
 * propose_knowledge). Nothing an agent submits becomes a version until a person accepts it
 * here (`kgw review`, later the console). Each decision runs in one transaction with the
 * resource row locked and is audited in it, through the surface trail it is given (the CLI's),
 * as the reviewer when one is named.
 */

const LABEL: Record<VersionedType, string> = { knowledge: 'Knowledge', skill: 'Skill' };

/**
 * The results are domain values (camelCase, instants as Dates, null for what is absent); the
 * admin operations write them as the JSON `kgw review --json` prints (review-json.ts).
 */

/** One open draft or proposal, as `kgw review list` shows it. */
export interface ReviewItem {
  readonly id: string;
  readonly kind: ReviewKind;
  readonly type: VersionedType;
  /** The Knowledge or Skill a draft replaces; null for a proposal. */
  readonly resourceId: string | null;
  /** The resource's title or name; a proposal's title. */
  readonly name: string;
  /** Drafts: the version the draft was written on, and the latest saved version now. */
  readonly baseVersion: number | null;
  readonly currentVersion: number | null;
  /** The resource has moved past the draft's base version. */
  readonly isStale: boolean;
  /** The person (an agent's owner), and the agent when an agent wrote it (as list_knowledge_drafts). */
  readonly authorName: string | null;
  readonly authorEmail: string | null;
  readonly agentName: string | null;
  readonly rationale: string | null;
  readonly createdAt: Date;
}

export interface PublicAttachment {
  readonly path: string;
  readonly mediaType: string;
  readonly size: number;
  readonly digestEncoding: 'text' | 'binary';
}

/** One draft or proposal in full, as `kgw review show` shows it. */
export interface ReviewDetail extends ReviewItem {
  readonly status: ReviewStatus;
  /** The proposed Knowledge markdown or SKILL.md. */
  readonly content: string;
  /** Knowledge: the authority a saved version gets (a draft keeps the latest version's). */
  readonly authority: Authority | null;
  /** The files a saved version gets: a proposal's own, or the latest version's (kept) for a draft. */
  readonly attachments: PublicAttachment[];
  /** Drafts: the version the draft was written on. */
  readonly base: { version: number; content: string } | null;
  /** Stale drafts: the latest saved version, which accepting would replace. */
  readonly latest: { version: number; content: string } | null;
  /** Drafts: the base version → the draft, as a unified diff ('' when they are equal). */
  readonly diff: string | null;
  /** Stale drafts: the latest version → the draft, what accepting would change. */
  readonly diffLatest: string | null;
  readonly decidedAt: Date | null;
  /** The reviewer's email; null while open, or when the CLI operator decided without --as. */
  readonly decidedBy: string | null;
  readonly decisionNote: string | null;
  /** Accepted drafts: the version the draft was saved as (or the equal latest one). */
  readonly resultVersion: number | null;
  /** Accepted proposals: the Knowledge created. */
  readonly resultResourceId: string | null;
}

export interface AcceptResult {
  readonly id: string;
  readonly kind: ReviewKind;
  readonly type: VersionedType;
  readonly resourceId: string;
  readonly name: string;
  readonly status: 'accepted';
  readonly baseVersion: number | null;
  /** The latest version before the decision; null for a proposal. */
  readonly previousVersion: number | null;
  readonly version: number;
  readonly versionId: string;
  /** A new version was saved (false: the draft equals the latest version, which is kept). */
  readonly saved: boolean;
  readonly published: boolean;
  /** A stale draft accepted with force. */
  readonly forced: boolean;
  readonly decidedAt: Date;
  readonly decidedBy: string | null;
}

export interface RejectResult {
  readonly id: string;
  readonly kind: ReviewKind;
  readonly type: VersionedType;
  readonly resourceId: string | null;
  readonly name: string;
  readonly status: 'rejected';
  readonly note: string | null;
  readonly decidedAt: Date;
  readonly decidedBy: string | null;
}

/** The file list a review shows: the manifest without the digests. */
const publicAttachments = (entries: readonly AttachmentEntry[]): PublicAttachment[] =>
  entries.map((e) => ({ path: e.path, mediaType: e.mediaType, size: e.size, digestEncoding: e.digestEncoding }));

function toItem(entry: ReviewEntry): ReviewItem {
  const draft = entry.kind === 'draft' ? entry : undefined;
  return {
    id: entry.id,
    kind: entry.kind,
    type: entry.type,
    // An accepted proposal's Knowledge is its result, not what it replaces.
    resourceId: draft?.resourceId ?? null,
    name: entry.name,
    baseVersion: draft?.baseVersion ?? null,
    currentVersion: draft?.currentVersion ?? null,
    isStale: draft !== undefined && draft.baseVersion < draft.currentVersion,
    authorName: entry.author.authorName ?? null,
    authorEmail: entry.author.authorEmail ?? null,
    agentName: entry.author.agentName ?? null,
    rationale: entry.rationale,
    createdAt: entry.createdAt,
  };
}

/** Every open draft (of an active resource) and proposal of the tenant, oldest first. */
export async function listReviews(db: Db, input: { tenant: string }): Promise<ReviewItem[]> {
  const tenant = await requireTenant(db, input.tenant);
  const entries = await selectOpenReviews(db, tenant.id);
  return entries.map(toItem);
}

const missing = (tenant: TenantRef, id: string) => notFound(`no draft or proposal "${id}" in tenant "${tenant.slug}"`);

/** The draft or proposal `id`, any status; `lock` takes its row lock (after the caller locked the resource). */
async function findDetail(q: Queryable, tenant: TenantRef, id: string, options: { lock?: boolean } = {}): Promise<ReviewRecord> {
  if (!isUuid(id)) throw missing(tenant, id);
  const found = await findReviewRecord(q, tenant.id, id.toLowerCase(), options);
  if (found === undefined) throw missing(tenant, id);
  return found;
}

/** One draft or proposal in full: for a draft also its base version and a diff against it. */
export async function showReview(db: Db, input: { tenant: string; id: string }): Promise<ReviewDetail> {
  const tenant = await requireTenant(db, input.tenant);
  const row = await findDetail(db, tenant, input.id);
  // Staleness is a question about open drafts only (an accepted one is behind its own result).
  const item = { ...toItem(row), ...(row.status === 'open' ? {} : { isStale: false }) };
  const common = {
    ...item,
    status: row.status,
    content: row.content,
    decidedAt: row.decidedAt,
    decidedBy: row.decidedByEmail,
    decisionNote: row.decisionNote,
  };
  if (row.kind === 'proposal') {
    return {
      ...common,
      resultVersion: null,
      resultResourceId: row.resultResourceId,
      authority: row.authority,
      attachments: publicAttachments(row.attachments),
      base: null,
      latest: null,
      diff: null,
      diffLatest: null,
    };
  }
  const { resourceId, baseVersion, currentVersion } = row;
  const both = await getVersions(db, tenant.id, [
    { resourceId, version: baseVersion },
    { resourceId, version: currentVersion },
  ]);
  const base = both.get(versionKey(resourceId, baseVersion));
  const latest = both.get(versionKey(resourceId, currentVersion));
  if (base === undefined || latest === undefined)
    throw new Error(`${row.type} ${resourceId} lacks version ${base === undefined ? baseVersion : currentVersion}`);
  return {
    ...common,
    resultVersion: row.resultVersion,
    resultResourceId: null,
    authority: row.type === 'knowledge' ? (latest.authority ?? 'informational') : null,
    attachments: publicAttachments(latest.attachments),
    base: { version: base.version, content: base.content },
    latest: item.isStale ? { version: latest.version, content: latest.content } : null,
    diff: unifiedDiff(base.content, row.content, { from: `${LABEL[row.type]} "${row.name}" version ${base.version}`, to: `draft ${row.id}` }),
    diffLatest: item.isStale
      ? unifiedDiff(latest.content, row.content, { from: `${LABEL[row.type]} "${row.name}" version ${latest.version}`, to: `draft ${row.id}` })
      : null,
  };
}

/** The reviewer named by `as` (a person of the tenant, by email); undefined: the CLI operator. */
async function reviewer(q: Queryable, tenant: TenantRef, as: string | undefined): Promise<{ id: string; email: string } | undefined> {
  if (as === undefined) return undefined;
  if (!isEmailReference(as)) throw validation(`the reviewer must be a person, named by email: "${as}"`);
  const person = await findPrincipal(q, tenant.id, as);
  if (person === undefined || person.email === undefined) throw notFound(`no person "${as}" in tenant "${tenant.slug}"`);
  return { id: person.id, email: person.email };
}

function ensureOpen(row: ReviewRecord): void {
  if (row.status !== 'open') {
    throw conflict(
      `${row.kind} ${row.id} was already ${row.status} at ${row.decidedAt === null ? 'an unknown time' : iso(row.decidedAt)}; only open drafts and proposals can be decided`,
      {
        status: row.status,
      },
    );
  }
}

/**
 * Locks the item for a decision. A draft's resource row is locked first (the order every
 * writer of the resource takes), then the draft row, read again under the lock: of two
 * decisions on one draft the second waits and then sees it decided.
 */
async function lockForDecision(tx: Transaction, tenant: TenantRef, id: string): Promise<{ row: ReviewRecord; head: ResourceHead | undefined }> {
  const first = await findDetail(tx, tenant, id);
  if (first.kind === 'proposal') return { row: await findDetail(tx, tenant, id, { lock: true }), head: undefined };
  const head = await lockHead(tx, tenant.id, first.resourceId);
  if (head === undefined) throw missing(tenant, id);
  return { row: await findDetail(tx, tenant, id, { lock: true }), head };
}

export interface AcceptInput {
  readonly tenant: string;
  readonly id: string;
  /** The reviewer's email; omitted: the CLI operator (decided_by stays NULL). */
  readonly as?: string | undefined;
  readonly publish?: boolean | undefined;
  /** Accept a stale draft (its base version is no longer the latest) anyway. */
  readonly force?: boolean | undefined;
}

/** An open draft or proposal (`R`) locked for a decision, with who decides. */
interface Decision<R extends ReviewRecord> {
  readonly tenant: TenantRef;
  /** The reviewer; undefined: the CLI operator. */
  readonly by: { id: string; email: string } | undefined;
  readonly row: R;
  /** A draft's resource, locked; undefined for a proposal. */
  readonly head: ResourceHead | undefined;
}

/**
 * Accepts an open draft or proposal (`kgw review accept`): locks it and hands it to
 * acceptProposal or acceptDraft, in one transaction.
 */
export async function acceptReview(db: Db, audit: AuditTrail, input: AcceptInput): Promise<AcceptResult> {
  return db.tx(async (tx) => {
    const tenant = await requireTenant(tx, input.tenant);
    const by = await reviewer(tx, tenant, input.as);
    const { row, head } = await lockForDecision(tx, tenant, input.id);
    ensureOpen(row);
    const publish = input.publish === true;
    return row.kind === 'proposal'
      ? acceptProposal(tx, audit, { tenant, by, row, head }, publish)
      : acceptDraft(tx, audit, { tenant, by, row, head }, { publish, force: input.force === true });
  });
}

/** A proposal creates its Knowledge (created by the proposing agent); `publish` publishes it. */
async function acceptProposal(tx: Transaction, audit: AuditTrail, { tenant, by, row }: Decision<ProposalRecord>, publish: boolean): Promise<AcceptResult> {
  const created = await createKnowledge(tx, tenant.id, {
    title: row.name,
    content: row.content,
    authority: row.authority,
    createdBy: row.authorId,
    publish,
    attachments: row.attachments,
  });
  const decidedAt = await markProposalAccepted(tx, tenant.id, row.id, by?.id ?? null, created.id);
  await audit
    .about({ tenantId: tenant.id, principalId: by?.id })
    .recordIn(
      tx,
      'review.accept',
      [{ type: 'knowledge', id: created.id, before_version: null, after_version: created.version, version_id: created.versionId, changed: true }],
      { kind: 'proposal', proposal_id: row.id, published: created.published },
    );
  return {
    id: row.id,
    kind: 'proposal',
    type: 'knowledge',
    resourceId: created.id,
    name: created.title,
    status: 'accepted',
    baseVersion: null,
    previousVersion: null,
    version: created.version,
    versionId: created.versionId,
    saved: true,
    published: created.published,
    forced: false,
    decidedAt,
    decidedBy: by?.email ?? null,
  };
}

/**
 * A Knowledge draft is saved as the next version with the latest version's authority and
 * files; a Skill draft as the next version with the latest version's files, its name and
 * description from the new SKILL.md (a new name renames the Skill, as write_skill does); a
 * draft equal to the latest version saves nothing. A stale draft is refused unless `force`.
 * `publish` publishes the resulting version.
 */
async function acceptDraft(
  tx: Transaction,
  audit: AuditTrail,
  { tenant, by, row, head }: Decision<DraftRecord>,
  options: { publish: boolean; force: boolean },
): Promise<AcceptResult> {
  const publish = options.publish;
  const type = row.type;
  if (head === undefined || head.status !== 'active' || head.latestVersion === 0) {
    throw conflict(`the ${LABEL[type]} "${row.name}" of draft ${row.id} is archived; it cannot be accepted`);
  }
  const baseVersion = row.baseVersion;
  const stale = baseVersion < head.latestVersion;
  if (stale && !options.force) {
    throw conflict(
      `draft ${row.id} is stale: it was written on version ${baseVersion} of the ${LABEL[type]} "${head.name}", which is now at version ${head.latestVersion}; accepting it would replace version ${head.latestVersion} (review it and accept with --force to do so)`,
      { base_version: baseVersion, latest_version: head.latestVersion },
    );
  }
  const latest = await latestVersionOf(tx, tenant.id, head);
  let saved = latest;
  let name = head.name;
  if (latest.content !== row.content) {
    if (type === 'knowledge') {
      saved = await saveVersion(tx, tenant.id, head, {
        content: row.content,
        authority: latest.authority ?? 'informational',
        attachments: latest.attachments,
        createdBy: row.authorId,
      });
    } else {
      const pkg = parseSkillMd(row.content);
      checkKeptFiles(row.content, latest.attachments);
      saved = await saveSkillVersion(tx, tenant.id, head, {
        content: row.content,
        name: pkg.name,
        description: pkg.description,
        attachments: latest.attachments,
        createdBy: row.authorId,
      });
      name = pkg.name;
    }
  }
  const changed = saved !== latest;
  const published = publish ? await publishVersion(tx, tenant.id, head, saved.version) : false;
  const decidedAt = await markDraftAccepted(tx, tenant.id, row.id, by?.id ?? null, saved.version);
  const resource: AuditResource = { type, id: head.id, before_version: head.latestVersion, after_version: saved.version, version_id: saved.id, changed };
  await audit
    .about({ tenantId: tenant.id, principalId: by?.id })
    .recordIn(tx, 'review.accept', [resource], { kind: 'draft', draft_id: row.id, base_version: baseVersion, published, forced: stale });
  return {
    id: row.id,
    kind: 'draft',
    type,
    resourceId: head.id,
    name,
    status: 'accepted',
    baseVersion,
    previousVersion: head.latestVersion,
    version: saved.version,
    versionId: saved.id,
    saved: changed,
    published,
    forced: stale,
    decidedAt,
    decidedBy: by?.email ?? null,
  };
}

export interface RejectInput {
  readonly tenant: string;
  readonly id: string;
  readonly as?: string | undefined;
  /** Why, for the record (at most 2,000 characters). */
  readonly note?: string | undefined;
}

/** Rejects an open draft or proposal with an optional note; nothing else changes. */
export async function rejectReview(db: Db, audit: AuditTrail, input: RejectInput): Promise<RejectResult> {
  const note = checkRationale(input.note, 'note') ?? null;
  return db.tx(async (tx) => {
    const tenant = await requireTenant(tx, input.tenant);
    const by = await reviewer(tx, tenant, input.as);
    const { row } = await lockForDecision(tx, tenant, input.id);
    ensureOpen(row);
    const decidedAt = await markRejected(tx, tenant.id, row.kind, row.id, by?.id ?? null, note);
    const item = toItem(row);
    await audit
      .about({ tenantId: tenant.id, principalId: by?.id })
      .recordIn(
        tx,
        'review.reject',
        row.kind === 'draft' ? [{ type: row.type, id: row.resourceId, version: row.baseVersion }] : [],
        row.kind === 'draft' ? { kind: 'draft', draft_id: row.id } : { kind: 'proposal', proposal_id: row.id },
      );
    return {
      id: row.id,
      kind: row.kind,
      type: row.type,
      resourceId: item.resourceId,
      name: row.name,
      status: 'rejected',
      note,
      decidedAt,
      decidedBy: by?.email ?? null,
    };
  });
}
