import type { ImportedFromWire } from '../../kernel/imports/provenance.ts';
import { importedFrom } from '../../kernel/imports/provenance.ts';
import type { ContextType } from '../access/context-roles.ts';

/**
 * A resource head, a saved version and a manifest entry as the domain sees them; the rows of
 * context_resources and context_versions as the drivers return them, the columns that select
 * them, and their mappers to the domain: the one place where a count becomes a number, a
 * timestamp a Date and a jsonb manifest its entries, for every reader of versions.
 */

/** One file of a version's manifest; the bytes are in the blob store under `sha256`. */
export interface AttachmentEntry {
  readonly path: string;
  readonly mediaType: string;
  readonly size: number;
  readonly sha256: string;
  readonly digestEncoding: 'text' | 'binary';
}

export interface ResourceHead {
  readonly id: string;
  readonly type: ContextType;
  /** The title of a Knowledge, the name of a Skill, Memory or Artifact. */
  readonly name: string;
  readonly status: 'active' | 'archived';
  readonly latestVersion: number;
  readonly publishedVersion: number | undefined;
  /** YYYY-MM-DD. */
  readonly reviewBy: string | undefined;
  readonly expiresAt: string | undefined;
  readonly createdBy: string | undefined;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface SavedVersion {
  readonly resourceId: string;
  /** version_id. */
  readonly id: string;
  readonly version: number;
  readonly content: string;
  readonly authority: 'informational' | 'must_follow' | undefined;
  readonly name: string | undefined;
  readonly description: string | undefined;
  readonly attachments: readonly AttachmentEntry[];
  /** Artifacts: the task the package came from, and sha256:<hex> of the whole package. */
  readonly sourceTask: string | undefined;
  readonly digest: string | undefined;
  readonly createdBy: string | undefined;
  readonly createdAt: Date;
  /** Where an import brought it from (kgw import mcp), or undefined. */
  readonly importedFrom: ImportedFromWire | undefined;
}

/** A manifest entry as the attachments columns (jsonb) store it. */
export interface StoredAttachment {
  readonly path: string;
  readonly media_type: string;
  readonly size: number;
  readonly sha256: string;
  readonly digest_encoding: 'text' | 'binary';
}

export interface HeadRow {
  id: string;
  type: ContextType;
  name: string;
  status: 'active' | 'archived';
  latest_version: number;
  published_version: number | null;
  review_by: string | null;
  expires_at: string | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface VersionRow {
  resource_id: string;
  id: string;
  version: number;
  content: string;
  authority: 'informational' | 'must_follow' | null;
  name: string | null;
  description: string | null;
  attachments: StoredAttachment[] | string;
  source_task: string | null;
  digest: string | null;
  created_by: string | null;
  created_at: Date;
  provenance: unknown;
}

export const HEAD_COLUMNS =
  'r.id, r.type, r.name, r.status, r.latest_version, r.published_version, r.review_by::text AS review_by, r.expires_at::text AS expires_at, r.created_by, r.created_at, r.updated_at';
export const VERSION_COLUMNS =
  'v.resource_id, v.id, v.version, v.content, v.authority, v.name, v.description, v.attachments, v.source_task, v.digest, v.created_by, v.created_at, v.provenance';

export function toHead(row: HeadRow): ResourceHead {
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    status: row.status,
    latestVersion: Number(row.latest_version),
    publishedVersion: row.published_version === null ? undefined : Number(row.published_version),
    reviewBy: row.review_by ?? undefined,
    expiresAt: row.expires_at ?? undefined,
    createdBy: row.created_by ?? undefined,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

export function toVersion(row: VersionRow): SavedVersion {
  return {
    resourceId: row.resource_id,
    id: row.id,
    version: Number(row.version),
    content: row.content,
    authority: row.authority ?? undefined,
    name: row.name ?? undefined,
    description: row.description ?? undefined,
    attachments: parseManifest(row.attachments),
    sourceTask: row.source_task ?? undefined,
    digest: row.digest ?? undefined,
    createdBy: row.created_by ?? undefined,
    createdAt: new Date(row.created_at),
    importedFrom: importedFrom(row.provenance),
  };
}

/** A manifest column as the driver returns it: JSON text (PGlite), parsed JSON (pg), or null for none. */
export type ManifestColumn = StoredAttachment[] | string | null;

export function parseManifest(value: ManifestColumn): AttachmentEntry[] {
  const stored = value === null ? [] : typeof value === 'string' ? (JSON.parse(value) as StoredAttachment[]) : value;
  return stored.map((e) => ({ path: e.path, mediaType: e.media_type, size: e.size, sha256: e.sha256, digestEncoding: e.digest_encoding }));
}

/** A manifest as JSON text for an attachments column (the stored form keeps its original keys). */
export function manifestJson(entries: readonly AttachmentEntry[]): string {
  const stored: StoredAttachment[] = entries.map((e) => ({
    path: e.path,
    media_type: e.mediaType,
    size: e.size,
    sha256: e.sha256,
    digest_encoding: e.digestEncoding,
  }));
  return JSON.stringify(stored);
}
