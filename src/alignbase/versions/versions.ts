import type { Provenance } from '../../kernel/imports/provenance.ts';
import { provenanceJson, recordImported } from '../../kernel/imports/provenance.ts';
import { createHash, randomUUID } from 'node:crypto';
import type { Queryable, Transaction } from '../../store/db.ts';
import type { ContextType } from '../access/context-roles.ts';
import { createContextResource } from '../access/resources.ts';
import { utcDay } from '../../kernel/instants.ts';
import { enqueue } from '../../kernel/outbox/outbox.ts';
import { contextSearchEntries } from '../search-source.ts';
import type { AttachmentEntry, HeadRow, ResourceHead, SavedVersion, VersionRow } from './queries.ts';
import { HEAD_COLUMNS, VERSION_COLUMNS, manifestJson, toHead, toVersion } from './queries.ts';

/**
 * Full-snapshot versions (migration 0008): the resource head with its latest and published
 * pointers and staleness dates, and immutable saved versions (their shapes are in queries.ts,
 * beside the rows they are read from). Nothing here is one dialect's:
 * Alignbase Knowledge, Skills, Memory and Artifacts (src/alignbase/context/) stand on it, each type's
 * service adding its own rules, and so can other versioned content.
 */

/** The active resource of `type`, or undefined; `lock` takes its row lock for a write (serialising writers). */
export async function getHead(
  q: Queryable,
  tenantId: string,
  type: ContextType,
  id: string,
  options: { lock?: boolean } = {},
): Promise<ResourceHead | undefined> {
  const [row] = await q.query<HeadRow>(
    `SELECT ${HEAD_COLUMNS} FROM context_resources r WHERE r.tenant_id = $1 AND r.type = $2 AND r.id = $3 AND r.status = 'active'${options.lock === true ? ' FOR UPDATE' : ''}`,
    [tenantId, type, id],
  );
  return row && toHead(row);
}

/**
 * Locks the resource `id` for a write whatever its type and status, as a reviewer's decision on
 * a draft does (an archived resource is refused by the decision, not missing).
 */
export async function lockHead(tx: Transaction, tenantId: string, id: string): Promise<ResourceHead | undefined> {
  const [row] = await tx.query<HeadRow>(`SELECT ${HEAD_COLUMNS} FROM context_resources r WHERE r.tenant_id = $1 AND r.id = $2 FOR UPDATE`, [tenantId, id]);
  return row && toHead(row);
}

export async function getVersion(q: Queryable, tenantId: string, resourceId: string, version: number): Promise<SavedVersion | undefined> {
  const [row] = await q.query<VersionRow>(
    `SELECT ${VERSION_COLUMNS} FROM context_versions v WHERE v.tenant_id = $1 AND v.resource_id = $2 AND v.version = $3`,
    [tenantId, resourceId, version],
  );
  return row && toVersion(row);
}

/** The latest saved version of a resource; every active resource has one, so its absence is a broken store. */
export async function latestVersionOf(q: Queryable, tenantId: string, head: Pick<ResourceHead, 'id' | 'type' | 'latestVersion'>): Promise<SavedVersion> {
  const version = await getVersion(q, tenantId, head.id, head.latestVersion);
  if (version === undefined) throw new Error(`${head.type} ${head.id} has no version ${head.latestVersion}`);
  return version;
}

/** Several versions at once, keyed `resourceId:version` (for lists and the session bundle). */
export async function getVersions(
  q: Queryable,
  tenantId: string,
  refs: readonly { resourceId: string; version: number }[],
  options: { content?: boolean } = {},
): Promise<Map<string, SavedVersion>> {
  const found = new Map<string, SavedVersion>();
  if (refs.length === 0) return found;
  const columns = options.content === false ? VERSION_COLUMNS.replace('v.content', "'' AS content") : VERSION_COLUMNS;
  const rows = await q.query<VersionRow>(
    `SELECT ${columns} FROM context_versions v
       JOIN unnest($2::uuid[], $3::int[]) AS want(resource_id, version) ON want.resource_id = v.resource_id AND want.version = v.version
      WHERE v.tenant_id = $1`,
    [tenantId, refs.map((r) => r.resourceId), refs.map((r) => r.version)],
  );
  for (const version of rows.map(toVersion)) found.set(versionKey(version.resourceId, version.version), version);
  return found;
}

/** What imported_items keeps as a version's content hash: its text and its files' manifest. */
export const importedContentHash = (content: string, attachments: readonly AttachmentEntry[]): string =>
  createHash('sha256').update(content, 'utf8').update('\0').update(manifestJson(attachments)).digest('hex');

export const versionKey = (resourceId: string, version: number): string => `${resourceId}:${version}`;

export interface NewVersion {
  readonly content: string;
  readonly authority?: 'informational' | 'must_follow' | undefined;
  readonly name?: string | undefined;
  readonly description?: string | undefined;
  readonly attachments?: readonly AttachmentEntry[] | undefined;
  readonly sourceTask?: string | undefined;
  readonly digest?: string | undefined;
  readonly createdBy: string | undefined;
  /** Where an import brought it from (kgw import mcp): saved on the version and recorded in imported_items. */
  readonly provenance?: Provenance | undefined;
}

/**
 * Saves the next version of a resource whose head the caller locked (or created) in this
 * transaction, and moves the latest pointer to it.
 */
export async function saveVersion(
  tx: Transaction,
  tenantId: string,
  head: Pick<ResourceHead, 'id' | 'latestVersion'>,
  input: NewVersion,
): Promise<SavedVersion> {
  const version = head.latestVersion + 1;
  const [row] = await tx.query<VersionRow>(
    `INSERT INTO context_versions (tenant_id, resource_id, version, id, content, authority, name, description, attachments, created_by, source_task, digest, provenance)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12, $13::jsonb)
     RETURNING resource_id, id, version, content, authority, name, description, attachments, source_task, digest, created_by, created_at, provenance`,
    [
      tenantId,
      head.id,
      version,
      randomUUID(),
      input.content,
      input.authority ?? null,
      input.name ?? null,
      input.description ?? null,
      manifestJson(input.attachments ?? []),
      input.createdBy ?? null,
      input.sourceTask ?? null,
      input.digest ?? null,
      input.provenance === undefined ? null : provenanceJson(input.provenance),
    ],
  );
  const [updated] = await tx.query<{ type: ContextType }>(
    'UPDATE context_resources SET latest_version = $3, updated_at = clock_timestamp() WHERE tenant_id = $1 AND id = $2 RETURNING type',
    [tenantId, head.id, version],
  );
  if (!row) throw new Error('INSERT … RETURNING returned no row');
  if (input.provenance !== undefined && updated !== undefined)
    await recordImported(tx, tenantId, updated.type, head.id, input.provenance, importedContentHash(input.content, input.attachments ?? []), {
      claim: version === 1,
    });
  // Search shows the new latest version once the outbox applies this row (same transaction).
  if (updated !== undefined) await enqueue(tx, contextSearchEntries(tenantId, updated.type, head.id));
  return toVersion(row);
}

/** Points the published version at `version`; false when it already was. */
export async function publishVersion(
  tx: Transaction,
  tenantId: string,
  head: Pick<ResourceHead, 'id' | 'publishedVersion'>,
  version: number,
): Promise<boolean> {
  if (head.publishedVersion === version) return false;
  const [updated] = await tx.query<{ type: ContextType }>(
    'UPDATE context_resources SET published_version = $3, published_at = clock_timestamp(), updated_at = clock_timestamp() WHERE tenant_id = $1 AND id = $2 RETURNING type',
    [tenantId, head.id, version],
  );
  // The published document moves to this version (and the latest one goes when it is the same).
  if (updated !== undefined) await enqueue(tx, contextSearchEntries(tenantId, updated.type, head.id));
  return true;
}

/** Sets both staleness dates (YYYY-MM-DD; null or undefined clears one). */
export async function writeDates(
  tx: Queryable,
  tenantId: string,
  resourceId: string,
  dates: { reviewBy?: string | null | undefined; expiresAt?: string | null | undefined },
): Promise<void> {
  await tx.query('UPDATE context_resources SET review_by = $3::date, expires_at = $4::date, updated_at = clock_timestamp() WHERE tenant_id = $1 AND id = $2', [
    tenantId,
    resourceId,
    dates.reviewBy ?? null,
    dates.expiresAt ?? null,
  ]);
}

/** Sets the staleness dates (undefined keeps a date); true when either changed. */
export async function setDates(
  tx: Queryable,
  tenantId: string,
  head: ResourceHead,
  dates: { reviewBy?: string | undefined; expiresAt?: string | undefined },
): Promise<boolean> {
  const reviewBy = dates.reviewBy ?? head.reviewBy;
  const expiresAt = dates.expiresAt ?? head.expiresAt;
  if (reviewBy === head.reviewBy && expiresAt === head.expiresAt) return false;
  await writeDates(tx, tenantId, head.id, { reviewBy, expiresAt });
  return true;
}

/**
 * Creates a resource and saves its first version, with its staleness dates when given: what
 * every create of a Knowledge, Skill, Memory or Artifact does (`id` when the caller chose it, as
 * the org file does). The new head is returned so the caller can publish the version.
 */
export async function createWithFirstVersion(
  tx: Transaction,
  resource: {
    tenantId: string;
    type: ContextType;
    name: string;
    id?: string | undefined;
    createdBy: string | undefined;
    reviewBy?: string | undefined;
    expiresAt?: string | undefined;
  },
  version: NewVersion,
): Promise<{ head: Pick<ResourceHead, 'id' | 'name' | 'latestVersion' | 'publishedVersion'>; saved: SavedVersion }> {
  const created = await createContextResource(tx, resource);
  const head = { id: created.id, name: created.name, latestVersion: 0, publishedVersion: undefined };
  if (resource.reviewBy !== undefined || resource.expiresAt !== undefined) await writeDates(tx, resource.tenantId, created.id, resource);
  return { head, saved: await saveVersion(tx, resource.tenantId, head, version) };
}

/** live or expired: a resource expires on its expires_at date (UTC) and stays expired. */
export function freshness(head: Pick<ResourceHead, 'expiresAt'>, now: Date = new Date()): 'live' | 'expired' {
  return head.expiresAt !== undefined && head.expiresAt <= utcDay(now) ? 'expired' : 'live';
}

/** unpublished, published, or unpublished_changes. */
export function publicationStatus(head: Pick<ResourceHead, 'latestVersion' | 'publishedVersion'>): 'unpublished' | 'published' | 'unpublished_changes' {
  if (head.publishedVersion === undefined) return 'unpublished';
  return head.publishedVersion === head.latestVersion ? 'published' : 'unpublished_changes';
}

/** The latest saved version differs from the published one, or nothing is published. */
export const hasUnpublishedChanges = (head: Pick<ResourceHead, 'latestVersion' | 'publishedVersion'>): boolean => head.publishedVersion !== head.latestVersion;
