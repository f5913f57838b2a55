import type { Caller } from '../access/caller.ts';
import type { Capabilities, VersionSelector } from '../access/context-decisions.ts';
import { canCreate, canPublish, canRead, canReadVersion, capabilities } from '../access/context-decisions.ts';
import type { ContextRole, ContextType } from '../access/context-roles.ts';
import { contextRoleTable, effectiveContextRole } from '../access/grants.ts';
import { isRoutedTo } from '../access/routes.ts';
import { refuse } from './refusals.ts';
import { utcDay } from '../instants.ts';
import type { Db, Queryable } from '../../store/db.ts';
import type { AuditTrail } from '../audit/trail.ts';
import type { ResourceHead, SavedVersion } from './versions.ts';
import { freshness, getHead, getVersion, getVersions, hasUnpublishedChanges, listHeads, publicationStatus, publishVersion, versionKey } from './versions.ts';

/**
 * What Knowledge and Skills share: identifiers, version selectors, dates, access, what their
 * lists and reads give (domain values; the dialect writes them in its wire) and publishing. Refusals carry a machine reason (refusals.ts) that each dialect words.
 */

export type VersionedType = 'knowledge' | 'skill';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string): boolean => UUID.test(value);

/** A resource id as the tools receive it: a UUID, compared in lower case. */
export function parseId(type: ContextType, value: string): string {
  if (!isUuid(value)) throw refuse.invalidId(type);
  return value.toLowerCase();
}

/** A positive version number, as an integer or a numeric string; undefined for anything else. */
export function positiveVersion(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  if (typeof value === 'string' && /^[1-9][0-9]{0,8}$/.test(value)) return Number(value);
  return undefined;
}

/** Read tools: omitted or latest, published, or an exact positive version. */
export function parseReadSelector(value: unknown): VersionSelector {
  if (value === undefined || value === 'latest') return 'latest';
  if (value === 'published') return 'published';
  const exact = positiveVersion(value);
  if (exact === undefined) throw refuse.invalidSelector('latest_published_exact');
  return { exact };
}

/** Publish tools and Artifacts (which have no published selector): omitted or latest, or an exact positive version. */
export function parsePublishSelector(value: unknown): 'latest' | { exact: number } {
  if (value === undefined || value === 'latest') return 'latest';
  const exact = positiveVersion(value);
  if (exact === undefined) throw refuse.invalidSelector('latest_exact');
  return { exact };
}

/** A YYYY-MM-DD calendar date that exists; `field` names it in the spec's error text. */
export function parseDate(field: 'review_by' | 'expires_at', value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const date = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : undefined;
  if (date === undefined || utcDay(date) !== value) throw refuse.invalidDate(field);
  return value;
}

/** Both dates checked and in order (either may stay as it is: pass the kept one in). */
export function parseDates(
  input: { reviewBy?: string | undefined; expiresAt?: string | undefined },
  kept: { reviewBy?: string | undefined; expiresAt?: string | undefined } = {},
): {
  reviewBy: string | undefined;
  expiresAt: string | undefined;
} {
  const reviewBy = parseDate('review_by', input.reviewBy);
  const expiresAt = parseDate('expires_at', input.expiresAt);
  const effectiveReview = reviewBy ?? kept.reviewBy;
  const effectiveExpiry = expiresAt ?? kept.expiresAt;
  if (effectiveReview !== undefined && effectiveExpiry !== undefined && effectiveExpiry < effectiveReview) throw refuse.datesOutOfOrder();
  return { reviewBy, expiresAt };
}

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
  if (head === undefined || head.latestVersion === 0) throw refuse.notFound(type);
  const role = await effectiveContextRole(q, caller.tenant.id, caller.principal.id, type, id);
  const routed = !canRead(role) && options.allowRoute === true && (await isRoutedTo(q, caller.tenant.id, caller.principal.id, id));
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

/**
 * publish_knowledge and publish_skill: points the published version at the selected saved
 * version (latest when omitted). Publisher and context.write; published: false when it already was.
 */
export interface PublishResult {
  readonly id: string;
  readonly name: string;
  readonly versionId: string;
  readonly version: number;
  /** False when the version already was the published one. */
  readonly published: boolean;
}

export async function publishResource(
  db: Db,
  caller: Caller,
  type: VersionedType,
  id: string,
  rawSelector: unknown,
  audit?: AuditTrail,
): Promise<PublishResult> {
  const selector = parsePublishSelector(rawSelector);
  return db.tx(async (tx) => {
    const access = await resolveAccess(tx, caller, type, id, { lock: true });
    ensure(canPublish(access.role, caller.scopes));
    const version = await selectVersion(tx, caller, type, access, selector);
    const number = version.version;
    const published = await publishVersion(tx, caller.tenant.id, access.head, number);
    if (published) {
      await audit?.recordIn(
        tx,
        `${type}.publish`,
        [{ type, id, before_version: access.head.publishedVersion ?? null, after_version: number, version_id: version.id }],
        { owner_id: ownerOf(caller) },
      );
    }
    return { id, name: access.head.name, versionId: version.id, version: number, published };
  });
}

/**
 * The person a write is tied to in its audit record (the spec's "agent owner"): an agent's owner,
 * or the person calling. The audit row itself names the agent and the token.
 */
export const ownerOf = (caller: Caller): string => caller.principal.ownerId ?? caller.principal.id;

export type Freshness = 'live' | 'expired';
export type PublicationStatus = 'unpublished' | 'published' | 'unpublished_changes';

/** A Knowledge's or Skill's versions, freshness and the caller's capabilities, as the lists give them. */
export interface ListedVersions {
  readonly latestVersionId: string;
  readonly latestVersion: number;
  readonly latestVersionCreatedAt: Date;
  readonly publishedVersionId: string | undefined;
  readonly publishedVersion: number | undefined;
  readonly publishedVersionCreatedAt: Date | undefined;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** YYYY-MM-DD. */
  readonly reviewBy: string | undefined;
  readonly expiresAt: string | undefined;
  readonly freshness: Freshness;
  readonly publication: PublicationStatus;
  readonly hasUnpublishedChanges: boolean;
  readonly capabilities: Capabilities;
}

export function listedVersions(
  head: ResourceHead,
  latest: SavedVersion,
  published: SavedVersion | undefined,
  role: ContextRole | undefined,
  caller: Caller,
): ListedVersions {
  return {
    latestVersionId: latest.id,
    latestVersion: latest.version,
    latestVersionCreatedAt: latest.createdAt,
    publishedVersionId: published?.id,
    publishedVersion: published?.version,
    publishedVersionCreatedAt: published?.createdAt,
    createdAt: head.createdAt,
    updatedAt: head.updatedAt,
    reviewBy: head.reviewBy,
    expiresAt: head.expiresAt,
    freshness: freshness(head),
    publication: publicationStatus(head),
    hasUnpublishedChanges: hasUnpublishedChanges(head),
    capabilities: capabilities(role, caller.scopes),
  };
}

/** The version read of a Knowledge or Skill, with the resource's pointers, freshness and the caller's capabilities. */
export interface VersionRead {
  readonly versionId: string;
  readonly version: number;
  readonly latestVersion: number;
  readonly publishedVersion: number | undefined;
  readonly isPublishedVersion: boolean;
  readonly hasUnpublishedChanges: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly versionCreatedAt: Date;
  readonly reviewBy: string | undefined;
  readonly expiresAt: string | undefined;
  readonly freshness: Freshness;
  readonly publication: PublicationStatus;
  readonly capabilities: Capabilities;
}

export function versionRead(access: Access, version: SavedVersion, caller: Caller): VersionRead {
  const { head } = access;
  return {
    versionId: version.id,
    version: version.version,
    latestVersion: head.latestVersion,
    publishedVersion: head.publishedVersion,
    isPublishedVersion: head.publishedVersion === version.version,
    hasUnpublishedChanges: hasUnpublishedChanges(head),
    createdAt: head.createdAt,
    updatedAt: head.updatedAt,
    versionCreatedAt: version.createdAt,
    reviewBy: head.reviewBy,
    expiresAt: head.expiresAt,
    freshness: freshness(head),
    publication: publicationStatus(head),
    capabilities: capabilities(access.role, caller.scopes),
  };
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
