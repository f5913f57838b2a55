import type { Caller } from '../../kernel/access/caller.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { isKgwError, validation } from '../../kernel/errors.ts';
import type { Provenance } from '../../kernel/imports/provenance.ts';
import { checkProvenance, findImported, forgetImported } from '../../kernel/imports/provenance.ts';
import type { Services } from '../../kernel/services.ts';
import type { ContextType } from '../access/context-roles.ts';
import { getHead } from '../versions/versions.ts';
import { createDraft } from './drafts.ts';
import type { VersionedType } from '../versions/selectors.ts';
import { publishResource } from '../versions/publish.ts';
import { writeArtifact } from './artifacts.ts';
import type { Authority } from './knowledge.ts';
import { writeKnowledge } from './knowledge.ts';
import { createMemory, writeMemory } from './memory.ts';
import type { AttachmentInput } from './skill-package.ts';
import { parseSkillMd } from './skill-md.ts';
import { createSkill, writeSkill } from './skills.ts';

/**
 * Alignbase context from another endpoint, for the operator (`kgw import mcp --dialect
 * alignbase`): one Knowledge, Skill, Memory or Artifact with the versions the source let its
 * token read, oldest first, saved through the same code as write_knowledge, create_skill,
 * write_memory and write_artifact, as a person of the tenant whose roles those checks decide.
 * Each saved version keeps where it came from (its provenance: the source, the id, version,
 * author and time there), and imported_items maps the source item to the local one in the same
 * transaction, so a second run saves only the source's newer versions and an interrupted one
 * resumes after the last version it saved. A version equal to the local latest saves nothing,
 * as the tools' own rule is.
 */

/** Versions of one resource in one call; a source with more is read and sent in calls of this many. */
export const IMPORT_VERSIONS_MAX = 100;

export interface ImportedVersion {
  /** Its number at the source. */
  readonly version: number;
  /** Knowledge markdown, SKILL.md, Memory content or Artifact Markdown. */
  readonly content: string;
  readonly authority?: Authority | undefined;
  readonly sourceTask?: string | undefined;
  /** A Skill's or Artifact's files (omitted: none). */
  readonly attachments?: readonly AttachmentInput[] | undefined;
  /** Who wrote it there and when, as the source said. */
  readonly author?: string | undefined;
  readonly at?: string | undefined;
}

export interface ImportContextInput {
  readonly source: string;
  readonly type: ContextType;
  readonly sourceId: string;
  /** The title (Knowledge) or name (Memory, Artifact); a Skill's is its SKILL.md's. */
  readonly name: string;
  readonly versions: readonly ImportedVersion[];
  /** The source's published version (Knowledge, Skills). */
  readonly publishedVersion?: number | undefined;
  readonly reviewBy?: string | undefined;
  readonly expiresAt?: string | undefined;
  readonly dryRun: boolean;
}

export interface ImportContextResult {
  readonly resourceId: string | undefined;
  readonly outcome: 'created' | 'updated' | 'unchanged';
  /** Versions saved here by this call. */
  readonly saved: number;
  readonly published: boolean;
}

/** The local resource an earlier import made of this source item, still active; or, for a Skill, the one of its name. */
async function localResource(services: Services, caller: Caller, input: ImportContextInput): Promise<{ id: string; carried: number } | undefined> {
  const tenantId = caller.tenant.id;
  const mapped = await findImported(services.db, tenantId, input.type, input.source, input.sourceId);
  if (mapped !== undefined) {
    if ((await getHead(services.db, tenantId, input.type, mapped.localId)) !== undefined) return { id: mapped.localId, carried: mapped.sourceVersion };
    const [archived] = await services.db.query<{ id: string }>("SELECT id FROM context_resources WHERE tenant_id = $1 AND id = $2 AND status = 'archived'", [
      tenantId,
      mapped.localId,
    ]);
    if (archived !== undefined) throw validation(`it was imported before as ${mapped.localId}, which is archived here: restore it to import into it`);
    // Gone here: imported again as a new one.
    await forgetImported(services.db, tenantId, input.type, input.source, input.sourceId);
  }
  if (input.type !== 'skill') return undefined;
  // A Skill's name is unique in the tenant: one of that name is the one to update.
  const latest = input.versions.at(-1);
  const name = latest === undefined ? undefined : parseSkillMd(latest.content).name;
  const [named] = await services.db.query<{ id: string }>(
    "SELECT id FROM context_resources WHERE tenant_id = $1 AND type = 'skill' AND name = $2 AND status = 'active'",
    [tenantId, name],
  );
  return named === undefined ? undefined : { id: named.id, carried: 0 };
}

/** The local version an import saved of source version `sourceVersion`, if any. */
async function localVersionOf(services: Services, tenantId: string, resourceId: string, provenance: Provenance): Promise<number | undefined> {
  const [row] = await services.db.query<{ version: number }>(
    `SELECT version FROM context_versions WHERE tenant_id = $1 AND resource_id = $2
       AND provenance->>'source' = $3 AND provenance->>'source_id' = $4 AND (provenance->>'source_version')::int = $5
     ORDER BY version DESC LIMIT 1`,
    [tenantId, resourceId, provenance.source, provenance.sourceId, provenance.sourceVersion],
  );
  return row === undefined ? undefined : Number(row.version);
}

/** Saves one version as the next of `id` (or creates the resource), through the tools' own code. */
async function saveOne(
  services: Services,
  caller: Caller,
  input: ImportContextInput,
  id: string | undefined,
  version: ImportedVersion,
  provenance: Provenance,
  audit: AuditTrail,
): Promise<{ id: string; version: number; updated: boolean }> {
  const files = version.attachments ?? [];
  if (id === undefined) {
    const dates = { reviewBy: input.reviewBy, expiresAt: input.expiresAt };
    switch (input.type) {
      case 'knowledge': {
        const r = await writeKnowledge(
          services.db,
          caller,
          { expectedVersion: 0, title: input.name, content: version.content, authority: version.authority, ...dates, provenance },
          audit,
        );
        return { id: r.id, version: r.version, updated: true };
      }
      case 'memory': {
        const r = await createMemory(services.db, caller, { name: input.name, content: version.content, provenance }, audit);
        return { id: r.id, version: r.version, updated: true };
      }
      case 'skill': {
        const r = await createSkill(services, caller, { skillMd: version.content, attachments: files, ...dates, provenance }, audit);
        return { id: r.id, version: r.version, updated: true };
      }
      case 'artifact': {
        const r = await writeArtifact(
          services,
          caller,
          { expectedVersion: 0, name: input.name, markdown: version.content, attachments: files, sourceTask: version.sourceTask, provenance },
          audit,
        );
        return { id: r.id, version: r.version, updated: true };
      }
    }
  }
  const head = await getHead(services.db, caller.tenant.id, input.type, id);
  if (head === undefined) throw validation(`${id} is no longer here`);
  const expectedVersion = head.latestVersion;
  switch (input.type) {
    case 'knowledge': {
      const r = await writeKnowledge(
        services.db,
        caller,
        { knowledgeId: id, expectedVersion, content: version.content, authority: version.authority, provenance },
        audit,
      );
      return { id, version: r.version, updated: r.updated };
    }
    case 'memory': {
      const r = await writeMemory(services.db, caller, { memoryId: id, expectedVersion, content: version.content, provenance }, audit);
      return { id, version: r.version, updated: r.updated };
    }
    case 'skill': {
      const r = await writeSkill(services, caller, { skillId: id, expectedVersion, skillMd: version.content, attachments: files, provenance }, audit);
      return { id, version: r.version, updated: r.updated };
    }
    case 'artifact': {
      const r = await writeArtifact(
        services,
        caller,
        { artifactId: id, expectedVersion, markdown: version.content, attachments: files, sourceTask: version.sourceTask ?? '', provenance },
        audit,
      );
      return { id, version: r.version, updated: r.updated };
    }
  }
}

/** Attempts of one version against other writers of the same resource (another import of it, an agent). */
const SAVE_ATTEMPTS = 5;

/**
 * Saves one version unless another import carried it meanwhile. Another writer that saved a
 * version between this one's read of the head and its write makes the write a version conflict
 * (the tools' expected-version rule); the mapping is then read again, so a version another
 * import of the same item saved is not saved twice. 'theirs': another import created the item
 * while this one tried to; 'carried': another import saved this version.
 */
async function saveCarefully(
  services: Services,
  caller: Caller,
  input: ImportContextInput,
  id: string | undefined,
  version: ImportedVersion,
  provenance: Provenance,
  audit: AuditTrail,
): Promise<{ id: string; version: number; updated: boolean } | 'theirs' | 'carried'> {
  for (let attempt = 1; ; attempt += 1) {
    if (id !== undefined) {
      const mapped = await findImported(services.db, caller.tenant.id, input.type, input.source, input.sourceId);
      if (mapped?.localId === id && mapped.sourceVersion >= version.version) return 'carried';
    }
    try {
      return await saveOne(services, caller, input, id, version, provenance, audit);
    } catch (error) {
      if (!isKgwError(error)) throw error;
      if (id === undefined && (await localResource(services, caller, input)) !== undefined) return 'theirs';
      if (id === undefined || error.reason !== 'version_conflict' || attempt >= SAVE_ATTEMPTS) throw error;
    }
  }
}

/**
 * Imports one resource's versions (oldest first, each newer than the one before); with `dryRun`
 * says what it would do and writes nothing. A refusal (the person's role, a bound of the tools,
 * the source's provenance) is a KgwError in the tools' words; versions saved before it stay, and
 * the next run resumes after them.
 */
export async function importContextResource(services: Services, caller: Caller, input: ImportContextInput, audit: AuditTrail): Promise<ImportContextResult> {
  if (input.versions.length === 0 || input.versions.length > IMPORT_VERSIONS_MAX)
    throw validation(`versions must hold 1 to ${IMPORT_VERSIONS_MAX} versions, got ${input.versions.length}`);
  const provenances = input.versions.map((v, i) => {
    const before = input.versions[i - 1];
    if (before !== undefined && v.version <= before.version) throw validation('versions must be in the source’s order, each newer than the one before');
    return checkProvenance({ source: input.source, sourceId: input.sourceId, sourceVersion: v.version, author: v.author, at: v.at });
  });
  const local = await localResource(services, caller, input);
  const pending = input.versions.flatMap((version, i) => (version.version > (local?.carried ?? 0) ? [{ version, provenance: provenances[i]! }] : []));
  if (input.dryRun)
    return { resourceId: local?.id, outcome: local === undefined ? 'created' : pending.length > 0 ? 'updated' : 'unchanged', saved: 0, published: false };
  let id = local?.id;
  let saved = 0;
  const localOf = new Map<number, number>();
  for (const { version, provenance } of pending) {
    const written = await saveCarefully(services, caller, input, id, version, provenance, audit);
    // Another import of this item created it first (this one rolled back: the mapping was
    // theirs, or the Skill's name): the rest goes on theirs.
    if (written === 'theirs') return importContextResource(services, caller, input, audit);
    if (written === 'carried') continue;
    id = written.id;
    if (written.updated) saved += 1;
    localOf.set(version.version, written.version);
  }
  let published = false;
  if (id !== undefined && input.publishedVersion !== undefined && (input.type === 'knowledge' || input.type === 'skill')) {
    const sourcePublished = input.publishedVersion;
    const number =
      localOf.get(sourcePublished) ??
      (await localVersionOf(services, caller.tenant.id, id, { source: input.source, sourceId: input.sourceId, sourceVersion: sourcePublished }));
    if (number !== undefined) published = (await publishResource(services.db, caller, input.type satisfies VersionedType, id, number, audit)).published;
  }
  const outcome = local === undefined ? 'created' : saved > 0 || published ? 'updated' : 'unchanged';
  return { resourceId: id, outcome, saved, published };
}

export interface ImportDraftInput {
  readonly source: string;
  readonly type: VersionedType;
  /** The Knowledge's or Skill's id at the source (imported before, by importContextResource). */
  readonly sourceId: string;
  /** The draft's id at the source. */
  readonly draftId: string;
  /** The source version it was drafted on. */
  readonly baseVersion: number;
  readonly content: string;
  readonly rationale?: string | undefined;
  readonly author?: string | undefined;
  readonly at?: string | undefined;
  readonly dryRun: boolean;
}

export interface ImportDraftResult {
  readonly draftId: string | undefined;
  readonly outcome: 'created' | 'unchanged';
}

/**
 * An open draft of an imported Knowledge or Skill, proposed here again (create_knowledge_draft's
 * and create_skill_draft's own code) by the importing person, on the local version that holds
 * the source's base version, keeping the source's draft id, author and time as provenance. It
 * stays a proposal: a reviewer here accepts or rejects it. A draft carried before is left alone,
 * as is a decision made here since; two imports of it at once propose it once.
 */
export async function importContextDraft(services: Services, caller: Caller, input: ImportDraftInput, audit: AuditTrail): Promise<ImportDraftResult> {
  const tenantId = caller.tenant.id;
  const provenance = checkProvenance({ source: input.source, sourceId: input.draftId, sourceVersion: input.baseVersion, author: input.author, at: input.at });
  const kind = `${input.type}_draft`;
  const carried = await findImported(services.db, tenantId, kind, input.source, input.draftId);
  if (carried !== undefined) return { draftId: carried.localId, outcome: 'unchanged' };
  const resource = await findImported(services.db, tenantId, input.type, input.source, input.sourceId);
  if (resource === undefined) {
    // A dry run has not imported the resource either; the real run would, before its drafts.
    if (input.dryRun) return { draftId: undefined, outcome: 'created' };
    throw validation(`its ${input.type === 'skill' ? 'Skill' : 'Knowledge'} was not imported from this source`);
  }
  const base = await localVersionOf(services, tenantId, resource.localId, { source: input.source, sourceId: input.sourceId, sourceVersion: input.baseVersion });
  if (base === undefined) throw validation(`its base version ${input.baseVersion} was not carried here`);
  if (input.dryRun) return { draftId: undefined, outcome: 'created' };
  try {
    const draft = await createDraft(
      services.db,
      caller,
      input.type,
      { resourceId: resource.localId, baseVersion: base, content: input.content, rationale: input.rationale, provenance },
      audit,
    );
    return { draftId: draft.draftId, outcome: 'created' };
  } catch (error) {
    const other = isKgwError(error) ? await findImported(services.db, tenantId, kind, input.source, input.draftId) : undefined;
    if (other === undefined) throw error;
    return { draftId: other.localId, outcome: 'unchanged' };
  }
}
