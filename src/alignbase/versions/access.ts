import type { Caller } from '../../kernel/access/caller.ts';
import type { VersionSelector } from '../access/context-decisions.ts';
import { canCreate, canRead, canReadVersion } from '../access/context-decisions.ts';
import type { ContextRole, ContextType } from '../access/context-roles.ts';
import { contextRoleTable, effectiveContextRole } from '../access/grants.ts';
import { isRoutedTo } from '../access/routes.ts';
import { instantOf } from '../../kernel/instants.ts';
import type { Queryable } from '../../store/db.ts';
import { refuse } from './refusals.ts';
import type { VersionedType } from './selectors.ts';
import type { ResourceHead, SavedVersion } from './queries.ts';
import { getHead, getVersion } from './versions.ts';

/**
 * The caller's standing on versioned resources: which exist for the caller, with which role,
 * and which saved version a selector names for them. A resource the caller may not see is
 * refused as not found, so ids are not probed.
 */

/** The caller's standing on one resource. */
export interface Access {
  readonly head: ResourceHead;
  readonly role: ContextRole | undefined;
  /** An active Always route delivers it to the caller (only looked up when the role does not read). */
  readonly routed: boolean;
}

/**
 * The resource and the caller's role on it. A resource the caller can neither read nor
 * receive by route does not exist for the caller (`notFound`), so ids are not probed.
 */
export async function resolveAccess(
  q: Queryable,
  caller: Caller,
  type: ContextType,
  id: string,
  options: { lock?: boolean; allowRoute?: boolean } = {},
): Promise<Access> {
  const head = await getHead(q, caller.tenant.id, type, id, { lock: options.lock === true });
  // The role (and the route) is looked up whether or not the resource exists, so one hidden from
  // the caller and one that does not exist run the same statements and take the same time: the
  // answer's timing cannot tell them apart (docs/decisions.md). An unknown id has no role.
  const role = await effectiveContextRole(q, caller.tenant.id, caller.principal.id, type, id);
  const routed = !canRead(role) && options.allowRoute === true && (await isRoutedTo(q, caller.tenant.id, caller.principal.id, id));
  if (head === undefined || head.latestVersion === 0) throw refuse.notFound(type);
  if (!canRead(role) && !routed) throw refuse.notFound(type);
  return { head, role, routed };
}

/** Refuses with `forbidden` unless `allowed`: the caller may see the resource but not do this. */
export function ensure(allowed: boolean): void {
  if (!allowed) throw refuse.forbidden();
}

/** Refuses with `forbidden` unless the caller may create a resource of `type` (Editor on the whole type). */
export async function ensureCanCreate(q: Queryable, caller: Caller, type: ContextType): Promise<void> {
  ensure(canCreate(type, await effectiveContextRole(q, caller.tenant.id, caller.principal.id, type, undefined), caller.scopes));
}

/** The saved version a read selector names, checked against what the caller may read. */
export async function selectVersion(q: Queryable, caller: Caller, type: VersionedType, access: Access, selector: VersionSelector): Promise<SavedVersion> {
  const { head } = access;
  let number: number;
  if (selector === 'latest') number = head.latestVersion;
  else if (selector === 'published') {
    if (head.publishedVersion === undefined) throw refuse.noPublishedVersion(type);
    number = head.publishedVersion;
  } else number = selector.exact;
  if (number > head.latestVersion) throw refuse.versionNotFound(type);
  ensure(canReadVersion({ role: access.role, routed: access.routed, selector, publishedVersion: head.publishedVersion }));
  const version = await getVersion(q, caller.tenant.id, head.id, number);
  if (version === undefined) throw refuse.versionNotFound(type);
  return version;
}

/** What a list says of a resource. */
export type ListedHead = Pick<ResourceHead, 'id' | 'name' | 'latestVersion' | 'publishedVersion' | 'reviewBy' | 'expiresAt' | 'createdAt' | 'updatedAt'>;
/** What a list says of its latest version: a Skill's description, an Artifact's digest. */
export type ListedVersion = Pick<SavedVersion, 'id' | 'version' | 'createdAt' | 'description' | 'digest'>;
/** What a list says of a version it only names: the published one, or the latest where a list shows no more. */
export type ListedVersionRef = Pick<SavedVersion, 'id' | 'version' | 'createdAt'>;

interface ListedRow {
  id: string;
  name: string;
  latest_version: number | string;
  published_version: number | string | null;
  review_by: string | null;
  expires_at: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  l_id: string;
  l_created_at: Date | string;
  l_description?: string | null;
  l_digest?: string | null;
  p_id: string | null;
  p_created_at: Date | string | null;
}

/**
 * The list statement of each type. It reads only what a list shows: every value a row returns
 * costs its encoding and decoding whether used or not, and at 1,000 items on PGlite each column
 * took about half a millisecond (19 columns: 12.3–13.4 ms a statement; the 12 a Knowledge list shows: 11.0–11.4 ms).
 */
const listStatement = (type: ContextType) => {
  const own = type === 'skill' ? ', l.description AS l_description' : type === 'artifact' ? ', l.digest AS l_digest' : '';
  const sql = `SELECT r.id, r.name, r.latest_version, r.published_version, r.review_by::text AS review_by, r.expires_at::text AS expires_at,
         r.created_at, r.updated_at, l.id AS l_id, l.created_at AS l_created_at, p.id AS p_id, p.created_at AS p_created_at${own}
       FROM context_resources r
       JOIN context_versions l ON l.tenant_id = r.tenant_id AND l.resource_id = r.id AND l.version = r.latest_version
       LEFT JOIN context_versions p ON p.tenant_id = r.tenant_id AND p.resource_id = r.id AND p.version = r.published_version
      WHERE r.tenant_id = $1 AND r.type = $2 AND r.status = 'active' AND r.latest_version > 0
      ORDER BY r.name, r.id`;
  return { sql, name: `kgw_list_readable_${type}` };
};
const LIST_STATEMENTS: Readonly<Record<ContextType, { readonly sql: string; readonly name: string }>> = {
  knowledge: listStatement('knowledge'),
  skill: listStatement('skill'),
  memory: listStatement('memory'),
  artifact: listStatement('artifact'),
};

/** Every readable resource of the type with its latest and published versions. */
export async function listReadable(
  q: Queryable,
  caller: Caller,
  type: ContextType,
): Promise<{ head: ListedHead; role: ContextRole | undefined; latest: ListedVersion; published: ListedVersionRef | undefined }[]> {
  const statement = LIST_STATEMENTS[type];
  // The heads with both versions in one statement beside the roles: at 1,000 items the versions'
  // second statement, waiting for the first, cost as much as reading them.
  const [rows, roles] = await Promise.all([
    q.query<ListedRow>(statement.sql, [caller.tenant.id, type], { prepare: statement.name, packed: true }),
    contextRoleTable(q, caller.tenant.id, caller.principal.id, type),
  ]);
  return rows.flatMap((row) => {
    const role = roles.roleOn(row.id);
    if (!canRead(role)) return [];
    const latestVersion = Number(row.latest_version);
    const publishedVersion = row.published_version === null ? undefined : Number(row.published_version);
    const head: ListedHead = {
      id: row.id,
      name: row.name,
      latestVersion,
      publishedVersion,
      reviewBy: row.review_by ?? undefined,
      expiresAt: row.expires_at ?? undefined,
      createdAt: instantOf(row.created_at),
      updatedAt: instantOf(row.updated_at),
    };
    // The joins match the versions by these numbers.
    const latest: ListedVersion = {
      id: row.l_id,
      version: latestVersion,
      createdAt: instantOf(row.l_created_at),
      description: row.l_description ?? undefined,
      digest: row.l_digest ?? undefined,
    };
    const published =
      row.p_id === null || row.p_created_at === null || publishedVersion === undefined
        ? undefined
        : { id: row.p_id, version: publishedVersion, createdAt: instantOf(row.p_created_at) };
    return [{ head, role, latest, published }];
  });
}
