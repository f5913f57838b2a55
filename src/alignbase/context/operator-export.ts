import type { BlobStore } from '../../../connectors/blob/contract.ts';
import { readBlobBytes } from '../../../connectors/blob/contract.ts';
import { requireTenant } from '../../kernel/directory/directory.ts';
import { notFound, validation } from '../../kernel/errors.ts';
import { isUuid } from '../../kernel/text.ts';
import type { Queryable } from '../../store/db.ts';
import type { AttachmentEntry, HeadRow, ResourceHead, VersionRow } from '../versions/queries.ts';
import { HEAD_COLUMNS, VERSION_COLUMNS, toHead, toVersion } from '../versions/queries.ts';
import { contentHash } from '../org/applied-content.ts';

/**
 * Alignbase's context for the operator (`kgw export`): every Knowledge, Skill, Memory and
 * Artifact of a tenant, archived ones too, with every version (who wrote it, when, its SHA-256
 * and files), the latest version's text, and who it is routed and granted to, by name. No
 * caller of the tenant, so no role applies; the operator names the tenant.
 */

/** Resources of one page of `operatorContext`, and the bound on it. */
export const OPERATOR_CONTEXT_PAGE_DEFAULT = 50;
export const OPERATOR_CONTEXT_PAGE_MAX = 200;

export interface OperatorContextVersion {
  readonly version: number;
  readonly sha256: string;
  readonly sizeBytes: number;
  readonly authority: string | undefined;
  readonly description: string | undefined;
  readonly attachments: readonly AttachmentEntry[];
  readonly sourceTask: string | undefined;
  readonly author: string | null;
  readonly createdAt: Date;
}

export interface OperatorContextResource extends Pick<
  ResourceHead,
  'id' | 'type' | 'name' | 'status' | 'latestVersion' | 'publishedVersion' | 'reviewBy' | 'expiresAt'
> {
  /** The latest version's text (a Skill's SKILL.md, an Artifact's Markdown); empty for a resource without a version. */
  readonly content: string;
  readonly versions: readonly OperatorContextVersion[];
  /** Agents by name, groups as `group:NAME`. */
  readonly routes: readonly string[];
  readonly grants: readonly { readonly to: string; readonly role: string }[];
}

/**
 * The resources of the tenant after id `after`, at most `limit` (1 to OPERATOR_CONTEXT_PAGE_MAX),
 * by id; `next` is the id to continue after, or undefined on the last page.
 */
export async function operatorContext(
  q: Queryable,
  input: { tenant: string; after?: string | undefined; limit: number },
): Promise<{ tenant: string; resources: OperatorContextResource[]; next: string | undefined }> {
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > OPERATOR_CONTEXT_PAGE_MAX)
    throw validation(`limit must be a whole number from 1 to ${OPERATOR_CONTEXT_PAGE_MAX}`);
  const tenant = await requireTenant(q, input.tenant);
  const after = input.after ?? '00000000-0000-0000-0000-000000000000';
  if (!isUuid(after)) throw validation('after must be a resource id');
  const rows = await q.query<HeadRow>(`SELECT ${HEAD_COLUMNS} FROM context_resources r WHERE r.tenant_id = $1 AND r.id > $2::uuid ORDER BY r.id LIMIT $3`, [
    tenant.id,
    after,
    input.limit + 1,
  ]);
  const heads = rows.slice(0, input.limit).map(toHead);
  const ids = heads.map((head) => head.id);
  const versions = await q.query<VersionRow & { author: string | null }>(
    `SELECT ${VERSION_COLUMNS}, COALESCE(p.email, p.name) AS author
       FROM context_versions v LEFT JOIN principals p ON p.tenant_id = v.tenant_id AND p.id = v.created_by
      WHERE v.tenant_id = $1 AND v.resource_id = ANY($2::uuid[]) ORDER BY v.resource_id, v.version`,
    [tenant.id, ids],
  );
  const routes = await q.query<{ resource_id: string; target: string }>(
    `SELECT t.resource_id, COALESCE(a.name, 'group:' || g.name) AS target
       FROM context_routes t
       LEFT JOIN principals a ON a.tenant_id = t.tenant_id AND a.id = t.agent_id
       LEFT JOIN groups g ON g.tenant_id = t.tenant_id AND g.id = t.group_id
      WHERE t.tenant_id = $1 AND t.resource_id = ANY($2::uuid[]) ORDER BY 2`,
    [tenant.id, ids],
  );
  const grants = await q.query<{ resource_id: string; target: string; role: string }>(
    `SELECT c.resource_id, COALESCE(p.email, p.name, 'group:' || g.name) AS target, c.role
       FROM context_grants c
       LEFT JOIN principals p ON p.tenant_id = c.tenant_id AND p.id = c.principal_id
       LEFT JOIN groups g ON g.tenant_id = c.tenant_id AND g.id = c.group_id
      WHERE c.tenant_id = $1 AND c.resource_id = ANY($2::uuid[]) ORDER BY 2`,
    [tenant.id, ids],
  );
  const versionsOf = Map.groupBy(versions, (row) => row.resource_id);
  const routesOf = Map.groupBy(routes, (row) => row.resource_id);
  const grantsOf = Map.groupBy(grants, (row) => row.resource_id);
  const resources = heads.map((head): OperatorContextResource => {
    const own = versionsOf.get(head.id) ?? [];
    const latest = own.find((row) => Number(row.version) === head.latestVersion);
    const { id, type, name, status, latestVersion, publishedVersion, reviewBy, expiresAt } = head;
    return {
      ...{ id, type, name, status, latestVersion, publishedVersion, reviewBy, expiresAt },
      content: latest?.content ?? '',
      versions: own.map((row) => {
        const version = toVersion(row);
        return {
          version: version.version,
          sha256: contentHash(version.content),
          sizeBytes: Buffer.byteLength(version.content, 'utf8'),
          authority: version.authority,
          description: version.description,
          attachments: version.attachments,
          sourceTask: version.sourceTask,
          author: row.author,
          createdAt: version.createdAt,
        };
      }),
      routes: (routesOf.get(head.id) ?? []).map((row) => row.target),
      grants: (grantsOf.get(head.id) ?? []).map((row) => ({ to: row.target, role: row.role })),
    };
  });
  return { tenant: tenant.slug, resources, next: rows.length > input.limit ? heads.at(-1)?.id : undefined };
}

/** The bytes of one file of a resource's version (a Skill's or Artifact's attachment), by its path. */
export async function operatorContextFile(
  q: Queryable,
  blob: BlobStore,
  input: { tenant: string; resourceId: string; version: number; path: string },
): Promise<{ sha256: string; bytes: Buffer }> {
  const tenant = await requireTenant(q, input.tenant);
  if (!isUuid(input.resourceId)) throw notFound(`no resource "${input.resourceId}"`);
  const [row] = await q.query<VersionRow>(
    `SELECT ${VERSION_COLUMNS} FROM context_versions v WHERE v.tenant_id = $1 AND v.resource_id = $2 AND v.version = $3`,
    [tenant.id, input.resourceId, input.version],
  );
  const entry = row === undefined ? undefined : toVersion(row).attachments.find((file) => file.path === input.path);
  if (entry === undefined) throw notFound(`no file "${input.path}" in version ${input.version} of resource ${input.resourceId}`);
  return { sha256: entry.sha256, bytes: await readBlobBytes(blob, entry.sha256) };
}
