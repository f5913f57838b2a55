import type { Caller } from '../../kernel/access/caller.ts';
import type { VersionSelector } from '../access/context-decisions.ts';
import { canCreate, canRead, canReadVersion } from '../access/context-decisions.ts';
import type { ContextRole, ContextType } from '../access/context-roles.ts';
import { contextRoleTable, effectiveContextRole } from '../access/grants.ts';
import { isRoutedTo } from '../access/routes.ts';
import type { Queryable } from '../../store/db.ts';
import { refuse } from './refusals.ts';
import type { VersionedType } from './selectors.ts';
import type { ResourceHead, SavedVersion } from './queries.ts';
import { getHead, getVersion, getVersions, listHeads, versionKey } from './versions.ts';

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

/** Every readable resource of the type with its latest and published versions (no content). */
export async function listReadable(
  q: Queryable,
  caller: Caller,
  type: ContextType,
): Promise<{ head: ResourceHead; role: ContextRole | undefined; latest: SavedVersion; published: SavedVersion | undefined }[]> {
  const [heads, roles] = await Promise.all([listHeads(q, caller.tenant.id, type), contextRoleTable(q, caller.tenant.id, caller.principal.id, type)]);
  const readable = heads.filter((h) => canRead(roles.roleOn(h.id)));
  const refs = readable.flatMap((h) => [
    { resourceId: h.id, version: h.latestVersion },
    ...(h.publishedVersion === undefined ? [] : [{ resourceId: h.id, version: h.publishedVersion }]),
  ]);
  const versions = await getVersions(q, caller.tenant.id, refs, { content: false });
  return readable.flatMap((head) => {
    const latest = versions.get(versionKey(head.id, head.latestVersion));
    if (latest === undefined) return [];
    const published = head.publishedVersion === undefined ? undefined : versions.get(versionKey(head.id, head.publishedVersion));
    return [{ head, role: roles.roleOn(head.id), latest, published }];
  });
}
