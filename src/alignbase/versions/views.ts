import type { ImportedFromWire } from '../../kernel/imports/provenance.ts';
import type { Caller } from '../../kernel/access/caller.ts';
import type { Capabilities } from '../access/context-decisions.ts';
import { capabilities } from '../access/context-decisions.ts';
import type { ContextRole } from '../access/context-roles.ts';
import type { Access, ListedHead, ListedVersionRef } from './access.ts';
import type { SavedVersion } from './queries.ts';
import { freshness, hasUnpublishedChanges, publicationStatus } from './versions.ts';

/**
 * What a list or a read says of a published-and-latest resource: its versions, freshness and
 * the caller's capabilities, as domain values. Each dialect writes them in its own wire.
 */

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
  head: ListedHead,
  latest: ListedVersionRef,
  published: ListedVersionRef | undefined,
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
  readonly importedFrom: ImportedFromWire | undefined;
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
    importedFrom: version.importedFrom,
  };
}
