import { importedFromWire } from '../../mcp/imported-from.ts';
import type { Capabilities } from '../access/context-decisions.ts';
import type { ListedVersions, VersionRead } from '../versions/views.ts';
import type { AttachmentEntry } from '../versions/queries.ts';
import { iso, isoOrNull } from '../../kernel/instants.ts';

/**
 * The Alignbase wire of what the versioned-content core answers: the field names, ISO strings
 * for instants, null for what is absent, and `can_*` for capabilities. The tools' own fields
 * are mapped in each tool; these are the ones several tools share.
 */

/** The `can_*` fields of list_knowledge, read_knowledge, list_skills and read_skill. */
export function capabilityWire(c: Capabilities) {
  return { can_read: c.read, can_draft: c.draft, can_edit: c.edit, can_publish: c.publish };
}

/** The version and freshness fields list_knowledge and list_skills give every item. */
export function listItemWire(item: ListedVersions) {
  const latestCreatedAt = iso(item.latestVersionCreatedAt);
  return {
    // The spec's current version is the latest saved one.
    current_version_id: item.latestVersionId,
    current_version: item.latestVersion,
    latest_version_id: item.latestVersionId,
    latest_version: item.latestVersion,
    published_version_id: item.publishedVersionId ?? null,
    published_version: item.publishedVersion ?? null,
    created_at: iso(item.createdAt),
    updated_at: iso(item.updatedAt),
    current_version_created_at: latestCreatedAt,
    latest_version_created_at: latestCreatedAt,
    published_version_created_at: isoOrNull(item.publishedVersionCreatedAt),
    review_by: item.reviewBy ?? null,
    expires_at: item.expiresAt ?? null,
    status: item.freshness,
    publication_status: item.publication,
    has_unpublished_changes: item.hasUnpublishedChanges,
    ...capabilityWire(item.capabilities),
  };
}

/** The fields read_knowledge and read_skill share, for the version read. */
export function readWire(read: VersionRead) {
  return {
    version_id: read.versionId,
    version: read.version,
    latest_version: read.latestVersion,
    published_version: read.publishedVersion ?? null,
    is_published_version: read.isPublishedVersion,
    has_unpublished_changes: read.hasUnpublishedChanges,
    created_at: iso(read.createdAt),
    updated_at: iso(read.updatedAt),
    version_created_at: iso(read.versionCreatedAt),
    review_by: read.reviewBy ?? null,
    expires_at: read.expiresAt ?? null,
    status: read.freshness,
    publication_status: read.publication,
    ...capabilityWire(read.capabilities),
    ...importedFromWire(read.importedFrom),
  };
}

/** A version's manifest as the read tools show it (without the digest), with its format. */
export function manifestWire(entries: readonly AttachmentEntry[]) {
  return entries.map((e) => ({ path: e.path, media_type: e.mediaType, size: e.size, digest_encoding: e.digestEncoding }));
}

/** The `attachment_format` of every manifest the read tools give. */
export const ATTACHMENT_FORMAT = 'v1' as const;
