import type { ImportedFromWire } from '../../kernel/imports/provenance.ts';
import { importedFrom } from '../../kernel/imports/provenance.ts';
import type { PrincipalKind } from '../../kernel/access/caller.ts';
import type { AuditEntry } from '../../kernel/audit/audit-log.ts';
import { instantOf } from '../../kernel/instants.ts';

/**
 * The rows of kbs, kb_files, kb_file_versions, team_settings, kb_contributions and (as the KB
 * audit tools read them) audit_events as the drivers return them, the columns that select
 * them, and their mappers to the domain: the one place where a bigint becomes a number, a
 * timestamp a Date, JSON text a value and a NULL undefined, for every reader of Knowledge Bases.
 */

export const KB_VISIBILITIES = ['private', 'team', 'public'] as const;
/** Who a KB is open to beyond its shares: see access.ts (visibleAccess). */
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

const dateOrUndefined = (value: Date | string | null): Date | undefined => (value === null ? undefined : instantOf(value));

/** Who created and last changed a KB or a file, and when: the columns both rows carry. */
const stamps = (row: { created_at: Date | string; created_by: string | null; updated_at: Date | string; updated_by: string | null }) => ({
  createdAt: instantOf(row.created_at),
  createdBy: row.created_by ?? undefined,
  updatedAt: instantOf(row.updated_at),
  updatedBy: row.updated_by ?? undefined,
});

export function toKb(row: KbRow): Kb {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    visibility: row.visibility,
    locationPolicy: row.location_policy,
    team: { id: row.team_id, slug: row.team_slug, name: row.team_name },
    ...stamps(row),
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
    ...stamps(row),
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
  /** Where an import brought it from (kgw import mcp), or undefined. */
  readonly importedFrom: ImportedFromWire | undefined;
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
  provenance: unknown;
}

/** Selects a FileVersionRow from `kb_file_versions v` LEFT JOINed with its author (VERSION_FROM). */
export const VERSION_COLUMNS =
  'v.file_id, v.version, v.id, v.path, v.sha256, v.size_bytes, v.media_type, v.operation, v.restored_from, v.author_id, a.kind AS author_kind, a.name AS author_name, v.created_at, v.provenance';
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
    createdAt: instantOf(row.created_at),
    importedFrom: importedFrom(row.provenance),
  };
}

export const AUDIT_QUERY_TEXT = ['record', 'omit'] as const;
/** Whether audit events keep the text of search queries (`record`) or leave it out (`omit`). */
export type AuditQueryText = (typeof AUDIT_QUERY_TEXT)[number];

/** What a team decides for its Knowledge Bases and its audit trail (settings.ts). */
export interface TeamSettings {
  readonly auditQueryText: AuditQueryText;
  /** How many days a write to a KB silences its writer's contribution note there. */
  readonly contributionNoteDays: number;
  /** The visibility create_kb gives a new KB of the team when none is asked for. */
  readonly defaultKbVisibility: KbVisibility;
}

/** A team's row of settings: the settings and when one last changed. */
export interface StoredTeamSettings {
  readonly settings: TeamSettings;
  readonly updatedAt: Date;
}

export interface TeamSettingsRow {
  audit_query_text: AuditQueryText;
  contribution_note_days: number;
  default_kb_visibility: KbVisibility;
  updated_at: Date | string;
}

/** Selects a TeamSettingsRow from `team_settings`. */
export const TEAM_SETTINGS_COLUMNS = 'audit_query_text, contribution_note_days, default_kb_visibility, updated_at';

export function toTeamSettings(row: TeamSettingsRow): StoredTeamSettings {
  return {
    settings: {
      auditQueryText: row.audit_query_text,
      contributionNoteDays: Number(row.contribution_note_days),
      defaultKbVisibility: row.default_kb_visibility,
    },
    updatedAt: instantOf(row.updated_at),
  };
}

/** A principal's row of kb_contributions for one KB: when it last wrote there. */
export interface ContributionRow {
  last_write_at: Date | string;
}

export const toLastWrite = (row: ContributionRow): Date => instantOf(row.last_write_at);

/** Who acted in an audit event: the principal, while it exists. */
export interface AuditActor {
  readonly id: string;
  readonly kind: PrincipalKind | undefined;
  readonly name: string | undefined;
}

/** One audit event as stored, before it is cut to what a reader may see (audit.ts). */
export interface AuditEventRecord {
  readonly id: string;
  readonly at: Date;
  /** `at` as the store's own text, exact to the microsecond: the position a cursor carries. */
  readonly atKey: string;
  readonly actor: AuditActor | undefined;
  readonly surface: string;
  readonly dialect: string | undefined;
  readonly tool: string | undefined;
  readonly action: string;
  readonly result: 'ok' | 'error';
  readonly errorCode: string | undefined;
  readonly requestId: string | undefined;
  readonly resources: readonly AuditEntry[];
  readonly details: Readonly<Record<string, unknown>>;
}

export interface AuditEventRow {
  id: string;
  at: Date | string;
  at_key: string;
  surface: string;
  principal_id: string | null;
  actor_kind: PrincipalKind | null;
  actor_name: string | null;
  dialect: string | null;
  tool: string | null;
  action: string;
  result: 'ok' | 'error';
  error_code: string | null;
  request_id: string | null;
  resources: AuditEntry[] | string;
  details: Record<string, unknown> | string;
}

/** Selects an AuditEventRow from `audit_events e` LEFT JOINed with its actor (AUDIT_EVENT_FROM). */
export const AUDIT_EVENT_COLUMNS = `e.id, e.at, e.at::text AS at_key, e.surface, e.principal_id, p.kind AS actor_kind, p.name AS actor_name, e.dialect, e.tool,
  e.action, e.result, e.error_code, e.request_id, e.resources, e.details`;
export const AUDIT_EVENT_FROM = 'audit_events e LEFT JOIN principals p ON p.tenant_id = e.tenant_id AND p.id = e.principal_id';

const json = <T>(value: T | string): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value);

export function toAuditEvent(row: AuditEventRow): AuditEventRecord {
  return {
    id: row.id,
    at: instantOf(row.at),
    atKey: row.at_key,
    actor: row.principal_id === null ? undefined : { id: row.principal_id, kind: row.actor_kind ?? undefined, name: row.actor_name ?? undefined },
    surface: row.surface,
    dialect: row.dialect ?? undefined,
    tool: row.tool ?? undefined,
    action: row.action,
    result: row.result,
    errorCode: row.error_code ?? undefined,
    requestId: row.request_id ?? undefined,
    resources: json(row.resources),
    details: json(row.details),
  };
}
