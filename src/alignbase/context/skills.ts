import type { Provenance } from '../../kernel/imports/provenance.ts';
import type { BlobStore } from '../../../connectors/blob/contract.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import { canEdit } from '../access/context-decisions.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { isKgwError } from '../../kernel/errors.ts';
import { refuse } from '../versions/refusals.ts';
import type { Db, Queryable, Transaction } from '../../store/db.ts';
import { isUniqueViolation } from '../../store/db.ts';
import { sameManifest, storeFiles } from './manifests.ts';
import type { ListedVersions, VersionRead } from '../versions/views.ts';
import type { PublishResult } from '../versions/publish.ts';
import { ensure, ensureCanCreate, listReadable, resolveAccess } from '../versions/access.ts';
import { listedVersions } from '../versions/views.ts';
import { readResource } from '../versions/read.ts';
import { ownerOf, publishResource } from '../versions/publish.ts';
import { parseDates, parseId } from '../versions/selectors.ts';
import type { AttachmentInput } from './skill-package.ts';
import type { ParsedSkillMd } from './skill-md.ts';
import { PACKAGE_MAX_BYTES, PACKAGE_MAX_FILES, validatePackage } from './skill-package.ts';
import { parseSkillMd } from './skill-md.ts';
import type { NewVersion } from '../versions/versions.ts';
import type { AttachmentEntry, ResourceHead, SavedVersion } from '../versions/queries.ts';
import { createWithFirstVersion, latestVersionOf, publishVersion, saveVersion, setDates } from '../versions/versions.ts';

/**
 * Alignbase Skills: versioned packages of SKILL.md and attachment files. The resource name is
 * the frontmatter name, which is also the package's directory_name and unique in the tenant.
 */

type Services = { readonly db: Db; readonly blob: BlobStore };

/** A Skill; its name is also the package's directory name. */
export interface SkillItem extends ListedVersions {
  readonly id: string;
  readonly name: string;
  readonly description: string;
}

export async function listSkills(db: Db, caller: Caller): Promise<SkillItem[]> {
  const rows = await listReadable(db, caller, 'skill');
  return rows.map(({ head, role, latest, published }) => ({
    id: head.id,
    name: head.name,
    description: latest.description ?? '',
    ...listedVersions(head, latest, published, role, caller),
  }));
}

export interface SkillVersion extends VersionRead {
  readonly id: string;
  /** The version's frontmatter name (the package's directory name). */
  readonly name: string;
  readonly description: string;
  readonly skillMd: string;
  readonly attachments: readonly AttachmentEntry[];
}

/** `version`: the read selector as the caller gave it (latest, published or a number). */
export async function readSkill(services: Services, caller: Caller, input: { skillId: string; version?: unknown }, audit: AuditTrail): Promise<SkillVersion> {
  const { id, head, version, read } = await readResource(services.db, caller, 'skill', input.skillId, input.version, audit);
  return {
    id,
    name: version.name ?? head.name,
    description: version.description ?? '',
    ...read,
    skillMd: version.content,
    attachments: version.attachments,
  };
}

/** A taken name, in the words of the package error. */
function nameTaken(name: string) {
  return refuse.invalidPackage('skill', `a skill named "${name}" already exists`);
}

/**
 * Saves a package as the next version of a Skill whose row the caller locked, renaming the
 * Skill to the package's frontmatter name first (write_skill, an accepted draft).
 */
export async function saveSkillVersion(
  tx: Transaction,
  tenantId: string,
  head: ResourceHead,
  version: NewVersion & { readonly name: string },
): Promise<SavedVersion> {
  await renameTo(tx, tenantId, head, version.name);
  return saveVersion(tx, tenantId, head, version);
}

async function renameTo(tx: Transaction, tenantId: string, head: ResourceHead, name: string): Promise<void> {
  if (name === head.name) return;
  try {
    await tx.query('SAVEPOINT skill_rename');
    await tx.query('UPDATE context_resources SET name = $3, updated_at = clock_timestamp() WHERE tenant_id = $1 AND id = $2', [tenantId, head.id, name]);
    await tx.query('RELEASE SAVEPOINT skill_rename');
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    await tx.query('ROLLBACK TO SAVEPOINT skill_rename');
    throw nameTaken(name);
  }
}

export interface CreateSkillInput {
  readonly skillMd: string;
  readonly attachments?: readonly AttachmentInput[] | undefined;
  /** YYYY-MM-DD. */
  readonly reviewBy?: string | undefined;
  readonly expiresAt?: string | undefined;
  /** Set by an import only (kgw import mcp): where this version came from. */
  readonly provenance?: Provenance | undefined;
}

export interface CreatedSkill {
  readonly id: string;
  readonly name: string;
  readonly versionId: string;
  readonly version: number;
  readonly created: true;
  readonly published: boolean;
}

/** create_skill: Editor on All Skills; the bytes are stored before the version points at them. */
export async function createSkill(services: Services, caller: Caller, input: CreateSkillInput, audit: AuditTrail): Promise<CreatedSkill> {
  const pkg = validatePackage({ skillMd: input.skillMd, attachments: input.attachments ?? [] });
  const dates = parseDates(input);
  await ensureCanCreate(services.db, caller, 'skill');
  const manifest = await storeFiles(services.blob, pkg.files);
  return services.db.tx(async (tx) => {
    // Checked again in the transaction: a grant may have gone while the bytes were stored.
    await ensureCanCreate(tx, caller, 'skill');
    const created = await insertSkill(tx, caller.tenant.id, {
      pkg,
      manifest,
      createdBy: caller.principal.id,
      ...dates,
      publish: false,
      provenance: input.provenance,
    });
    await audit.recordIn(
      tx,
      'skill.create',
      [{ type: 'skill', id: created.id, before_version: null, after_version: 1, version_id: created.versionId, changed: true }],
      {
        owner_id: ownerOf(caller),
        package_files: manifest.length + 1,
        review_by: dates.reviewBy ?? null,
        expires_at: dates.expiresAt ?? null,
      },
    );
    return created;
  });
}

/** Creates a Skill with its first version; no checks of the caller (create_skill, the org file). */
export async function insertSkill(
  tx: Transaction,
  tenantId: string,
  input: {
    pkg: ParsedSkillMd & { skillMd: string };
    manifest: AttachmentEntry[];
    createdBy: string | undefined;
    reviewBy?: string | undefined;
    expiresAt?: string | undefined;
    publish: boolean;
    provenance?: Provenance | undefined;
  },
): Promise<CreatedSkill> {
  let created: Awaited<ReturnType<typeof createWithFirstVersion>>;
  try {
    created = await createWithFirstVersion(
      tx,
      { tenantId, type: 'skill', name: input.pkg.name, createdBy: input.createdBy, reviewBy: input.reviewBy, expiresAt: input.expiresAt },
      {
        content: input.pkg.skillMd,
        name: input.pkg.name,
        description: input.pkg.description,
        attachments: input.manifest,
        createdBy: input.createdBy,
        provenance: input.provenance,
      },
    );
  } catch (error) {
    if (isKgwError(error, 'conflict')) throw nameTaken(input.pkg.name);
    throw error;
  }
  const { head, saved } = created;
  const published = input.publish ? await publishVersion(tx, tenantId, head, saved.version) : false;
  return { id: head.id, name: input.pkg.name, versionId: saved.id, version: saved.version, created: true, published };
}

/** The kept files count toward the package limits with the new SKILL.md (write_skill without attachments, an accepted draft). */
export function checkKeptFiles(skillMd: string, files: readonly AttachmentEntry[]): void {
  const total = Buffer.byteLength(skillMd, 'utf8') + files.reduce((sum, f) => sum + f.size, 0);
  if (total > PACKAGE_MAX_BYTES)
    throw refuse.invalidPackage('skill', `total package content cannot exceed 3 MiB, got ${total} bytes with the kept attachments`);
  if (files.length + 1 > PACKAGE_MAX_FILES) throw refuse.invalidPackage('skill', `a package cannot include more than ${PACKAGE_MAX_FILES} files`);
}

export interface WriteSkillInput {
  readonly skillId: string;
  /** The latest version. */
  readonly expectedVersion: number;
  readonly skillMd: string;
  /** Omitted: the files are kept; []: cleared. */
  readonly attachments?: readonly AttachmentInput[] | undefined;
  readonly reviewBy?: string | undefined;
  readonly expiresAt?: string | undefined;
  /** Set by an import only (kgw import mcp): where this version came from. */
  readonly provenance?: Provenance | undefined;
}

export interface WriteSkillResult {
  readonly id: string;
  readonly name: string;
  readonly versionId: string;
  readonly version: number;
  readonly updated: boolean;
}

/**
 * write_skill: the full package (attachments omitted = kept, [] = cleared). A new version only
 * when SKILL.md or the files differ; changed dates alone answer the latest version with
 * updated: true; nothing changed answers updated: false.
 */
export async function writeSkill(services: Services, caller: Caller, input: WriteSkillInput, audit: AuditTrail): Promise<WriteSkillResult> {
  const id = parseId('skill', input.skillId);
  if (!Number.isSafeInteger(input.expectedVersion) || input.expectedVersion <= 0) throw refuse.invalidExpectedVersion(false);
  const skillMd = input.skillMd;
  const pkg =
    input.attachments === undefined ? { ...parseSkillMd(skillMd), skillMd, files: undefined } : validatePackage({ skillMd, attachments: input.attachments });
  // The caller, the dates and the version are checked before any bytes are stored, so a refused
  // write stores nothing, and again on the locked row, which decides.
  const check = async (q: Queryable, lock: boolean) => {
    const access = await resolveAccess(q, caller, 'skill', id, { lock });
    ensure(canEdit(access.role, caller.scopes));
    const dates = parseDates(input, access.head);
    if (input.expectedVersion !== access.head.latestVersion) throw refuse.versionConflict('skill', access.head.latestVersion);
    return { head: access.head, dates };
  };
  if (pkg.files !== undefined) await check(services.db, false);
  const manifest = pkg.files === undefined ? undefined : await storeFiles(services.blob, pkg.files);
  return services.db.tx(async (tx) => {
    const { head, dates } = await check(tx, true);
    const latest = await latestVersionOf(tx, caller.tenant.id, head);
    const files = manifest ?? latest.attachments;
    if (manifest === undefined) checkKeptFiles(skillMd, files);
    const changed = latest.content !== skillMd || !sameManifest(latest.attachments, files);
    const datesChanged = await setDates(tx, caller.tenant.id, head, dates);
    let saved = latest;
    if (changed) {
      saved = await saveSkillVersion(tx, caller.tenant.id, head, {
        content: skillMd,
        name: pkg.name,
        description: pkg.description,
        attachments: files,
        createdBy: caller.principal.id,
        provenance: input.provenance,
      });
    }
    if (changed || datesChanged) {
      await audit.recordIn(
        tx,
        'skill.write',
        [{ type: 'skill', id, before_version: head.latestVersion, after_version: saved.version, version_id: saved.id, changed }],
        {
          owner_id: ownerOf(caller),
          package_files: files.length + 1,
          review_by: dates.reviewBy ?? head.reviewBy ?? null,
          expires_at: dates.expiresAt ?? head.expiresAt ?? null,
        },
      );
    }
    return { id, name: saved.name ?? head.name, versionId: saved.id, version: saved.version, updated: changed || datesChanged };
  });
}

/** publish_skill: `version` is the publish selector as the caller gave it (latest or a number). */
export async function publishSkill(db: Db, caller: Caller, input: { skillId: string; version?: unknown }, audit: AuditTrail): Promise<PublishResult> {
  return publishResource(db, caller, 'skill', parseId('skill', input.skillId), input.version, audit);
}
