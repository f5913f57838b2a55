import type { ImportedFromWire, Provenance as ImportProvenance } from '../../kernel/imports/provenance.ts';
import { createHash } from 'node:crypto';
import type { BlobStore } from '../../../connectors/blob/contract.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import { canWriteArtifact } from '../access/context-decisions.ts';
import type { ContextRole } from '../access/context-roles.ts';
import { isResourceName } from '../access/resources.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import { refuse } from '../versions/refusals.ts';
import type { Db, Queryable } from '../../store/db.ts';
import { sameManifest, storeFiles } from './manifests.ts';
import { ensure, ensureCanCreate, listReadable, resolveAccess } from '../versions/access.ts';
import { parseId, parsePublishSelector } from '../versions/selectors.ts';
import type { AttachmentInput } from './skill-package.ts';
import { validateAttachments } from './skill-package.ts';
import { SKILL_MD_MAX_BYTES } from './skill-md.ts';
import type { AttachmentEntry, ResourceHead, SavedVersion } from '../versions/queries.ts';
import { createWithFirstVersion, getVersion, latestVersionOf, saveVersion } from '../versions/versions.ts';

/**
 * Alignbase Artifacts: explicit inputs, deliverables and handoffs as versioned Markdown plus
 * files. Every save is an immutable full package version; no published selector, no routes,
 * no instruction authority. Files follow the Skill package rules (2 MiB a file, 3 MiB in all,
 * 500 files) and live in the blob store.
 */

/** sha256:<hex> of the Markdown and the manifest: equal packages have equal digests. */
export function packageDigest(markdown: string, manifest: readonly AttachmentEntry[]): string {
  const hash = createHash('sha256').update('markdown\n').update(createHash('sha256').update(markdown, 'utf8').digest('hex'));
  for (const entry of manifest) hash.update(`\n${entry.path}\0${entry.sha256}`);
  return `sha256:${hash.digest('hex')}`;
}

/** An exact version of an Artifact the caller may read (read_artifact, read_context_attachment, messages). */
export async function artifactVersion(
  q: Queryable,
  caller: Caller,
  id: string,
  selector: 'latest' | { exact: number },
): Promise<{ head: ResourceHead; role: ContextRole | undefined; version: SavedVersion }> {
  const access = await resolveAccess(q, caller, 'artifact', id);
  const number = selector === 'latest' ? access.head.latestVersion : selector.exact;
  const version = number > access.head.latestVersion ? undefined : await getVersion(q, caller.tenant.id, id, number);
  if (version === undefined) throw refuse.versionNotFound('artifact');
  return { ...access, version };
}

export interface ArtifactItem {
  readonly id: string;
  readonly name: string;
  /** The latest version (the spec's current version). */
  readonly version: number;
  readonly versionId: string;
  /** sha256:<hex> of the package; absent for a version saved without one. */
  readonly digest: string | undefined;
  readonly updatedAt: Date;
  readonly canEdit: boolean;
}

export async function listArtifacts(db: Db, caller: Caller): Promise<ArtifactItem[]> {
  return (await listReadable(db, caller, 'artifact')).map(({ head, role, latest }) => ({
    id: head.id,
    name: head.name,
    version: latest.version,
    versionId: latest.id,
    digest: latest.digest,
    updatedAt: head.updatedAt,
    canEdit: canWriteArtifact(role, caller.scopes),
  }));
}

/** Who saved a version: the agent, and the person it acts for. */
export interface Provenance {
  readonly agentName: string | undefined;
  readonly authorName: string | undefined;
  readonly authorEmail: string | undefined;
  readonly savedAt: Date;
}

async function provenance(q: Queryable, tenantId: string, version: SavedVersion): Promise<Provenance | undefined> {
  if (version.createdBy === undefined) return undefined;
  const [row] = await q.query<{ kind: 'person' | 'agent'; name: string; email: string | null; owner_name: string | null; owner_email: string | null }>(
    `SELECT p.kind, p.name, p.email, o.name AS owner_name, o.email AS owner_email
       FROM principals p LEFT JOIN principals o ON o.tenant_id = p.tenant_id AND o.id = p.owner_id
      WHERE p.tenant_id = $1 AND p.id = $2`,
    [tenantId, version.createdBy],
  );
  if (row === undefined) return undefined;
  const byAgent = row.kind === 'agent';
  return {
    agentName: byAgent ? row.name : undefined,
    authorName: (byAgent ? row.owner_name : row.name) ?? undefined,
    authorEmail: (byAgent ? row.owner_email : row.email) ?? undefined,
    savedAt: version.createdAt,
  };
}

export interface ArtifactVersion {
  readonly id: string;
  readonly name: string;
  readonly versionId: string;
  readonly version: number;
  readonly latestVersion: number;
  readonly markdown: string;
  readonly attachments: readonly AttachmentEntry[];
  readonly digest: string;
  readonly sourceTask: string | undefined;
  readonly provenance: Provenance | undefined;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly versionCreatedAt: Date;
  readonly canEdit: boolean;
  readonly importedFrom: ImportedFromWire | undefined;
}

/** `version`: latest or a number, as the caller gave it (Artifacts have no published selector). */
export async function readArtifact(db: Db, caller: Caller, input: { artifactId: string; version?: unknown }, audit: AuditTrail): Promise<ArtifactVersion> {
  const id = parseId('artifact', input.artifactId);
  const selector = parsePublishSelector(input.version);
  const { head, role, version } = await artifactVersion(db, caller, id, selector);
  audit.touch({ type: 'artifact', id, version: version.version, version_id: version.id });
  return {
    id,
    name: head.name,
    versionId: version.id,
    version: version.version,
    latestVersion: head.latestVersion,
    markdown: version.content,
    attachments: version.attachments,
    digest: version.digest ?? packageDigest(version.content, version.attachments),
    sourceTask: version.sourceTask,
    provenance: await provenance(db, caller.tenant.id, version),
    createdAt: head.createdAt,
    updatedAt: head.updatedAt,
    versionCreatedAt: version.createdAt,
    canEdit: canWriteArtifact(role, caller.scopes),
    importedFrom: version.importedFrom,
  };
}

export interface WriteArtifactInput {
  /** Omitted to create (expectedVersion 0). */
  readonly artifactId?: string | undefined;
  /** 0 to create, or the exact latest version to replace. */
  readonly expectedVersion: number;
  readonly name?: string | undefined;
  readonly markdown: string;
  /** Omitted: the files are kept; []: cleared. */
  readonly attachments?: readonly AttachmentInput[] | undefined;
  /** Omitted: kept; '': cleared. */
  readonly sourceTask?: string | undefined;
  /** Set by an import only (kgw import mcp): where this version came from. */
  readonly provenance?: ImportProvenance | undefined;
}

export interface WriteArtifactResult {
  readonly id: string;
  readonly name: string;
  readonly versionId: string;
  readonly version: number;
  readonly digest: string | undefined;
  readonly updated: boolean;
  readonly created: boolean;
}

/**
 * write_artifact: expectedVersion 0 creates (Artifact Create permission), the exact latest
 * version replaces the package (Editor). Omitted attachments keep the files, [] clears them;
 * sourceTask is kept when omitted and cleared by "". A package equal to the latest saves nothing.
 */
export async function writeArtifact(
  services: { db: Db; blob: BlobStore },
  caller: Caller,
  input: WriteArtifactInput,
  audit: AuditTrail,
): Promise<WriteArtifactResult> {
  const expected = input.expectedVersion;
  if (!Number.isSafeInteger(expected) || expected < 0) throw refuse.invalidExpectedVersion(true);
  if (expected === 0 && input.artifactId !== undefined) throw refuse.idOmitted('artifact');
  if (expected > 0 && input.artifactId === undefined) throw refuse.idRequired('artifact');
  const id = input.artifactId === undefined ? undefined : parseId('artifact', input.artifactId);
  const name = input.name?.trim();
  if (expected === 0 || input.name !== undefined) {
    if (name === undefined || name === '') throw refuse.nameRequired();
    if (!isResourceName(name)) throw refuse.nameTooLong();
  }
  if (expected === 0 && input.markdown === '') throw refuse.contentRequired('artifact');
  const markdownBytes = Buffer.byteLength(input.markdown, 'utf8');
  if (markdownBytes > SKILL_MD_MAX_BYTES) throw refuse.contentTooLarge('artifact', SKILL_MD_MAX_BYTES, 'markdown cannot exceed 1 MiB');
  const files =
    input.attachments === undefined
      ? undefined
      : validateAttachments(input.attachments, { package: 'artifact', counted: { label: 'the Markdown', bytes: markdownBytes } });
  const manifest = files === undefined ? undefined : await storeFiles(services.blob, files);
  return services.db.tx(async (tx) => {
    if (id === undefined) {
      await ensureCanCreate(tx, caller, 'artifact');
      const attachments = manifest ?? [];
      const { head, saved } = await createWithFirstVersion(
        tx,
        { tenantId: caller.tenant.id, type: 'artifact', name: name!, createdBy: caller.principal.id },
        {
          content: input.markdown,
          attachments,
          sourceTask: input.sourceTask === '' ? undefined : input.sourceTask,
          digest: packageDigest(input.markdown, attachments),
          createdBy: caller.principal.id,
          provenance: input.provenance,
        },
      );
      await audit.recordIn(
        tx,
        'artifact.create',
        [{ type: 'artifact', id: head.id, before_version: null, after_version: 1, version_id: saved.id, changed: true }],
        { files: attachments.length },
      );
      return { id: head.id, name: head.name, versionId: saved.id, version: 1, digest: saved.digest, updated: true, created: true };
    }
    const { head, role } = await resolveAccess(tx, caller, 'artifact', id, { lock: true });
    ensure(canWriteArtifact(role, caller.scopes));
    if (expected !== head.latestVersion) throw refuse.versionConflict('artifact', head.latestVersion);
    const latest = await latestVersionOf(tx, caller.tenant.id, head);
    const attachments = manifest ?? latest.attachments;
    if (manifest === undefined) {
      validateAttachments([], {
        package: 'artifact',
        counted: { label: 'the Markdown and kept files', bytes: markdownBytes + attachments.reduce((sum, f) => sum + f.size, 0) },
      });
    }
    const sourceTask = input.sourceTask === undefined ? latest.sourceTask : input.sourceTask === '' ? undefined : input.sourceTask;
    const renamed = name !== undefined && name !== head.name;
    const changed =
      renamed || latest.content !== input.markdown || !sameManifest(latest.attachments, attachments) || (latest.sourceTask ?? undefined) !== sourceTask;
    if (!changed) {
      return { id, name: head.name, versionId: latest.id, version: latest.version, digest: latest.digest, updated: false, created: false };
    }
    if (renamed) await tx.query('UPDATE context_resources SET name = $3 WHERE tenant_id = $1 AND id = $2', [caller.tenant.id, id, name]);
    const saved = await saveVersion(tx, caller.tenant.id, head, {
      content: input.markdown,
      attachments,
      sourceTask,
      digest: packageDigest(input.markdown, attachments),
      createdBy: caller.principal.id,
      provenance: input.provenance,
    });
    await audit.recordIn(
      tx,
      'artifact.write',
      [{ type: 'artifact', id, before_version: head.latestVersion, after_version: saved.version, version_id: saved.id, changed: true }],
      { files: attachments.length },
    );
    return { id, name: name ?? head.name, versionId: saved.id, version: saved.version, digest: saved.digest, updated: true, created: false };
  });
}
