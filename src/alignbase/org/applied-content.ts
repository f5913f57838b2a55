import { createHash } from 'node:crypto';
import type { Queryable } from '../../store/db.ts';
import type { ResourceHead, SavedVersion } from '../versions/queries.ts';
import { getVersions, versionKey } from '../versions/versions.ts';

/**
 * What the org file last wrote as a Memory's, Knowledge's or Skill's content, or found already
 * there (org_applied_content, migrations 0012 and 0027): the SHA-256 of the file's content for
 * the resource and the version that held it. The file saves a new version only when its own
 * content differs from this, so applying an unchanged file leaves alone what agents wrote and
 * reviewers accepted since.
 */
export interface AppliedContent {
  readonly sha256: string;
  /** The version that held it then. */
  readonly version: number;
}

export type AppliedType = 'memory' | 'knowledge' | 'skill';

/** The SHA-256 (hex) of a text as UTF-8: of the content itself for a Memory, of a canonical JSON of what the file says otherwise. */
export const contentHash = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

interface AppliedRow {
  resource_id: string;
  content_sha256: string;
  version: number;
}

/** What the file last applied as the content of these resources, by resource id. */
export async function loadApplied(q: Queryable, tenantId: string, resourceIds: readonly string[]): Promise<Map<string, AppliedContent>> {
  const found = new Map<string, AppliedContent>();
  if (resourceIds.length === 0) return found;
  const rows = await q.query<AppliedRow>(
    'SELECT resource_id, content_sha256, version FROM org_applied_content WHERE tenant_id = $1 AND resource_id = ANY($2::uuid[])',
    [tenantId, resourceIds],
  );
  for (const row of rows) found.set(row.resource_id, { sha256: row.content_sha256, version: Number(row.version) });
  return found;
}

/** Records what the file applied as a resource's content, replacing what it recorded before. */
export async function remember(q: Queryable, tenantId: string, resource: { id: string; type: AppliedType }, applied: AppliedContent): Promise<void> {
  await q.query(
    `INSERT INTO org_applied_content (tenant_id, resource_id, resource_type, content_sha256, version) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (tenant_id, resource_id) DO UPDATE SET content_sha256 = EXCLUDED.content_sha256, version = EXCLUDED.version, applied_at = clock_timestamp()`,
    [tenantId, resource.id, resource.type, applied.sha256, applied.version],
  );
}

/**
 * What the file last applied to each of `heads`: the recorded content, or for a resource the
 * file wrote before it recorded anything, its own latest version there (hashed by `hashOf`, as
 * the file's content for the resource is), or nothing for a resource it never wrote.
 */
export async function appliedToHeads(
  q: Queryable,
  tenantId: string,
  heads: readonly ResourceHead[],
  hashOf: (version: SavedVersion) => string,
): Promise<Map<string, AppliedContent>> {
  const applied = await loadApplied(
    q,
    tenantId,
    heads.map((head) => head.id),
  );
  const unrecorded = heads.filter((head) => !applied.has(head.id));
  for (const [resourceId, version] of await lastWrittenByFile(
    q,
    tenantId,
    unrecorded.map((head) => head.id),
  )) {
    applied.set(resourceId, { sha256: hashOf(version), version: version.version });
  }
  return applied;
}

/**
 * The latest version of each resource that the org file itself saved (the only writer that
 * saves versions by no one), for resources it wrote before it recorded what it applied: the
 * baseline an unchanged file is compared with on its first apply after the upgrade, so that
 * even that apply keeps what reviewers accepted since.
 */
async function lastWrittenByFile(q: Queryable, tenantId: string, resourceIds: readonly string[]): Promise<Map<string, SavedVersion>> {
  const found = new Map<string, SavedVersion>();
  if (resourceIds.length === 0) return found;
  const rows = await q.query<{ resource_id: string; version: number }>(
    `SELECT DISTINCT ON (resource_id) resource_id, version FROM context_versions
      WHERE tenant_id = $1 AND resource_id = ANY($2::uuid[]) AND created_by IS NULL
      ORDER BY resource_id, version DESC`,
    [tenantId, resourceIds],
  );
  const refs = rows.map((row) => ({ resourceId: row.resource_id, version: Number(row.version) }));
  const versions = await getVersions(q, tenantId, refs);
  for (const ref of refs) {
    const version = versions.get(versionKey(ref.resourceId, ref.version));
    if (version !== undefined) found.set(ref.resourceId, version);
  }
  return found;
}

/**
 * Where the file stands with a resource it lists: `unchanged` when the file's content is the
 * one it last applied (nothing to write, whatever was saved since), otherwise `changed`, with
 * the version holding what it last applied, when known.
 */
export type FileStanding =
  { readonly unchanged: true; readonly applied: AppliedContent } | { readonly unchanged: false; readonly applied: AppliedContent | undefined };

export function standing(sha256: string, applied: AppliedContent | undefined): FileStanding {
  return applied !== undefined && applied.sha256 === sha256 ? { unchanged: true, applied } : { unchanged: false, applied };
}

/** The words of a change that replaces versions saved since the file last applied its content ("replaces version 3, written since the last apply"). */
export function replacesSince(applied: AppliedContent | undefined, latestVersion: number): string | undefined {
  if (applied === undefined || applied.version >= latestVersion) return undefined;
  const since = applied.version + 1 === latestVersion ? `version ${latestVersion}` : `versions ${applied.version + 1}–${latestVersion}`;
  return `replaces ${since}, written since the last apply`;
}
