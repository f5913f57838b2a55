import { randomUUID } from 'node:crypto';
import type { BlobStore } from '../../../connectors/blob/contract.ts';
import type { Caller } from '../access/caller.ts';
import { canDraft, canRead, canReadDraft } from '../access/context-decisions.ts';
import { effectiveContextRole } from '../access/grants.ts';
import type { AuditTrail } from '../audit/trail.ts';
import { refuse } from '../versions/refusals.ts';
import type { Db } from '../../store/db.ts';
import { storeFiles } from './attachments.ts';
import type { VersionedType } from '../versions/selectors.ts';
import { ensure, resolveAccess } from '../versions/access.ts';
import { isUuid, parseId } from '../versions/selectors.ts';
import type { Authority } from './knowledge.ts';
import { checkKnowledgeContent, checkNewKnowledge } from './knowledge.ts';
import type { AttachmentInput } from './skill-package.ts';
import { parseSkillMd, validateAttachments } from './skill-package.ts';
import { manifestJson } from '../versions/queries.ts';

/**
 * Drafts propose a full replacement of one Knowledge or Skill (SKILL.md only) on top of a
 * saved version; proposals propose a new Knowledge. Neither creates a version nor is ever
 * delivered: a person accepts or rejects them (`kgw review`, src/core/context/review.ts).
 */

export const RATIONALE_MAX = 2000;

/** A draft's rationale or a reviewer's note (`field`): at most RATIONALE_MAX characters; blank is none. */
export function checkRationale(rationale: string | undefined, field: 'rationale' | 'note' = 'rationale'): string | undefined {
  if (rationale === undefined) return undefined;
  if ([...rationale].length > RATIONALE_MAX) throw refuse.textTooLong(field, RATIONALE_MAX);
  return rationale.trim() === '' ? undefined : rationale;
}

export interface CreateDraftInput {
  readonly resourceId: string;
  readonly baseVersion: number;
  /** The full proposed Knowledge markdown or SKILL.md. */
  readonly content: string;
  readonly rationale?: string | undefined;
}

export interface CreatedDraft {
  readonly draftId: string;
  readonly resourceId: string;
  readonly baseVersion: number;
  readonly created: true;
}

/** create_knowledge_draft and create_skill_draft: Proposer and context.write on the resource. */
export async function createDraft(db: Db, caller: Caller, type: VersionedType, input: CreateDraftInput, audit: AuditTrail): Promise<CreatedDraft> {
  const id = parseId(type, input.resourceId);
  const baseVersion = input.baseVersion;
  if (!Number.isSafeInteger(baseVersion) || baseVersion <= 0) throw refuse.invalidBaseVersion();
  // A Skill draft is SKILL.md alone, checked like write_skill checks it.
  if (type === 'skill') parseSkillMd(input.content);
  else checkKnowledgeContent(input.content);
  const rationale = checkRationale(input.rationale);
  return db.tx(async (tx) => {
    const access = await resolveAccess(tx, caller, type, id);
    ensure(canDraft(access.role, caller.scopes));
    if (baseVersion > access.head.latestVersion) throw refuse.versionNotFound(type);
    const draftId = randomUUID();
    await tx.query(
      `INSERT INTO context_drafts (tenant_id, id, resource_id, resource_type, base_version, content, rationale, author_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [caller.tenant.id, draftId, id, type, baseVersion, input.content, rationale ?? null, caller.principal.id],
    );
    await audit.recordIn(tx, `${type}.draft`, [{ type, id, version: baseVersion }], { draft_id: draftId });
    return { draftId, resourceId: id, baseVersion, created: true };
  });
}

/** Who wrote a draft or proposal: the author (`a`) and, for an agent, the person it acts for (`o`). */
export interface AuthorColumns {
  author_kind: 'person' | 'agent';
  author_name: string;
  author_email: string | null;
  owner_name: string | null;
  owner_email: string | null;
}

export const AUTHOR_COLUMNS = 'a.kind AS author_kind, a.name AS author_name, a.email AS author_email, o.name AS owner_name, o.email AS owner_email';

/** The joins AUTHOR_COLUMNS reads, for the draft or proposal table aliased `alias`. */
export const authorJoins = (alias: string): string => `
    JOIN principals a ON a.tenant_id = ${alias}.tenant_id AND a.id = ${alias}.author_id
    LEFT JOIN principals o ON o.tenant_id = a.tenant_id AND o.id = a.owner_id`;

/** Who wrote a draft or proposal: the person (an agent's owner), and the agent when an agent did. */
export interface Authorship {
  readonly authorName: string | undefined;
  readonly authorEmail: string | undefined;
  readonly agentName: string | undefined;
}

export function authorship(row: AuthorColumns): Authorship {
  const byAgent = row.author_kind === 'agent';
  return {
    authorName: (byAgent ? row.owner_name : row.author_name) ?? undefined,
    authorEmail: (byAgent ? row.owner_email : row.author_email) ?? undefined,
    agentName: byAgent ? row.author_name : undefined,
  };
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
  created_at: Date;
}

const DRAFT_SELECT = `
  SELECT d.id, d.resource_id, d.resource_type, d.base_version, r.latest_version, d.content, d.rationale, d.author_id, d.created_at,
         ${AUTHOR_COLUMNS}
    FROM context_drafts d
    JOIN context_resources r ON r.tenant_id = d.tenant_id AND r.id = d.resource_id AND r.status = 'active'${authorJoins('d')}
   WHERE d.tenant_id = $1 AND d.status = 'open'`;

/** An open draft as the draft lists show it: who wrote it (the person, and the agent when an agent did). */
export interface DraftItem extends Authorship {
  readonly draftId: string;
  readonly resourceId: string;
  readonly baseVersion: number;
  /** The resource's latest saved version now. */
  readonly currentVersion: number;
  /** The resource has moved past the draft's base version. */
  readonly isStale: boolean;
  readonly rationale: string | undefined;
  readonly createdAt: Date;
  readonly createdByThisAgent: boolean;
}

function toDraftItem(row: DraftRow, caller: Caller): DraftItem {
  const baseVersion = Number(row.base_version);
  const currentVersion = Number(row.latest_version);
  return {
    draftId: row.id,
    resourceId: row.resource_id,
    baseVersion,
    currentVersion,
    isStale: baseVersion < currentVersion,
    ...authorship(row),
    rationale: row.rationale ?? undefined,
    createdAt: new Date(row.created_at),
    createdByThisAgent: row.author_id === caller.principal.id,
  };
}

/** list_knowledge_drafts and list_skill_drafts: Viewer on the resource; open drafts, oldest first. */
export async function listDrafts(db: Db, caller: Caller, type: VersionedType, rawId: string): Promise<DraftItem[]> {
  const id = parseId(type, rawId);
  await resolveAccess(db, caller, type, id);
  const rows = await db.query<DraftRow>(`${DRAFT_SELECT} AND d.resource_id = $2 AND d.resource_type = $3 ORDER BY d.created_at, d.id`, [
    caller.tenant.id,
    id,
    type,
  ]);
  return rows.map((row) => toDraftItem(row, caller));
}

/** read_knowledge_draft and read_skill_draft: the author, or a Publisher of the resource. */
export async function readDraft(db: Db, caller: Caller, type: VersionedType, draftId: string, audit: AuditTrail): Promise<DraftItem & { content: string }> {
  if (!isUuid(draftId)) throw refuse.invalidId('draft');
  const [row] = await db.query<DraftRow>(`${DRAFT_SELECT} AND d.id = $2 AND d.resource_type = $3`, [caller.tenant.id, draftId.toLowerCase(), type]);
  if (row === undefined) throw refuse.notFound('draft');
  const role = await effectiveContextRole(db, caller.tenant.id, caller.principal.id, type, row.resource_id);
  const isAuthor = row.author_id === caller.principal.id;
  if (!canReadDraft(role, isAuthor)) {
    // Someone who cannot even read the resource learns nothing about its drafts.
    if (!canRead(role)) throw refuse.notFound('draft');
    throw refuse.forbidden();
  }
  audit.touch({ type, id: row.resource_id, version: Number(row.base_version) });
  return { ...toDraftItem(row, caller), content: row.content };
}

export interface ProposeKnowledgeInput {
  readonly title: string;
  readonly content: string;
  readonly rationale?: string | undefined;
  readonly authority?: Authority | undefined;
  readonly attachments?: readonly AttachmentInput[] | undefined;
}

/**
 * propose_knowledge: a new Knowledge for human review. "Draft access to Default" is Proposer
 * on All Knowledge (docs/alignbase.md); nothing is saved as Knowledge until a person accepts.
 */
export async function proposeKnowledge(
  services: { db: Db; blob: BlobStore },
  caller: Caller,
  input: ProposeKnowledgeInput,
  audit: AuditTrail,
): Promise<{ proposalId: string; title: string; status: 'open'; created: true }> {
  const title = checkNewKnowledge(input);
  const rationale = checkRationale(input.rationale);
  const files = validateAttachments(input.attachments ?? [], { package: 'attachments' });
  const typeRole = await effectiveContextRole(services.db, caller.tenant.id, caller.principal.id, 'knowledge', undefined);
  ensure(canDraft(typeRole, caller.scopes));
  const manifest = await storeFiles(services.blob, files);
  return services.db.tx(async (tx) => {
    const proposalId = randomUUID();
    await tx.query(
      `INSERT INTO context_proposals (tenant_id, id, title, content, rationale, authority, attachments, author_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)`,
      [caller.tenant.id, proposalId, title, input.content, rationale ?? null, input.authority ?? 'informational', manifestJson(manifest), caller.principal.id],
    );
    await audit.recordIn(tx, 'knowledge.propose', [], { proposal_id: proposalId, attachments: manifest.length });
    return { proposalId, title, status: 'open', created: true };
  });
}
