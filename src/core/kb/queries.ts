import type { PrincipalKind } from '../access/caller.ts';

/**
 * The rows of kbs, kb_files and kb_file_versions as the drivers return them, the columns that
 * select them, and their mappers to the domain: the one place where a bigint becomes a
 * number, a timestamp a Date and a NULL undefined, for every reader of Knowledge Bases.
 */

export const KB_VISIBILITIES = ['private', 'team', 'public'] as const;
/** Who a KB is open to beyond its shares: see core/kb/access.ts (visibleAccess). */
export type KbVisibility = (typeof KB_VISIBILITIES)[number];
export const LOCATION_POLICIES = ['visible', 'flag_only'] as const;
/** Whether search may show where a match is to those who cannot open it (used by search). */
export type LocationPolicy = (typeof LOCATION_POLICIES)[number];

export const FILE_KINDS = ['text', 'asset'] as const;
export type FileKind = (typeof FILE_KINDS)[number];
export const FILE_OPERATIONS = ['create', 'overwrite', 'append', 'patch', 'move', 'restore', 'upload', 'update', 'delete'] as const;
export type FileOperation = (typeof FILE_OPERATIONS)[number];

export interface Kb {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  readonly description: string;
  readonly visibility: KbVisibility;
  readonly locationPolicy: LocationPolicy;
  readonly team: { readonly id: string; readonly slug: string; readonly name: string };
  readonly createdAt: Date;
  readonly createdBy: string | undefined;
  readonly updatedAt: Date;
  readonly updatedBy: string | undefined;
  readonly archivedAt: Date | undefined;
}

export interface KbRow {
  id: string;
  slug: string;
  name: string;
  description: string;
  visibility: KbVisibility;
  location_policy: LocationPolicy;
  team_id: string;
  team_slug: string;
  team_name: string;
  created_at: Date | string;
  created_by: string | null;
  updated_at: Date | string;
  updated_by: string | null;
  archived_at: Date | string | null;
}

/** Selects a KbRow from `kbs k JOIN teams t` (KB_FROM). */
export const KB_COLUMNS =
  'k.id, k.slug, k.name, k.description, k.visibility, k.location_policy, k.team_id, t.slug AS team_slug, t.name AS team_name, k.created_at, k.created_by, k.updated_at, k.updated_by, k.archived_at';
export const KB_FROM = 'kbs k JOIN teams t ON t.tenant_id = k.tenant_id AND t.id = k.team_id';

const date = (value: Date | string): Date => (value instanceof Date ? value : new Date(value));
const dateOrUndefined = (value: Date | string | null): Date | undefined => (value === null ? undefined : date(value));

export function toKb(row: KbRow): Kb {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    visibility: row.visibility,
    locationPolicy: row.location_policy,
    team: { id: row.team_id, slug: row.team_slug, name: row.team_name },
    createdAt: date(row.created_at),
    createdBy: row.created_by ?? undefined,
    updatedAt: date(row.updated_at),
    updatedBy: row.updated_by ?? undefined,
    archivedAt: dateOrUndefined(row.archived_at),
  };
}

/** A file's head: where it is and what its latest version holds. */
export interface KbFile {
  readonly id: string;
  readonly kbId: string;
  readonly path: string;
  readonly version: number;
  readonly sha256: string;
  readonly sizeBytes: number;
  readonly mediaType: string;
  readonly kind: FileKind;
  /** The front-matter tags of the head's content (Markdown only; empty otherwise). */
  readonly tags: readonly string[];
  readonly createdAt: Date;
  readonly createdBy: string | undefined;
  readonly updatedAt: Date;
  readonly updatedBy: string | undefined;
  readonly deletedAt: Date | undefined;
}

export interface FileRow {
  id: string;
  kb_id: string;
  path: string;
  latest_version: number;
  sha256: string;
  size_bytes: string | number;
  media_type: string;
  kind: FileKind;
  tags: string[];
  created_at: Date | string;
  created_by: string | null;
  updated_at: Date | string;
  updated_by: string | null;
  deleted_at: Date | string | null;
}

/** Selects a FileRow from `kb_files f`. */
export const FILE_COLUMNS =
  'f.id, f.kb_id, f.path, f.latest_version, f.sha256, f.size_bytes, f.media_type, f.kind, f.tags, f.created_at, f.created_by, f.updated_at, f.updated_by, f.deleted_at';

export function toFile(row: FileRow): KbFile {
  return {
    id: row.id,
    kbId: row.kb_id,
    path: row.path,
    version: Number(row.latest_version),
    sha256: row.sha256,
    sizeBytes: Number(row.size_bytes),
    mediaType: row.media_type,
    kind: row.kind,
    tags: row.tags,
    createdAt: date(row.created_at),
    createdBy: row.created_by ?? undefined,
    updatedAt: date(row.updated_at),
    updatedBy: row.updated_by ?? undefined,
    deletedAt: dateOrUndefined(row.deleted_at),
  };
}

/** Who saved a version, as history shows it; undefined once the principal is gone. */
export interface VersionAuthor {
  readonly id: string;
  readonly kind: PrincipalKind;
  readonly name: string;
}

/** One retained version of a file. */
export interface KbFileVersion {
  readonly fileId: string;
  readonly version: number;
  readonly id: string;
  readonly path: string;
  readonly sha256: string;
  readonly sizeBytes: number;
  readonly mediaType: string;
  readonly operation: FileOperation;
  readonly restoredFrom: number | undefined;
  readonly author: VersionAuthor | undefined;
  readonly createdAt: Date;
}

export interface FileVersionRow {
  file_id: string;
  version: number;
  id: string;
  path: string;
  sha256: string;
  size_bytes: string | number;
  media_type: string;
  operation: FileOperation;
  restored_from: number | null;
  author_id: string | null;
  author_kind: PrincipalKind | null;
  author_name: string | null;
  created_at: Date | string;
}

/** Selects a FileVersionRow from `kb_file_versions v` LEFT JOINed with its author (VERSION_FROM). */
export const VERSION_COLUMNS =
  'v.file_id, v.version, v.id, v.path, v.sha256, v.size_bytes, v.media_type, v.operation, v.restored_from, v.author_id, a.kind AS author_kind, a.name AS author_name, v.created_at';
export const VERSION_FROM = 'kb_file_versions v LEFT JOIN principals a ON a.tenant_id = v.tenant_id AND a.id = v.author_id';

export function toFileVersion(row: FileVersionRow): KbFileVersion {
  return {
    fileId: row.file_id,
    version: Number(row.version),
    id: row.id,
    path: row.path,
    sha256: row.sha256,
    sizeBytes: Number(row.size_bytes),
    mediaType: row.media_type,
    operation: row.operation,
    restoredFrom: row.restored_from === null ? undefined : Number(row.restored_from),
    author:
      row.author_id === null || row.author_kind === null || row.author_name === null
        ? undefined
        : { id: row.author_id, kind: row.author_kind, name: row.author_name },
    createdAt: date(row.created_at),
  };
}
