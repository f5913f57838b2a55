import type { Queryable, Transaction } from '../../store/db.ts';
import type { ImportedFromWire } from '../../kernel/imports/provenance.ts';
import { importedFrom } from '../../kernel/imports/provenance.ts';
import type { ManifestColumn, AttachmentEntry } from '../versions/queries.ts';
import { parseManifest } from '../versions/queries.ts';
import type { VersionedType } from '../versions/selectors.ts';
import type { Authority } from './knowledge.ts';

/*
 * The rows of context_drafts and context_proposals as the drivers return them, the statements
 * that read them, and their mappers to the domain: the one place where a version becomes a
 * number, a timestamp a Date and a stored manifest its entries, for the draft tools
 * (drafts.ts) and the review (review.ts) alike.
 */

// ---------------------------------------------------------------------------------------------
// Authors

/** Who wrote a draft or proposal: the author (`a`) and, for an agent, the person it acts for (`o`). */
interface AuthorColumns {
  author_kind: 'person' | 'agent';
  author_name: string;
  author_email: string | null;
  owner_name: string | null;
  owner_email: string | null;
}

const AUTHOR_COLUMNS = 'a.kind AS author_kind, a.name AS author_name, a.email AS author_email, o.name AS owner_name, o.email AS owner_email';

/** The joins AUTHOR_COLUMNS reads, for the draft or proposal table aliased `alias`. */
const authorJoins = (alias: string): string => `
    JOIN principals a ON a.tenant_id = ${alias}.tenant_id AND a.id = ${alias}.author_id
    LEFT JOIN principals o ON o.tenant_id = a.tenant_id AND o.id = a.owner_id`;

/** Who wrote a draft or proposal: the person (an agent's owner), and the agent when an agent did. */
export interface Authorship {
  readonly authorName: string | undefined;
  readonly authorEmail: string | undefined;
  readonly agentName: string | undefined;
}

function toAuthorship(row: AuthorColumns): Authorship {
  const byAgent = row.author_kind === 'agent';
  return {
    authorName: (byAgent ? row.owner_name : row.author_name) ?? undefined,
    authorEmail: (byAgent ? row.owner_email : row.author_email) ?? undefined,
    agentName: byAgent ? row.author_name : undefined,
  };
}

// ---------------------------------------------------------------------------------------------
// Open drafts, as the draft tools read them

/** An open draft of an active resource. */
export interface OpenDraft {
  readonly id: string;
  readonly resourceId: string;
  readonly type: VersionedType;
  readonly baseVersion: number;
  /** The resource's latest saved version now. */
  readonly currentVersion: number;
  readonly content: string;
  readonly rationale: string | undefined;
  readonly authorId: string;
  readonly author: Authorship;
  readonly createdAt: Date;
  /** Where an import brought it from (migration 0029); undefined for a draft proposed here. */
  readonly importedFrom: ImportedFromWire | undefined;
}

interface DraftRow extends AuthorColumns {
  id: string;
  resource_id: string;
  resource_type: VersionedType;
  base_version: number;
  latest_version: number;
  content: string;
  rationale: string | null;
  author_id: string;
  created_at: Date | string;
  provenance: unknown;
}

const toOpenDraft = (row: DraftRow): OpenDraft => ({
  id: row.id,
  resourceId: row.resource_id,
  type: row.resource_type,
  baseVersion: Number(row.base_version),
  currentVersion: Number(row.latest_version),
  content: row.content,
  rationale: row.rationale ?? undefined,
  authorId: row.author_id,
  author: toAuthorship(row),
  createdAt: new Date(row.created_at),
  importedFrom: importedFrom(row.provenance),
});

const DRAFT_SELECT = `
  SELECT d.id, d.resource_id, d.resource_type, d.base_version, r.latest_version, d.content, d.rationale, d.author_id, d.created_at, d.provenance,
         ${AUTHOR_COLUMNS}
    FROM context_drafts d
    JOIN context_resources r ON r.tenant_id = d.tenant_id AND r.id = d.resource_id AND r.status = 'active'${authorJoins('d')}
   WHERE d.tenant_id = $1 AND d.status = 'open'`;

/** The open drafts of one resource, oldest first. */
export async function selectOpenDrafts(q: Queryable, tenantId: string, type: VersionedType, resourceId: string): Promise<OpenDraft[]> {
  const rows = await q.query<DraftRow>(`${DRAFT_SELECT} AND d.resource_id = $2 AND d.resource_type = $3 ORDER BY d.created_at, d.id`, [
    tenantId,
    resourceId,
    type,
  ]);
  return rows.map(toOpenDraft);
}

/** The open draft `draftId` (lower case) of a resource of `type`. */
export async function findOpenDraft(q: Queryable, tenantId: string, type: VersionedType, draftId: string): Promise<OpenDraft | undefined> {
  const [row] = await q.query<DraftRow>(`${DRAFT_SELECT} AND d.id = $2 AND d.resource_type = $3`, [tenantId, draftId, type]);
  return row === undefined ? undefined : toOpenDraft(row);
}

// ---------------------------------------------------------------------------------------------
// Drafts and proposals, as the review reads and decides them

export type ReviewKind = 'draft' | 'proposal';
export type ReviewStatus = 'open' | 'accepted' | 'rejected';

interface EntryFields {
  readonly id: string;
  readonly type: VersionedType;
  /** The resource's title or name; a proposal's title. */
  readonly name: string;
  readonly rationale: string | null;
  readonly author: Authorship;
  readonly createdAt: Date;
}

/** A draft as the review list shows it. */
export interface DraftEntry extends EntryFields {
  readonly kind: 'draft';
  /** The Knowledge or Skill the draft replaces. */
  readonly resourceId: string;
  /** The version the draft was written on, and the resource's latest saved version now. */
  readonly baseVersion: number;
  readonly currentVersion: number;
}

/** A proposal as the review list shows it. */
export interface ProposalEntry extends EntryFields {
  readonly kind: 'proposal';
}

export type ReviewEntry = DraftEntry | ProposalEntry;

interface DecisionFields {
  readonly status: ReviewStatus;
  /** The proposed Knowledge markdown or SKILL.md. */
  readonly content: string;
  readonly authorId: string;
  readonly decidedAt: Date | null;
  /** The reviewer's email; null while open, or when the CLI operator decided. */
  readonly decidedByEmail: string | null;
  readonly decisionNote: string | null;
}

/** A draft in full, any status. */
export interface DraftRecord extends DraftEntry, DecisionFields {
  /** Accepted drafts: the version the draft was saved as. */
  readonly resultVersion: number | null;
}

/** A proposal in full, any status. */
export interface ProposalRecord extends ProposalEntry, DecisionFields {
  /** The authority and the files the Knowledge gets. */
  readonly authority: Authority;
  readonly attachments: readonly AttachmentEntry[];
  /** Accepted proposals: the Knowledge created. */
  readonly resultResourceId: string | null;
}

export type ReviewRecord = DraftRecord | ProposalRecord;

interface EntryColumns extends AuthorColumns {
  id: string;
  type: VersionedType;
  name: string;
  rationale: string | null;
  created_at: Date | string;
}

interface DraftEntryRow extends EntryColumns {
  kind: 'draft';
  resource_id: string;
  base_version: number;
  current_version: number;
}

interface ProposalEntryRow extends EntryColumns {
  kind: 'proposal';
}

type EntryRow = DraftEntryRow | ProposalEntryRow;

interface DecisionColumns {
  status: ReviewStatus;
  content: string;
  author_id: string;
  decided_at: Date | string | null;
  decided_by_email: string | null;
  decision_note: string | null;
}

interface DraftRecordRow extends DraftEntryRow, DecisionColumns {
  result_version: number | null;
}

interface ProposalRecordRow extends ProposalEntryRow, DecisionColumns {
  /** The Knowledge an accepted proposal created. */
  resource_id: string | null;
  authority: Authority;
  attachments: ManifestColumn;
}

const entryFields = (row: EntryColumns): EntryFields => ({
  id: row.id,
  type: row.type,
  name: row.name,
  rationale: row.rationale,
  author: toAuthorship(row),
  createdAt: new Date(row.created_at),
});

const draftEntry = (row: DraftEntryRow): DraftEntry => ({
  ...entryFields(row),
  kind: 'draft',
  resourceId: row.resource_id,
  baseVersion: Number(row.base_version),
  currentVersion: Number(row.current_version),
});

const toEntry = (row: EntryRow): ReviewEntry => (row.kind === 'draft' ? draftEntry(row) : { ...entryFields(row), kind: 'proposal' });

const decisionFields = (row: DecisionColumns): DecisionFields => ({
  status: row.status,
  content: row.content,
  authorId: row.author_id,
  decidedAt: row.decided_at === null ? null : new Date(row.decided_at),
  decidedByEmail: row.decided_by_email,
  decisionNote: row.decision_note,
});

const toDraftRecord = (row: DraftRecordRow): DraftRecord => ({
  ...draftEntry(row),
  ...decisionFields(row),
  resultVersion: row.result_version === null ? null : Number(row.result_version),
});

const toProposalRecord = (row: ProposalRecordRow): ProposalRecord => ({
  ...entryFields(row),
  ...decisionFields(row),
  kind: 'proposal',
  authority: row.authority,
  attachments: parseManifest(row.attachments),
  resultResourceId: row.resource_id,
});

const LIST_SQL = `
  SELECT 'draft' AS kind, d.id, d.resource_type AS type, d.resource_id, r.name, d.base_version, r.latest_version AS current_version,
         d.rationale, d.created_at, ${AUTHOR_COLUMNS}
    FROM context_drafts d
    JOIN context_resources r ON r.tenant_id = d.tenant_id AND r.id = d.resource_id AND r.status = 'active'${authorJoins('d')}
   WHERE d.tenant_id = $1 AND d.status = 'open'
  UNION ALL
  SELECT 'proposal' AS kind, p.id, p.resource_type AS type, NULL::uuid AS resource_id, p.title AS name, NULL::integer AS base_version, NULL::integer AS current_version,
         p.rationale, p.created_at, ${AUTHOR_COLUMNS}
    FROM context_proposals p${authorJoins('p')}
   WHERE p.tenant_id = $1 AND p.status = 'open'
   ORDER BY created_at, id`;

const DRAFT_SQL = `
  SELECT 'draft' AS kind, d.id, d.resource_type AS type, d.resource_id, r.name, d.base_version, r.latest_version AS current_version,
         d.content, d.rationale, d.status, d.created_at, d.decided_at, d.decision_note, d.result_version, d.author_id,
         rv.email AS decided_by_email, ${AUTHOR_COLUMNS}
    FROM context_drafts d
    JOIN context_resources r ON r.tenant_id = d.tenant_id AND r.id = d.resource_id${authorJoins('d')}
    LEFT JOIN principals rv ON rv.tenant_id = d.tenant_id AND rv.id = d.decided_by
   WHERE d.tenant_id = $1 AND d.id = $2`;

const PROPOSAL_SQL = `
  SELECT 'proposal' AS kind, p.id, p.resource_type AS type, p.resource_id, p.title AS name,
         p.content, p.rationale, p.status, p.created_at, p.decided_at, p.decision_note, p.author_id,
         p.authority, p.attachments, rv.email AS decided_by_email, ${AUTHOR_COLUMNS}
    FROM context_proposals p${authorJoins('p')}
    LEFT JOIN principals rv ON rv.tenant_id = p.tenant_id AND rv.id = p.decided_by
   WHERE p.tenant_id = $1 AND p.id = $2`;

/** Every open draft (of an active resource) and proposal of the tenant, oldest first. */
export async function selectOpenReviews(q: Queryable, tenantId: string): Promise<ReviewEntry[]> {
  const rows = await q.query<EntryRow>(LIST_SQL, [tenantId]);
  return rows.map(toEntry);
}

/** The draft or proposal `id` (lower case), any status; `lock` takes its row lock. */
export async function findReviewRecord(q: Queryable, tenantId: string, id: string, options: { lock?: boolean } = {}): Promise<ReviewRecord | undefined> {
  const [draft] = await q.query<DraftRecordRow>(`${DRAFT_SQL}${options.lock === true ? ' FOR UPDATE OF d' : ''}`, [tenantId, id]);
  if (draft !== undefined) return toDraftRecord(draft);
  const [proposal] = await q.query<ProposalRecordRow>(`${PROPOSAL_SQL}${options.lock === true ? ' FOR UPDATE OF p' : ''}`, [tenantId, id]);
  return proposal === undefined ? undefined : toProposalRecord(proposal);
}

interface DecidedRow {
  decided_at: Date | string;
}

/** When the decision was recorded: the row an UPDATE … RETURNING decided_at answered. */
function decidedAt(rows: readonly DecidedRow[], kind: ReviewKind, id: string): Date {
  const [row] = rows;
  // The caller holds the row lock of an open item, so the UPDATE always finds it.
  if (row === undefined) throw new Error(`${kind} ${id} vanished while it was decided`);
  return new Date(row.decided_at);
}

/** Marks a proposal accepted as the Knowledge `resourceId`; when that was recorded. */
export async function markProposalAccepted(tx: Transaction, tenantId: string, id: string, decidedBy: string | null, resourceId: string): Promise<Date> {
  const rows = await tx.query<DecidedRow>(
    `UPDATE context_proposals SET status = 'accepted', decided_at = clock_timestamp(), decided_by = $3, resource_id = $4
        WHERE tenant_id = $1 AND id = $2 RETURNING decided_at`,
    [tenantId, id, decidedBy, resourceId],
  );
  return decidedAt(rows, 'proposal', id);
}

/** Marks a draft accepted as version `resultVersion`; when that was recorded. */
export async function markDraftAccepted(tx: Transaction, tenantId: string, id: string, decidedBy: string | null, resultVersion: number): Promise<Date> {
  const rows = await tx.query<DecidedRow>(
    `UPDATE context_drafts SET status = 'accepted', decided_at = clock_timestamp(), decided_by = $3, result_version = $4
      WHERE tenant_id = $1 AND id = $2 RETURNING decided_at`,
    [tenantId, id, decidedBy, resultVersion],
  );
  return decidedAt(rows, 'draft', id);
}

/** Marks a draft or proposal rejected with the reviewer's note; when that was recorded. */
export async function markRejected(
  tx: Transaction,
  tenantId: string,
  kind: ReviewKind,
  id: string,
  decidedBy: string | null,
  note: string | null,
): Promise<Date> {
  const table = kind === 'draft' ? 'context_drafts' : 'context_proposals';
  const rows = await tx.query<DecidedRow>(
    `UPDATE ${table} SET status = 'rejected', decided_at = clock_timestamp(), decided_by = $3, decision_note = $4 WHERE tenant_id = $1 AND id = $2 RETURNING decided_at`,
    [tenantId, id, decidedBy, note],
  );
  return decidedAt(rows, kind, id);
}
