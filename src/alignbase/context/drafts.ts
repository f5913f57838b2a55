import { randomUUID } from 'node:crypto';
import type { BlobStore } from '../../../connectors/blob/contract.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import { canDraft, canRead, canReadDraft } from '../access/context-decisions.ts';
import { effectiveContextRole } from '../access/grants.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import type { ImportedFromWire, Provenance } from '../../kernel/imports/provenance.ts';
import { provenanceJson, recordImported } from '../../kernel/imports/provenance.ts';
import { importedContentHash } from '../versions/versions.ts';
import { refuse } from '../versions/refusals.ts';
import type { Db } from '../../store/db.ts';
import { storeFiles } from './manifests.ts';
import type { VersionedType } from '../versions/selectors.ts';
import { ensure, resolveAccess } from '../versions/access.ts';
import { isUuid, parseId } from '../versions/selectors.ts';
import type { Authority } from './knowledge.ts';
import { checkKnowledgeContent, checkNewKnowledge } from './knowledge.ts';
import type { AttachmentInput } from './skill-package.ts';
import { validateAttachments } from './skill-package.ts';
import { parseSkillMd } from './skill-md.ts';
import { manifestJson } from '../versions/queries.ts';
import type { Authorship, OpenDraft } from './queries.ts';
import { findOpenDraft, selectOpenDrafts } from './queries.ts';

/**
 * Drafts propose a full replacement of one Knowledge or Skill (SKILL.md only) on top of a
 * saved version; proposals propose a new Knowledge. Neither creates a version nor is ever
 * delivered: a person accepts or rejects them (`kgw review`, src/alignbase/context/review.ts).
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
  /** Where an import brought it from (kgw import mcp): kept on the draft and mapped in imported_items. */
  readonly provenance?: Provenance | undefined;
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
      `INSERT INTO context_drafts (tenant_id, id, resource_id, resource_type, base_version, content, rationale, author_id, provenance)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        caller.tenant.id,
        draftId,
        id,
        type,
        baseVersion,
        input.content,
        rationale ?? null,
        caller.principal.id,
        input.provenance === undefined ? null : provenanceJson(input.provenance),
      ],
    );
    // Claimed: two imports of one source draft at once propose it once (the other rolls back).
    if (input.provenance !== undefined)
      await recordImported(tx, caller.tenant.id, `${type}_draft`, draftId, input.provenance, importedContentHash(input.content, []), { claim: true });
    await audit.recordIn(tx, `${type}.draft`, [{ type, id, version: baseVersion }], { draft_id: draftId });
    return { draftId, resourceId: id, baseVersion, created: true };
  });
}

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
  readonly importedFrom: ImportedFromWire | undefined;
}

function toDraftItem(draft: OpenDraft, caller: Caller): DraftItem {
  return {
    draftId: draft.id,
    resourceId: draft.resourceId,
    baseVersion: draft.baseVersion,
    currentVersion: draft.currentVersion,
    isStale: draft.baseVersion < draft.currentVersion,
    ...draft.author,
    rationale: draft.rationale,
    createdAt: draft.createdAt,
    createdByThisAgent: draft.authorId === caller.principal.id,
    importedFrom: draft.importedFrom,
  };
}

/** list_knowledge_drafts and list_skill_drafts: Viewer on the resource; open drafts, oldest first. */
export async function listDrafts(db: Db, caller: Caller, type: VersionedType, rawId: string): Promise<DraftItem[]> {
  const id = parseId(type, rawId);
  await resolveAccess(db, caller, type, id);
  const drafts = await selectOpenDrafts(db, caller.tenant.id, type, id);
  return drafts.map((draft) => toDraftItem(draft, caller));
}

/** read_knowledge_draft and read_skill_draft: the author, or a Publisher of the resource. */
export async function readDraft(db: Db, caller: Caller, type: VersionedType, draftId: string, audit: AuditTrail): Promise<DraftItem & { content: string }> {
  if (!isUuid(draftId)) throw refuse.invalidId('draft');
  const draft = await findOpenDraft(db, caller.tenant.id, type, draftId.toLowerCase());
  if (draft === undefined) throw refuse.notFound('draft');
  const role = await effectiveContextRole(db, caller.tenant.id, caller.principal.id, type, draft.resourceId);
  const isAuthor = draft.authorId === caller.principal.id;
  if (!canReadDraft(role, isAuthor)) {
    // Someone who cannot even read the resource learns nothing about its drafts.
    if (!canRead(role)) throw refuse.notFound('draft');
    throw refuse.forbidden();
  }
  audit.touch({ type, id: draft.resourceId, version: draft.baseVersion });
  return { ...toDraftItem(draft, caller), content: draft.content };
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
